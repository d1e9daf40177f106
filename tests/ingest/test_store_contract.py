"""The store contract, run against every backend (embedded, hybrid, remote server, in-memory)."""

from __future__ import annotations

import pytest

from ingest.config import FusionConfig
from ingest.langchain_view import as_langchain_milvus
from ingest.models import Chunk
from ingest.phrases import phrase_key
from ingest.protocols import KnowledgeBase, PhraseCounter
from ingest.store import group_filter, validate_chunk_groups, validate_groups

CORPUS = {
    "contract": [
        "甲方应在收到发票后三十日内付款。",
        "逾期付款的，每日按未付金额的千分之五支付违约金。",
        "本合同自双方签字之日起生效。",
    ],
    "ops": ["服务器重启前必须通知值班工程师，并在变更系统中登记。"],
    "runbook": [
        "To restart the payment gateway, drain traffic first and then restart the service.",
        "Rotate the TLS certificates every ninety days.",
    ],
    "policy": ["Employees may work remotely two days per week with manager approval."],
}
SECRET = "The confidential settlement with Acme Corporation is two million dollars."
INJECTIONS = ['all" or 1==1 or "', 'legal"]) or (1 == 1', "a b", "", "x" * 65, "legal;drop"]


def make_chunks(
    doc_id: str, texts: list[str], version: int = 1, groups: list[str] | None = None
) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"{doc_id}-v{version}-{i}",
            doc_id=doc_id,
            doc_version=version,
            title=doc_id.title(),
            source=f"{doc_id}.md",
            section_path=f"{doc_id} > part {i}",
            page=i + 1 if doc_id == "contract" else None,
            start_char=i * 100,
            end_char=i * 100 + len(t),
            text=t,
            groups=groups or ["all"],
            checksum=f"sum-{version}",
            created_at=1000.0 + version,
        )  # fmt: skip
        for i, t in enumerate(texts)
    ]


def fill(store) -> None:
    for doc_id, texts in CORPUS.items():
        store.replace_document(make_chunks(doc_id, texts))
    store.replace_document(make_chunks("secret", [SECRET], groups=["legal"]))


@pytest.fixture
def filled(backend):
    """The standard corpus, written once per backend and shared by read-only tests."""
    store = backend.open()
    if not backend.state["filled"]:
        backend.clear(store)
        fill(store)
        backend.state["filled"] = True
    return store


def test_every_backend_is_a_knowledge_base(store) -> None:
    assert isinstance(store, KnowledgeBase)
    assert store.search("anything", ["all"]) == [] and store.list_documents() == []
    assert store.count_chunks() == 0 and store.stats()["chunks"] == 0


def test_metadata_round_trips_through_writes_and_reads(store) -> None:
    chunks = make_chunks("runbook", ["Rotate the TLS certificates every ninety days."])
    chunks[0].metadata = {"team": "infra", "tags": ["tls", "ops"], "rev": 3}
    store.replace_document(chunks)
    [hit] = store.search("TLS certificates", ["all"], k=1)
    assert hit.metadata == {"team": "infra", "tags": ["tls", "ops"], "rev": 3}
    assert store.get_chunks("runbook")[0].metadata == hit.metadata


def test_the_document_list_records_hidden_text_removed(store) -> None:
    chunks = make_chunks("policy", ["Remote work needs manager approval."])
    chunks[0].hidden_removed = 42
    store.replace_document(chunks)
    assert store.get_document("policy").hidden_removed == 42
    assert [d.hidden_removed for d in store.list_documents()] == [42]


def test_chinese_bm25_finds_the_clause(filled) -> None:
    hits = filled.search("违约金怎么计算", ["all"], k=5)
    assert hits and hits[0].chunk_id == "contract-v1-1"
    assert hits[0].bm25_score and hits[0].bm25_score > 0
    assert hits[0].page == 2 and hits[0].section == "contract > part 1"
    assert hits[0].source == "contract.md" and hits[0].doc_version == 1


def test_english_bm25_ranks_best_match_first(filled) -> None:
    hits = filled.search("how to restart the payment gateway", ["all"], k=5)
    assert hits[0].chunk_id == "runbook-v1-0"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
    assert all(h.score > 0 for h in hits)


