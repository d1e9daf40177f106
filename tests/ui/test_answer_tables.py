"""A quoted table row shows as a small table (its header and that row) in the chat, not as a
run of 'Label: value; …' (issue 46, item 2): a real knowledge base, offline reasoning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.apptools import assert_no_exception, new_app
from tests.ui.markdown_tokens import tokens

ROSTER = b"""# On-call roster

| Week | Primary | Primary phone | Backup | Backup phone |
|---|---|---|---|---|
| 31 | Ona Brisk | 0100 111 | Pell Varga | 0100 222 |
| 32 | Ivo Mart | 0100 333 | Una Saar | 0100 444 |
| 33 | Rea Tull | 0100 555 | Kip Dorn | 0100 666 |
| 34 | Ada Vell | 0100 777 | Sol Wynn | 0100 888 |
"""


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    done = ingest_bytes(ROSTER, "roster.md", store, groups=["all"], config=settings.ingest)
    assert done.status == "ingested", done.reason
    return app_data


def test_a_quoted_row_is_drawn_as_a_table_with_its_header(kb: Path) -> None:
    at = new_app().run()
    at.chat_input[0].set_value("What is the backup phone in week 33?").run()
    assert_no_exception(at)
    answer = next(m for m in at.chat_message if m.name == "assistant")
    body = "\n\n".join(str(m.value) for m in answer.markdown)
    kinds = [t.type for t in tokens(body)]
    assert kinds.count("table_open") >= 1
    assert "Week: 33;" not in body and "Backup phone: 0100" not in body  # no run-on row
    cells = [t.content for t in tokens(body) if t.type == "inline"]
    assert "Backup phone" in cells  # the header's names head the columns
    assert any("0100 666" in c for c in cells)  # the row itself
