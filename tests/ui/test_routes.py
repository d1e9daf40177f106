"""Hopwise's own HTTP routes (ui.routes) in a Starlette test client, with real signed sessions
in a temp data dir: a download is served only to the session it was drawn for, as the
configuration and the session store know that user at the fetch; the metrics endpoint is
closed; a query parameter that is not a plain number never reaches `int()`; a page that fails
shows a reference, never a traceback.

`test_served_app.py` checks the same routes on a real `streamlit run ui/app.py`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from tests.ui.apptools import assert_no_exception, new_app, texts
from ui.auth import SESSION_COOKIE, User
from ui.files import TICKETS, Download, Reader, Tickets
from ui.formatting import answer_number, link_thread
from ui.routes import Gate, routes

USERS = {
    "ana": {"password": "ana-pw", "groups": ["finance"]},
    "bob": {"password": "bob-pw", "groups": []},
}
LEDGER = b"finance-only ledger: the marker QX-LEDGER-7"


@pytest.fixture
def users(app_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    monkeypatch.setenv("HOPWISE_USERS", json.dumps(USERS))
    import streamlit as st

    st.cache_resource.clear()
    yield USERS
    st.cache_resource.clear()


def session_for(name: str) -> str:
    from ui.services import cached_session_store, configured_users

    return cached_session_store().issue(configured_users()[name])


def ledger_for_finance(reader: Reader) -> Download | None:
    """A builder as the pages draw them: decides on the reader it is handed at the fetch."""
    if "finance" not in reader.user.groups:
        return None
    return Download(LEDGER, "ledger <1>.txt", "text/plain")


@pytest.fixture
def client() -> TestClient:
    return TestClient(Starlette(routes=routes()), base_url="http://testserver")


def get(client: TestClient, ticket: str, cookie: str | None):
    client.cookies.clear()
    cookies = {SESSION_COOKIE: cookie} if cookie else None
    return client.get(f"/hopwise/file/{ticket}", cookies=cookies)


def test_a_download_is_served_to_its_own_session_only(
    users: dict[str, object], client: TestClient
) -> None:
    ticket = TICKETS.issue("ana", ledger_for_finance)
    ana, bob = session_for("ana"), session_for("bob")
    reply = get(client, ticket, ana)
    assert reply.status_code == 200 and reply.content == LEDGER
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["content-security-policy"].startswith("sandbox")
    assert (
        reply.headers["content-disposition"] == "attachment; filename*=utf-8''ledger%20%3C1%3E.txt"
    )
    tampered = ana[:-1] + ("B" if ana.endswith("A") else "A")
    for cookie in (None, bob, "forged." + "x" * 43, tampered):
        refused = get(client, ticket, cookie)
        assert refused.status_code == 403 and LEDGER not in refused.content
    assert get(client, "no-such-ticket", ana).status_code == 404


def test_a_sign_out_or_a_lost_group_refuses_a_link_already_drawn(
    users: dict[str, object], client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    from ui.services import cached_session_store

    ticket = TICKETS.issue("ana", ledger_for_finance)
    first, second = session_for("ana"), session_for("ana")  # two devices
    assert get(client, ticket, first).status_code == 200
    cached_session_store().revoke(first)  # signed out on the first
    assert get(client, ticket, first).status_code == 403
    assert get(client, ticket, second).status_code == 200
    monkeypatch.setenv(
        "HOPWISE_USERS", json.dumps({**USERS, "ana": {**USERS["ana"], "groups": []}})
    )
    st.cache_resource.clear()  # the admin removed ana from finance
    reply = get(client, ticket, second)
    assert reply.status_code == 403 and LEDGER not in reply.content


def test_signout_route_revokes_the_cookies_session(
    users: dict[str, object], client: TestClient
) -> None:
    from ui.services import cached_session_store, configured_users

    token = session_for("ana")
    client.cookies.clear()
    refused = client.post("/hopwise/signout", cookies={SESSION_COOKIE: token})  # no Origin
    assert refused.status_code == 403
    assert cached_session_store().verify(token, configured_users()) is not None
    reply = client.post(
        "/hopwise/signout",
        cookies={SESSION_COOKIE: token},
        headers={"Origin": "http://testserver"},
    )
    assert reply.status_code == 204
    header = reply.headers["set-cookie"]
    assert header.startswith(f'{SESSION_COOKIE}="";') and "Max-Age=0" in header
    assert "HttpOnly" in header
    assert cached_session_store().verify(token, configured_users()) is None


def test_a_ticket_expires() -> None:
    now = [0.0]
    tickets = Tickets(clock=lambda: now[0])
    ticket = tickets.issue("ana", ledger_for_finance)
    assert tickets.get(ticket) is not None
    now[0] = 10_000.0
    assert tickets.get(ticket) is None


@pytest.mark.parametrize(("setting", "status"), [(None, 404), ("on", 200)])
def test_the_metrics_endpoint_is_closed_unless_opened(
    app_data: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, status: int
) -> None:
    import streamlit as st

    if setting:
        monkeypatch.setenv("HOPWISE_METRICS", setting)
    st.cache_resource.clear()
    app = Starlette(
        routes=[Route("/{path:path}", lambda request: PlainTextResponse("inner"))],
        middleware=[Middleware(Gate)],
    )
    client = TestClient(app)
    assert client.get("/_stcore/metrics").status_code == status
    assert client.get("/_stcore/health").status_code == 200  # nothing else is touched
    st.cache_resource.clear()


@pytest.mark.parametrize("value", ["²", "١", "1.0", "-1", "0", " 1", "1e3", "", None, "9" * 7])
def test_answer_numbers_are_plain_ascii_digits(value: str | None) -> None:
    assert answer_number(value) is None


def test_answer_numbers_and_thread_ids_that_are_plain_parse() -> None:
    assert answer_number("2") == 2 and answer_number("120") == 120
    assert link_thread("3f2a9c") == "3f2a9c"
    assert link_thread("../etc") is None and link_thread("a" * 200) is None


def test_a_trace_link_with_a_superscript_answer_is_no_traceback(app_data: Path) -> None:
    at = new_app().run()
    at.chat_input[0].set_value("What is on the ledger?").run()
    assert_no_exception(at)
    from ui.services import get_runner

    [thread] = get_runner().list_threads(owner="local")
    at.query_params.update({"thread": thread["thread_id"], "answer": "²"})
    at.switch_page("app_pages/trace.py").run()
    assert_no_exception(at)
    assert "What is on the ledger?" in texts(at)  # the chat's last answer instead
    assert "ValueError" not in texts(at) and "Traceback" not in texts(at)


def test_a_page_that_fails_shows_a_reference_and_logs_the_rest(
    app_data: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("/srv/hopwise/secret/path.py exploded")

    monkeypatch.setattr("ui.welcome.welcome", broken)
    with caplog.at_level("ERROR", logger="hopwise.web"):
        at = new_app().run()
    assert_no_exception(at)
    [error] = [e.value for e in at.error]
    assert "Something went wrong on this page (reference " in error
    assert "/srv/hopwise" not in texts(at) and "RuntimeError" not in texts(at)
    ref = error.split("reference ")[1].split(")")[0]
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)


def test_the_user_names_in_a_ticket_are_compared_exactly() -> None:
    from ui.files import Refused, fetch

    ticket = TICKETS.issue("ana", ledger_for_finance)
    for name in ("Ana", "ana ", "an"):
        with pytest.raises(Refused):
            fetch(ticket, Reader(User(name, ("all", "finance")), False))
    assert fetch(ticket, Reader(User("ana", ("all", "finance")), False)).data == LEDGER


def test_a_page_of_this_app_is_the_host_it_was_sent_to_or_a_listed_origin(
    app_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a proxy the Host may be the upstream's; X-Forwarded-Host or the list says
    which public origin is the app's. Another port of the same host never is."""
    import streamlit as st

    from ui.routes import origin_allowed

    st.cache_resource.clear()
    sent = {"host": "10.0.0.5:8501"}
    assert origin_allowed("http://10.0.0.5:8501", sent)
    assert not origin_allowed("http://10.0.0.5:8502", sent)
    assert not origin_allowed("", sent) and not origin_allowed("null", sent)
    proxied = {**sent, "x-forwarded-host": "chat.example.com"}
    assert origin_allowed("https://chat.example.com", proxied)
    assert not origin_allowed("https://chat.example.com", sent)
    monkeypatch.setenv("HOPWISE_ALLOWED_ORIGINS", "https://chat.example.com/, https://b.example")
    st.cache_resource.clear()
    assert origin_allowed("https://chat.example.com", sent)
    assert origin_allowed("https://B.example", sent)
    assert not origin_allowed("https://chat.example.com:8443", sent)
    st.cache_resource.clear()
