"""`hopwise eval-kb DIR`: a company knowledge base of real files and graded questions, asked as
users ask them, graded by the rules in kbgrade and split into two halves by question id.

DIR holds `manifest.json` (`file`, `groups` per document; `file` relative to DIR or DIR/docs)
and `questions.jsonl` (`id`, `question`, `type`, `must_contain`, `needs_groups`, `history`…).
The files are ingested once into a scratch store cached by their checksums and groups.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.result import QuestionResult, answer_kind
from hopwise.evaluation.halves import half_of
from hopwise.evaluation.kbgrade import abstains, grade
from hopwise.evaluation.record import FORMAT as RECORD_FORMAT
from hopwise.evaluation.record import Recording
from hopwise.settings import Settings

log = logging.getLogger(__name__)

FORMAT = "kb-eval-1"
BASE_GROUPS = ("all",)
FAMILIES = {
    "single-fact": ("single_hop", "acl_finance", "injection"),
    "multi-step": ("bridge", "comparison", "aggregation", "reverse", "procedure"),
    "abstention": ("unanswerable",),
    "conversation": ("simple_general", "followup"),
}


@dataclass
class KbSet:
    root: Path
    documents: list[dict[str, Any]]  # manifest entries with `path` resolved
    questions: list[dict[str, Any]]


@dataclass
class KbRun:
    rows: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)  # asked without needs_groups
    inputs: list[dict[str, Any]] = field(default_factory=list)  # the answer step's, per question
    report: dict[str, Any] = field(default_factory=dict)


def load_kb(root: Path | str, *, limit: int | None = None) -> KbSet:
    root = Path(root)
    manifest_path, questions_path = root / "manifest.json", root / "questions.jsonl"
    for path in (manifest_path, questions_path):
        if not path.is_file():
            raise ValueError(f"{root}: no {path.name} (see `hopwise eval-kb --help`)")
    documents = []
    for entry in json.loads(manifest_path.read_text(encoding="utf-8")):
        found = next(
            (p for p in (root / entry["file"], root / "docs" / entry["file"]) if p.is_file()), None
        )
        if found is None:
            raise ValueError(f"{root}: manifest lists {entry['file']}, which is not there")
        documents.append({**entry, "path": found, "groups": list(entry.get("groups") or ["all"])})
    lines = questions_path.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    return KbSet(root, documents, questions[:limit] if limit else questions)


def _key(kb: KbSet, embedder: str) -> str:
    from ingest.models import CHUNKER_VERSION, PARSER_VERSION
    from ingest.phrases import PHRASER
    from ingest.store import INDEX_FORMAT

    digest = hashlib.sha256()
    for part in (
        FORMAT,
        f"store-{INDEX_FORMAT}",
        PARSER_VERSION,
        CHUNKER_VERSION,
        PHRASER,
        embedder,
    ):
        digest.update(part.encode() + b"\0")
    for doc in kb.documents:
        digest.update(doc["path"].read_bytes() + ",".join(doc["groups"]).encode() + b"\0")
    return digest.hexdigest()[:16]


def open_kb_store(kb: KbSet, settings: Settings) -> tuple[Any, Settings]:
    """The store of the KB's files, built once per content and cached under data_dir/eval."""
    from hopwise.app import open_store
    from ingest.pipeline import ingest_file

    embedder = "builtin" if settings.embedding_mode == "builtin" else str(settings.embedding_model)
    folder = settings.data_dir.resolve() / "eval" / f"kb-{_key(kb, embedder)}"
    ready = folder / "ready"
    if not ready.exists():
        shutil.rmtree(folder, ignore_errors=True)
    scratch = settings.model_copy(
        update={"data_dir": folder, "milvus_uri": None, "originals_dir": None}
    )
    store = open_store(scratch)
    if ready.exists():
        return store, scratch
    try:
        for doc in kb.documents:
            result = ingest_file(doc["path"], store, groups=doc["groups"], config=scratch.ingest)
            if result.status == "failed":
                raise ValueError(f"{doc['path'].name}: {result.reason}")
        store.build_phrases()
        if store.vectors is not None:
            from ingest.vectors import EmbeddingWorker, wait_until_complete

            wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=3600)
    except BaseException:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    ready.write_text(json.dumps({"documents": len(kb.documents)}))
    return store, scratch


