"""A fake web search: answers, fails, or hangs on demand; records the queries it got."""

from __future__ import annotations

import time
from collections.abc import Sequence

from graph.protocols import WebResult, WebSearchError


class FakeWebSearch:
    def __init__(
        self, results: Sequence[WebResult] = (), *, mode: str = "ok", delay_s: float = 5.0
    ) -> None:
        self.results, self.mode, self.delay_s = list(results), mode, delay_s
        self.queries: list[str] = []

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        self.queries.append(query)
        if self.mode == "fail":
            raise WebSearchError("network unreachable")
        if self.mode == "slow":
            time.sleep(self.delay_s)
        return self.results[:max_results]
