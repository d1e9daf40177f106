"""What the reading checks say about a dev knowledge base, and what its calibration does to
the stated answers of its real questions (`hopwise eval-kb --selfcheck`).

Per knowledge base: every document checked (hopwise/selfcheck) with the reader given (the
leave-one-out fit, when asked for), the threshold chosen on those checks alone, then the
knowledge base's own graded questions, which the checks never saw, asked at the fitted
threshold and at the chosen one; halves A and B are reported apart, as every KB report is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopwise.settings import Settings


def check_kb(root: Path, settings: Settings, model: Any = None) -> dict[str, Any]:
    """The reading check of every document of the knowledge base, and the calibration."""
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity
    from hopwise.evaluation.kb import load_kb, open_kb_store

    kb = load_kb(root)
    settings = settings.model_copy(update={"web_search": False})
    store, scratch = open_kb_store(kb, settings)
    try:
        reasoner = build_reasoner(scratch, meaning_similarity(store), model)
        app = Hopwise(scratch, store, reasoner, None, None)  # type: ignore[arg-type]
        app.selfcheck.model = model
        checks = [app.selfcheck.check(doc) for doc in app.list_documents()]
        calibration = app.selfcheck.recalibrate()
    finally:
        store.close()
    asked = sum(c.asked for c in checks)
    stated = sum(c.stated for c in checks)
    return {
        "documents": len(checks),
        "generated": [c.generated for c in checks],
        "asked": asked,
        "right": sum(c.right for c in checks),
        "stated": stated,
        "stated_right": sum(c.stated_right for c in checks),
        "abstained": sum(c.abstained for c in checks),
        "cross_asked": sum(o.cross for c in checks for o in c.outcomes),
        "cross_right": sum(o.right for c in checks for o in c.outcomes if o.cross),
        "tables_read_as_text": sum(len(c.as_text) for c in checks),
        "seconds": round(sum(c.seconds for c in checks), 1),
        "calibration": calibration.as_json(),
    }


def stated_line(report: dict[str, Any]) -> str:
    """Stated answers and their precision, first lines right, per half."""
    parts = []
    for half in ("A", "B", "all"):
        h = report["halves"][half]
        short = h["short_answers"]
        precision = "—" if short["precision"] is None else f"{short['precision']:.0%}"
        parts.append(f"{half}: stated {short['stated']} ({precision} right), first line "
                     f"{h['first_line']['right']}/{h['first_line']['n']}, confident wrong "
                     f"{h['confident_wrong']}")  # fmt: skip
    return "; ".join(parts)


def selfcheck_report(
    root: Path, settings: Settings, model: Any = None
) -> tuple[dict[str, Any], str]:
    """(JSON report, Markdown) of one knowledge base's checks and their calibration's effect."""
    from graph.offline.model import load_model
    from hopwise.evaluation.kb import evaluate_kb

    checked = check_kb(root, settings, model)
    cal = checked["calibration"]
    fitted = evaluate_kb(root, settings, model=model).report
    calibrated = fitted
    if abs(cal["threshold"] - cal["shipped"]) > 1e-9:
        chosen = (model or load_model()).with_thresholds(state=cal["threshold"])
        calibrated = evaluate_kb(root, settings, model=chosen).report
    gen = checked["generated"]
    lines = [
        f"- documents {checked['documents']}, self-test questions generated per document "
        f"{sum(gen) / max(len(gen), 1):.1f} (min {min(gen, default=0)}, max {max(gen, default=0)}), "
        f"asked {checked['asked']} in {checked['seconds']} s",
        f"- self-test: first lines right {checked['right']}/{checked['asked']}, stated "
        f"{checked['stated']} ({checked['stated_right']} right), 'not said' {checked['abstained']}, "
        f"asked in the other language {checked['cross_right']}/{checked['cross_asked']} right, "
        f"tables read as text {checked['tables_read_as_text']}",
        f"- threshold: fitted {cal['shipped']:.3f} → chosen {cal['threshold']:.3f} ({cal['reason']})",
        f"- real questions at the fitted threshold: {stated_line(fitted)}",
        f"- real questions at the chosen threshold: {stated_line(calibrated)}",
    ]  # fmt: skip
    out = {"selfcheck": checked, "fitted": fitted["halves"], "calibrated": calibrated["halves"]}
    return out, "\n".join(lines) + "\n"
