"""The graph against a real local model (SmolLM2-135M-Instruct, 4-bit, one thread): a model
that rambles, loops, imitates the prompt's markup and answers wrongly. Whatever it does, every
question ends in a cited answer without a traceback, every model step parses or falls back
with its reason, and after the claim check no answer states a number or a name of the
knowledge base that its cited passages do not hold."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hopwise.bench.llm import KB_DIR, load_questions
from tests.realmodel.server import MODEL, real_model_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a 135M model on one thread

SHARED_KB = Path(__file__).resolve().parents[3] / "shared" / "eval" / "kb-dev"
DOCUMENTS = [p for p in sorted(KB_DIR.glob("*.md")) if p.name != "README.md"]
QUESTIONS = load_questions(KB_DIR / "questions.jsonl")
NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
CITED_LINE_RE = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with real_model_server() as url:
        yield url


def settings_for(url: str, data_dir: Path) -> Any:
    from hopwise.settings import load_settings

    return load_settings(
        data_dir=data_dir, milvus_uri=None, llm_base_url=url, llm_model=MODEL, web_search=False
    )


def embed_all(store: Any) -> None:
    from ingest.vectors import EmbeddingWorker, wait_until_complete

    if store.vectors is not None:
        wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=600)


@pytest.fixture(scope="module")
def answered(model_url: str, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict, Any]]:
    """Every question of the bundled English knowledge base, asked through the app."""
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity, open_store
    from ingest.pipeline import ingest_paths

    settings = settings_for(model_url, tmp_path_factory.mktemp("real-model"))
    settings.ensure_data_dir()
    store = open_store(settings)
    try:
        ingest_paths(DOCUMENTS, store, groups=["all"], config=settings.ingest)
        embed_all(store)
        app = Hopwise(settings, store, build_reasoner(settings, meaning_similarity(store)))
        assert app.reasoner.name == "llm"
        return [(q, app.ask(q["question"], web=False)) for q in QUESTIONS]
    finally:
        store.close()


def test_every_question_ends_in_a_cited_answer_within_the_deadline(answered) -> None:
    for question, result in answered:
        assert result.answer.strip() and "Traceback" not in result.answer, question["id"]
        assert result.total_ms < 120_000, (question["id"], result.total_ms)
        if question["answer"]:  # the documents hold it: the answer rests on a passage
            assert result.citations, (question["id"], result.answer)
        print(
            f"{question['id']}: {result.total_ms / 1000:.1f}s {result.mode} {result.answer!r:.120}"
        )


def test_every_model_step_parsed_or_fell_back_with_its_reason(answered) -> None:
    model_steps = fallbacks = 0
    for _, result in answered:
        for event in result.trace:
            assert event.mode in ("llm", "fallback", "code", "offline", "bypassed"), event
            if event.mode in ("fallback", "bypassed"):  # bypassed: the model failed before
                fallbacks += 1
                assert event.details.get("errors"), event  # why offline stood in
            model_steps += event.llm_calls
    # the model was really asked; one that keeps failing its steps is bypassed after three
    # questions in a row (issue 46), every later step then marked 'bypassed' with its reason
    assert model_steps >= min(len(answered), 3)
    print(f"model calls: {model_steps}; steps that fell back: {fallbacks}")


def test_no_answer_states_a_number_or_a_known_name_its_cited_passages_lack(answered) -> None:
    # the knowledge base's names: capitalised words inside a sentence, not at its start
    names = {w for p in DOCUMENTS for w in re.findall(r"(?<=[a-z,] )[A-Z][a-z]{2,}", p.read_text())}
    for question, result in answered:
        passages = {e.n: e.text + " " + " ".join(e.sentences) for e in result.evidence}
        for line in result.answer.splitlines():
            cited = [int(n) for n in CITED_LINE_RE.findall(line) if int(n) in passages]
            if not cited:
                continue
            text = " ".join(passages[n] for n in cited) + " " + question["question"]
            said = CITED_LINE_RE.sub(" ", line)
            for number in NUMBER_RE.findall(said):
                assert number in text, (question["id"], number, line)
            for name in names & set(re.findall(r"\b[A-Z][a-z]{2,}\b", said)):
                assert name in text, (question["id"], name, line)


def test_the_cli_answers_with_the_real_model(model_url: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {"HOPWISE_DATA_DIR": str(tmp_path / "data"), "HOPWISE_LLM_BASE_URL": model_url,
            "HOPWISE_LLM_MODEL": MODEL, "HOPWISE_WEB_SEARCH": "off"}  # fmt: skip
    hopwise = [sys.executable, "-m", "hopwise"]
    subprocess.run([*hopwise, "ingest", *map(str, DOCUMENTS)], env=env, check=True, timeout=300)
    done = subprocess.run(
        [*hopwise, "ask", QUESTIONS[0]["question"], "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["reasoner"] == "llm" and result["citations"] and result["answer"]
    assert any(e["node"] == "check_claims" for e in result["trace"])


def test_bench_llm_reports_each_steps_outcomes(model_url: str, capsys) -> None:
    from hopwise.bench.llm import print_table, run

    args = argparse.Namespace(base_url=model_url, model=MODEL, api_key=None, kb=KB_DIR, limit=2)
    result = run(args)
    print_table("llm", result)
    shown = capsys.readouterr().out
    assert result["questions"] == 2 and "decompose_question" in result["steps"]
    for step in result["steps"].values():
        assert abs(step["parsed"] + step["fell_back"] + step["timed_out"] - 1) < 0.02
    assert "parsed" in shown and "llm-01" in shown


@pytest.mark.skipif(not SHARED_KB.is_dir(), reason=f"{SHARED_KB} is absent (the shared eval sets)")
@pytest.mark.timeout(2400)
def test_on_kb_dev_english_the_model_run_is_safe_and_both_scores_are_printed(
    model_url: str, tmp_path: Path
) -> None:
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity
    from hopwise.evaluation.kb import ask_all, load_kb, open_kb_store, summarise

    full = load_kb(SHARED_KB)
    kb = replace(full, questions=[q for q in full.questions if q.get("lang") == "en"])
    scores = {}
    for mode in ("offline", "llm"):
        base = settings_for(model_url if mode == "llm" else None, tmp_path)
        store, scratch = open_kb_store(kb, base)
        try:
            app = Hopwise(scratch, store, build_reasoner(scratch, meaning_similarity(store)))
            assert app.reasoner.name == mode
            report = summarise(kb, ask_all(kb, app))
        finally:
            store.close()
        scores[mode] = report["halves"]["all"]
    print(
        "kb-dev English, whole answers right: offline "
        f"{scores['offline']['total']['right']}/{scores['offline']['total']['n']}, "
        f"{MODEL} {scores['llm']['total']['right']}/{scores['llm']['total']['n']}; "
        f"claims {scores['llm']['claims']}"
    )
    # A model answer that fails the claim check, or that the model could not write, is replaced
    # by offline reasoning asking the whole question again: the model can only add answers.
    assert scores["llm"]["total"]["right"] >= scores["offline"]["total"]["right"]
    assert scores["llm"]["leaks"] == 0 and scores["llm"]["injected_claims"] == 0
    assert scores["llm"]["total"]["n"] == scores["offline"]["total"]["n"] == len(kb.questions)
