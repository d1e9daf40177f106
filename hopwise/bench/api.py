"""`hopwise bench api`: load on the API of a replica deployment, and its checks.

For each replica count: a fresh PostgreSQL database and Milvus collection (a throwaway cluster
and Milvus Lite's gRPC server on loopback unless --database-url / --milvus-uri name real ones),
R `hopwise serve` processes sharing them, and N users, each with an API key, asking M questions
at once in one thread of their own, every question to the next replica in turn (no sticky
sessions) while `hopwise ingest` adds a document beside them. Half the users are in `finance`;
every user asks about the finance-only document once.

Checked afterwards, in the database: each user's thread holds exactly their questions, once
each, in order; no answer of a user without `finance` shows anything of the finance document.
Printed: questions/s, p50/p95 latency, and the API's overhead over an in-process
`Hopwise.ask` (p50 of the same questions asked one at a time, both ways)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HANDBOOK = """# Site handbook

## Stock
Spare impellers are kept in the north depot. Impellers are reordered when fewer than four remain.

## Safety
Visitors sign in at the harbour gate and wear a yellow helmet on the quay.

## Inspections
The boiler pressure valves are inspected every nine weeks by the facilities team.
"""
FINANCE = """# Treasury memo

## Reserve
The contingency reserve code is QUILLON-5521 and it holds 7.3 million euros.
"""
LATE = "# Canteen\n\nThe canteen opens at half past seven on weekdays.\n"
MARKER = "QUILLON-5521"
QUESTIONS = [
    ("Where are spare impellers kept?", "north depot"),
    ("What colour helmet do visitors wear on the quay?", "yellow"),
    ("How often are the boiler pressure valves inspected?", "nine weeks"),
    ("What is the contingency reserve code?", MARKER),  # finance only
]
PROBE_USER = "bench-probe"  # the one-at-a-time overhead questions are this user's
OVERHEAD_QUESTIONS = 20


def register_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--users", type=int, default=32, help="concurrent API users (32)")
    parser.add_argument("--questions", type=int, default=3, help="questions per user (3)")
    parser.add_argument(
        "--replicas", default="1,2", help="replica counts to measure, comma-separated (1,2)"
    )
    parser.add_argument(
        "--database-url", dest="database_url", default=None,
        help="a PostgreSQL to use (default: a throwaway cluster of Debian's binaries)",
    )  # fmt: skip
    parser.add_argument(
        "--milvus-uri", dest="milvus_uri", default=None,
        help="a Milvus server to use (default: Milvus Lite's gRPC server on loopback)",
    )  # fmt: skip


def question_of(user: int, turn: int) -> tuple[str, str]:
    """User `user`'s question `turn` (tagged with both, so each is told apart in the database)."""
    text, expected = QUESTIONS[(user + turn) % len(QUESTIONS)]
    return f"{text} (ticket {user:02d}-{turn})", expected


def has_finance(user: int) -> bool:
    return user % 2 == 0


@dataclass
class Run:
    """One deployment's load: per-question records, wall time, the checks."""

    replicas: int
    users: int
    questions: int
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    checks: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        ok = [r["seconds"] for r in self.records if r["status"] == 200]
        asked = self.users * self.questions
        return {
            "replicas": self.replicas,
            "users": self.users,
            "questions": asked,
            "answered": len(ok),
            "server_errors": sum(1 for r in self.records if r["status"] >= 500),
            "seconds": round(self.seconds, 2),
            "questions_per_s": round(len(ok) / self.seconds, 2) if self.seconds else 0.0,
            "p50_ms": round(percentile(ok, 50) * 1000, 1),
            "p95_ms": round(percentile(ok, 95) * 1000, 1),
            **self.checks,
        }


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def hopwise_env(shared: dict[str, str], data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    return env | {"HOPWISE_DATA_DIR": str(data_dir), **shared}


def start_replica(shared: dict[str, str], data_dir: Path, log: Path) -> tuple[str, Any]:
    """`hopwise serve` on a free loopback port; (url, process) once it is ready."""
    import httpx

    from hopwise.bench.servers import free_port
    from hopwise.bench.startup import stop

    port = free_port()
    env = hopwise_env(shared, data_dir)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hopwise", "serve", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hopwise serve exited: {log.read_text(errors='replace')[-800:]}")
        try:
            if httpx.get(f"{url}/api/v1/ready", timeout=2).status_code == 200:
                return url, proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise TimeoutError("hopwise serve was not ready in 180 s")


