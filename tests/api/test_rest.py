"""The REST API on a real server: ask (JSON and Server-Sent Events, the `hopwise ask --json`
keys), threads (list, read with traces, rename, search, feedback, delete), documents (admin
upload, list, status, download, delete), health and readiness, the OpenAPI document."""

from __future__ import annotations

from graph.result import QuestionResult
from tests.api.conftest import TRAVEL, Api, ask, sse_events

QUESTION = "What is the hotel cap in Lisbon?"


def test_ask_answers_with_the_cli_json_keys_and_continues_the_thread(api: Api) -> None:
    with api.client("bob") as bob:
        first = ask(bob, QUESTION)
        assert first.status_code == 200, first.text
        result = first.json()
        assert set(result) == set(QuestionResult.model_fields)  # the `hopwise ask --json` keys
        assert "180 euros" in result["answer"] and "[1]" in result["answer"]
        assert result["citations"][0]["source"] == "travel.md"
        assert result["hops"] and result["trace"] and result["mode"] == "offline"
        assert all(h["fused"] is None for hop in result["hops"] for h in hop["hits"])  # a reader
        thread = result["thread_id"]
        follow = ask(bob, "And for second-class train tickets?", thread_id=thread)
        assert follow.status_code == 200, follow.text
        assert follow.json()["thread_id"] == thread
        listed = bob.get("/api/v1/threads").json()
        assert [t["answers"] for t in listed if t["thread_id"] == thread] == [2]
        read = bob.get(f"/api/v1/threads/{thread}").json()
        assert [r["question"] for r in read["results"]] == [
            QUESTION,
            "And for second-class train tickets?",
        ]
        assert read["results"][0]["trace"]  # traces included


def test_admins_see_scores_readers_see_ranks(api: Api) -> None:
    with api.client("ann") as ann:
        hits = [h for hop in ask(ann, QUESTION).json()["hops"] for h in hop["hits"]]
    assert hits and all(h["fused"] is not None for h in hits)


def test_streaming_sends_steps_tokens_then_the_same_result(api: Api) -> None:
    with api.client("bob") as bob:
        reply = ask(bob, QUESTION, stream=True)
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply.text)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "step" and kinds[-1] == "result"
    assert "token" in kinds
    steps = [data for kind, data in events if kind == "step"]
    assert steps[0]["node"] == "route_question" and all(s["message"] for s in steps)
    streamed = "".join(data["text"] for kind, data in events if kind == "token")
    result = events[-1][1]
    assert set(result) == set(QuestionResult.model_fields)
    assert "180 euros" in streamed and "180 euros" in result["answer"]


def test_threads_rename_search_feedback_delete(api: Api) -> None:
    with api.client("cara") as cara:
        thread = ask(cara, QUESTION).json()["thread_id"]
        renamed = cara.patch(f"/api/v1/threads/{thread}", json={"title": "Lisbon hotels"})
        assert renamed.status_code == 200 and renamed.json()["title"] == "Lisbon hotels"
        found = cara.get("/api/v1/threads", params={"search": "lisbon hotels"}).json()
        assert [t["thread_id"] for t in found] == [thread]
        assert cara.get("/api/v1/threads", params={"search": "no such words"}).json() == []
        rated = cara.put(
            f"/api/v1/threads/{thread}/answers/0/feedback",
            json={"rating": "down", "comment": "too short"},
        )
        assert rated.status_code == 204
        feedback = cara.get(f"/api/v1/threads/{thread}").json()["feedback"]
        assert feedback[0]["rating"] == 0 and feedback[0]["comment"] == "too short"
        assert cara.put(f"/api/v1/threads/{thread}/answers/5/feedback",
                        json={"rating": "up"}).status_code == 404  # fmt: skip
        withdrawn = cara.put(f"/api/v1/threads/{thread}/answers/0/feedback", json={"rating": None})
        assert withdrawn.status_code == 204
        assert cara.get(f"/api/v1/threads/{thread}").json()["feedback"] == []
        assert cara.delete(f"/api/v1/threads/{thread}").status_code == 204
        gone = cara.get(f"/api/v1/threads/{thread}")
        assert gone.status_code == 404 and gone.json()["status"] == 404
        assert thread not in [t["thread_id"] for t in cara.get("/api/v1/threads").json()]


