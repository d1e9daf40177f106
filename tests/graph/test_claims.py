"""The claim check (graph/claims.py): splitting, facts, verdicts and cutting failed claims."""

from __future__ import annotations

from collections.abc import Sequence

from graph import claims as cl
from graph.protocols import EvidenceItem


def item(n: int, text: str, chunk_id: str | None = None, whole: bool = False) -> EvidenceItem:
    return EvidenceItem(
        n=n, chunk_id=chunk_id or f"doc-{n}-v1-00000", source=f"d{n}.md", text=text,
        whole_document=whole,
    )  # fmt: skip


PASSAGES = [
    item(
        1, "The Harbor ledger service is owned by the Quay team. It handles 1,200 invoices a day."
    ),
    item(2, "The Quay team is led by Ilse Brandt. Her extension is 4417."),
    item(3, "合同于2023年9月18日签订，由周明远负责，押金为 3,000 元。"),
]


def verdicts(answer: str, question: str = "Who leads it?", **kw: object) -> list[cl.Claim]:
    return cl.check(cl.split_claims(answer), PASSAGES, question, **kw)  # type: ignore[arg-type]


def test_sentences_keep_the_markers_after_their_full_stop_and_quotes_stay_whole() -> None:
    answer = (
        'Ilse Brandt leads the Quay team. [2] She said "Use the ledger. Always." [1]\n'
        "- first item [1]\n"
        "质保期为两年。押金为 3,000 元 [3]。"
    )
    claims = cl.split_claims(answer)
    assert [c.cites for c in claims] == [[2], [1], [1], [3], [3]]
    assert claims[0].text == "Ilse Brandt leads the Quay team."
    assert claims[1].text.startswith("She said") and "Always." in claims[1].text
    assert claims[2].text == "first item"
    assert claims[3].inherited and not claims[4].inherited  # cited once at the paragraph's end


def test_facts_fold_width_separators_and_date_formats() -> None:
    a = cl.facts_of("１，２００ items on 2024-03-05, code QT-9X")
    b = cl.facts_of("1200 items on March 5, 2024")
    c = cl.facts_of("2024年3月5日")
    assert a.numbers == b.numbers == (1200.0,)
    assert a.dates == b.dates == c.dates == ((2024, 3, 5),)
    assert cl.facts_of("see QT-9X").codes == ("qt-9x",)


def test_supported_claims_pass_and_invented_facts_fail() -> None:
    claims = verdicts(
        "Ilse Brandt leads the Quay team [2]. Her extension is 4471 [2]. "
        "Marta Olsen approves budgets [2]."
    )
    assert [c.verdict for c in claims] == ["supported", "unsupported", "unsupported"]
    assert "4471" in claims[1].why and "[2]" in claims[1].why
    assert "Marta" in claims[2].why


def test_a_fact_from_another_passage_is_not_supported_by_the_cited_one() -> None:
    (claim,) = verdicts("The extension is 4417 [1].")
    assert claim.verdict == "unsupported"


def test_arithmetic_on_cited_numbers_and_the_questions_own_facts_are_supported() -> None:
    (diff,) = cl.check(
        cl.split_claims("The difference is 3,000 - 1,200 = 1,800 [1][3]."),
        PASSAGES,
        "How much more?",
    )
    assert diff.verdict == "supported"
    (echo,) = verdicts("Nothing says what happened in 1999 [1].", question="What happened in 1999?")
    assert echo.verdict == "supported"


def test_a_fact_without_a_citation_and_a_citation_of_nothing_fail() -> None:
    uncited, unknown, plain = verdicts(
        "The ledger handles 1,200 invoices. It is owned by Quay [9].\nThank you for asking!"
    )
    assert uncited.verdict == "unknown_source"  # inherits [9] from the same line
    assert unknown.verdict == "unknown_source"
    assert plain.verdict == "no_claim"
    (alone,) = verdicts("It handles 1,200 invoices a day.")
    assert alone.verdict == "uncited" and "1200" in alone.why


def test_chinese_names_dates_and_numbers_are_checked() -> None:
    good, bad = cl.check(
        cl.split_claims(
            "合同由周明远负责，于2023年9月18日签订 [3]。押金是 5,000 元，由王立新收取 [3]。"
        ),
        PASSAGES,
        "合同是谁负责的？",
    )
    assert good.verdict == "supported"
    assert bad.verdict == "unsupported" and "5000" in bad.why


def test_a_long_claim_far_in_meaning_from_its_passage_fails() -> None:
    def similarity(text: str, sentences: Sequence[str]) -> list[float]:
        return [0.5 if "building" in text else 0.95 for _ in sentences]

    far, near = verdicts(
        "The Quay team owns the building where every other team is located [1]. "
        "The Quay team owns the Harbor ledger service and handles invoices [1].",
        similarity=similarity,
    )
    assert far.verdict == "unsupported" and "far in meaning" in far.why
    assert near.verdict == "supported"


def test_a_document_read_whole_is_cited_by_its_first_chunk() -> None:
    evidence = [
        item(1, "Log part one.", chunk_id="doc-log-v1-00000", whole=True),
        item(2, "Entry WO-77: fixed on 2024-07-02.", chunk_id="doc-log-v1-00001", whole=True),
    ]
    (claim,) = cl.check(cl.split_claims("WO-77 was fixed on 2024-07-02 [1]."), evidence, "When?")
    assert claim.verdict == "supported"


def test_failed_claims_are_cut_with_their_markers_and_empty_bullets_dropped() -> None:
    answer = "Ilse Brandt leads it [2]. Her extension is 4471 [2].\n\nDetails:\n- Marta Olsen [2]\n"
    claims = verdicts(answer)
    kept = cl.without(answer, claims)
    assert "4471" not in kept and "Marta" not in kept and "[2]" in kept
    assert "- " not in kept and kept.startswith("Ilse Brandt leads it [2].")
    assert cl.stated(claims) is claims[0]


def test_numbers_written_in_chinese_in_a_passage_support_digits() -> None:
    evidence = [item(1, "每逾期一周应支付合同总额百分之五的违约金，采购方应在收货后三十日内付款。")]
    five, thirty, wrong = cl.check(
        cl.split_claims(
            "The penalty is 5% per week [1]. Payment is due in 30 days [1]. Or 45 [1]."
        ),
        evidence,
        "What is the penalty?",
    )
    assert (five.verdict, thirty.verdict, wrong.verdict) == (
        "supported",
        "supported",
        "unsupported",
    )
