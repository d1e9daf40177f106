"""A count or a sum reads the table or log a search found part of whole (real Milvus Lite), in
the reader's groups only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hopwise.app import Hopwise
from tests.graph.offline_app import offline_app

ENGINEERS = ("柯明远", "章若", "伍思齐")
ROWS = [(f"PX-{i:03d}", ENGINEERS[i % 3], 2 + i % 5) for i in range(90)]
PLAN = (
    "# 设备维护计划\n\n## 计划表\n\n| 设备编号 | 负责工程师 | 预计停机（小时） | 说明 |\n|---|---|---|---|\n"
    + "".join(
        f"| {code} | {who} | {hours} | 按季度例行保养，含校准与安全检查 |\n"
        for code, who, hours in ROWS
    )
    + "\n## 备注\n\n以上为计划值，实际以工单为准。\n"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hopwise]:
    with offline_app(tmp_path_factory.mktemp("kb-whole"), {"plan.md": PLAN}, ["ops"]) as opened:
        yield opened


def test_the_table_is_split_across_chunks(app: Hopwise) -> None:
    doc = app.retriever.list_documents()[0]  # type: ignore[attr-defined]
    assert doc.chunks >= 3  # so no single passage holds it whole


@pytest.mark.slow  # 10–12 s: a table over many chunks, read whole: in .ci/run's slow suite
def test_a_sum_over_a_table_spanning_chunks_counts_every_named_row(app: Hopwise) -> None:
    hours = [h for _, who, h in ROWS if who == "伍思齐"]
    result = app.ask("伍思齐负责的设备预计一共停机多少小时？", groups=["all", "ops"], web=False)
    first = result.answer.splitlines()[0]
    assert first.startswith(f"答案：{sum(hours):g} = ")
    assert first.count(" + ") == len(hours) - 1


def test_a_reader_without_the_group_reads_nothing_of_it(app: Hopwise) -> None:
    result = app.ask("伍思齐负责的设备预计一共停机多少小时？", groups=["all"], web=False)
    assert "答案" not in result.answer and "PX-" not in result.answer
