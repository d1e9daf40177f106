"""The one error type ingestion raises for bad input."""

from __future__ import annotations


class IngestError(Exception):
    """A file that cannot be ingested; `str(exc)` is a one-line reason shown to the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(str(reason).split()))

    @property
    def reason(self) -> str:
        return str(self)
