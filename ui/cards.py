"""A source card: where a citation is, the quoted passage, and (issue 15) the original."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from ui import safe


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
