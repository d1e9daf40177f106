"""The app under AppTest with a simulated browser cookie: a reload or a shared link keeps the
sign-in, sign-out ends it, admin users open Admin with no second password, and no page ever
shows two sign-in forms.

AppTest runs no JavaScript and sends no cookies, so `Browser` plays the browser: it posts the
page's script (a one-time code, never the token) to the real `/hopwise/session` route, keeps the
HttpOnly cookie that route sets, and a tab it opens (a new AppTest: a reload or a link) sends
the jar as it was when it connected, through `ui.services.sent_session_cookie`. The tab opened
last is the one that sends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest

from tests.ui.apptools import assert_no_exception, new_app, texts
from ui.auth import HANDOFFS, SESSION_COOKIE
from ui.routes import routes

USERS = {
    "root": {"password": "root-pw", "groups": ["ops"], "admin": True},
    "ana": {"password": "ana-pw", "groups": ["finance"]},
}
LEGACY_USERS = {"ana": {"password": "ana-pw", "groups": ["finance"]}}  # nobody marked admin
POLICY = b"""# Travel policy

## Hotels
Hotel stays are reimbursed up to 180 euros per night.

## Meals
Meals are reimbursed up to 40 euros per day.
"""
POST_SCRIPT = re.compile(r'fetch\((?P<path>"[^"]*"), \{.*?body: (?P<body>"(?:[^"\\]|\\.)*")\}\)')
ADMIN_PAGE, TRACE_PAGE = "app_pages/admin.py", "app_pages/trace.py"


class Browser:
    """One browser's cookie jar; `sent` is what the app reads as the connecting tab's cookie.

    The page's scripts are posted, as the browser would, to Hopwise's real HTTP routes
    (ui.routes, in a Starlette test client); the jar takes what their Set-Cookie says."""

    def __init__(self, sent: list[str | None], *, scheme: str = "http") -> None:
        self.cookie: str | None = None
        self.sent = sent
        self.origin = f"{scheme}://testserver"
        self.client = TestClient(Starlette(routes=routes()), base_url=self.origin)
        self.set_cookies: list[str] = []  # every Set-Cookie header the routes answered

    def run_scripts(self, at: AppTest) -> None:
        """Do what the browser does with the page's scripts: post them, keep the cookie."""
        for element in at.get("html"):
            found = POST_SCRIPT.search(element.value)
            if not found:
                continue
            assert "document.cookie" not in element.value  # page scripts never touch it
            cookies = {SESSION_COOKIE: self.cookie} if self.cookie else {}
            self.client.cookies.clear()
            reply = self.client.post(
                json.loads(found["path"]),
                content=json.loads(found["body"]),
                headers={"Origin": self.origin, "Content-Type": "application/json"},
                cookies=cookies,
            )
            for header in reply.headers.get_list("set-cookie"):
                self.set_cookies.append(header)
                value = re.match(SESSION_COOKIE + r'="?([^;"]*)"?;', header)
                if value:
                    gone = re.search(r"(?i)max-age=0\b", header)
                    self.cookie = None if gone else value.group(1)

    def open(self, users: dict[str, object] = USERS, **params: str) -> AppTest:
        """A reload, or a link opened in this browser: a brand-new session sending the jar."""
        self.sent[0] = self.cookie
        at = new_app(users=users)
        at.query_params.update(params)
        return at


def cookie_scripts(at: AppTest) -> list[str]:
    return [e.value for e in at.get("html") if POST_SCRIPT.search(e.value)]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    connected: list[str | None] = [None]
    monkeypatch.setattr("ui.services.sent_session_cookie", lambda: connected[0])
    return connected


@pytest.fixture
def browser(sent: list[str | None]) -> Browser:
    return Browser(sent)


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings = get_settings()
    done = ingest_bytes(POLICY, "policy.md", get_store(), groups=["all"], config=settings.ingest)
    assert done.status == "ingested"
    return app_data


def sign_in(at: AppTest, browser: Browser, name: str, password: str) -> AppTest:
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.text_input[1].set_value(password)
    at.sidebar.button[0].click().run()
    assert_no_exception(at)
    browser.run_scripts(at)
    return at


def password_inputs(at: AppTest) -> int:
    """Sign-in forms on screen: each has exactly one password field."""
    return sum(1 for t in at.text_input if t.proto.type == t.proto.PASSWORD)