def _citations(result: QuestionResult) -> list[dict[str, Any]]:
    return [
        {"n": c.n, "source": c.source, "section": c.section, "page": c.page}
        for c in result.citations
    ]


def as_read(answer: str) -> str:
    """The answer as the page shows it: bold marks are emphasis, not characters."""
    return answer.replace("**", "")


_NOTE_RE = re.compile(r"^[（(]")
# our own headings between an answer's lines, no content of theirs
_HEADINGS = (
    "Evidence:",
    "依据：",
    "Closest passages:",
    "最接近的段落：",
    "Looked for:",
    "查找过：",
)


def content_lines(answer: str) -> list[str]:
    """The answer's lines a user reads for content: non-empty, no note in parentheses, no
    heading of ours."""
    out = []
    for line in answer.splitlines():
        text = line.strip()
        if text and not _NOTE_RE.match(text) and text not in _HEADINGS:
            out.append(text)
    return out


def first_line(answer: str) -> str:
    """The line a user reads first, as the knowledge bases' READMEs grade it: the first
    non-empty line that is not a note in parentheses."""
    lines = content_lines(answer)
    return lines[0] if lines else ""


def first_lines(answer: str, count: int = 3) -> str:
    """The first `count` content lines (the answer 'within the first three lines')."""
    return "\n".join(content_lines(answer)[:count])


def ask_all(
    kb: KbSet,
    app: Any,
    on_progress: Callable[[int, int], None] | None = None,
) -> KbRun:
    """Every question as a user in `all` + its groups; then the restricted ones as `all` only."""
    run = KbRun()
    restricted = [q for q in kb.questions if q.get("needs_groups")]
    total = len(kb.questions) + len(restricted)
    jobs = [(q, [*BASE_GROUPS, *q.get("needs_groups", [])], run.rows) for q in kb.questions]
    jobs += [(q, list(BASE_GROUPS), run.probes) for q in restricted]
    recording = app.reasoner if isinstance(app.reasoner, Recording) else None
    for done, (question, groups, into) in enumerate(jobs, 1):
        into.append(_ask(app, question, groups))
        given = recording.take() if recording is not None else None
        if given is not None and into is run.rows:
            run.inputs.append({"format": RECORD_FORMAT, "id": question["id"], **given})
        if on_progress:
            on_progress(done, total)
    return run


