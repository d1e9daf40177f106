"""Streamlit drawing helpers shared by the pages (layout only; data comes from ui.formatting)."""

from __future__ import annotations

import re

import streamlit as st

from graph.result import QuestionResult
from ui import safe
from ui.answer_actions import answer_actions
from ui.cards import source_card
from ui.formatting import answer_rows, badges, source_cards
from ui.services import TRACE_KEY

TRACE_PAGE = "app_pages/trace.py"


def answer_block(result: QuestionResult, *, thread_id: str, index: int, last: bool = False) -> None:
    """The body of an assistant message: answer, badges, source cards, then a row of actions
    (copy, regenerate the `last` answer, feedback) and the link to its trace."""
    cited = {citation.n for citation in result.citations}
    anchors = {n: card_anchor(thread_id, index, n) for n in cited}  # [n] links to card n
    body = safe.answer_markdown(result.answer, cited, anchors, answer_rows(result))
    st.markdown(body or "_(no answer)_")
    st.markdown(badges(result))
    cards = source_cards(result)
    if cards:
        st.caption(f"Sources ({len(cards)})")
        for start in range(0, len(cards), 2):  # a row per pair: a phone stacks 1, 2, 3, 4
            for column, card in zip(st.columns(2), cards[start : start + 2], strict=False):
                with column:
                    source_card({**card, "anchor": anchors.get(int(card["n"]), "")})
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        answer_actions(result, thread_id=thread_id, index=index, last=last)
        if st.button("Open hop trace →", key=f"trace_{thread_id}_{index}", type="tertiary"):
            open_trace(thread_id, index)


def card_anchor(thread_id: str, index: int, n: int) -> str:
    """The id of source card `n` of an answer: unique on the page, letters/digits/dashes."""
    return f"src-{re.sub(r'[^a-z0-9]', '', thread_id.lower())[:12]}-{index + 1}-{n}"


def open_trace(thread_id: str, index: int) -> None:
    """Go to the trace page with this answer selected."""
    st.session_state[TRACE_KEY] = {"thread_id": thread_id, "index": index}
    st.switch_page(TRACE_PAGE, query_params={"thread": thread_id, "answer": str(index + 1)})
