"""Web search behind the WebSearch protocol: ddgs with a hard timeout, failing cleanly.

Results are untrusted data; the answer prompt labels them as such.
"""

from __future__ import annotations

import time
from typing import Any

from graph.deadline import WallClockTimeout, run_bounded
from graph.protocols import WebResult, WebSearch, WebSearchError


class DdgsWebSearch:
    """DuckDuckGo & co. through the `ddgs` package; any failure becomes WebSearchError."""

    def __init__(
        self,
        *,
        timeout_s: float = 8,
        max_results: int = 5,
        backend: str = "auto",
        proxy: str | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.max_results = max_results
        self.backend = backend
        self.proxy = proxy

    def search(self, query: str, max_results: int | None = None) -> list[WebResult]:
        limit = max_results or self.max_results
        found: list[WebResult] = call_with_timeout(
            lambda: self._search(query, limit), self.timeout_s
        )
        return found

    def _search(self, query: str, limit: int) -> list[WebResult]:
        from ddgs import DDGS  # imported lazily: the package is slow to import

        try:
            rows = DDGS(proxy=self.proxy, timeout=max(1, round(self.timeout_s))).text(
                query, max_results=limit, backend=self.backend
            )
        except Exception as exc:  # ddgs raises its own and httpx/network errors
            raise WebSearchError(f"web search failed: {exc}") from exc
        return [to_result(row) for row in rows[:limit] if row.get("href")]


def to_result(row: dict[str, Any]) -> WebResult:
    return WebResult(
        url=str(row.get("href", "")),
        title=str(row.get("title", "")),
        snippet=str(row.get("body", "")),
    )


def call_with_timeout(fn: Any, timeout_s: float) -> Any:
    """Run fn in a daemon thread; a hung search never blocks the answer or interpreter exit."""
    try:
        return run_bounded(fn, time.monotonic() + timeout_s, "hopwise-web")
    except WallClockTimeout:
        raise WebSearchError(f"web search timed out after {timeout_s:.1f}s") from None
    except WebSearchError:
        raise
    except Exception as exc:
        raise WebSearchError(f"web search failed: {exc}") from exc


def search_with_timeout(
    web: WebSearch, query: str, max_results: int, timeout_s: float
) -> list[WebResult]:
    """Any WebSearch, bounded by the question's remaining time; errors are WebSearchError."""
    return list(call_with_timeout(lambda: web.search(query, max_results=max_results), timeout_s))
