"""A smoke run of `hopwise eval` on a small generated multi-hop set (real Milvus Lite, real graph).

The set is built here: fictional films, their directors and birthplaces, with distractor
biographies sharing the same words, so the second hop is only found by bridging.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hopwise.cli import main

FILMS = [
    ("Silver Harbor", "Mara Ellison", "Lisbon", 1987),
    ("Night Train to Oslo", "Paul Denkmann", "Vienna", 1990),
    ("The Glass Orchard", "Ines Quarto", "Porto", 1979),
    ("Red Lanterns of Ubar", "Tomasz Wierzba", "Krakow", 2001),
    ("Winter Cartographer", "Helga Strand", "Bergen", 1995),
    ("The Salt Road", "Amadou Kesse", "Dakar", 2008),
    ("Copper Moon", "Lena Vasquez", "Valparaiso", 1983),
    ("Harbor of Echoes", "Jonas Brekke", "Tromso", 2012),
]
QUESTIONS = 10


def _pid(kind: str, n: int) -> str:
    return f"mini-{kind}{n:02d}"


def _rows() -> tuple[list[dict], list[dict]]:
    rng = random.Random(7)
    corpus, questions = [], []
    for i, (film, director, city, year) in enumerate(FILMS):
        corpus.append(
            {
                "id": _pid("f", i),
                "title": film,
                "lang": "en",
                "text": (
                    f"{film} is a {year} drama film directed by {director}. The film follows a family "
                    "over three summers and was shot on location."
                ),
            }
        )
        corpus.append(
            {
                "id": _pid("d", i),
                "title": director,
                "lang": "en",
                "text": (
                    f"{director} is a film director and screenwriter. {director.split()[0]} was born "
                    f"in {city} and studied at the national film school."
                ),
            }
        )
    surnames = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Rossi", "Novak", "Silva", "Byrne"]
    for j in range(40):
        name = f"{rng.choice(['Ada', 'Bo', 'Cyr', 'Dag', 'Eli'])} {rng.choice(surnames)}{j}"
        corpus.append(
            {
                "id": _pid("x", j),
                "title": name,
                "lang": "en",
                "text": (
                    f"{name} is a painter who was born in {rng.choice(['Lyon', 'Turin', 'Graz'])}. "
                    "Her work was shown in a drama festival about film and family."
                ),
            }
        )
    for i, (film, director, city, _year) in enumerate(FILMS):
        questions.append({
            "id": f"mini-q{i}", "question": f"Where was the director of film {film} born?",
            "answer": city, "answer_aliases": [], "type": "compose", "lang": "en",
            "supporting_ids": [_pid("f", i), _pid("d", i)],
            "supporting_groups": [[_pid("f", i)], [_pid("d", i)]],
            "decomposition": [f"{film} >> director", "#1 >> place of birth"],
            "decomposition_answers": [director, city],
        })  # fmt: skip
    for a, b in ((0, 1), (2, 3)):
        first = FILMS[a] if FILMS[a][3] < FILMS[b][3] else FILMS[b]
        questions.append({
            "id": f"mini-c{a}", "type": "comparison", "lang": "en", "answer": first[0],
            "question": f"Which film came out first, {FILMS[a][0]} or {FILMS[b][0]}?",
            "answer_aliases": [], "supporting_ids": [_pid("f", a), _pid("f", b)],
            "supporting_groups": [[_pid("f", a)], [_pid("f", b)]],
            "decomposition": [f"{FILMS[a][0]} >> publication date",
                              f"{FILMS[b][0]} >> publication date"],
            "decomposition_answers": [str(FILMS[a][3]), str(FILMS[b][3])],
        })  # fmt: skip
    assert len(questions) == QUESTIONS
    return corpus, questions


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evalset")
    corpus, questions = _rows()
    for name, rows in (("corpus", corpus), ("questions", questions)):
        with (folder / f"mini_en.{name}.jsonl").open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return folder / "mini_en"


def _eval(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["eval", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_eval_modes_on_a_small_set(
    dataset: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    single = _eval(capsys, str(dataset), "--mode", "single", "--k", "4", "--out", str(out))
    for key in ("n", "mode", "recall_at", "all_hops_covered", "first_hop_recall",
                "last_hop_recall", "em", "f1", "contains", "abstention", "llm_calls_mean",
                "hops_mean", "latency_p50_ms", "latency_p95_ms", "stated", "stated_em",
                "stated_f1"):  # fmt: skip
        assert key in single, key
    assert single["n"] == QUESTIONS and single["mode"] == "single"
    assert set(single["recall_at"]) == {"5", "10", "20"}
    assert single["abstention"] is None and single["llm_calls_mean"] == 0
    marker = next((data_dir / "eval").glob("mini_en-*.ready"))
    built = marker.stat().st_mtime

    adaptive = _eval(capsys, str(dataset), "--mode", "adaptive", "--k", "4", "--out", str(out))
    assert marker.stat().st_mtime == built  # the cached index was reused
    assert adaptive["hops_mean"] > 1
    assert adaptive["recall_at"]["5"] >= single["recall_at"]["5"]
    # Bridging puts both hops in the first five chunks where one search does not.
    assert adaptive["all_hops_covered_at"]["5"] > single["all_hops_covered_at"]["5"]
    assert adaptive["recall_at"]["10"] >= 0.9
    assert adaptive["contains"] > single["contains"]  # the extract names the birthplace
    # the stated answers are counted and scored on their own: precision of the answer line
    stated = [r for r in json.loads((out / "mini_en.adaptive.json").read_text())["questions"]
              if r["answer_kind"] == "short"]  # fmt: skip
    assert adaptive["stated"] == len(stated) > 0
    assert adaptive["stated_em"] == pytest.approx(
        sum(r["em"] for r in stated) / len(stated), abs=1e-3
    )

    gold = _eval(capsys, str(dataset), "--mode", "gold", "--k", "4", "--limit", "4",
                 "--out", str(out))  # fmt: skip
    assert gold["n"] == 4 and gold["recall_at"]["10"] == 1.0
    assert (out / "summary.md").read_text().count("| mini_en |") == 3
    assert (out / "recall.png").stat().st_size > 1000


def test_eval_unanswerable_measures_abstention(
    dataset: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _eval(capsys, str(dataset), "--unanswerable", "--limit", "3", "--out",
                   str(tmp_path / "u"))  # fmt: skip
    assert report["recall_at"]["10"] == 0.0
    assert report["abstention"] is not None and 0.0 <= report["abstention"] <= 1.0


def test_eval_rejects_a_missing_dataset(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(data_dir / "nope")]) == 1
    assert "no such dataset file" in capsys.readouterr().err


def test_eval_runs_unchanged_with_a_configured_llm(
    dataset: Path,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder

    with StubOpenAIServer(responder=plausible_responder) as stub:
        monkeypatch.setenv("HOPWISE_LLM_BASE_URL", stub.url)
        monkeypatch.setenv("HOPWISE_LLM_MODEL", "stub-model")
        monkeypatch.setenv("HOPWISE_LLM_API_KEY", "sk-test")
        report = _eval(capsys, str(dataset), "--limit", "3", "--out", str(tmp_path / "llm"))
        assert stub.request_count > 0
    assert report["reasoner"] == "llm" and report["n"] == 3 and report["errors"] == 0
    assert report["llm_calls_mean"] > 0 and report["tokens_mean"] > 0
