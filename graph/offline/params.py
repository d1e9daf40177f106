"""Every threshold and weight of offline reasoning, in one typed object.

Chosen on half A of the dev sets (hopwise.evaluation.halves) and reported on both halves in
docs/evaluation.md. Nothing else in graph/offline holds a tuned number; what stays in the
modules is not tuned: neutral factors (1.0, 0.0), unit arithmetic (calc.py), and bounds that
keep hostile input cheap (route.MAX_ROUTED_CHARS, calc's largest power).
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
    coordinated_item_words: int = 14  # 'A, B or C': an item longer than this is no item
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
    bridge_kind_weight: float = 2.0  # a candidate named as the kind asked ('… Meetings')
    bridge_role_weight: float = 3.0  # 'who played R': the hits say 'X as R' or 'R (X)'
    bridge_role_other: float = 0.2  # ... and a candidate the hits do not say plays it
    bridge_container_weight: float = 0.5  # 'in A, B': B for 'which country', A for 'where'
    bridge_cue_weight: float = 1.0  # a preposition that introduces a filler ('by X', 'in X')
    bridge_untold_weight: float = 0.3  # a sentence names the anchor and the relation: others
    bridge_beam: int = 5  # candidates whose queries are searched; the hits pick the winner
    bridge_beam_share: float = 0.5  # ... each scoring at least this share of the best one
    bridge_prior_weight: float = 1.0  # exponent of the candidate's own score in the choice
    bridge_extra_hits: int = 2  # hits each runner-up's search adds to the hop
    bridge_after_bonus: float = 1.5  # a candidate right after a relation word is nearer still
    bridge_relation_base: float = 0.5  # a sentence without the relation's words still counts this
    bridge_about_shared: float = 0.6  # a hit whose text holds this share of the anchor is about it
    bridge_about_weight: float = 0.4  # ... and weighs this much per share (title: 1)
    bridge_about_floor: float = 0.05  # a hit about something else keeps this
    bridge_about_slope: float = 0.1  # ... plus this per share of the anchor it holds
    bridge_confirm_lead: float = 0.6  # a confirming hit names the entity in its opening
    bridge_confirm_text: float = 0.2  # ... or only further on
    bridge_lead_chars: int = 200  # a passage's opening, for the above
    # evidence ranking across hops
    rank_penalty: float = 0.03  # query coverage a hit gives up per search rank
    # answers
    answer_min_score: float = 0.5  # below it no short answer is stated
    cue_match: float = 1.5  # a span whose cue ('in X', 'by X') or name tag fits the asked kind
    cue_mismatch: float = 0.5  # ... whose cue says it is the other kind
    cue_org_person: float = 1.2  # a company name for 'who'
    cue_untagged_person: float = 0.9  # a Chinese word with no name tag for 'who': not stated
    span_passages: int = 8  # passages whose sentences offer a span
    span_sentences: int = 6  # sentences of a passage without extracted ones
    span_off_topic: float = 0.2  # kept by a sentence that names none of the question's names
    span_repeat: float = 0.5  # added per further sentence offering the same span
    choice_by_value: float = 1.0  # confidence of a choice the compared values settle
    choice_by_words: float = 0.6  # ... that only the passages' words settle
    choice_meaning_margin: float = 0.01  # words tied: the nearer passage in meaning by this
    yes_no_compared: float = 0.8  # confidence of a 'both / same' answer
    yes_supported: float = 0.7  # confidence of a 'yes' every part has a passage for
    evidence_lines: int = 4  # supporting lines after the answer
    # the reader (graph/offline/reader.py, reader_*.py): the unit that answers a part, and its span
    reader_passages: int = 8  # passages of a part whose units are read
    reader_named_passages: int = 16  # ... and down to here, those naming the part's subject
    reader_next_units: int = 3  # units after the top one looked at for a place / person
    reader_own_weight: float = 0.6  # the unit's own coverage vs. with its context
    reader_rank_decay: float = 0.05  # score a unit gives up per rank of its passage
    reader_min_score: float = 0.4  # below it the documents do not say (chosen on kb-dev half A)
    reader_type_bonus: float = 0.1  # the unit holds a value of the expected kind / the column
    reader_name_margin: float = 2.0  # a name is stated when this much nearer than the next
    reader_slot_weight: float = 3.0  # a name where the question leaves its slot ('role in X')
    reader_other_nation: float = 0.6  # kept by a unit giving another country than the one asked
    reader_other_year: float = 0.6  # kept by a unit calling the asked kind by another year
    reader_tied_rows: int = 6  # table rows quoted together when none matches better
    reader_state_score: float = 0.65  # a short answer is stated only from a unit this good
    reader_state_relation: float = 0.5  # ... that holds this much of the relation's words itself
    reader_dense_weight: float = 0.3  # most a unit loses for meaning less than the best
    reader_dense_units: int = 40  # the best units by words whose meaning is compared
    reader_dense_noise: float = 0.02  # a cosine gap this small is noise: the least spread
    reader_other_step: float = 0.8  # score kept by a unit outside the part's own search
    reader_missing_anchor: float = 0.5  # kept by a unit without a code the question names
    reader_other_member: float = 0.5  # given up by a unit naming a sibling ('K1' for 'K2')
    reader_change_bonus: float = 0.2  # a unit that changes the asked value ('amended to 6 h')
    reader_change_reach: int = 24  # characters after the change phrase its new value starts in
    reader_requested: float = 0.6  # kept by a unit that only asks for a change of the value
    reader_class_top: int = (
        3  # the subject's class is read in when one of these best units names one
    )
    reader_no_relation: float = 0.5  # score kept by a unit that holds none of the relation
    chunk_overlap_chars: int = 12  # two neighbouring chunks share this much to be read as one
    lead_links: int = 2  # records followed from the named one by a code they share
    through_words: int = 8  # a row's key this near after the name a sentence puts in its row
    lead_coverage: float = 0.5  # of the asked clause's words the record reached must hold
    foreign_record_values: int = 3  # a record in the other language is quoted by at most this many
    reader_name_chars: tuple[int, int] = (3, 24)  # a cell or field value this long may be a name
    cross_read_margin: float = 0.02  # cosine by which the other language's unit must lead
    reader_echo: float = 0.5  # score kept by a unit that only repeats what the question gives
    reader_record_field_chars: int = 80  # a record's field lines this short are its lines' context
    reader_field_line_chars: int = 80  # a 'Label: value' line this short is one unit, unsplit
    reader_column_sure: float = 0.99  # a column header matches the asked words this well ...
    reader_column_rival: float = 0.5  # ... and no other header this well: the cell is stated
    reader_column_min: float = 0.5  # a comparison reads the column that matches at least this
    # the claim check (graph/claims.py)
    claim_min_similarity: float = 0.82  # a longer claim must be this close to a cited sentence
    claim_meaning_words: int = 6  # claims with fewer content words are checked by facts only
    claim_passage_sentences: int = 40  # sentences of the cited passages compared at most


PARAMS = OfflineParams()
