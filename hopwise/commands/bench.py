"""`hopwise bench retrieval|ingestion|graph|crosslingual|kbsearch|parsing|llm|startup|api|all`: printed and saved as JSON.

Benchmarks are never timed tests; CI runs each one tiny as a smoke test.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

NOT_AVAILABLE = "not available yet"


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", help="measure retrieval, ingestion and graph speed")
    sub = bench.add_subparsers(dest="bench_command", required=True)

    retrieval = sub.add_parser("retrieval", help="insert chunks/s and search p50/p95")
    _chunks_flag(retrieval)
    retrieval.add_argument(
        "--uri", default=None, help="a Milvus server to measure (default: embedded, temp dir)"
    )
    _output_flags(retrieval)
    retrieval.set_defaults(handler=run_one("retrieval"))

    ingestion = sub.add_parser("ingestion", help="parse + chunk pages/s (PDF, DOCX)")
    _pages_flag(ingestion)
    _output_flags(ingestion)
    ingestion.set_defaults(handler=run_one("ingestion"))

    graph = sub.add_parser("graph", help="orchestration overhead and time to first token")
    _graph_flags(graph)
    _output_flags(graph)
    graph.set_defaults(handler=run_one("graph"))

    crosslingual = sub.add_parser(
        "crosslingual", help="hit@5/10 of questions about passages in the other language"
    )
    crosslingual.add_argument("--probe", default=None, help="probe JSONL (the bundled one)")
    crosslingual.add_argument("--dev-dir", dest="dev_dir", default=None, help="dev sets folder")
    _output_flags(crosslingual)
    crosslingual.set_defaults(handler=run_one("crosslingual"))

    kbsearch = sub.add_parser(
        "kbsearch",
        help="answer in the top 10 on the company dev KBs, by places for the other language",
    )
    from hopwise.bench.kbsearch import register_arguments as kbsearch_arguments

    kbsearch_arguments(kbsearch)
    _output_flags(kbsearch)
    kbsearch.set_defaults(handler=run_one("kbsearch"))

    parsing = sub.add_parser(
        "parsing", help="parse files: pages/s, and word recall against pdftotext for PDFs"
    )
    parsing.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders")
    parsing.add_argument(
        "--engines", default="",
        help="also time raw PDF text extraction with these engines (pypdf,pypdfium2,pdfplumber)",
    )  # fmt: skip
    _output_flags(parsing)
    parsing.set_defaults(handler=run_one("parsing"))

    llm = sub.add_parser(
        "llm", help="a real model in the graph: parsed / fell back / timed out per step"
    )
    from hopwise.bench.llm import register_arguments

    register_arguments(llm)
    _output_flags(llm)
    llm.set_defaults(handler=run_one("llm"))

    questions = sub.add_parser(
        "questions", help="question latency while the built-in model embeds, and idle"
    )
    from hopwise.bench.questions import register_arguments as questions_arguments

    questions_arguments(questions)
    _output_flags(questions)
    questions.set_defaults(handler=run_one("questions"))

    startup = sub.add_parser(
        "startup", help="a fresh app process: server up, first paint, ready, first answer"
    )
    _output_flags(startup)
    startup.set_defaults(handler=run_one("startup"))

    api = sub.add_parser(
        "api", help="API users at once on 1 and 2 replicas (PostgreSQL), an ingest beside them"
    )
    from hopwise.bench.api import register_arguments as api_arguments

    api_arguments(api)
    _output_flags(api)
    api.set_defaults(handler=run_one("api"))

    everything = sub.add_parser("all", help="every benchmark; JSON files in --out")
    everything.add_argument(
        "--sizes", default="10000,50000", help="retrieval sizes in chunks (10000,50000)"
    )
    everything.add_argument("--queries", type=int, default=200, help="timed searches per mode")
    _pages_flag(everything)
    _graph_flags(everything)
    everything.add_argument("--json", action="store_true", help="print one JSON object")
    everything.add_argument(
        "--out", type=Path, default=Path("bench-results"), help="folder for the JSON results"
    )
    everything.set_defaults(handler=run_all)


def _chunks_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunks", type=int, default=10_000, help="synthetic chunks (10000)")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per mode")


def _pages_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pages", type=int, default=200, help="pages per format (200)")
    parser.add_argument(
        "--embed-chunks", dest="embed_chunks", type=int, default=64,
        help="chunks per language embedded by the built-in model (64)",
    )  # fmt: skip


def _graph_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=30, help="questions per dev set (30)")
    parser.add_argument("--sets", default=None, help="comma-separated dev set names")
    parser.add_argument("--dev-dir", dest="dev_dir", default=None, help="dev sets folder")


def _output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--out", type=Path, default=None, help="also write NAME.json here")


def runner(name: str) -> Callable[[argparse.Namespace], dict[str, Any]] | None:
    """The benchmark's run(args), or None when its module is not built yet."""
    return _attribute(name, "run")


def _attribute(name: str, attribute: str) -> Any:
    """`attribute` of the benchmark's module, or None (module not built yet, or no such name)."""
    module_name = f"hopwise.bench.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return None
    return getattr(module, attribute, None)


def run_one(name: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        run = runner(name)
        if run is None:
            print(f"hopwise bench {name}: {NOT_AVAILABLE}")
            return 0
        result = run(args)
        _emit(name, result, args.json, args.out)
        return 0

    return handler


def run_all(args: argparse.Namespace) -> int:
    results: dict[str, Any] = {}
    for name in ("retrieval", "ingestion", "graph"):
        run = runner(name)
        if run is None:
            results[name] = {"status": NOT_AVAILABLE}
        elif name == "retrieval":  # one result per size, keyed by the chunk count
            sizes = [int(n) for n in str(args.sizes).split(",") if n.strip()]
            results[name] = {
                str(n): run(argparse.Namespace(**{**vars(args), "chunks": n})) for n in sizes
            }
        else:
            results[name] = run(args)
        if not args.json:
            print_table(name, results[name])
        write_json(args.out, name, results[name])
    write_json(args.out, "all", results)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        print(f"results written to {args.out}/")
    return 0


def _emit(name: str, result: dict[str, Any], as_json: bool, out: Path | None) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:  # a benchmark with rows of its own prints them itself
        (_attribute(name, "print_table") or print_table)(name, result)
    if out is not None:
        write_json(out, name, result)


def write_json(out: Path, name: str, result: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def print_table(name: str, result: dict[str, Any], file: Any = None) -> None:
    """Flat key/value rows; nested objects are shown with dotted keys."""
    file = file or sys.stdout
    rows = list(_flatten(result))
    width = max((len(k) for k, _ in rows), default=10)
    print(f"== bench {name}", file=file)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}", file=file)


def _flatten(value: Any, prefix: str = "") -> Any:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value
