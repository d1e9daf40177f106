"""`hopwise selfcheck`: how well Hopwise reads each document, and the stated-answer threshold
chosen on it (hopwise/selfcheck). Documents without a check of their current version are
checked first (in the foreground); `--again` checks them all again.

JSON keys are a contract (docs/usage.md): {"documents": [summary, ...], "calibration": {...}}.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "selfcheck",
        help="how well Hopwise reads each document (self-test questions asked back)",
        description="Ask each document the questions its own tables and records answer, "
        "offline and as an admin reads, and print per document the right first lines, the "
        "stated answers and their precision, the abstentions, the tables and records found "
        "and the worst misreadings; then the stated-answer threshold chosen on them.",
    )
    parser.add_argument("--document", metavar="ID", default=None, help="only this document")
    parser.add_argument("--again", action="store_true",
                        help="check again even when a current check exists")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hopwise.app import Hopwise

    app = Hopwise.from_settings()
    try:
        docs = app.list_documents()
        if args.document:
            docs = [d for d in docs if d.doc_id == args.document]
            if not docs:
                print(f"hopwise: error: no document with id {args.document!r}", file=sys.stderr)
                return 1
        checks = app.selfcheck.checks()
        for doc in docs:
            if args.again or doc.doc_id not in checks:
                if not args.json:
                    print(f"checking {doc.source} …", file=sys.stderr)
                checks[doc.doc_id] = app.selfcheck.check(doc)
        calibration = app.selfcheck.recalibrate()
    finally:
        app.close()
    summaries = [checks[d.doc_id].summary() for d in docs if d.doc_id in checks]
    if args.json:
        out = {"documents": summaries, "calibration": calibration.as_json()}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if not summaries:
        print("no documents")
    for s in summaries:
        print(document_lines(s))
    print(calibration_line(calibration.as_json()))
    return 0


def document_lines(s: dict[str, Any]) -> str:
    """One document's check in plain lines."""
    head = f"{s['source']}  [{s['doc_id']}]"
    if not s["questions_asked"]:
        lines = [head, "  no tables, records or labelled values to ask about"]
    else:
        lines = [
            head,
            f"  {s['right_first_lines']} of {s['questions_asked']} first lines right "
            f"({s['score'] * 100:.0f} %); stated {s['stated']}, right {s['stated_right']}; "
            f"'not said' {s['abstained']}"
            + (
                ""
                if s["complete"]
                else f"; the time budget stopped it after "
                f"{s['questions_asked']} of {s['questions_generated']} questions"
            ),
        ]
    cross = s["cross_language"]
    if cross["asked"]:
        lines.append(f"  asked in the other language: {cross['right']} of {cross['asked']} right")
    lines.append(f"  tables {s['tables']} ({s['table_rows']} rows), records {s['records']}")
    lines += [f"  warning: {w}" for w in s["tables_read_as_text"]]
    for m in s["misreadings"]:
        lines.append(f"  misread: {m['question']}  expected {m['expected']!r}, got: {m['got']}")
    return "\n".join(lines)


def calibration_line(c: dict[str, Any]) -> str:
    shown = "never (the best sentence is quoted)" if c["threshold"] > 1 else f"{c['threshold']:.2f}"
    return (f"stated-answer threshold: {shown} (fitted {c['shipped']:.2f}, floor {c['floor']:.2f}); "
            f"{c['reason']}")  # fmt: skip
