"""The official `mcp` client against Hopwise's MCP server: over streamable HTTP at /mcp with
an API key (the same gate as the REST routes), and over stdio (`hopwise mcp --user NAME`, a
process of its own on its own data dir). Results carry their sources."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from hopwise.commands import mcp as mcp_command
from tests.api.conftest import BUDGET, TRAVEL, USERS, Api, no_finance

ROOT = Path(__file__).resolve().parents[2]


async def use_tools(client: Client) -> dict[str, Any]:
    tools = await client.list_tools()
    found = await client.call_tool("search_documents", {"query": "hotel cap Lisbon", "k": 3})
    answer = await client.call_tool("ask", {"question": "What is the hotel cap in Lisbon?"})
    secret = await client.call_tool("search_documents", {"query": "contingency reserve code"})
    listed = await client.call_tool("list_documents", {})
    return {
        "tools": sorted(t.name for t in tools.tools),
        "search": found.structured_content,
        "ask": answer.structured_content,
        "secret": json.dumps(secret.model_dump(mode="json")),
        "listed": listed.structured_content,
    }


def check_bob(seen: dict[str, Any]) -> None:
    assert seen["tools"] == ["ask", "list_documents", "search_documents"]
    assert seen["search"]["results"][0]["source"] == "travel.md"
    assert "180 euros" in seen["search"]["results"][0]["quote"]
    assert "180 euros" in seen["ask"]["answer"] and "[1]" in seen["ask"]["answer"]
    source = seen["ask"]["sources"][0]
    assert source["n"] == 1 and source["source"] == "travel.md" and source["doc_id"]
    listed = [d["source"] for d in seen["listed"]["documents"]]
    assert "travel.md" in listed and "budget.md" not in listed
    no_finance(seen["secret"])


def test_mcp_over_http_with_a_key(api: Api) -> None:
    async def session(headers: dict[str, str]) -> dict[str, Any]:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(f"{api.url}/mcp", http_client=http)
            async with Client(transport) as client:
                return await use_tools(client)

    check_bob(asyncio.run(session({"Authorization": f"Bearer {api.keys['bob']}"})))
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own errors
        asyncio.run(session({}))
    with httpx2.Client() as plain:
        refused = plain.post(f"{api.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401 and refused.json()["status"] == 401


INGEST = """
from hopwise.app import open_store
from hopwise.settings import load_settings
from ingest.pipeline import ingest_bytes

settings = load_settings()
with open_store(settings) as store:
    for name, group in (("travel.md", "all"), ("budget.md", "finance")):
        data = open(name, "rb").read()
        ingest_bytes(data, name, store, groups=[group], config=settings.ingest)
"""


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_mcp_over_stdio_acts_as_the_named_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {
        "HOPWISE_DATA_DIR": str(tmp_path / "data"), "HOPWISE_WEB_SEARCH": "off",
        "HOPWISE_EMBEDDINGS": "off", "HOPWISE_USERS": json.dumps(USERS),
    }  # fmt: skip
    (tmp_path / "travel.md").write_text(TRAVEL, encoding="utf-8")
    (tmp_path / "budget.md").write_text(BUDGET, encoding="utf-8")
    subprocess.run([sys.executable, "-c", INGEST], env=env, cwd=tmp_path, check=True)

    async def session() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "hopwise", "mcp", "--user", "bob"], env=env,
            cwd=str(tmp_path),
        )  # fmt: skip
        async with Client(params) as client:
            return await use_tools(client)

    check_bob(asyncio.run(session()))
    monkeypatch.setenv("HOPWISE_USERS", json.dumps(USERS))
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(ValueError, match="name the one whose groups apply, --user NAME"):
        mcp_command.run(argparse.Namespace(user=None, http=False, host=None, port=None))
