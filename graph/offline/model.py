"""The reader's fitted weights (graph/offline/reader_weights.json, written by `hopwise
fit-reader`) and how they score: a softmax over a question's units, a softmax over a unit's
spans, and two logistic calibrations that say how sure the first line may be.

The file holds, per model, the feature names, their means and spreads (features are
standardised before the dot product) and the weights; and the thresholds the fit chose:
`state` (a short answer is stated at or above it), `quote` (below it the documents do not say).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

WEIGHTS_PATH = Path(__file__).with_name("reader_weights.json")


@dataclass(frozen=True)
class Linear:
    """A standardised linear score over named features."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float = 0.0

    def score(self, features: Mapping[str, float], unknown: Set[str] = frozenset()) -> float:
        """The logit; a feature in `unknown` (meaning, when no embedder runs) counts as its
        mean, so it moves no score either way."""
        total = self.bias
        for name, mu, sd, w in zip(self.names, self.mean, self.scale, self.weights, strict=True):
            if name not in unknown:
                total += w * (features.get(name, 0.0) - mu) / (sd or 1.0)
        return total

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Linear:
        return cls(
            tuple(data["names"]),
            tuple(float(x) for x in data["mean"]),
            tuple(float(x) for x in data["scale"]),
            tuple(float(x) for x in data["weights"]),
            float(data.get("bias", 0.0)),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "mean": [round(x, 6) for x in self.mean],
            "scale": [round(x, 6) for x in self.scale],
            "weights": [round(x, 6) for x in self.weights],
            "bias": round(self.bias, 6),
        }


@dataclass(frozen=True)
class ReaderModel:
    units: Linear  # logit of a unit holding the answer (softmax over a question's units)
    spans: Linear  # logit of a span being the answer (softmax over a unit's spans)
    sure: Linear  # calibrated: the top unit holds the answer
    state: Linear  # calibrated: the top unit's top span is the answer
    thresholds: dict[str, float] = field(default_factory=dict)
    fitted_on: tuple[str, ...] = ()

    def threshold(self, name: str, default: float) -> float:
        return float(self.thresholds.get(name, default))

    def with_thresholds(self, **changed: float) -> ReaderModel:
        """The same weights with some thresholds replaced (a deployment's calibration)."""
        return replace(self, thresholds={**self.thresholds, **changed})

    def as_json(self) -> dict[str, Any]:
        return {
            "format": "reader-weights-1",
            "fitted_on": list(self.fitted_on),
            "units": self.units.as_json(),
            "spans": self.spans.as_json(),
            "sure": self.sure.as_json(),
            "state": self.state.as_json(),
            "thresholds": {k: round(v, 6) for k, v in self.thresholds.items()},
        }

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ReaderModel:
        return cls(
            Linear.of(data["units"]),
            Linear.of(data["spans"]),
            Linear.of(data["sure"]),
            Linear.of(data["state"]),
            {k: float(v) for k, v in data.get("thresholds", {}).items()},
            tuple(data.get("fitted_on", ())),
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.as_json(), indent=1) + "\n", encoding="utf-8")


@lru_cache(maxsize=4)
def load_model(path: Path = WEIGHTS_PATH) -> ReaderModel:
    """The fitted reader (read once per process)."""
    return ReaderModel.of(json.loads(path.read_text(encoding="utf-8")))


def softmax(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
