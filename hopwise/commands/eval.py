"""`hopwise eval PATH_PREFIX`: evidence recall, answer quality and cost on an eval set."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hopwise.evaluation.pipeline import MODES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate multi-hop retrieval and answers on NAME.corpus.jsonl + NAME.questions.jsonl",
        description="Ingest the corpus into an isolated, cached index, run every question with "
        "web search off, and score evidence recall@5/10/20, EM/F1 and cost.",
    )
    parser.add_argument("prefix", help="dataset path prefix, e.g. ../shared/eval/dev/musique_en")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="adaptive",
        help="adaptive: the product graph; single: one search with the whole "
        "question; gold: the dataset's decomposition (ceiling)",
    )
    parser.add_argument("--k", type=int, default=10, help="hits retrieved per search (default 10)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--json", action="store_true", help="print one JSON object to stdout")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("eval-results"),
        help="folder for the JSON report, Markdown table and PNG chart",
    )
    parser.add_argument(
        "--unanswerable",
        action="store_true",
        help="remove the supporting passages and measure abstention",
    )
    parser.set_defaults(handler=run)

    kb = subparsers.add_parser(
        "eval-kb",
        help="ask a company knowledge base's graded questions as its users would",
        description="Ingest every file manifest.json lists (with its groups) into a scratch "
        "store, ask every question of questions.jsonl as a user in all + its needs_groups "
        "(followups with their history), ask the restricted ones again without the groups "
        "(leak probes), write answers.jsonl and print accuracy per type and per half.",
    )
    kb.add_argument("dir", type=Path, nargs="*",
                    help="folders with manifest.json and questions.jsonl (default: every kb-* "
                    "folder of ../shared/eval)")  # fmt: skip
    kb.add_argument("--leave-one-out", action="store_true",
                    help="for each knowledge base, fit the reader without it (on the records "
                    "of the others, see hopwise fit-reader) and score it with those weights")  # fmt: skip
    kb.add_argument("--records", type=Path, default=Path("eval-results/records"),
                    help="recorded inputs the leave-one-out fits read (hopwise fit-reader)")  # fmt: skip
    kb.add_argument("--limit", type=int, default=None, help="only the first N questions")
    kb.add_argument("--selfcheck", action="store_true",
                    help="check every document (hopwise selfcheck), choose the threshold on the "
                    "checks alone, and report the real questions' stated answers at the fitted "
                    "and at the chosen threshold")  # fmt: skip
    kb.add_argument("--json", action="store_true", help="print the report as one JSON object")
    kb.add_argument(
        "--out", type=Path, default=Path("eval-results/kb"),
        help="folder for answers.jsonl, probes.jsonl and kb-report.json",
    )  # fmt: skip
    kb.set_defaults(handler=run_kb)


def run(args: argparse.Namespace) -> int:
    from hopwise.evaluation import evaluate
    from hopwise.evaluation.report import markdown_table
    from hopwise.settings import load_settings

    if args.k < 1:
        raise ValueError("--k must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")

    def progress(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{done}/{total}", end="", file=sys.stderr, flush=True)

    result = evaluate(
        args.prefix,
        load_settings(),
        mode=args.mode,
        k=args.k,
        limit=args.limit,
        unanswerable=args.unanswerable,
        out_dir=args.out,
        on_progress=progress,
    )
    if args.json:
        print(json.dumps(result.report, ensure_ascii=False))
        return 0
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(markdown_table([result.report]), end="")
    r = result.report
    print(f"stated short answers: {r['stated']} of {r['n']} (EM {r['stated_em']:.2f}, "
          f"F1 {r['stated_f1']:.2f}); the rest quote a sentence or say the documents do not")  # fmt: skip
    for kind, path in result.outputs.items():
        print(f"{kind}: {path}")
    return 0


def run_kb(args: argparse.Namespace) -> int:
    from hopwise.evaluation.fitting import fit_from_records
    from hopwise.evaluation.kb import evaluate_kb, summary_table, table, write_outputs
    from hopwise.settings import load_settings

    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    settings = load_settings()
    dirs = args.dir or sorted(p for p in Path("../shared/eval").glob("kb-*") if p.is_dir())
    if not dirs:
        raise ValueError("no knowledge base given and none in ../shared/eval/kb-*")

    def progress(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{done}/{total}", end="", file=sys.stderr, flush=True)

    reports = {}
    for root in dirs:
        model = None
        if args.leave_one_out:
            model = fit_from_records(args.records, root.parent, settings.data_dir, [root.name])
        if args.selfcheck:
            from hopwise.evaluation.selfcheck_eval import selfcheck_report

            reports[root.name], text = selfcheck_report(root, settings, model)
            if not args.json:
                held = " (fitted without it)" if args.leave_one_out else ""
                print(f"## {root.name}: reading checks{held}\n\n{text}")
            continue
        run = evaluate_kb(root, settings, limit=args.limit, on_progress=progress, model=model)
        out = args.out / root.name if len(dirs) > 1 else args.out
        paths = write_outputs(out, run)
        reports[root.name] = run.report
        if args.json:
            continue
        if sys.stderr.isatty():
            print(file=sys.stderr)
        held = " (fitted without it)" if args.leave_one_out else ""
        print(f"## {root.name}{held}\n")
        print(table(run.report), end="")
        for kind, path in paths.items():
            print(f"{kind}: {path}")
        print()
    if args.json:
        print(json.dumps(reports if len(dirs) > 1 else reports[dirs[0].name], ensure_ascii=False))
    elif len(dirs) > 1 and not args.selfcheck:
        print(summary_table(reports), end="")
    return 0
