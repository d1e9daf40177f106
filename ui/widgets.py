"""Streamlit drawing helpers shared by the pages (layout only; data comes from ui.formatting)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from graph.result import QuestionResult
from ui import safe
from ui.formatting import badges, source_cards
from ui.services import TRACE_KEY

TRACE_PAGE = "app_pages/trace.py"


def source_card(card: Mapping[str, Any]) -> None:
    """One citation: where it is, the quoted passage, the link, and the full chunk on demand.

    Every field is untrusted document or web text, so it goes through ui.safe; the only link is
    the one we rebuild from a parsed http(s) URL, labelled with its domain.
    """
    with st.container(border=True):
        st.markdown(f"**[{int(card['n'])}]** {safe.escape_inline(card['where'])}")
        if card["quote"]:
            st.markdown(safe.quote_block(card["quote"]))
        if card["url"]:
            web = safe.web_link(card["url"])
            if web is not None:
                st.markdown(f":material/public: {safe.link_markdown(web)}")
            st.caption(safe.escape_inline(card["url"]))
        if card["full_text"] and card["chunk_id"]:
            with st.expander("Full passage"):
                st.text(card["full_text"])  # st.text never parses Markdown
                st.caption(f"chunk {safe.escape_inline(card['chunk_id'])}")


def answer_block(result: QuestionResult, *, thread_id: str, index: int) -> None:
    """The body of an assistant message: answer, badges, source cards, link to its trace."""
    cited = {citation.n for citation in result.citations}
    st.markdown(safe.answer_markdown(result.answer, cited) or "_(no answer)_")
    st.markdown(badges(result))
    cards = source_cards(result)
    if cards:
        st.caption(f"Sources ({len(cards)})")
        columns = st.columns(2)
        for i, card in enumerate(cards):
            with columns[i % 2]:
                source_card(card)
    if st.button("Open hop trace →", key=f"trace_{thread_id}_{index}", type="tertiary"):
        open_trace(thread_id, index)


def open_trace(thread_id: str, index: int) -> None:
    """Go to the trace page with this answer selected."""
    st.session_state[TRACE_KEY] = {"thread_id": thread_id, "index": index}
    st.switch_page(TRACE_PAGE, query_params={"thread": thread_id, "answer": str(index + 1)})
