"""Split an eval report's questions into two fixed halves by id and score each.

A threshold or weight is chosen on half A and reported on both, so a number that only holds
on the questions it was tuned on shows up as a gap between the halves. The split is a hash of
the question id: stable, and independent of the order of the file.

    python -m hopwise.evaluation.halves eval-results/*.json   # one row per report and half
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

BUDGETS = ("5", "10", "20")


def half_of(question_id: str) -> str:
    """'A' or 'B', fixed per question id."""
    return "A" if hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 2 == 0 else "B"


def score_halves(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Recall@5/10/20, short-answer F1 and (unanswerable runs) abstention of each half and of
    all, from a report's per-question rows."""
    rows = [r for r in report.get("questions", []) if not r.get("error")]
    out: dict[str, dict[str, float]] = {}
    for half in ("A", "B", "all"):
        chosen = [r for r in rows if half == "all" or half_of(str(r["id"])) == half]
        if not chosen:
            continue
        scores = {
            f"R@{b}": round(sum(float(r["recall_at"][b]) for r in chosen) / len(chosen), 3)
            for b in BUDGETS
        }
        scores["F1"] = round(sum(float(r.get("f1") or 0.0) for r in chosen) / len(chosen), 3)
        abstained = [r["abstained"] for r in chosen if r.get("abstained") is not None]
        if abstained:
            scores["abstain"] = round(sum(1 for a in abstained if a) / len(abstained), 3)
        out[half] = {"n": len(chosen), **scores}
    return out


def main(paths: list[str]) -> int:
    print("| dataset | mode | half | n | R@5 | R@10 | R@20 | F1 | abstain |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        if "questions" not in report:
            continue
        for half, row in score_halves(report).items():
            mode = report["mode"] + (", unanswerable" if report.get("unanswerable") else "")
            abstain = f"{row['abstain']:.2f}" if "abstain" in row else "—"
            print(
                f"| {report['dataset']} | {mode} | {half} | {row['n']:.0f} | "
                f"{row['R@5']:.3f} | {row['R@10']:.3f} | {row['R@20']:.3f} | {row['F1']:.2f} | "
                f"{abstain} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
