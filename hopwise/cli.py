"""The `hopwise` console script. Each subcommand lives in hopwise/commands/<name>.py.

Subcommand names, flags and the JSON keys they print are a contract other tools rely on.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
import traceback
import warnings
from collections.abc import Callable

COMMAND_MODULES = (
    "kb", "ask", "eval", "fit", "bench", "worker", "serve", "keys", "mcp", "selfcheck",
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hopwise", description="Multi-hop question answering over your own documents."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"hopwise.commands.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet must not break the others
            if exc.name != f"hopwise.commands.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def quiet_pymilvus() -> None:
    """Failures reach the user as one line (below), not as pymilvus's own log dumps or import
    warnings. pymilvus configures its loggers when imported, so it is imported first."""
    with warnings.catch_warnings():  # older milvus-lite builds import pkg_resources
        warnings.simplefilter("ignore")
        import pymilvus  # noqa: F401

        with contextlib.suppress(ImportError):  # a server-only install has no milvus-lite
            import milvus_lite  # noqa: F401
    for name in ("pymilvus", "pymilvus.milvus_client"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def warn_slow_engine() -> None:
    """Say so in one line when the embedded engine is the ~1000x slower milvus-lite 3.x."""
    from hopwise.app import engine_warning
    from hopwise.settings import load_settings

    try:
        line = engine_warning(load_settings())
    except Exception:  # noqa: BLE001 - bad settings are reported by the command itself
        return
    if line:
        print(f"hopwise: warning: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    light = getattr(args, "light", False)  # a command that never opens the knowledge base
    if not args.verbose and not light:
        quiet_pymilvus()
    redact = _redactor()
    if not light:
        warn_slow_engine()
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the CLI prints one clear line, never a stack trace
        if args.verbose:
            print(redact(traceback.format_exc()), file=sys.stderr)
            return 1
        print(f"hopwise: error: {redact(' '.join(str(exc).split()))}", file=sys.stderr)
        return 1


def _redactor() -> Callable[[str], str]:
    """Redacts configured secrets from what the CLI prints and logs."""
    from hopwise.settings import load_settings, redact_logs
    from ingest.store import redact_uri_secrets

    try:
        settings = load_settings()
    except Exception:  # noqa: BLE001 - bad settings are reported by the command itself
        return redact_uri_secrets
    redact_logs(settings)
    return settings.redact


if __name__ == "__main__":
    raise SystemExit(main())
