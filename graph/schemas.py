"""Pydantic models for every structured reasoning output (LLM or offline).

Field descriptions are part of the LLM prompt: keep them precise.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema

# Caps on everything a model returns (a hostile or broken endpoint may send megabytes): text is
# cut, lists are shortened, so one answer never stores more than a bounded amount.
MAX_QUESTION_CHARS = 1_000
MAX_SHORT_CHARS = 500  # reasons, queries, entities, one missing point
MAX_SENTENCE_CHARS = 2_000
MAX_LIST_ITEMS = 8
MAX_SENTENCES = 40
# What the schema asks of a model (a grammar-constrained server enforces it, so a small model's
# rambling string ends instead of running into max_tokens mid-object); longer replies from
# servers that ignore it are still accepted and clipped above.
ASK_QUESTION_CHARS = 300
ASK_SHORT_CHARS = 160
ASK_SENTENCE_CHARS = 600
ASK_SENTENCES = 12
ASK_SUB_QUESTIONS = 4  # the graph's hop budget (GraphConfig.max_hops)


def _clip(limit: int) -> BeforeValidator:
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, str) else v)


def _first(limit: int) -> BeforeValidator:
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, list) else v)


def _asked(chars: int) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "maxLength": chars})


Question = Annotated[str, _clip(MAX_QUESTION_CHARS), _asked(ASK_QUESTION_CHARS)]
Short = Annotated[str, _clip(MAX_SHORT_CHARS), _asked(ASK_SHORT_CHARS)]
Sentence = Annotated[str, _clip(MAX_SENTENCE_CHARS), _asked(ASK_SENTENCE_CHARS)]


class RouteDecision(BaseModel):
    """Whether a question needs the knowledge base."""

    standalone_question: Question = Field(
        description="The user's question rewritten to stand alone, resolving pronouns and "
        "references from the conversation; identical to the question if it already stands alone."
    )
    route: Literal["simple", "complex"] = Field(
        description="simple: greeting, chit-chat or general knowledge needing no documents. "
        "complex: needs facts from the knowledge base."
    )
    reason: Short = Field(description="One short sentence explaining the choice.")


class SubQuestion(BaseModel):
    """One step of the reasoning chain."""

    id: int = Field(description="1-based position in reasoning order.")
    question: Question = Field(
        description="A self-contained question with no pronouns; when it depends on an earlier "
        "step, it names what that step finds in a placeholder like #1."
    )
    depends_on: int | None = Field(
        None, description="id of the earlier sub-question whose answer this one needs, or null."
    )
    search_query: Question | None = Field(
        None,
        description="The same sub-question written in the documents' language when that differs "
        "from the question's (keep #k placeholders); null otherwise.",
    )


class Decomposition(BaseModel):
    """Ordered sub-questions answering the original question together."""

    sub_questions: Annotated[list[SubQuestion], _first(MAX_LIST_ITEMS)] = Field(
        description="1 to 4 sub-questions in reasoning order; one if the question is single-hop.",
        json_schema_extra={"minItems": 1, "maxItems": ASK_SUB_QUESTIONS},
    )


class PlanDecision(BaseModel):
    """What to do after a hop."""

    action: Literal["retrieve", "evaluate"] = Field(
        description="retrieve: search again for the next or a new sub-question. "
        "evaluate: the evidence may be enough to judge."
    )
    reason: Short = Field(description="One short sentence.")
    follow_up: Question | None = Field(
        None,
        description="Optional ONE new self-contained sub-question aimed at a named gap, anchored "
        "on an entity already found in the evidence; null if the plan needs no change.",
    )


class EvidenceVerdict(BaseModel):
    """Whether the evidence answers the original question."""

    enough: bool = Field(
        description="True only if the evidence states every fact the question needs."
    )
    missing: Annotated[list[Short], _first(MAX_LIST_ITEMS)] = Field(
        default_factory=list,
        description="The specific facts still missing; empty when enough.",
        json_schema_extra={"maxItems": MAX_LIST_ITEMS},
    )
    web_query: Short | None = Field(
        None, description="One web search query that would find the missing facts; null if enough."
    )


class BridgeQuery(BaseModel):
    """A dependent sub-question with the earlier step's answer filled in."""

    entity: Short = Field(description="The entity the earlier step found (a name, date, title...).")
    query: Short = Field(description="The sub-question rewritten with that entity in place.")


class EvidenceSentence(BaseModel):
    """A sentence extracted verbatim from a chunk."""

    chunk_id: Short = Field(description="The chunk the sentence was copied from.")
    text: Sentence = Field(description="The sentence, copied exactly, not summarised.")


class ExtractedEvidence(BaseModel):
    """Sentences that bear on a sub-question."""

    sentences: Annotated[list[EvidenceSentence], _first(MAX_SENTENCES)] = Field(
        default_factory=list,
        description="Verbatim sentences relevant to the sub-question.",
        json_schema_extra={"maxItems": ASK_SENTENCES},
    )