def test_scores_are_positive_and_higher_is_better(filled, backend) -> None:
    hits = filled.search("restart", ["all"], k=10)
    bm25 = [h for h in hits if h.bm25_score is not None]
    assert bm25 and all(h.bm25_score > 0 for h in bm25)
    assert bm25[0].chunk_id == "runbook-v1-0"  # "restart" twice beats every other chunk
    if not backend.dense:
        assert all(h.dense_score is None and h.score == h.bm25_score for h in hits)


@pytest.mark.parametrize(
    "backend",
    ["lite-hybrid", pytest.param("server-hybrid", marks=pytest.mark.slow), "memory-hybrid"],
    indirect=True,
)
def test_hybrid_fuses_both_channels_with_rrf(filled) -> None:
    hits = filled.search("restart the payment gateway", ["all"], k=5)
    assert hits[0].chunk_id == "runbook-v1-0"
    top = hits[0]
    assert top.bm25_score is not None and top.dense_score is not None
    # ranked first in both channels: the weighted sum over the weights, 1 / (60 + 1)
    assert top.score == pytest.approx(1 / (FusionConfig().rrf_k + 1))
    assert any(h.bm25_score is None for h in hits)  # dense-only candidates are fused in


@pytest.mark.parametrize(
    "backend",
    ["lite-hybrid", pytest.param("server-hybrid", marks=pytest.mark.slow), "memory-hybrid"],
    indirect=True,
)
def test_hybrid_falls_back_to_bm25_when_embeddings_fail(filled) -> None:
    filled.embedder.fail_queries = True
    try:  # a question not asked before: its vector is not cached
        hits = filled.search("the payment gateway restart procedure", ["all"], k=5)
    finally:
        filled.embedder.fail_queries = False
    assert hits[0].chunk_id == "runbook-v1-0"
    assert all(h.dense_score is None and h.bm25_score for h in hits)
    assert all(h.doc_id != "secret" for h in filled.search("settlement", ["all"], k=20))


def test_acl_hides_restricted_documents(filled) -> None:
    for query in ("confidential settlement Acme", "two million dollars", "settlement"):
        assert all(h.doc_id != "secret" for h in filled.search(query, ["all"], k=20))
        assert all(h.doc_id != "secret" for h in filled.search(query, ["ops", "hr"], k=20))
    allowed = filled.search("confidential settlement Acme", ["legal"], k=5)
    assert allowed[0].doc_id == "secret" and allowed[0].groups == ["legal"]


def test_malicious_group_is_rejected(filled) -> None:
    for bad in INJECTIONS:
        with pytest.raises(ValueError):
            filled.search("settlement", ["all", bad], k=20)


def test_empty_query_returns_nothing(filled) -> None:
    assert filled.search("", ["all"]) == []
    assert filled.search("   \n", ["all"]) == []


def test_new_version_replaces_old_completely(store) -> None:
    fill(store)
    new = ["新版合同：逾期付款按每日万分之三计算滞纳金。", "本合同一式两份。"]
    store.replace_document(make_chunks("contract", new, version=2))
    chunks = store.get_chunks("contract")
    assert [c.text for c in chunks] == new and {c.doc_version for c in chunks} == {2}
    old_hits = store.search("千分之五 违约金", ["all"], k=10)
    assert all(h.doc_id != "contract" or h.doc_version == 2 for h in old_hits)
    assert store.search("滞纳金", ["all"])[0].chunk_id == "contract-v2-0"
    info = store.get_document("contract")
    assert info.version == 2 and info.chunks == 2 and info.checksum == "sum-2"
    assert store.count_chunks() == 2 + 1 + 2 + 1 + 1


