"""Places of a search's top k kept for the other language's best dense candidates."""

from __future__ import annotations

from typing import Any

from ingest.models import Hit
from ingest.store.fusion import other_language, with_other_language

ZH = "网关每分钟最多能处理一百二十次请求，超过以后返回错误。"
EN = "The gateway accepts at most one hundred requests per minute before it refuses more."


def _entity(cid: str, text: str) -> dict[str, Any]:
    return {"chunk_id": cid, "doc_id": cid, "text": text}


def _make(entity: dict[str, Any], rank: int, *, fused: float, dense: float | None = None) -> Hit:
    return Hit(chunk_id=entity["chunk_id"], doc_id=entity["doc_id"], text=entity["text"],
               score=fused, dense_score=dense, rank=rank)  # fmt: skip


def _hits(texts: list[tuple[str, str]]) -> list[Hit]:
    return [_make(_entity(c, t), i, fused=1.0 / i) for i, (c, t) in enumerate(texts, 1)]


def test_the_best_other_language_candidates_it_lacks_take_the_last_places() -> None:
    dense = [(0.9, _entity("z1", ZH)), (0.8, _entity("e1", EN)), (0.7, _entity("e2", EN)),
             (0.6, _entity("e3", EN)), (0.5, _entity("e4", EN))]  # fmt: skip
    other = other_language(dense, "zh", 3)
    assert [e["chunk_id"] for _, e in other] == ["e1", "e2", "e3"]
    fused = _hits([("z1", ZH), ("z2", ZH), ("e2", EN), ("z3", ZH), ("z4", ZH), ("z5", ZH)])
    out = with_other_language(fused, other, 6, _make)
    # e2 already made it: two more of the three, in dense order, at the end; k kept
    assert [h.chunk_id for h in out] == ["z1", "z2", "e2", "z3", "e1", "e3"]
    assert out[-1].dense_score == 0.6


def test_one_slot_changes_nothing_once_the_other_language_is_there_and_half_is_the_cap() -> None:
    dense = [(0.8, _entity(f"e{i}", EN)) for i in range(1, 6)]
    fused = _hits([("z1", ZH), ("e9", EN), ("z2", ZH), ("z3", ZH)])
    assert with_other_language(fused, other_language(dense, "zh", 1), 4, _make) == fused
    capped = with_other_language(_hits([(f"z{i}", ZH) for i in range(4)]),
                                 other_language(dense, "zh", 5), 4, _make)  # fmt: skip
    assert [h.chunk_id for h in capped] == [
        "z0",
        "z1",
        "e1",
        "e2",
    ]  # the question's language keeps half
    assert with_other_language(fused, [], 4, _make) == fused  # one language: untouched


def test_an_other_language_hit_in_the_tail_stays_and_ranks_follow_the_positions() -> None:
    dense = [(0.8, _entity(f"e{i}", EN)) for i in range(1, 4)]
    fused = _hits([("z1", ZH), ("z2", ZH), ("z3", ZH), ("e9", EN)])
    out = with_other_language(fused, other_language(dense, "zh", 2), 4, _make)
    # e9 already counts: one more place, taken from the question's own language's last hit
    assert [h.chunk_id for h in out] == ["z1", "z2", "e9", "e1"]
    assert [h.rank for h in out] == [1, 2, 3, 4]
    # half of k at most, the ones already there counted
    many = with_other_language(_hits([("z1", ZH), ("e9", EN), ("z3", ZH), ("z4", ZH)]),
                               other_language(dense, "zh", 5), 4, _make)  # fmt: skip
    assert sum(1 for h in many if h.chunk_id.startswith("e")) == 2
