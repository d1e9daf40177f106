"""The WebSearch contract, run against every implementation: a list of at most max_results
WebResults, or WebSearchError (never another exception), within the timeout.

The real ddgs search is only run on its failure path here: a proxy on a closed loopback port,
so no test traffic leaves the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from graph.protocols import WebResult, WebSearch, WebSearchError
from graph.web import DdgsWebSearch, search_with_timeout
from tests.fakes.web import FakeWebSearch

RESULTS = [WebResult(url=f"https://example.org/{i}", title=f"r{i}") for i in range(7)]
IMPLEMENTATIONS: dict[str, Callable[[], WebSearch]] = {
    "fake-ok": lambda: FakeWebSearch(RESULTS),
    "fake-fail": lambda: FakeWebSearch(mode="fail"),
    "fake-hung": lambda: FakeWebSearch(mode="slow", delay_s=5),
    "ddgs-offline": lambda: DdgsWebSearch(timeout_s=2, max_results=3, proxy="http://127.0.0.1:9"),
}


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_results_or_web_search_error_within_the_timeout(name: str) -> None:
    web = IMPLEMENTATIONS[name]()
    start = time.monotonic()
    try:
        results = search_with_timeout(web, "orion turbines supplier", 3, timeout_s=2.5)
    except WebSearchError as exc:
        assert str(exc)
    else:
        assert len(results) <= 3 and all(isinstance(r, WebResult) for r in results)
        assert all(r.url.startswith(("http://", "https://")) for r in results)
    assert time.monotonic() - start < 4.5
