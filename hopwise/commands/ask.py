"""`hopwise ask`: answer one question from the command line (text or one JSON object)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from graph.result import QuestionResult


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("ask", help="answer a question from the knowledge base")
    parser.add_argument("question", help="the question (Chinese or English)")
    parser.add_argument("--groups", default="all", help="comma-separated reader groups")
    parser.add_argument("--thread", default=None, help="continue this conversation thread")
    parser.add_argument(
        "--history", type=Path, default=None, help="JSON file: list of {role, content} prior turns"
    )
    parser.add_argument("--no-web", action="store_true", help="never search the web")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hopwise.app import Hopwise

    history = load_history(args.history) if args.history else None
    groups = [g.strip() for g in args.groups.split(",") if g.strip()] or ["all"]
    app = Hopwise.from_settings()
    try:
        stream = None if args.json else _print_token
        result = app.ask(
            args.question,
            groups=groups,
            thread_id=args.thread,
            history=history,
            web=not args.no_web,
            on_token=stream,
        )
    finally:
        app.close()
    for notice in result.notices:
        print(f"hopwise: warning: {notice}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print()
        print(format_sources(result))
    return 0


def _print_token(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def load_history(path: Path) -> list[dict[str, str]]:
    """Prior turns for scripted follow-ups; a clear error for anything but [{role, content}]."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read --history {path}: {exc}") from exc
    if not isinstance(data, list) or not all(
        isinstance(m, dict) and {"role", "content"} <= m.keys() for m in data
    ):
        raise ValueError("--history must be a JSON list of {role, content} objects")
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in data]


def format_sources(result: QuestionResult) -> str:
    """Numbered sources the answer cites, then a one-line summary of the run."""
    lines = []
    if result.citations:
        lines.append("")
        lines.append("Sources:")
    for c in result.citations:
        where = c.url or " > ".join(x for x in (c.source, c.section) if x)
        page = f", p. {c.page}" if c.page else ""
        lines.append(f"  [{c.n}] {where}{page}")
    lines.append("")
    lines.append(
        f"mode {result.mode} · route {result.route} · hops {len(result.hops)} · "
        f"stop {result.stop_reason} · {result.total_ms / 1000:.1f}s · "
        f"{result.llm_calls} LLM calls · thread {result.thread_id}"
    )
    return "\n".join(lines)
