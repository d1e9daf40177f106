"""A served app opens the knowledge base in the background after the server starts: until it
is open, pages draw at once, say so, show the chat's question box disabled, and redraw
themselves when it is open (the first paint never waits for Milvus and the models). AppTest
has no server, so there the pages open it themselves (and wait), as before."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.ui.apptools import assert_no_exception, new_app, texts


def test_pages_draw_while_the_knowledge_base_opens(
    app_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.services
    from ui.services import WarmUp

    release = threading.Event()
    opened: list[bool] = []

    def slow_open() -> None:
        release.wait(30)  # the store and the models, taking their time
        opened.append(True)

    warm = WarmUp()
    monkeypatch.setattr(warm, "_open", slow_open)
    monkeypatch.setattr(ui.services, "WARMUP", warm)
    warm.enabled = True  # as the server's lifespan does
    at = new_app().run()
    assert_no_exception(at)
    assert "Opening the knowledge base…" in texts(at)
    [box] = at.chat_input
    assert box.disabled and box.placeholder == "Ask a question about your documents…"
    assert warm.pending()  # the page started the opening: no timer needed
    release.set()
    for _ in range(100):
        if not warm.pending():
            break
        threading.Event().wait(0.05)
    at.run()
    assert_no_exception(at)
    assert opened and "Opening the knowledge base…" not in texts(at)
    assert not at.chat_input[0].disabled


def test_without_a_server_the_page_opens_it_itself(app_data: Path) -> None:
    from ui.services import WARMUP

    assert not WARMUP.enabled and not WARMUP.pending()
    at = new_app().run()
    assert_no_exception(at)
    assert "Opening the knowledge base…" not in texts(at) and not at.chat_input[0].disabled


def test_the_first_page_loads_no_langgraph_pandas_store_or_reader() -> None:
    """The server and what the chat page imports before it draws its question box stay light:
    LangGraph, pandas, the Milvus client, the PDF renderer and the offline reader load with the
    knowledge base (in the background) or on the page that needs them, not before the box."""
    import subprocess
    import sys

    from ui.routes import PAGE_MODULES

    heavy = ("langgraph", "pandas", "pymilvus", "pypdfium2", "graph.offline", "hopwise.app")
    code = (
        "import sys, importlib, ui.routes, ui.services\n"
        f"for name in {PAGE_MODULES!r}: importlib.import_module(name)\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
