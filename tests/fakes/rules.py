"""The hand rules' reading as a reasoner's answer step, for tests that pin what the rules read
(they are features of the fitted reader: graph/offline/rules.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graph.offline.params import PARAMS, OfflineParams
from graph.offline.rules import rule_answer
from graph.protocols import EvidenceItem, HopView, Similarity


class RuleReader:
    """`answer` yields what the hand rules write for the evidence (first line, evidence)."""

    def __init__(self, params: OfflineParams = PARAMS, similarity: Similarity | None = None):
        self.params, self.similarity = params, similarity

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str]:
        yield from rule_answer(question, evidence, missing, hops, self.params, self.similarity)