def test_a_reload_keeps_the_sign_in(kb: Path, browser: Browser) -> None:
    at = sign_in(browser.open().run(), browser, "ana", "ana-pw")
    assert "Signed in as **ana** · groups: all, finance" in texts(at)
    [header] = browser.set_cookies
    assert "Max-Age=43200" in header and "HttpOnly" in header and "SameSite=strict" in header
    assert "Secure" not in header  # http: no Secure
    assert browser.cookie and browser.cookie not in "".join(e.value for e in at.get("html"))
    token = browser.cookie

    again = browser.open().run()  # the same browser, a new session
    assert_no_exception(again)
    assert "Signed in as **ana**" in texts(again)
    assert password_inputs(again) == 0
    browser.run_scripts(again)  # once per tab: the same session, now surely HttpOnly
    assert browser.cookie == token and "HttpOnly" in browser.set_cookies[-1]

    stranger = Browser(browser.sent).open().run()  # another browser has no cookie
    assert "Signed in as" not in texts(stranger) and password_inputs(stranger) == 1


def test_the_cookie_is_secure_on_https(kb: Path, sent: list[str | None]) -> None:
    browser = Browser(sent, scheme="https")
    sign_in(browser.open().run(), browser, "ana", "ana-pw")
    assert browser.cookie and "Secure" in browser.set_cookies[-1]


def test_a_handoff_code_sets_a_cookie_once_and_only_from_the_page(
    kb: Path, browser: Browser
) -> None:
    at = sign_in(browser.open().run(), browser, "ana", "ana-pw")
    [script] = cookie_scripts(at)
    found = POST_SCRIPT.search(script)
    assert found is not None
    path, body = json.loads(found["path"]), json.loads(found["body"])
    headers = {"Origin": browser.origin, "Content-Type": "application/json"}
    again = browser.client.post(path, content=body, headers=headers)  # the code is used up
    assert again.status_code == 403 and not again.headers.get_list("set-cookie")
    token = browser.cookie
    assert token is not None
    code = HANDOFFS.issue(token)
    body = json.dumps({"code": code})
    for origin in ({}, {"Origin": "http://evil.example"}):  # another site cannot log you in
        other = browser.client.post(
            path, content=body, headers={"Content-Type": "application/json", **origin}
        )
        assert other.status_code == 403 and not other.headers.get_list("set-cookie")


def test_sign_out_ends_the_session_and_clears_the_cookie(kb: Path, browser: Browser) -> None:
    sign_in(browser.open().run(), browser, "ana", "ana-pw")
    token = browser.cookie
    tab = browser.open().run()
    assert "Signed in as **ana**" in texts(tab)
    tab.sidebar.button(key="sign_out").click().run()
    assert_no_exception(tab)
    browser.run_scripts(tab)
    assert re.search(r"(?i)max-age=0", browser.set_cookies[-1])
    assert browser.cookie is None and "Signed in as" not in texts(tab)

    browser.cookie = token  # even a copy of the old cookie signs no one in
    stale = browser.open().run()
    assert "Signed in as" not in texts(stale) and password_inputs(stale) == 1
    browser.run_scripts(stale)
    assert browser.cookie is None  # and the stale cookie is cleared


def test_signing_out_in_the_tab_that_signed_in_drops_the_cookie(kb: Path, browser: Browser) -> None:
    at = sign_in(browser.open().run(), browser, "ana", "ana-pw")  # this tab sent no cookie
    assert browser.cookie
    at.sidebar.button(key="sign_out").click().run()
    browser.run_scripts(at)
    assert browser.cookie is None and re.search(r"(?i)max-age=0", browser.set_cookies[-1])


def test_a_user_removed_from_the_config_is_signed_out(kb: Path, browser: Browser) -> None:
    sign_in(browser.open().run(), browser, "ana", "ana-pw")
    gone = browser.open(users={"root": USERS["root"]}).run()
    assert "Signed in as" not in texts(gone)
    back = browser.open().run()
    assert "Signed in as" not in texts(back)  # the session ended for good


def test_an_admin_user_opens_admin_without_a_second_password(kb: Path, browser: Browser) -> None:
    at = sign_in(browser.open().run(), browser, "root", "root-pw")
    assert "Signed in as **root** · groups: all, ops · admin" in texts(at)
    at.switch_page(ADMIN_PAGE).run()
    assert_no_exception(at)
    assert at.get("file_uploader") and password_inputs(at) == 0
    reloaded = browser.open()
    reloaded.run().switch_page(ADMIN_PAGE).run()
    assert reloaded.get("file_uploader")  # admin survives the reload with the sign-in


