"""A shared "busy" signal: questions and searches hold it, background work yields to it.

Background steps (the embedding worker's model calls, the phrase worker's batches) share the
machine's cores with the questions users are waiting for. Before each batch they wait until no
question or search holds the signal, for at most a bound, so a steady stream of questions slows
them down but never starves them.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

YIELD_MAX_S = 10.0  # the longest a background batch waits for questions to finish


class BusySignal:
    """How many questions or searches are in flight; background work waits for none."""

    def __init__(self, max_wait_s: float = YIELD_MAX_S) -> None:
        self.max_wait_s = max_wait_s  # the bound: a batch starts after this even if busy
        self._holders = 0
        self._changed = threading.Condition()
        self.yields = 0  # batches that waited (for tests and the benchmark)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Mark a question or search in flight for the duration of the block (re-entrant)."""
        with self._changed:
            self._holders += 1
        try:
            yield
        finally:
            with self._changed:
                self._holders -= 1
                if not self._holders:
                    self._changed.notify_all()

    @property
    def busy(self) -> bool:
        return self._holders > 0

    def wait_idle(self) -> bool:
        """Block until nothing holds the signal or `max_wait_s` passed; True when idle."""
        with self._changed:
            if not self._holders:
                return True
            self.yields += 1
            return self._changed.wait_for(lambda: not self._holders, timeout=self.max_wait_s)


def lower_thread_priority() -> None:
    """Nice the calling thread (Linux: per thread) so questions keep the CPU."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