async def one_user(
    client: Any, urls: list[str], key: str, index: int, count: int, records: list[dict[str, Any]]
) -> None:
    """A user's questions, one after another, in one thread, each to the next replica."""
    thread_id: str | None = None
    for turn in range(count):
        question, expected = question_of(index, turn)
        url = urls[(index + turn) % len(urls)]
        body: dict[str, Any] = {"question": question}
        if thread_id:
            body["thread_id"] = thread_id
        started = time.monotonic()
        reply = await client.post(
            f"{url}/api/v1/ask", json=body, headers={"Authorization": f"Bearer {key}"}
        )
        seconds = time.monotonic() - started
        data = (
            reply.json()
            if reply.headers.get("content-type", "").startswith("application/json")
            else {}
        )
        thread_id = thread_id or data.get("thread_id")
        records.append(
            {
                "user": index, "turn": turn, "status": reply.status_code, "seconds": seconds,
                "expected": expected, "answer": str(data.get("answer", "")),
                "message": str(data.get("message", "")),
            }
        )  # fmt: skip


async def drive(urls: list[str], keys: list[str], count: int) -> tuple[list[dict[str, Any]], float]:
    import asyncio

    import httpx

    records: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=len(keys) * 2, max_keepalive_connections=len(keys))
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        started = time.monotonic()
        await asyncio.gather(
            *(one_user(client, urls, key, i, count, records) for i, key in enumerate(keys))
        )
        return records, time.monotonic() - started


def check_database(url: str, names: list[str], count: int, finance_doc: str) -> dict[str, Any]:
    """From PostgreSQL: per user, one thread holding exactly their questions in order; no
    result of a user without `finance` showing the finance document (hits, citations, text)."""
    import psycopg

    from graph.result import QuestionResult
    from hopwise.database import PostgresDatabase
    from hopwise.state import open_postgres_checkpointer

    with psycopg.connect(url) as conn:
        turns = conn.execute(
            "SELECT t.owner, t.thread_id, u.question FROM hopwise_turns u JOIN hopwise_threads t "
            "ON t.thread_id = u.thread_id ORDER BY u.created_at, u.question"
        ).fetchall()
    lost = misfiled = extra_threads = leaks = 0
    db = PostgresDatabase(url, what="the bench check", pool_size=2)
    saver = open_postgres_checkpointer(db)
    try:
        for index, name in enumerate(names):
            mine = [(thread, q) for owner, thread, q in turns if owner == name]
            expected = [question_of(index, t)[0] for t in range(count)]
            asked = [q for _, q in mine]
            lost += sum(1 for q in expected if q not in asked)
            misfiled += sum(1 for q in asked if q not in expected) + (
                0 if asked == expected or len(asked) != len(expected) else 1
            )
            threads = {thread for thread, _ in mine}
            extra_threads += max(0, len(threads) - 1)
            if has_finance(index):
                continue
            for thread in threads:
                config: Any = {"configurable": {"thread_id": thread}}
                for saved in saver.list(config, filter={"source": "update"}):
                    raw = saved.checkpoint["channel_values"].get("result")
                    if not raw:
                        continue
                    result = QuestionResult.model_validate(raw)
                    shown = json.dumps(raw, ensure_ascii=False)
                    if finance_doc in result.doc_ids() or MARKER in shown:
                        leaks += 1
        others = sum(1 for owner, _, _ in turns if owner not in names and owner != PROBE_USER)
    finally:
        db.close()
    return {
        "lost": lost,
        "misfiled": misfiled + others,
        "extra_threads": extra_threads,
        "leaks": leaks,
        "saved_turns": len(turns),
    }


