"""The SQLite-backed runner under concurrent questions (Streamlit serves sessions on threads)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hopwise.app import Hopwise, open_checkpointer
from hopwise.settings import Settings
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks


def test_concurrent_questions_and_threads_on_one_sqlite_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, web_search=False, llm_economy=False)  # type: ignore[call-arg]
    app = Hopwise(
        settings, KeywordRetriever(sample_chunks()), ScriptedReasoner(),
        None, open_checkpointer(settings.checkpoint_path),
    )  # fmt: skip
    questions = [f"Who directed Inception? ({i})" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: app.ask(q, thread_id=f"user:{q[-2]}"), questions))
    assert all(r.citations for r in results)
    threads = app.list_threads()
    assert len(threads) == 8 and all(t["answers"] == 1 for t in threads)
    follow = app.ask("And where was he born?", thread_id="user:3")
    assert len(app.thread_answers("user:3")) == 2 and follow.thread_id == "user:3"
    app.close()
    reopened = Hopwise(
        settings,
        KeywordRetriever([]),
        ScriptedReasoner(),
        None,
        open_checkpointer(settings.checkpoint_path),
    )
    assert {t["thread_id"] for t in reopened.list_threads()} == {f"user:{i}" for i in range(8)}
    assert reopened.thread_answers("user:3")[1].question == "And where was he born?"
    reopened.close()
