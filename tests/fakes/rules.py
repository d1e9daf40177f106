"""The hand rules' reading as a reasoner's answer step, for tests that pin what the rules read
(they are features of the fitted reader: graph/offline/rules.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graph.offline import OfflineReasoner
from graph.offline.rules import rule_answer
from graph.protocols import EvidenceItem, HopView


class RuleReader(OfflineReasoner):
    """The offline reasoner whose `answer` yields what the hand rules write for the evidence
    (first line, evidence lines) instead of the fitted reader's answer."""

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str]:
        yield from rule_answer(question, evidence, missing, hops, self.params, self.similarity)