def test_a_non_admin_user_is_told_and_gets_no_password_form(kb: Path, browser: Browser) -> None:
    at = sign_in(browser.open().run(), browser, "ana", "ana-pw")
    at.switch_page(ADMIN_PAGE).run()
    assert_no_exception(at)
    assert "Your account has no admin rights" in texts(at)
    assert password_inputs(at) == 0 and not at.get("file_uploader")
    assert "· admin" not in texts(at)


@pytest.mark.parametrize("users", [USERS, LEGACY_USERS], ids=["admin-users", "admin-password"])
def test_signed_out_admin_page_points_at_the_one_sign_in_form(
    kb: Path, browser: Browser, users: dict[str, object]
) -> None:
    at = browser.open(users=users).run()
    at.switch_page(ADMIN_PAGE).run()
    assert_no_exception(at)
    assert password_inputs(at) == 1 and password_inputs(at.sidebar) == 1  # the sidebar's only
    assert "Sign in with the form in the sidebar" in texts(at)
    assert not at.get("file_uploader")


def test_with_no_admin_user_the_admin_password_unlocks_a_signed_in_user(
    kb: Path, browser: Browser
) -> None:
    from tests.ui.apptools import ADMIN_PASSWORD

    at = sign_in(browser.open(users=LEGACY_USERS).run(), browser, "ana", "ana-pw")
    at.switch_page(ADMIN_PAGE).run()
    assert password_inputs(at) == 1 and password_inputs(at.sidebar) == 0  # one form: Admin's
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    assert at.get("file_uploader") and "Signed in as **ana** · groups: all, finance · admin" in (
        texts(at)
    )
    reloaded = browser.open(users=LEGACY_USERS)
    reloaded.run().switch_page(ADMIN_PAGE).run()
    assert "Signed in as **ana**" in texts(reloaded)  # the sign-in survives the reload,
    assert password_inputs(reloaded) == 1  # the admin unlock was for that tab only


def test_a_shared_link_opens_after_sign_in_with_its_query_params(
    kb: Path, browser: Browser
) -> None:
    owner = Browser(browser.sent)
    at = sign_in(owner.open().run(), owner, "ana", "ana-pw")
    for question in ("How much is reimbursed for a hotel night?", "And for meals per day?"):
        at.chat_input[0].set_value(question).run()
        assert_no_exception(at)
    from ui.services import get_runner

    [thread] = get_runner().list_threads(owner="ana")
    link = {"thread": thread["thread_id"], "answer": "1"}

    opened = browser.open(**link)  # ana on another device: signed out there
    opened.run().switch_page(TRACE_PAGE).run()
    assert "Sign in with the form in the sidebar" in texts(opened)
    assert "How much is reimbursed" not in texts(opened)
    sign_in(opened, browser, "ana", "ana-pw")
    assert opened.query_params == link
    assert [s.value for s in opened.subheader][:1] == ["How much is reimbursed for a hotel night?"]

    reloaded = browser.open(**link)  # and the link opens straight away once signed in
    reloaded.run().switch_page(TRACE_PAGE).run()
    assert [s.value for s in reloaded.subheader][:1] == [
        "How much is reimbursed for a hotel night?"
    ]


def hit_tables(at: AppTest) -> list[set[str]]:
    return [set(frame.value.columns) for frame in at.dataframe if "rank" in frame.value.columns]


@pytest.mark.parametrize(("name", "scores"), [("root", True), ("ana", False)])
def test_admin_users_see_raw_scores_and_readers_ranks(
    kb: Path, browser: Browser, name: str, scores: bool
) -> None:
    at = sign_in(browser.open().run(), browser, name, f"{name}-pw")
    at.chat_input[0].set_value("How much is reimbursed for a hotel night?").run()
    at.switch_page(TRACE_PAGE).run()
    assert_no_exception(at)
    tables = hit_tables(at)
    assert tables and all(("bm25" in columns) is scores for columns in tables)


def test_a_short_session_secret_is_a_clear_configuration_error(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    monkeypatch.setenv("HOPWISE_SESSION_SECRET", "short")
    st.cache_resource.clear()
    try:
        at = new_app(users=USERS).run()
        name = next(iter(USERS))
        at.sidebar.text_input[0].set_value(name)
        at.sidebar.text_input[1].set_value(USERS[name]["password"])
        at.sidebar.button[0].click().run()
        assert_no_exception(at)
        assert "Sign-in is misconfigured" in texts(at) and "too short" in texts(at)
    finally:
        monkeypatch.delenv("HOPWISE_SESSION_SECRET")
        st.cache_resource.clear()
