"""Web search: fails cleanly and fast, never hangs, can be switched off."""

from __future__ import annotations

import time

import pytest

from graph.protocols import WebSearchError
from graph.web import DdgsWebSearch, call_with_timeout, search_with_timeout
from hopwise.app import build_web_search
from hopwise.settings import Settings
from tests.fakes.web import FakeWebSearch


def test_ddgs_without_network_raises_web_search_error_fast() -> None:
    # A proxy on a closed loopback port: every backend fails to connect, no real network used.
    web = DdgsWebSearch(timeout_s=3, max_results=3, proxy="http://127.0.0.1:9")
    start = time.monotonic()
    with pytest.raises(WebSearchError):
        web.search("hopwise multi-hop question answering")
    assert time.monotonic() - start < 5


def test_hung_search_times_out() -> None:
    start = time.monotonic()
    with pytest.raises(WebSearchError, match="timed out"):
        search_with_timeout(FakeWebSearch(mode="slow", delay_s=5), "q", 3, timeout_s=0.2)
    assert time.monotonic() - start < 1


def test_any_exception_becomes_web_search_error() -> None:
    def boom() -> None:
        raise OSError("socket closed")

    with pytest.raises(WebSearchError, match="socket closed"):
        call_with_timeout(boom, 1)


def test_results_are_capped() -> None:
    from graph.protocols import WebResult

    web = FakeWebSearch([WebResult(url=f"https://e.org/{i}") for i in range(9)])
    assert len(search_with_timeout(web, "q", 3, 1)) == 3


def test_build_web_search_honours_the_switch() -> None:
    assert build_web_search(Settings(web_search="off")) is None  # type: ignore[arg-type]
    web = build_web_search(Settings(web_search=True, web_timeout_s=2, web_max_results=4))
    assert isinstance(web, DdgsWebSearch) and (web.timeout_s, web.max_results) == (2, 4)
