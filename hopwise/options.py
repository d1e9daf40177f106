"""Choices an admin makes in the app, kept server side in `$HOPWISE_DATA_DIR/options.json`.

Only what a deployment may leave to its admin lives here (today: whether the web fallback may
send questions to a public search engine); a HOPWISE_* setting, when given, always wins. The
file is small and read on every use, so every process of a deployment sharing the data dir
sees a change at once."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

OPTIONS_FILE = "options.json"


class DeploymentOptions:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or unreadable: every option at its safe default
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        """Atomically (a temp file renamed over the old one): a reader never sees half."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".options-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @property
    def web_search(self) -> bool:
        """Whether an admin allowed the web fallback (off until one does)."""
        return self._read().get("web_search") is True

    def set_web_search(self, allowed: bool) -> None:
        with self._lock:
            data = self._read()
            data["web_search"] = bool(allowed)
            self._write(data)
