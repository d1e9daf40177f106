"""`hopwise fit-reader`: fit the offline reader's weights on recorded questions.

`--record` first records what the answer step was given for every question of the company
knowledge bases (every `kb-*` folder of `--shared`), their self-made questions and the dev
sets (`--shared/dev`), under `--records`; without it the records already there are used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_RECORDS = Path("eval-results/records")
DEFAULT_SHARED = Path("../shared/eval")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fit-reader",
        help="fit the offline reader's weights on recorded questions",
        description="Fit the reader's weights (units, spans, how sure) on the recorded inputs "
        "of the knowledge bases, their self-made questions and the dev sets; write them to "
        "--out (the file the app loads by default).",
    )
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS,
                        help=f"recorded inputs (default {DEFAULT_RECORDS})")  # fmt: skip
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED,
                        help=f"the eval folder: kb-* and dev/ (default {DEFAULT_SHARED})")  # fmt: skip
    parser.add_argument("--record", action="store_true",
                        help="record every knowledge base and dev set first (slow)")  # fmt: skip
    parser.add_argument("--without", action="append", default=[], metavar="KB",
                        help="leave this knowledge base out (repeatable)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write the weights (default: the shipped file)")  # fmt: skip
    parser.add_argument("--with-dev", action="store_true",
                        help="fit on the recorded public dev sets too (off by default)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the thresholds as JSON")
    parser.set_defaults(handler=run)


def record_all(records: Path, shared: Path, progress: bool = True) -> None:
    """Ask every knowledge base's and dev set's questions once, keeping the answer step's
    inputs, and record each knowledge base's self-made questions."""
    from hopwise.evaluation import evaluate
    from hopwise.evaluation.fit import DEV_SETS, record_self_questions
    from hopwise.evaluation.kb import evaluate_kb, write_outputs
    from hopwise.settings import load_settings

    settings = load_settings()
    for kb in sorted(p for p in shared.glob("kb-*") if (p / "manifest.json").is_file()):
        if progress:
            print(f"recording {kb.name}", file=sys.stderr)
        write_outputs(records / kb.name, evaluate_kb(kb, settings))
        record_self_questions(kb, records / kb.name / "self-inputs.jsonl")
    for name in DEV_SETS:
        if (shared / "dev" / f"{name}.questions.jsonl").is_file():
            if progress:
                print(f"recording {name}", file=sys.stderr)
            evaluate(shared / "dev" / name, settings, out_dir=records / "dev")


def run(args: argparse.Namespace) -> int:
    from graph.offline.model import WEIGHTS_PATH
    from hopwise.evaluation.fitting import fit_from_records
    from hopwise.settings import load_settings

    if args.record:
        record_all(args.records, args.shared, progress=not args.json)

    def say(line: str) -> None:
        if not args.json:
            print(line, file=sys.stderr)

    model = fit_from_records(args.records, args.shared, load_settings().data_dir,
                             args.without, say, dev_sets=args.with_dev)  # fmt: skip
    out = args.out or WEIGHTS_PATH
    model.save(out)
    if args.json:
        print(json.dumps({"out": str(out), "fitted_on": list(model.fitted_on),
                          "thresholds": model.thresholds}))  # fmt: skip
        return 0
    print(f"fitted on: {', '.join(model.fitted_on)}")
    print("thresholds: " + ", ".join(f"{k} {v:.3f}" for k, v in model.thresholds.items()))
    print(f"weights: {out}")
    return 0
