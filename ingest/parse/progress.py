"""How a slow parse stage is going (OCR page 3 of 12), told to whoever asked."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

PageProgress = Callable[[str, int, int], None]  # (stage, done, total), e.g. ("ocr", 3, 12)
_progress = threading.local()


@contextlib.contextmanager
def reporting(on_page: PageProgress | None) -> Iterator[None]:
    """Send this thread's parse progress to `on_page` while the block runs."""
    previous = getattr(_progress, "sink", None)
    _progress.sink = on_page
    try:
        yield
    finally:
        _progress.sink = previous


@contextlib.contextmanager
def listener_errors_logged() -> Iterator[None]:
    try:
        yield
    except Exception:  # noqa: BLE001 - a progress display never stops a parse
        log.warning("parse progress listener failed", exc_info=True)


def report(stage: str, done: int, total: int) -> None:
    """Tell whoever asked (the upload page, through the worker) how a slow stage is going;
    a listener's failure never stops the parse."""
    sink = getattr(_progress, "sink", None)
    if sink is not None:
        with listener_errors_logged():
            sink(stage, done, total)
