"""Worker tasks that die the way a native library takes a worker down (test helpers)."""

from __future__ import annotations

import os
import sys

from ingest.parse import worker_task


@worker_task()
def abort_saying(message: str) -> None:
    """Write a last line to stderr, then abort as a C++ library does on std::bad_alloc."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    os.abort()


@worker_task()
def double(value: int) -> int:
    return 2 * value
