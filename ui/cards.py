"""A source card: where a citation is, the quoted passage, and the original it came from."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import streamlit as st

from ui import safe
from ui.documents import section_markdown
from ui.quotes import cited_context, marked_passage
from ui.viewer import open_button


def source_card(card: Mapping[str, Any]) -> None:
    """One citation: where it is, the unit the answer quotes in its context (the quoted words
    marked), the full passage, and either the document's original (*Open original*: the
    viewer, on the same words) or, for a web result, its link.

    Every field is untrusted document or web text, so it goes through ui.safe; the only link is
    the one we rebuild from a parsed http(s) URL, labelled with its domain.
    """
    with st.container(border=True):
        if card.get("anchor"):  # the heading the answer's [n] links to (an id we made)
            st.subheader(f"\\[{int(card['n'])}\\]", anchor=card["anchor"])
            st.markdown(f"**{safe.escape_inline(card['where'])}**")
        else:
            st.markdown(f"**[{int(card['n'])}]** {safe.escape_inline(card['where'])}")
        passage = str(card["full_text"] or "")
        # the unit the answer quotes, in its context, the quoted words marked; else the quote
        context = cited_context(passage, [*card.get("cited", []), card["quote"]])
        if context is not None and context.marked is not None:
            st.markdown(section_markdown(context))
            start, end = context.marked
            quote = context.text[start:end]
        elif card["quote"]:
            st.markdown(safe.quote_block(card["quote"]))
            quote = card["quote"]
        else:
            quote = ""
        if card["url"]:
            web = safe.web_link(card["url"])
            if web is not None:  # Streamlit opens Markdown links in a new tab
                st.markdown(f":material/public: Web result · {safe.link_markdown(web)}")
            else:
                st.markdown(":material/public: Web result")
            st.caption(safe.escape_inline(card["url"]))
        if passage and card["chunk_id"]:
            with st.expander("Full passage"):
                st.markdown(section_markdown(marked_passage(passage, quote)))  # escaped
        if card.get("doc_id") and card["chunk_id"]:
            target = {
                "doc_id": card["doc_id"],
                "chunk_id": card["chunk_id"],
                "page": card.get("page"),
                "quote": quote,
                "section": card.get("section", ""),
            }
            open_button(target, key=f"open_{_card_id(card)}")


def _card_id(card: Mapping[str, Any]) -> str:
    """A widget key unique to this citation of this answer (answers repeat [1])."""
    seed = f"{card.get('answer', '')}|{card['n']}|{card['chunk_id']}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]