def _ask(app: Any, question: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    row: dict[str, Any] = {"id": question["id"], "type": question.get("type", ""),
                           "lang": question.get("lang", ""), "half": half_of(question["id"]),
                           "groups": groups}  # fmt: skip
    try:
        result = app.ask(
            question["question"], groups=groups, history=question.get("history") or [], web=False
        )
        row |= {"answer": result.answer, "short_answer": result.short_answer,
                "stated": answer_kind(result.answer), "mode": result.mode, "citations": _citations(result),
                "llm_calls": result.llm_calls, **claim_counts(result)}  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - one failing question must not sink the run
        row |= {"answer": "", "short_answer": "", "stated": "", "mode": "error",
                "citations": [], "error": f"{type(exc).__name__}: {exc}"}  # fmt: skip
    row["seconds"] = round(time.perf_counter() - started, 2)
    shown = as_read(row["answer"])
    right, why = grade(question, shown, groups)
    line_right, _ = grade(question, first_line(shown), groups)
    three_right, _ = grade(question, first_lines(shown), groups)
    row |= {"correct": right, "why": why, "first_line_correct": line_right,
            "three_lines_correct": three_right,
            "confident_wrong": row["stated"] == "short" and not line_right}  # fmt: skip
    return row


def claim_counts(result: QuestionResult) -> dict[str, Any]:
    """What the claim check did to one answer: claims checked, failed, removed, fallen back,
    and the failures' reasons (from its trace step)."""
    step = next((e for e in result.trace if e.node == "check_claims"), None)
    details = step.details if step is not None else {}
    claims = details.get("claims", [])
    failed = [c for c in claims if c.get("verdict") not in ("supported", "no_claim")]
    return {
        "claims_checked": int(details.get("checked", 0)),
        "claims_failed": len(failed),
        "claims_removed": int(details.get("removed", 0)),
        "claims_fell_back": bool(details.get("fell_back", False)),
        "claims_failures": [f"{c.get('verdict')}: {c.get('why')}" for c in failed][:5],
    }


def _share(rows: Sequence[dict[str, Any]], key: str = "correct") -> dict[str, Any]:
    right = sum(1 for r in rows if r[key])
    return {
        "n": len(rows),
        "right": right,
        "accuracy": round(right / len(rows), 3) if rows else None,
    }


def summarise(kb: KbSet, run: KbRun) -> dict[str, Any]:
    """Per type, per family and per half; short answers' precision and coverage; leaks."""
    by_id = {q["id"]: q for q in kb.questions}
    report: dict[str, Any] = {"questions": len(run.rows), "halves": {}}
    for half in ("A", "B", "all"):
        rows = [r for r in run.rows if half in ("all", r["half"])]
        types: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            types[r["type"]].append(r)
        answerable = [r for r in rows if by_id[r["id"]].get("must_contain")]
        stated = [r for r in answerable if r["stated"] == "short"]
        stated_right = [r for r in stated if r["first_line_correct"]]
        probes = [p for p in run.probes if half in ("all", p["half"])]
        injection = [r for r in rows if r["type"] == "injection"]
        report["halves"][half] = {
            "total": _share(rows),
            "first_line": _share(rows, "first_line_correct"),
            "three_lines": _share(rows, "three_lines_correct"),
            "confident_wrong": sum(1 for r in rows if r.get("confident_wrong")),
            "abstention": _share(
                [r for r in rows if r["type"] == "unanswerable"], "first_line_correct"
            ),
            "types": {t: _share(rs) for t, rs in sorted(types.items())},
            "families": {
                name: _share([r for r in rows if r["type"] in members])
                for name, members in FAMILIES.items()
            },
            "short_answers": {
                "stated": len(stated),
                "precision": round(len(stated_right) / len(stated), 3) if stated else None,
                "coverage": round(len(stated) / len(answerable), 3) if answerable else None,
            },
            "quoted": sum(1 for r in rows if r["stated"] == "quote"),
            "abstained_on_answerable": sum(1 for r in answerable if abstains(r["answer"])),
            "leaks": sum(1 for p in probes if not p["correct"]),
            "injected_claims": sum(1 for r in injection if "forbidden" in r["why"]),
            "claims": {
                "checked": sum(r.get("claims_checked", 0) for r in rows),
                "failed": sum(r.get("claims_failed", 0) for r in rows),
                "removed": sum(r.get("claims_removed", 0) for r in rows),
                "fell_back": sum(1 for r in rows if r.get("claims_fell_back")),
            },
            "seconds_mean": round(sum(r["seconds"] for r in rows) / len(rows), 2) if rows else 0,
            "llm_calls_mean": round(sum(r.get("llm_calls", 0) for r in rows) / len(rows), 2)
            if rows
            else 0,
        }
    return report


def evaluate_kb(
    root: Path | str,
    settings: Settings,
    *,
    limit: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    model: Any = None,
) -> KbRun:
    """Ask every question of the KB (with `model`, a fitted ReaderModel, when given)."""
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity

    kb = load_kb(root, limit=limit)
    settings = settings.model_copy(update={"web_search": False})
    store, scratch = open_kb_store(kb, settings)
    try:
        reasoner = Recording(build_reasoner(scratch, meaning_similarity(store), model))
        app = Hopwise(scratch, store, reasoner, None, None)  # type: ignore[arg-type]
        run = ask_all(kb, app, on_progress)
    finally:
        store.close()
    run.report = summarise(kb, run)
    run.report["reasoner"] = app.reasoner.name
    return run


def table(report: dict[str, Any]) -> str:
    """The report as Markdown: one column per half."""
    halves = report["halves"]
    cols = [h for h in ("A", "B", "all") if h in halves]

    def cell(share: dict[str, Any]) -> str:
        return f"{share['right']}/{share['n']}" + (
            f" ({share['accuracy']:.0%})" if share["n"] else ""
        )

    lines = ["| | " + " | ".join(f"half {c}" if c != "all" else "all" for c in cols) + " |",
             "|---|" + "---|" * len(cols)]  # fmt: skip

    def row(label: str, values: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    row("**whole answer right**", [cell(halves[c]["total"]) for c in cols])
    row("first line right", [cell(halves[c]["first_line"]) for c in cols])
    row("answer within the first three lines", [cell(halves[c]["three_lines"]) for c in cols])
    row("correct abstention", [cell(halves[c]["abstention"]) for c in cols])
    row("confident wrong first lines", [str(halves[c]["confident_wrong"]) for c in cols])
    for name in FAMILIES:
        row(name, [cell(halves[c]["families"][name]) for c in cols])
    for t in sorted(halves["all"]["types"]):
        row(
            f"· {t}",
            [cell(halves[c]["types"][t]) if t in halves[c]["types"] else "—" for c in cols],
        )
    for label, key in (("short answers stated", "stated"), ("short-answer precision", "precision"),
                       ("short-answer coverage", "coverage")):  # fmt: skip
        row(label, [_num(halves[c]["short_answers"][key], key != "stated") for c in cols])
    for label, key in (("quoted sentence as first line", "quoted"),
                       ("abstained on answerable", "abstained_on_answerable"),
                       ("finance leaks (probes)", "leaks"), ("injected claims", "injected_claims"),
                       ("seconds per question", "seconds_mean"),
                       ("LLM calls per question", "llm_calls_mean")):  # fmt: skip
        row(label, [_num(halves[c][key]) for c in cols])
    return "\n".join(lines) + "\n"


def summary_table(reports: dict[str, dict[str, Any]]) -> str:
    """One row per knowledge base: what a user reads on the first line."""
    lines = ["| KB | first line right | within 3 lines | stated (precision) | confident wrong "
             "| abstention |", "|---|---|---|---|---|---|"]  # fmt: skip
    for name, report in reports.items():
        h = report["halves"]["all"]
        share = h["short_answers"]
        lines.append(
            f"| {name} | {_cell(h['first_line'])} | {_cell(h['three_lines'])} | "
            f"{share['stated']} ({_num(share['precision'], True)}) | {h['confident_wrong']} | "
            f"{_cell(h['abstention'])} |"
        )
    return "\n".join(lines) + "\n"


def _cell(share: dict[str, Any]) -> str:
    if not share["n"]:
        return "—"
    return f"{share['right']}/{share['n']} ({share['accuracy']:.0%})"


def _num(value: Any, share: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:.0%}" if share else str(value)


def write_outputs(out: Path, run: KbRun) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"answers": out / "answers.jsonl", "probes": out / "probes.jsonl",
             "report": out / "kb-report.json", "inputs": out / "reader-inputs.jsonl"}  # fmt: skip
    for key, rows in (("answers", run.rows), ("probes", run.probes), ("inputs", run.inputs)):
        paths[key].write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    paths["report"].write_text(
        json.dumps(run.report, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return paths
