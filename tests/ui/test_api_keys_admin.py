"""The Admin page's API keys (AppTest): an admin makes a key for the local user, sees it once,
finds it in the list (without the secret), and revokes it; the key table then refuses it."""

from __future__ import annotations

from pathlib import Path

from hopwise.api_keys import ApiKeys, key_database
from hopwise.settings import load_settings
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts

ADMIN_PAGE = "app_pages/admin.py"


def test_an_admin_makes_sees_once_and_revokes_a_key(app_data: Path) -> None:
    at = new_app().run()
    at.switch_page(ADMIN_PAGE).run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    assert "API keys" in texts(at)
    at.text_input(key="admin_key_label").set_value("slack bot")
    at.checkbox(key="admin_key_admin").check()
    at.button(key="FormSubmitter:admin_new_key-Make key").click().run()
    assert_no_exception(at)
    shown = [c.value for c in at.code]
    assert len(shown) == 1 and shown[0].startswith("hwk_")
    key = shown[0]
    store = ApiKeys(key_database(load_settings()))
    info = store.verify(key)
    assert info is not None and info.user == "local" and info.admin and info.label == "slack bot"
    frame = at.dataframe[0].value
    assert list(frame["id"]) == [info.key_id] and key not in frame.to_string()

    at.run()  # the next run: the key is not shown again
    assert not at.code
    at.selectbox(key="admin_key_revoke").set_value(info.key_id)
    at.button(key="admin_key_revoke_button").click().run()
    assert_no_exception(at)
    assert store.verify(key) is None
    assert at.dataframe[0].value["state"][0].startswith("revoked")
