"""The reader's fit on small invented material: labels, the fitted ranking, the thresholds and
the weights file round trip (hopwise/evaluation/fit.py, fitting.py; graph/offline/model.py)."""

from __future__ import annotations

import random
from pathlib import Path

from graph.offline.compose import compose
from graph.offline.model import load_model
from graph.protocols import EvidenceItem
from hopwise.evaluation.fit import Gold, example, label
from hopwise.evaluation.fitting import choose_quote, choose_state, fit_reader, ranked

FIRST = ["Odile", "Bram", "Kesia", "Tamsin", "Ulric", "Nadia", "Per", "Ines", "Joss", "Mirela"]
LAST = ["Varga", "Holt", "Ferrand", "Quist", "Lund", "Marsh", "Okoro", "Brisk", "Dane", "Sorel"]


def _roster(rng: random.Random) -> tuple[str, list[tuple[str, str, str]]]:
    people = []
    for first, last in zip(rng.sample(FIRST, 4), rng.sample(LAST, 4), strict=True):
        people.append((f"{first} {last}", f"{rng.randint(1000, 9999)}", rng.choice("ABC")))
    rows = "\n".join(f"{name} | {phone} | {site}" for name, phone, site in people)
    filler = "The roster is reviewed every quarter. Desk phones forward to voicemail after hours."
    return f"{filler}\n\nName | Desk phone | Site\n{rows}", people


def _examples(count: int, seed: int, name: str = "kb-own") -> list:
    rng = random.Random(seed)
    out = []
    for k in range(count):
        text, people = _roster(rng)
        person, phone, _ = rng.choice(people)
        item = EvidenceItem(n=1, chunk_id=f"c{k}", title="roster", source="roster.md", text=text)
        gold = Gold([phone], sources={"roster.md"})
        out.append(example(name, f"q{k}", f"What is the desk phone of {person}?", [item], [],
                           gold, None))  # fmt: skip
    return out


def test_a_unit_is_right_when_it_holds_every_gold_string_in_a_supporting_document() -> None:
    gold = Gold(["4471", "odile"], sources={"a.md"})
    assert label(gold, "Odile Varga | 4471 | B", "a.md", "c1") == 1
    assert label(gold, "Odile Varga | 4471 | B", "b.md", "c1") == 0  # another document
    assert label(gold, "Bram Holt | 4471 | B", "a.md", "c1") == 0  # one string missing
    assert label(Gold([]), "anything", "a.md", "c1") == 0  # nothing to hold


def test_the_fit_ranks_the_asked_row_first_on_questions_it_did_not_see() -> None:
    model = fit_reader(_examples(40, seed=1), fitted_on=["kb-own"])
    held = _examples(20, seed=2)
    tops = [ranked(e, model.units)[0] for e in held]
    right = sum(1 for s in tops if s.features["_label"] > 0)
    assert right >= 18, right  # the row of the named person, not a neighbour's
    assert set(model.thresholds) == {"state", "state_floor", "bold", "quote"}
    assert model.thresholds["state_floor"] <= model.thresholds["state"]  # lowering has a floor


def test_the_weights_file_round_trips_and_composes_an_answer(tmp_path: Path) -> None:
    model = fit_reader(_examples(40, seed=3), fitted_on=["kb-own"])
    path = tmp_path / "weights.json"
    model.save(path)
    again = load_model(path)
    features = {name: 0.5 for name in model.units.names}
    assert abs(again.units.score(features) - model.units.score(features)) < 1e-3
    assert again.thresholds == {k: round(v, 6) for k, v in model.thresholds.items()}
    text, people = _roster(random.Random(9))
    person, phone, _ = people[2]
    item = EvidenceItem(n=1, chunk_id="c", title="roster", source="roster.md", text=text)
    answer = "".join(compose(f"What is the desk phone of {person}?", [item], [], model=again))
    first = answer.splitlines()[0]
    assert phone in first and first.endswith("[1]"), answer  # stated or quoted, that row
    others = [p for n, p, _ in people if n != person]
    assert not any(p in first for p in others), answer


def test_the_state_threshold_keeps_precision_and_the_quote_threshold_counts_right_lines() -> None:
    pairs = [(0.95, True), (0.9, True), (0.85, True), (0.8, False), (0.7, True), (0.6, False)]
    cut = choose_state(pairs, precision=0.75)
    stated = [ok for p, ok in pairs if p >= cut]
    assert sum(stated) / len(stated) >= 0.75 and cut == 0.7  # 4 of 5 right; 4 of 6 is not
    assert choose_state([(0.9, False), (0.8, False)], precision=0.95) > 1.0  # never state
    # (p, answerable, top unit right): quoting above 0.5 leaves the unanswerable low one honest
    rows = [(0.9, True, True), (0.8, True, True), (0.3, False, False), (0.2, True, False)]
    assert 0.2 < choose_quote(rows) <= 0.8


def test_the_floor_is_the_lowest_threshold_still_precise_taken_together() -> None:
    from hopwise.evaluation.fitting import state_floor

    pairs = [(0.9, True)] * 19 + [(0.85, False)] + [(0.7, True)] * 20 + [(0.5, False)] * 3
    assert state_floor(pairs, state=0.9) == 0.7  # 39 of 40 at or above 0.7
    worse = [(0.9, True)] * 19 + [(0.85, False)] * 2
    assert state_floor(worse, state=0.9) == 0.9  # 19 of 21 at 0.85: no lower floor
