"""One user's chat never serves another: sign-out forgets everything, owners are exact names,
and the runner itself refuses someone else's thread (not only the page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.conversations import ThreadAccessError
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts

POLICY = b"""# Travel policy

## Hotels
Hotel stays are reimbursed up to 180 euros per night.
"""
BUDGET = b"""# Finance budget

## Reserve
The confidential reserve for the Larkspur acquisition is 7.4 million euros.
"""
USERS = {
    "bo": {"password": "bo-pw", "groups": []},
    "ana": {"password": "ana-pw", "groups": ["finance"]},
    "bob": {"password": "bob-pw", "groups": []},
    "bob:ops": {"password": "ops-pw", "groups": []},
}


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    for name, data, groups in (("policy.md", POLICY, ["all"]), ("budget.md", BUDGET, ["finance"])):
        assert ingest_bytes(data, name, store, groups=groups, config=settings.ingest).status == (
            "ingested"
        )
    return app_data


def sign_in(at, name: str, password: str):
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.text_input[1].set_value(password)
    at.sidebar.button[0].click().run()
    assert_no_exception(at)
    assert f"Signed in as **{name}**" in texts(at).replace("\u2060", "")  # (escaped name)
    return at


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert_no_exception(at)
    return at


def test_sign_out_leaves_nothing_for_the_next_user_of_the_tab(kb: Path) -> None:
    from ui.services import get_runner

    at = sign_in(new_app(users=USERS).run(), "bo", "bo-pw")
    ask(at, "How much is reimbursed for a hotel night?")
    [bo_thread] = get_runner().list_threads(owner="bo")
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()  # admin unlocked in this tab
    assert "hopwise_admin" in at.session_state
    at.switch_page("app_pages/chat.py").run()
    at.sidebar.button(key="sign_out").click().run()

    sign_in(at, "ana", "ana-pw")
    assert "180 euros" not in texts(at) and not at.chat_message  # bo's chat is not open
    assert "How much is reimbursed" not in " ".join(b.label for b in at.sidebar.button)
    ask(at, "What is the confidential reserve for the Larkspur acquisition?")
    runner = get_runner()
    assert [t["thread_id"] for t in runner.list_threads(owner="bo")] == [bo_thread["thread_id"]]
    bo_answers = runner.thread_answers(bo_thread["thread_id"], owner="bo")
    assert len(bo_answers) == 1 and "7.4 million" not in bo_answers[0].to_json().__repr__()
    assert len(runner.list_threads(owner="ana")) == 1
    at.switch_page("app_pages/admin.py").run()
    assert "hopwise_admin" not in at.session_state  # the admin unlock went with bo
    assert any(t.label == "Admin password" for t in at.text_input)


def test_owner_is_an_exact_name_not_a_prefix(kb: Path) -> None:
    from ui.services import get_runner

    ops = sign_in(new_app(users=USERS).run(), "bob:ops", "ops-pw")
    ask(ops, "How much is reimbursed for a hotel night?")
    [ops_thread] = get_runner().list_threads(owner="bob:ops")
    bob = sign_in(new_app(users=USERS).run(), "bob", "bob-pw")
    labels = " ".join(b.label for b in bob.sidebar.button)
    assert "How much is reimbursed" not in labels
    bob.query_params.update({"thread": ops_thread["thread_id"], "answer": "1"})
    bob.switch_page("app_pages/trace.py").run()
    assert_no_exception(bob)
    assert "not found, or you have no access" in texts(bob)
    assert "180 euros" not in texts(bob)


def test_the_runner_refuses_someone_elses_thread(kb: Path) -> None:
    from ui.services import get_runner

    runner = get_runner()
    result = runner.ask("How much is reimbursed for a hotel night?", owner="bo")
    with pytest.raises(ThreadAccessError, match="not found or no access"):
        runner.thread_answers(result.thread_id, owner="bob")
    with pytest.raises(ThreadAccessError):  # writing into it is refused too
        runner.ask("And for meals?", thread_id=result.thread_id, owner="bob")
    with pytest.raises(ThreadAccessError):
        runner.thread_answers("no-such-thread", owner="bo")
    assert len(runner.thread_answers(result.thread_id, owner="bo")) == 1


def test_a_reload_does_not_reset_the_sign_in_back_off(kb: Path) -> None:
    for _ in range(2):  # two wrong guesses, each from a brand-new browser session
        at = new_app(users=USERS).run()
        at.sidebar.text_input[0].set_value("ana")
        at.sidebar.text_input[1].set_value("guess")
        at.sidebar.button[0].click().run()
        assert "Wrong credentials" in texts(at)
    fresh = new_app(users=USERS).run()
    fresh.sidebar.text_input[0].set_value("ana")
    fresh.sidebar.text_input[1].set_value("ana-pw")  # right, but held back
    fresh.sidebar.button[0].click().run()
    assert "Too many failed attempts" in texts(fresh)
    assert "Signed in as" not in texts(fresh)


def test_answers_using_a_withdrawn_document_are_hidden_from_the_reader(kb: Path) -> None:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_runner, get_settings, get_store

    store, settings = get_store(), get_settings()
    memo = b"# Offsite memo\n\n## Venue\nThe offsite takes place at the Quarry Lodge in Lisbon.\n"
    done = ingest_bytes(memo, "offsite.md", store, groups=["finance"], config=settings.ingest)
    runner = get_runner()
    asked = runner.ask("Where does the offsite take place?", groups=("all", "finance"), owner="ana")
    assert "Quarry Lodge" in asked.answer
    [kept] = runner.thread_answers(asked.thread_id, owner="ana", groups=("all", "finance"))
    assert "Quarry Lodge" in kept.answer  # still readable: shown as it was

    [as_public] = runner.thread_answers(asked.thread_id, owner="ana", groups=("all",))
    assert "Quarry Lodge" not in as_public.to_json().__repr__()  # ana lost the group
    assert "no longer" in as_public.answer
    follow = runner.ask("And when?", thread_id=asked.thread_id, groups=("all",), owner="ana")
    assert "Quarry Lodge" not in follow.to_json().__repr__()  # not even through the history

    store.delete_document(str(done.doc_id))
    for saved in runner.thread_answers(asked.thread_id, owner="ana", groups=("all", "finance")):
        assert "Quarry Lodge" not in saved.to_json().__repr__()  # deleted: gone for everyone
