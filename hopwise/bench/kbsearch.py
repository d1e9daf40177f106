"""Search alone on the company knowledge bases: is the answer among a question's top 10 hits?

Every `kb-*` folder of the shared eval (the fictional company knowledge bases, documents in
two languages) is indexed once as `hopwise eval-kb` indexes it (cached under the data dir),
and each question without a conversation before it is searched once, with the reader's groups.
A hit holds every `must_contain` string of the question (normalised as the grader does).
Questions are split by whether their supporting documents are in the question's language, and
the search is repeated for each number of places kept for the other language
(`cross_language_slots`, docs/search.md), so the choice can be made leaving one knowledge base
out: the setting with the most hits on the others, ties to fewer places.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hopwise.evaluation.kb import load_kb, open_kb_store
from hopwise.evaluation.kbgrade import normalise
from hopwise.settings import load_settings
from ingest.lang import language_of

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
K = 10


def register_arguments(parser: Any) -> None:
    parser.add_argument("--shared", default=None, help="folder of the kb-* sets (../shared/eval)")
    parser.add_argument("--slots", default="0,1,2,3,4,5", help="places to try (0,1,2,3,4,5)")


def _same_language(kb: Any, question: dict[str, Any]) -> bool:
    languages = {
        str(doc.get("lang", ""))
        for doc in kb.documents
        for s in question.get("supporting") or []
        if Path(str(s if isinstance(s, str) else s.get("file", ""))).name == doc["path"].name
    }
    return not languages or language_of(question["question"]) in languages


def run(args: Any) -> dict[str, Any]:
    shared = Path(getattr(args, "shared", None) or SHARED)
    folders = sorted(p for p in shared.glob("kb-*") if (p / "questions.jsonl").is_file())
    if not folders:
        return {"error": f"no kb-* sets found in {shared}"}
    slots = [int(n) for n in str(getattr(args, "slots", "0,1,2,3,4,5")).split(",") if n.strip()]
    if not slots:
        return {"error": "--slots names no number of places"}
    settings = load_settings()
    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for folder in folders:
        kb = load_kb(folder)
        store, _ = open_kb_store(kb, settings)
        try:
            base = store.fusion
            for n in slots:
                store.fusion = dataclasses.replace(base, cross_language_slots=n)
                counts = {"other": [0, 0], "same": [0, 0]}  # [questions, hits]
                for q in kb.questions:
                    if not q.get("must_contain") or q.get("history"):
                        continue
                    groups = ["all", *q.get("needs_groups", [])]
                    hits = store.search(q["question"], groups, k=K)
                    gold = [normalise(g) for g in q["must_contain"]]
                    found = any(all(g in normalise(h.text) for g in gold) for h in hits)
                    row = counts["same" if _same_language(kb, q) else "other"]
                    row[0] += 1
                    row[1] += int(found)
                table.setdefault(str(n), {})[folder.name] = counts
            store.fusion = base
        finally:
            store.close()
    return {"k": K, "slots": table, "held_out": _held_out(table)}


def _total(table: dict[str, dict[str, dict[str, list[int]]]], n: str, kbs: list[str]) -> int:
    return sum(table[n][kb][side][1] for kb in kbs for side in ("other", "same"))


def _held_out(table: dict[str, dict[str, dict[str, list[int]]]]) -> dict[str, Any]:
    """Per knowledge base: the places chosen on the others and the hits it then gets."""
    kbs = sorted(next(iter(table.values())))
    out = {}
    for held in kbs:
        rest = [kb for kb in kbs if kb != held]
        chosen = max(sorted(table, key=int), key=lambda n: (_total(table, n, rest), -int(n)))
        out[held] = {"slots": int(chosen), "hits": _total(table, chosen, [held])}
    return out


def print_table(name: str, result: dict[str, Any]) -> None:
    if "error" in result:
        print(f"== bench {name}: {result['error']}")
        return
    print(f"== bench {name}: answer in the top {result['k']} (hits/questions)")
    for n, per_kb in result["slots"].items():
        cells = "  ".join(
            f"{kb}: other {c['other'][1]}/{c['other'][0]}, same {c['same'][1]}/{c['same'][0]}"
            for kb, c in per_kb.items()
        )
        print(f"  slots {n}:  {cells}")
    for kb, chosen in result["held_out"].items():
        print(
            f"  {kb} held out: {chosen['slots']} places chosen on the others, {chosen['hits']} hits"
        )
