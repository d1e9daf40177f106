"""The access-control ledger: every attempt by a reader without the restricted group is counted,
and any restricted string found in what that reader could see is recorded as a leak."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Ledger:
    attempts: int = 0
    leaks: list[str] = field(default_factory=list)
    by_path: dict[str, int] = field(default_factory=dict)

    def check(self, path: str, seen: str, secrets: Iterable[str], asked: str = "") -> list[str]:
        """Count one attempt; returns (and records) the secrets found in `seen` that the reader
        did not type themselves (a question quoting restricted text may be echoed back)."""
        self.attempts += 1
        self.by_path[path] = self.by_path.get(path, 0) + 1
        found = leaked(seen, secrets, asked)
        self.leaks += [f"{path}: {s!r} (asked {asked!r})" for s in found]
        return found

    def summary(self) -> str:
        paths = ", ".join(f"{k} {v}" for k, v in sorted(self.by_path.items()))
        return f"{len(self.leaks)} leaks in {self.attempts} attempts ({paths})"


def leaked(seen: str, secrets: Iterable[str], asked: str = "") -> list[str]:
    low, typed = seen.lower(), asked.lower()
    return [s for s in secrets if s.lower() not in typed and s.lower() in low]


LEDGER = Ledger()