def test_pending_version_is_invisible_and_repaired_on_reopen(store, backend) -> None:
    fill(store)
    before = store.count_chunks()
    # A crash after the new version's chunks were written but before it became active:
    store._write_pending(make_chunks("contract", ["崭新条款：赔偿金为一百万元。"], version=2))
    store._write_pending(make_chunks("draft", ["unfinished draft about zebras"]))
    for query in ("赔偿金", "zebras"):
        hits = store.search(query, ["all"], k=20)
        assert all(h.doc_version == 1 and h.doc_id != "draft" for h in hits)
        assert all(h.bm25_score is None for h in hits)  # nothing matched lexically
    assert store.search("违约金", ["all"])[0].chunk_id == "contract-v1-1"
    assert [c.doc_version for c in store.get_chunks("contract")] == [1, 1, 1]
    assert store.count_chunks() == before
    assert {d.doc_id for d in store.list_documents()} == {*CORPUS, "secret"}
    reopened = backend.reopen()
    assert reopened.get_document("contract").version == 1
    assert reopened.get_document("draft") is None
    assert reopened.count_chunks() == before
    # the orphans are gone for good: the same ids can be written again
    reopened.replace_document(make_chunks("contract", ["崭新条款：赔偿金为一百万元。"], version=2))
    assert reopened.search("赔偿金", ["all"])[0].chunk_id == "contract-v2-0"
    assert reopened.count_chunks() == before - 2


def test_rejected_write_changes_nothing(store) -> None:
    fill(store)
    before = (store.list_documents(), store.count_chunks())
    mixed = make_chunks("contract", ["a"], version=2) + make_chunks("ops", ["b"], version=2)
    with pytest.raises(ValueError):
        store.replace_document(mixed)
    with pytest.raises(ValueError):  # chunk ids must not collide with another document's
        store.replace_document(make_chunks("contract", ["x"], version=2)[:0] or [
            make_chunks("contract", ["x"], version=2)[0].model_copy(update={"chunk_id": "ops-v1-0"})
        ])  # fmt: skip
    with pytest.raises(ValueError):
        store.replace_document(make_chunks("ops", ["same version again"], version=1))
    with pytest.raises(ValueError):
        store.replace_document(make_chunks("ops", ["bad acl"], version=2, groups=['x" or "1']))
    assert (store.list_documents(), store.count_chunks()) == before
    assert store.search("服务器重启", ["all"])[0].chunk_id == "ops-v1-0"


def test_delete_document(store) -> None:
    fill(store)
    assert store.delete_document("contract") == 3
    assert store.get_document("contract") is None
    assert store.get_chunks("contract") == []
    assert all(h.doc_id != "contract" for h in store.search("违约金 合同", ["all"], k=20))
    assert store.delete_document("contract") == 0
    assert store.delete_document("never-there") == 0
    assert store.count_chunks() == 1 + 2 + 1 + 1


def lexical_top(hits) -> str:
    """The text BM25 ranked first (the dense channel of hybrid backends aside)."""
    matched = [h for h in hits if h.bm25_score]
    return max(matched, key=lambda h: h.bm25_score).text if matched else ""


def test_bm25_ignores_accents_and_character_width(store) -> None:
    texts = [
        "The Tekezé River flows into Sudan.",
        "Zurich is the largest city in Switzerland.",
        "ＡＢＣ Holdings builds ferries.",
        "The Nile river flows north through Sudan.",
    ]
    store.replace_document(make_chunks("places", texts))
    for query, expected in [
        ("Tekeze River", texts[0]), ("TEKEZE", texts[0]), ("Zürich", texts[1]),
        ("ABC", texts[2]), ("Tekezé", texts[0]),
    ]:  # fmt: skip
        assert lexical_top(store.search(query, ["all"], k=4)) == expected, query
    assert store.get_chunks("places")[0].text == texts[0]  # shown as written, accents kept


def test_phrase_counts_follow_groups_and_visible_versions(store) -> None:
    assert isinstance(store, PhraseCounter)
    key, absent = phrase_key("Battle of Mine Creek"), phrase_key("Battle of Nowhere")
    texts = [
        "Price lost the Battle of Mine Creek in 1864.",
        "Pleasonton won the Battle of Mine Creek.",
    ]
    store.replace_document(make_chunks("battle", texts))
    store.replace_document(
        make_chunks("sealed", ["Sealed files on the Battle of Mine Creek."], groups=["legal"])
    )
    assert store.phrase_counts([key, absent], ["all"]) == {key: 2}
    assert store.phrase_counts([key, "pleasonton"], ["legal"]) == {key: 3, "pleasonton": 1}
    assert store.phrase_counts([], ["all"]) == {} and store.phrase_counts([absent], ["all"]) == {}
    # a version in flight counts for nothing: neither a new one nor a first one
    store._write_pending(make_chunks("battle", ["Battle of Mine Creek, revised."], version=2))
    store._write_pending(make_chunks("draft", ["A draft on the Battle of Mine Creek."]))
    assert store.phrase_counts([key], ["legal"]) == {key: 3}
    store.delete_document("sealed")
    assert store.phrase_counts([key], ["legal"]) == {key: 2}
    with pytest.raises(ValueError):
        store.phrase_counts([key], ['all" or "1'])


