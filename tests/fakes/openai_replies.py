"""What the stub server answers: replies and faults, what a request asks for (its schema, its
structured-output method), the placeholder or plausible reply to it, token counts and a
deterministic embedding.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

FAULTS = {
    "slow", "http500", "http429", "malformed", "truncated", "empty", "drop", "drop_midstream",
    "endless", "think_forever", "trickle",
}  # fmt: skip


DEFAULT_EMBEDDING_DIM = 256


@dataclass
class Reply:
    """One scripted reply. `data` is a structured object sent in the way the request asked
    for it (tool call arguments or JSON content); `content` is raw text; `fault` breaks it."""

    content: str | None = None
    data: Any = None
    fault: str | None = None
    retry_after: float | None = None
    delay_s: float = 0.0
    status: int | None = None

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; one of {sorted(FAULTS)}")


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def structured_method(request: dict[str, Any]) -> str | None:
    """json_schema | function_calling | json_mode for a structured request, else None."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return "json_schema"
    if request.get("tools"):
        return "function_calling"
    if fmt.get("type") == "json_object":
        return "json_mode"
    return None


_SCHEMA_MARKER = re.compile(r"schema named ([A-Za-z_][A-Za-z0-9_]*)")


_SCHEMA_TITLE = re.compile(r'"title"\s*:\s*"([A-Z][A-Za-z0-9_]*)"\s*,\s*"type"\s*:\s*"object"')


def requested_schema(request: dict[str, Any]) -> str | None:
    """The name of the schema a chat request asks for, whichever way it asks.

    json_schema: response_format.json_schema.name; function calling: the forced tool's name;
    JSON mode: a 'schema named X' marker, or the top-level title of a JSON schema, in the prompt.
    """
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("name")
    tools = request.get("tools") or []
    if tools:
        choice = request.get("tool_choice")
        if isinstance(choice, dict) and choice.get("function", {}).get("name"):
            return str(choice["function"]["name"])
        return str(tools[0].get("function", {}).get("name"))
    text = "\n".join(content_text(m.get("content")) for m in request.get("messages") or [])
    if names := _SCHEMA_MARKER.findall(text):
        return str(names[-1])  # the instruction comes after any data that might mimic it
    if fmt.get("type") == "json_object" and (match := _SCHEMA_TITLE.search(text)):
        return match.group(1)
    return None


def request_json_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a structured request carries (in the prompt for JSON mode), or None."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    tools = request.get("tools") or []
    if tools:
        return tools[0].get("function", {}).get("parameters")
    text = "\n".join(content_text(m.get("content")) for m in request.get("messages") or [])
    markers = list(_SCHEMA_MARKER.finditer(text))
    start = text.find("{", markers[-1].end()) if markers else -1
    if start >= 0:  # JSON mode: the schema is written out after the marker
        try:
            return json.JSONDecoder().raw_decode(text, start)[0]
        except json.JSONDecodeError:
            return None
    return None


def placeholder_instance(schema: dict[str, Any] | None, defs: dict[str, Any] | None = None) -> Any:
    """A minimal value that validates against a (pydantic-generated) JSON schema."""
    if not schema:
        return {}
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return placeholder_instance(defs.get(schema["$ref"].split("/")[-1], {}), defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return placeholder_instance(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: placeholder_instance(sub, defs) for name, sub in props.items()}
    if kind == "array":
        return [placeholder_instance(schema.get("items", {}), defs)]
    return {"string": "stub", "integer": 1, "number": 1.0, "boolean": True, "null": None}.get(
        str(kind), "stub"
    )


def default_responder(request: dict[str, Any]) -> Reply:
    """Schema placeholders for structured requests, a fixed sentence for plain chat."""
    if structured_method(request) or requested_schema(request):
        return Reply(data=placeholder_instance(request_json_schema(request)))
    return Reply(content="Stub answer.")


_LINE = {
    "question": re.compile(r"^(?:Latest user question|Latest user message|Question): (.*)$", re.M),
    "fence": re.compile(r"^<<<([A-Z]+)([^\n]*)>>>\n(.*?)\n<<<END \1>>>$", re.S | re.M),
    "id": re.compile(r'\bid="([^"]*)"'),
    "sentence": re.compile(r"[^.!?。！？\n]+[.!?。！？]?"),
}


def _fences(text: str, kind: str) -> list[tuple[str, str]]:
    return [(head, body) for k, head, body in _LINE["fence"].findall(text) if k == kind]


def plausible_responder(request: dict[str, Any]) -> Reply:
    """Sensible replies for Hopwise's prompts, read back from the prompt itself.

    The question is complex and asked as one step, bridges keep the query, extraction copies
    the first sentence of each chunk verbatim, planning evaluates, the evidence is enough and the
    answer cites [1]. Good enough to drive the whole graph in benchmarks and flow tests.
    """
    text = "\n".join(content_text(m.get("content")) for m in request.get("messages") or [])
    found = _LINE["question"].search(text)
    question = found.group(1).strip() if found else "the question"
    data: dict[str, Any]
    match requested_schema(request):
        case "RouteDecision":
            data = {
                "standalone_question": question,
                "route": "complex",
                "reason": "Needs documents.",
            }
        case "Decomposition":
            data = {"sub_questions": [{"id": 1, "question": question, "depends_on": None}]}
        case "BridgeQuery":
            subs = _fences(text, "SUBQUESTION")
            data = {"entity": "", "query": subs[0][1].strip() if subs else question}
        case "ExtractedEvidence":
            sentences = []
            for head, body in _fences(text, "CHUNK")[:3]:
                first = _LINE["sentence"].search(body)
                ids = _LINE["id"].search(head)
                if first and ids and first.group().strip():
                    sentences.append({"chunk_id": ids.group(1), "text": first.group().strip()})
            data = {"sentences": sentences}
        case "PlanDecision":
            data = {"action": "evaluate", "reason": "Evidence gathered.", "follow_up": None}
        case "EvidenceVerdict":
            data = {"enough": True, "missing": [], "web_query": None}
        case None:
            evidence = _fences(text, "EVIDENCE")
            first = _LINE["sentence"].search(evidence[0][1]) if evidence else None
            return Reply(content=f"{first.group().strip()} [1]" if first else "Stub answer.")
        case _:
            return default_responder(request)
    return Reply(data=data)


def count_tokens(text: str) -> int:
    """A cheap deterministic token count: words plus CJK characters."""
    return len(_features(text)) or (1 if text else 0)


_FEATURE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_]+", re.UNICODE)


def _features(text: str) -> list[str]:
    return [t.lower() for t in _FEATURE.findall(text)]


def embed_text(text: str | list[int], dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """Deterministic hashed bag of words / CJK characters (+ CJK bigrams), L2-normalised.

    Texts sharing words get similar vectors, so dense retrieval tests behave sensibly.
    """
    if isinstance(text, list):
        feats = [f"tok:{t}" for t in text]
    else:
        toks = _features(text)
        cjk = [t for t in toks if len(t) == 1 and "\u3400" <= t <= "\ufaff"]
        feats = toks + [a + b for a, b in zip(cjk, cjk[1:], strict=False)]
    vec = [0.0] * dim
    for feat in feats or ["<empty>"]:
        digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]
