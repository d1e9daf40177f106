"""Every threshold and weight of offline reasoning, in one typed object.

Chosen on half A of the dev sets (hopwise.evaluation.halves) and reported on both halves in
the README; nothing else in graph/offline holds a tuned number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OfflineParams:
    # decomposition
    max_chain_hops: int = 4  # sub-questions of one nested chain, the outer question included
    max_span_words: int = 8  # longest question n-gram looked up in the phrase table
    max_phrase_keys: int = 300  # n-grams of one question looked up at most (a long paste)
    chase_max_hops: int = 2  # below this many hops an unanswered question follows one entity
    # extraction and sufficiency
    relevant_coverage: float = 2 / 3  # share of a sub-question's terms a passage must hold
    sentences_per_hit: int = 2
    # bridging
    bridge_hits: int = 5  # top hits of the previous hop whose phrases are candidates
    bridge_relation_words: int = 6  # content words of the relation sent with the entity
    bridge_title_weight: float = 2.0  # the candidate is a retrieved passage's title
    bridge_near_weight: float = 2.0  # the candidate sits next to a relation word
    bridge_agreement_weight: float = 0.5  # per further hit naming the candidate
    bridge_question_weight: float = 1.5  # the whole question names the candidate
    bridge_first_sentence_weight: float = 1.2  # a passage's opening says what it is about
    bridge_cue_weight: float = 1.0  # a preposition that introduces a filler ('by X', 'in X')
    bridge_beam: int = 5  # candidates whose queries are searched; the hits pick the winner
    bridge_prior_weight: float = 1.0  # exponent of the candidate's own score in the choice
    bridge_extra_hits: int = 2  # hits each runner-up's search adds to the hop
    # evidence ranking across hops
    rank_penalty: float = 0.03  # query coverage a hit gives up per search rank
    # answers
    answer_min_score: float = 0.5  # below it no short answer is stated
    evidence_lines: int = 4  # supporting lines after the answer


PARAMS = OfflineParams()