def overhead(url: str, key: str, settings_env: dict[str, str], data_dir: Path) -> dict[str, Any]:
    """p50 of the same questions one at a time: over the API (one replica, nothing else
    running) and through an in-process `Hopwise.ask` on the same deployment."""
    import httpx

    from hopwise.app import Hopwise
    from hopwise.settings import Settings

    questions = [QUESTIONS[i % 3][0] for i in range(OVERHEAD_QUESTIONS)]
    api: list[float] = []
    with httpx.Client(timeout=120) as client:
        for question in questions:
            started = time.monotonic()
            reply = client.post(
                f"{url}/api/v1/ask", json={"question": question},
                headers={"Authorization": f"Bearer {key}"},
            )  # fmt: skip
            reply.raise_for_status()
            api.append(time.monotonic() - started)
    fields = {k.removeprefix("HOPWISE_").lower(): v for k, v in settings_env.items()}
    settings = Settings(**{**fields, "data_dir": data_dir})  # type: ignore[arg-type]
    app = Hopwise.from_settings(settings)
    inproc: list[float] = []
    try:
        for question in questions:
            started = time.monotonic()
            app.ask(question, groups=("all",), owner=PROBE_USER)
            inproc.append(time.monotonic() - started)
    finally:
        app.close()
    api_p50, inproc_p50 = statistics.median(api[2:]), statistics.median(inproc[2:])
    return {
        "api_p50_ms": round(api_p50 * 1000, 1),
        "in_process_p50_ms": round(inproc_p50 * 1000, 1),
        "overhead_p50_ms": round((api_p50 - inproc_p50) * 1000, 1),
    }