def test_a_document_is_read_whole_only_by_those_who_may_read_it(filled) -> None:
    """document_hits (a count or sum reads a table or log whole): the groups are checked in
    the store, the chunks come in document order, and a document past the limit is not read."""
    whole = filled.document_hits("contract", ["all"], 10)
    assert [h.text for h in whole] == CORPUS["contract"]
    assert filled.document_hits("secret", ["all"], 10) == []
    assert [h.text for h in filled.document_hits("secret", ["legal"], 10)] == [SECRET]
    assert filled.document_hits("contract", ["all"], 2) == []  # three chunks: too long to read
    assert filled.document_hits("nothing-here", ["all"], 10) == []


def test_list_documents_with_counts(filled) -> None:
    docs = {d.doc_id: d for d in filled.list_documents()}
    assert set(docs) == {*CORPUS, "secret"}
    assert docs["contract"].chunks == 3 and docs["runbook"].chunks == 2
    assert docs["contract"].source == "contract.md" and docs["contract"].version == 1
    assert docs["secret"].groups == ["legal"] and docs["ops"].groups == ["all"]
    stats = filled.stats()
    assert stats["documents"] == 5 and stats["chunks"] == 8
    assert stats["dense"] is (filled.embedder is not None)


def test_reopen_keeps_everything(store, backend) -> None:
    fill(store)
    first = [h.chunk_id for h in store.search("restart", ["all"])]
    again = backend.reopen()
    assert [h.chunk_id for h in again.search("restart", ["all"])] == first
    assert len(again.list_documents()) == 5 and again.count_chunks() == 8
    chunk = again.get_chunks("contract")[1]
    assert chunk.page == 2 and chunk.groups == ["all"] and chunk.created_at == 1001.0


def test_validate_groups() -> None:
    assert validate_groups(["legal", "all", "legal", "财务部"]) == ["all", "legal", "财务部"]
    assert validate_groups(None) == ["all"] and validate_groups("hr, ops") == ["all", "hr", "ops"]
    assert validate_groups(["team.a@corp:x-1_2"]) == ["all", "team.a@corp:x-1_2"]
    assert validate_chunk_groups([]) == ["all"] and validate_chunk_groups(["legal"]) == ["legal"]
    with pytest.raises(ValueError, match="at most 64 groups"):
        validate_chunk_groups([f"g{i}" for i in range(65)])
    for bad in INJECTIONS:
        with pytest.raises(ValueError):
            validate_groups([bad])
    assert group_filter(["legal"]) == 'array_contains_any(groups, ["all", "legal"])'


@pytest.mark.parametrize("backend", ["lite-bm25", "lite-hybrid"], indirect=True)
def test_langchain_milvus_reads_the_same_collection(filled) -> None:
    vectorstore = as_langchain_milvus(filled)
    expr = filled.search_filter(["all"])
    docs = vectorstore.similarity_search("违约金怎么计算", k=3, expr=expr)
    assert docs[0].metadata["chunk_id"] == "contract-v1-1"
    ours = filled.search("违约金怎么计算", ["all"], k=3)
    assert docs[0].page_content == ours[0].text
    if filled.embedder is None:  # same engine, same BM25: the same ranking
        assert [d.metadata["chunk_id"] for d in docs] == [h.chunk_id for h in ours]
    leaked = vectorstore.similarity_search("confidential settlement Acme", k=10, expr=expr)
    assert all(d.metadata["doc_id"] != "secret" for d in leaked)
