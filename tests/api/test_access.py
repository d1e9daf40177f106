"""Keys decide who reads what: a finance-only document never reaches a key without `finance`
(search, ask and its stream, threads, documents, downloads, OpenAI, MCP, errors); one user's
key cannot reach another's thread; a revoked key is refused at once; failed keys are throttled
as sign-ins are."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.api.conftest import Api, ask, new_key, no_finance

FINANCE_QUESTIONS = [
    "What is the contingency reserve code?",
    "How much does the Tarvos fund hold?",
    "Who is the treasurer?",
    "The contingency reserve code is MARZIPAN-9047: what is it for?",
    "Treasury budget Reserve",
]


def every_reply(api: Api, user: str) -> list[str]:
    """Every route a reader has, asked about the finance document; the bodies as text."""
    bodies: list[str] = []
    with api.client(user) as c:
        for question in FINANCE_QUESTIONS:
            reply = ask(c, question)
            bodies.append(reply.text)
            bodies.append(ask(c, question, stream=True).text)
            bodies.append(c.post("/api/v1/search", json={"query": question, "k": 20}).text)
            thread = reply.json()["thread_id"]
            bodies.append(c.get(f"/api/v1/threads/{thread}").text)
            bodies.append(ask(c, "and how much is in it?", thread_id=thread).text)
            chat = {"model": "hopwise", "messages": [{"role": "user", "content": question}]}
            bodies.append(c.post("/v1/chat/completions", json=chat).text)
            bodies.append(c.post("/v1/chat/completions", json={**chat, "stream": True}).text)
        bodies.append(c.get("/api/v1/threads").text)
        bodies.append(c.get("/api/v1/threads", params={"search": "MARZIPAN"}).text)
        bodies.append(c.get("/api/v1/documents").text)
        for path in ("", "/original"):
            bodies.append(c.get(f"/api/v1/documents/{api.finance_doc}{path}").text)
        bodies.append(c.delete(f"/api/v1/documents/{api.finance_doc}").text)
        bodies.append(c.get("/api/v1/documents/status").text)
    bodies += asyncio.run(mcp_replies(api, user))
    return bodies


async def mcp_replies(api: Api, user: str) -> list[str]:
    found = []
    headers = {"Authorization": f"Bearer {api.keys[user]}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(f"{api.url}/mcp", http_client=http)
        async with Client(transport) as client:
            for question in FINANCE_QUESTIONS[:3]:
                for tool, args in (("search_documents", {"query": question, "k": 20}),
                                   ("ask", {"question": question})):  # fmt: skip
                    result = await client.call_tool(tool, args)
                    found.append(dump(result))
            found.append(dump(await client.call_tool("list_documents", {})))
    return found


def dump(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


@pytest.mark.parametrize("user", ["bob", "cara"])
def test_a_finance_document_never_reaches_a_key_without_finance(api: Api, user: str) -> None:
    bodies = every_reply(api, user)
    assert len(bodies) == 5 * 7 + 7 + 7
    for body in bodies:
        no_finance(body, typed=[*FINANCE_QUESTIONS, "MARZIPAN"])


def test_the_finance_key_does_find_it(api: Api) -> None:
    """The positive control: the same routes show the markers to ann, so the check can fail."""
    with api.client("ann") as ann:
        assert "MARZIPAN-9047" in ask(ann, FINANCE_QUESTIONS[0]).text
        assert "MARZIPAN-9047" in ann.post("/api/v1/search", json={"query": "reserve code"}).text
        original = ann.get(f"/api/v1/documents/{api.finance_doc}/original")
        assert b"MARZIPAN-9047" in original.content
    assert any("MARZIPAN-9047" in r for r in asyncio.run(mcp_replies(api, "ann")))


def test_one_users_key_cannot_reach_another_users_thread(api: Api) -> None:
    with api.client("ann") as ann, api.client("bob") as bob:
        thread = ask(ann, FINANCE_QUESTIONS[0]).json()["thread_id"]
        replies = [
            bob.get(f"/api/v1/threads/{thread}"),
            bob.patch(f"/api/v1/threads/{thread}", json={"title": "mine now"}),
            bob.delete(f"/api/v1/threads/{thread}"),
            bob.put(f"/api/v1/threads/{thread}/answers/0/feedback", json={"rating": "up"}),
            ask(bob, "and who is the treasurer?", thread_id=thread),
            ask(bob, "and who is the treasurer?", thread_id=thread, stream=True),
        ]
        unknown = bob.get("/api/v1/threads/0123456789abcdef0123456789abcdef")
        for reply in replies:
            assert reply.status_code == 404, reply.text
            assert reply.json() == unknown.json()  # the same as a thread that does not exist
            no_finance(reply.text)
        assert thread not in bob.get("/api/v1/threads").text
        kept = ann.get(f"/api/v1/threads/{thread}").json()
        assert kept["answers"] == 1 and kept["title"] != "mine now"


def test_a_revoked_key_is_refused_at_once(api: Api) -> None:
    key = new_key(api, "cara")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=api.url, headers=headers) as c:
        assert c.get("/api/v1/threads").status_code == 200
        key_id = key.split("_")[1]
        assert api.service.keys.revoke(key_id)  # as `hopwise keys revoke` or the Admin page does
        for reply in (
            c.get("/api/v1/threads"),
            c.post("/api/v1/ask", json={"question": "What is the hotel cap in Lisbon?"}),
            c.get("/v1/models"),
            c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ):
            assert reply.status_code == 401, reply.text
            assert reply.json()["status"] == 401


def test_failed_keys_are_throttled_like_sign_ins(api: Api) -> None:
    key = new_key(api, "bob")
    wrong = key[:-4] + ("aaaa" if not key.endswith("aaaa") else "bbbb")
    with httpx.Client(base_url=api.url) as c:
        statuses = [
            c.get("/api/v1/threads", headers={"Authorization": f"Bearer {wrong}"}).status_code
            for _ in range(3)
        ]
        assert statuses[0] == 401 and 429 in statuses  # the second failure earns a wait
        held = c.get("/api/v1/threads", headers={"Authorization": f"Bearer {key}"})
        assert held.status_code == 429 and int(held.headers["retry-after"]) >= 1
        other = c.get("/api/v1/threads", headers={"Authorization": f"Bearer {api.keys['bob']}"})
        assert other.status_code == 200  # guesses at one key never stall another
