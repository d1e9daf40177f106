"""Offline answers on a small Chinese contract KB (real Milvus Lite): role -> company -> detail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.offline import OfflineReasoner
from graph.runner import Hopwise
from hopwise.settings import Settings
from ingest.pipeline import ingest_bytes
from ingest.store import MilvusStore

DOCS = {
    "contract.md": "# 供货合同\n## 第一条 供货方\n本合同的供货方为深圳星河电子有限公司，采购方为北京云帆"
    "科技有限公司。\n## 第五条 违约责任\n供货方逾期交货的，每逾期一日，应按合同总额的千分之三向采购方"
    "支付违约金。违约金总额不超过合同总额的百分之十。\n## 第八条 争议解决\n因本合同引起的争议，提交"
    "深圳国际仲裁院仲裁。\n",
    "company.md": "# 公司档案\n## 深圳星河电子有限公司\n深圳星河电子有限公司成立于2009年，法定代表人为"
    "李明远，总部位于深圳市南山区。\n## 北京云帆科技有限公司\n北京云帆科技有限公司成立于2015年，法定代表人"
    "为王佳。\n",
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hopwise]:
    path: Path = tmp_path_factory.mktemp("kb-zh")
    settings = Settings(data_dir=path, web_search=False, llm_base_url=None, llm_model=None,
                        embedding_base_url=None, milvus_uri=None)  # fmt: skip
    store = MilvusStore.from_settings(settings)
    for name, text in DOCS.items():
        ingest_bytes(text.encode(), name, store, groups=["all"], settings=settings)
    yield Hopwise(settings, store, OfflineReasoner())
    store.close()


def _lines(result: dict) -> list[str]:
    return [line for line in result["answer"].splitlines() if line.startswith("- ")]


def test_role_bridge_answers_in_reasoning_order(app: Hopwise) -> None:
    result = app.ask("供货方的法定代表人是谁？")
    hops = result["hops"]
    assert hops[0]["sub_question"] == "供货方是谁？"
    assert hops[1]["query"].startswith("深圳星河电子有限公司") and hops[1]["bridged"]
    assert result["evaluation"]["enough"], result["evaluation"]
    lines = _lines(result)
    assert "供货方为深圳星河电子有限公司" in lines[0] and "李明远" in lines[1]
    assert "王佳" not in result["answer"] and "证据不足" not in result["answer"]


def test_follow_up_about_the_other_party(app: Hopwise) -> None:
    first = app.ask("供货方的法定代表人是谁？")
    follow = app.ask("那采购方呢？", thread_id=first["thread_id"])
    assert follow["standalone_question"] == "采购方的法定代表人是谁？"
    lines = _lines(follow)
    assert "采购方为北京云帆科技有限公司" in lines[0] and "王佳" in lines[1]
    assert "李明远" not in follow["answer"]