def test_admin_uploads_lists_downloads_and_deletes(api: Api) -> None:
    body = b"# Parking\n\nVisitors park on level minus two of the harbour garage.\n"
    with api.client("ann") as ann, api.client("bob") as bob:
        up = ann.post(
            "/api/v1/documents",
            files=[("files", ("parking.md", body, "text/markdown"))],
            data={"groups": "all"},
        )
        assert up.status_code == 200, up.text
        row = up.json()["results"][0]
        assert row["status"] == "ingested" and row["chunks"] >= 1
        doc_id = row["doc_id"]
        again = ann.post(
            "/api/v1/documents", files=[("files", ("parking.md", body, "text/markdown"))]
        )
        assert again.json()["results"][0]["status"] == "skipped"  # same bytes: a no-op
        assert doc_id in [d["doc_id"] for d in bob.get("/api/v1/documents").json()["documents"]]
        original = bob.get(f"/api/v1/documents/{doc_id}/original")
        assert original.status_code == 200 and original.content == body
        assert original.headers["content-disposition"].startswith("attachment")
        assert original.headers["x-content-type-options"] == "nosniff"
        status = ann.get("/api/v1/documents/status").json()
        assert status["documents"] >= 3 and status["chunks"] >= 3
        for refused in (
            bob.post("/api/v1/documents", files=[("files", ("x.md", b"# X\n", "text/markdown"))]),
            bob.delete(f"/api/v1/documents/{doc_id}"),
            bob.get("/api/v1/documents/status"),
        ):
            assert refused.status_code == 403 and "admin" in refused.json()["message"]
        deleted = ann.delete(f"/api/v1/documents/{doc_id}")
        assert deleted.status_code == 200 and deleted.json()["chunks"] >= 1
        assert bob.get(f"/api/v1/documents/{doc_id}").status_code == 404
        assert ann.delete(f"/api/v1/documents/{doc_id}").status_code == 404


def test_an_upload_that_widens_readers_asks_for_confirmation(api: Api) -> None:
    budget = b"# Payroll\n\nPayroll runs on the 25th.\n"
    with api.client("ann") as ann:
        first = ann.post("/api/v1/documents", files=[("files", ("payroll.md", budget))],
                         data={"groups": "finance"})  # fmt: skip
        assert first.status_code == 200
        wider = ann.post("/api/v1/documents", files=[("files", ("payroll.md", budget))],
                         data={"groups": "all"})  # fmt: skip
        assert wider.status_code == 409 and "widen=true" in wider.json()["message"]
        doc = next(d for d in ann.get("/api/v1/documents").json()["documents"]
                   if d["source"] == "payroll.md")  # fmt: skip
        assert doc["groups"] == ["finance"]  # unchanged
        ann.delete(f"/api/v1/documents/{doc['doc_id']}")


def test_search_carries_the_callers_groups(api: Api) -> None:
    with api.client("bob") as bob:
        hits = bob.post("/api/v1/search", json={"query": "hotel cap Lisbon"}).json()["hits"]
    assert hits[0]["source"] == "travel.md" and hits[0]["score"] is None
    assert "180 euros" in hits[0]["text"]


def test_health_readiness_and_openapi_need_no_key(api: Api) -> None:
    with api.client() as anyone:
        assert anyone.get("/api/v1/health").json() == {"status": "ok", "llm": "off"}
        ready = anyone.get("/api/v1/ready").json()
        assert ready == {"ready": True, "store": "ok", "database": "ok", "embedder": "ok",
                         "llm_health": {"state": "off"}}  # fmt: skip
        spec = anyone.get("/api/v1/openapi.json").json()
        paths = set(spec["paths"])
        assert {
            "/api/v1/ask", "/api/v1/threads", "/api/v1/threads/{thread_id}",
            "/api/v1/threads/{thread_id}/answers/{index}/feedback", "/api/v1/documents",
            "/api/v1/documents/status", "/api/v1/documents/{doc_id}",
            "/api/v1/documents/{doc_id}/original", "/api/v1/search", "/api/v1/health",
            "/api/v1/ready", "/v1/chat/completions", "/v1/models",
        } <= paths  # fmt: skip
        assert "HTTPBearer" in spec["components"]["securitySchemes"]
        refused = anyone.get("/api/v1/threads")
        assert refused.status_code == 401 and "hopwise keys create" in refused.json()["message"]
        assert TRAVEL not in refused.text
