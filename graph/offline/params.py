"""Every threshold and weight of offline reasoning, in one typed object.

Chosen on half A of the dev sets (hopwise.evaluation.halves) and reported on both halves in
docs/evaluation.md; nothing else in graph/offline holds a tuned number.
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
    # the reader (graph/offline/reader.py): the unit that answers a part, and its span
    reader_passages: int = 8  # passages of a part whose units are read
    reader_own_weight: float = 0.6  # the unit's own coverage vs. with its context
    reader_rank_decay: float = 0.05  # score a unit gives up per rank of its passage
    reader_min_score: float = 0.4  # below it the documents do not say (chosen on kb-dev half A)
    reader_type_bonus: float = 0.1  # the unit holds a value of the expected kind / the column
    reader_name_margin: float = 2.0  # a name is stated when this much nearer than the next
    reader_tied_rows: int = 6  # table rows quoted together when none matches better
    reader_state_score: float = 0.65  # a short answer is stated only from a unit this good
    reader_state_relation: float = 0.5  # ... that holds this much of the relation's words itself
    reader_dense_weight: float = 0.3  # most a unit loses for meaning less than the best
    reader_dense_units: int = 40  # the best units by words whose meaning is compared
    reader_other_step: float = 0.8  # score kept by a unit outside the part's own search
    reader_missing_anchor: float = 0.5  # kept by a unit without a code the question names
    reader_no_relation: float = 0.5  # score kept by a unit that holds none of the relation
    lead_links: int = 2  # records followed from the named one by a code they share
    lead_coverage: float = 0.5  # of the asked clause's words the record reached must hold
    reader_name_chars: tuple[int, int] = (3, 24)  # a cell or field value this long may be a name
    reader_echo: float = 0.5  # score kept by a unit that only repeats what the question gives
    reader_record_field_chars: int = 80  # a record's field lines this short are its lines' context
    # the claim check (graph/claims.py)
    claim_min_similarity: float = 0.82  # a longer claim must be this close to a cited sentence
    claim_meaning_words: int = 6  # claims with fewer content words are checked by facts only
    claim_passage_sentences: int = 40  # sentences of the cited passages compared at most


PARAMS = OfflineParams()