def run_replicas(
    root: Path, replicas: int, users: int, count: int, database_url: str, milvus_uri: str,
    *, measure_overhead: bool = True,
) -> Run:  # fmt: skip
    """One deployment of `replicas` API processes, loaded and checked."""
    import asyncio

    from hopwise.api_keys import ApiKeys
    from hopwise.bench.startup import stop
    from hopwise.database import PostgresDatabase
    from ingest.parse import safe_source
    from ingest.pipeline import doc_id_for

    tag = f"r{replicas}{uuid.uuid4().hex[:6]}"
    names = [f"{tag}u{i:02d}" for i in range(users)]
    config = {
        name: {"password": f"password-of-{name}", "groups": ["finance"] if has_finance(i) else []}
        for i, name in enumerate(names)
    } | {PROBE_USER: {"password": "password-of-the-probe", "groups": []}}
    shared = {
        "HOPWISE_DATABASE_URL": database_url,
        "HOPWISE_MILVUS_URI": milvus_uri,
        "HOPWISE_COLLECTION": f"bench_api_{tag}",
        "HOPWISE_ORIGINALS_DIR": str(root / f"originals-{tag}"),
        "HOPWISE_USERS": json.dumps(config),
        "HOPWISE_EMBEDDINGS": "off",  # BM25: the measure is the API and the deployment
        "HOPWISE_WEB_SEARCH": "off",
        "HOPWISE_API_RATE_PER_MINUTE": "0",
    }
    docs, late = root / f"docs-{tag}", root / f"late-{tag}"
    docs.mkdir()
    late.mkdir()
    (docs / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (late / "canteen.md").write_text(LATE, encoding="utf-8")
    (root / f"fin-{tag}").mkdir()
    finance = root / f"fin-{tag}" / "treasury.md"
    finance.write_text(FINANCE, encoding="utf-8")
    env = hopwise_env(shared, root / f"cli-{tag}")
    ingest = [sys.executable, "-m", "hopwise", "ingest"]
    subprocess.run([*ingest, str(docs)], env=env, check=True, capture_output=True)
    subprocess.run(
        [*ingest, str(finance), "--groups", "finance"], env=env, check=True, capture_output=True
    )
    db = PostgresDatabase(database_url, what="the bench keys", pool_size=2)
    try:
        store = ApiKeys(db)
        users_map = {n: _user(n, config[n]) for n in config}
        keys = [store.create(name, users_map)[1] for name in names]
        probe_key = store.create(PROBE_USER, users_map)[1]
    finally:
        db.close()

    servers = []
    run = Run(replicas, users, count)
    try:
        for i in range(replicas):
            servers.append(start_replica(shared, root / f"{tag}-r{i}", root / f"{tag}-r{i}.log"))
        urls = [url for url, _ in servers]
        if measure_overhead:
            run.checks |= overhead(urls[0], probe_key, shared, root / f"{tag}-inproc")
        writer = subprocess.Popen([*ingest, str(late)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)  # fmt: skip
        run.records, run.seconds = asyncio.run(drive(urls, keys, count))
        ingest_status = writer.wait(timeout=600)
    finally:
        for _, proc in servers:
            stop(proc)
    run.checks |= check_database(database_url, names, count, doc_id_for(safe_source(finance.name)))
    run.checks["ingest_during_load"] = "ok" if ingest_status == 0 else f"exit {ingest_status}"
    run.checks["wrong_answers"] = sum(
        1
        for r in run.records
        if r["status"] == 200
        and (r["expected"] in r["answer"]) != (r["expected"] != MARKER or has_finance(r["user"]))
    )
    return run


def _user(name: str, spec: dict[str, Any]) -> Any:
    from hopwise.users import User, with_public_group

    return User(name, with_public_group(list(spec["groups"])), spec["password"])


def run(args: argparse.Namespace) -> dict[str, Any]:
    from hopwise.bench.servers import MilvusLiteServer, PostgresServer, missing_reason

    counts = [int(n) for n in str(args.replicas).split(",") if n.strip()]
    results: dict[str, Any] = {
        "machine": f"{os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"), "runs": [],
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="hopwise-bench-api-") as tmp:
        root = Path(tmp)
        postgres = milvus = None
        try:
            url = args.database_url
            if not url:
                reason = missing_reason()
                if reason:
                    raise RuntimeError(f"bench api needs PostgreSQL: {reason} (or --database-url)")
                postgres = PostgresServer().start()
            uri = args.milvus_uri
            if not uri:
                milvus = MilvusLiteServer(root / "milvus.db")
                milvus.start()
                uri = milvus.uri
            for replicas in counts:
                db_url = url or postgres.fresh_database(f"bench_api_{replicas}")  # type: ignore[union-attr]
                one = run_replicas(root, replicas, args.users, args.questions, db_url, uri)
                results["runs"].append(one.summary())
        finally:
            if milvus is not None:
                milvus.stop()
            if postgres is not None:
                postgres.stop()
    return results


def print_table(name: str, result: dict[str, Any], file: Any = None) -> None:
    file = file or sys.stdout
    print(f"== bench {name} ({result['machine']}, {result['date']})", file=file)
    print(
        f"  {'replicas':>8} {'questions':>9} {'q/s':>6} {'p50 ms':>8} {'p95 ms':>8} {'5xx':>4} "
        f"{'lost':>4} {'misfiled':>8} {'leaks':>5} {'wrong':>5} {'overhead p50 ms':>15}",
        file=file,
    )
    for r in result["runs"]:
        print(
            f"  {r['replicas']:>8} {r['answered']:>4}/{r['questions']:<4} {r['questions_per_s']:>6} "
            f"{r['p50_ms']:>8} {r['p95_ms']:>8} {r['server_errors']:>4} {r['lost']:>4} "
            f"{r['misfiled']:>8} {r['leaks']:>5} {r['wrong_answers']:>5} "
            f"{r.get('overhead_p50_ms', '-'):>15}",
            file=file,
        )
    print(
        "  (q/s, p50, p95: all users at once, an ingest beside them; overhead: the same "
        "questions one at a time over the API minus in-process Hopwise.ask)",
        file=file,
    )
