"""A deployment's own stated-answer threshold, chosen on its reading checks.

The shipped reader states a short answer ("Answer: …") when its probability that the answer is
right reaches the threshold the fit chose on the dev knowledge bases (≥ 95 % precise there).
A deployment's documents may read worse or better. Every self-test question with a short
answer the reader could state gives a pair (the reader's probability, whether that answer is
the value the document states); over all of them:

- at the shipped threshold the stated answers are right less than 95 % of the time: the
  threshold is raised to the lowest one at which they are (or stating stops altogether);
- they are right at least 95 % of the time: it may be lowered, never below the floor the fit
  found still ≥ 95 % precise on the dev knowledge bases (`state_floor` in the weights file; the
  shipped threshold itself when the file has none), and only to where at least
  `MIN_ANSWERS` self-test answers are stated, 95 % of them right.

Too few pairs (fewer than `MIN_ANSWERS`) leave the shipped threshold as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from graph.offline.model import ReaderModel

PRECISION = 0.95  # what "Answer:" must mean on this corpus
MIN_ANSWERS = 20  # self-test answers needed before the corpus moves the threshold
NEVER = 1.01  # no probability reaches it: nothing is stated, the best sentence is quoted
DEFAULT_STATE = 0.95  # when the weights file has no threshold


@dataclass(frozen=True)
class Calibration:
    threshold: float  # the one the deployment's reader uses
    shipped: float  # the fitted one (dev knowledge bases)
    floor: float  # the lowest the deployment may go
    answers: int  # self-test answers the reader could state (pairs)
    stated: int  # of them, stated at `threshold`
    stated_right: int
    stated_at_shipped: int
    right_at_shipped: int
    reason: str

    @property
    def moved(self) -> bool:
        return abs(self.threshold - self.shipped) > 1e-9

    def as_json(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}


def _at(pairs: Sequence[tuple[float, bool]], cut: float) -> tuple[int, int]:
    chosen = [ok for p, ok in pairs if p >= cut]
    return len(chosen), sum(chosen)


def _precise(n: int, right: int) -> bool:
    return n > 0 and right >= PRECISION * n


def _share(right: int, n: int) -> str:
    return f"{right} of {n} right ({right / n * 100:.0f} %)" if n else "none stated"


def calibrate(
    pairs: Sequence[tuple[float, bool]], shipped: float, floor: float | None = None
) -> Calibration:
    """The deployment's threshold from (probability, right) pairs of its self-test answers."""
    floor = min(shipped, shipped if floor is None else floor)
    n_s, r_s = _at(pairs, shipped)

    def made(threshold: float, reason: str) -> Calibration:
        n, r = _at(pairs, threshold)
        return Calibration(threshold, shipped, floor, len(pairs), n, r, n_s, r_s, reason)

    if len(pairs) < MIN_ANSWERS:
        return made(shipped, f"{len(pairs)} self-test answers so far; {MIN_ANSWERS} are needed "
                             "before this corpus moves the threshold")  # fmt: skip
    cuts = sorted({p for p, _ in pairs if p >= floor} | {shipped})
    if n_s and not _precise(n_s, r_s):
        higher = [t for t in cuts if t > shipped and _precise(*_at(pairs, t))]
        if not higher:
            return made(NEVER, f"at the fitted threshold the stated self-test answers were "
                               f"{_share(r_s, n_s)}, and no higher threshold reaches "
                               f"{PRECISION * 100:.0f} %: short answers are not stated; the best "
                               "sentence is quoted")  # fmt: skip
        return made(higher[0], f"at the fitted threshold the stated self-test answers were "
                               f"{_share(r_s, n_s)}: raised to where they reach {PRECISION:.0%}")  # fmt: skip
    lower = [t for t in cuts if t < shipped and _at(pairs, t)[0] >= MIN_ANSWERS
             and _precise(*_at(pairs, t))]  # fmt: skip
    if lower:
        return made(lower[0], f"at the fitted threshold the stated self-test answers were "
                              f"{_share(r_s, n_s)}: lowered (not below the dev-set floor) while "
                              f"they stay at {PRECISION:.0%} or better")  # fmt: skip
    return made(shipped, f"at the fitted threshold the stated self-test answers were "
                         f"{_share(r_s, n_s)}: the fitted threshold stands")  # fmt: skip


def bounds(model: ReaderModel) -> tuple[float, float]:
    """(shipped threshold, floor) of the fitted reader."""
    shipped = model.threshold("state", DEFAULT_STATE)
    return shipped, model.threshold("state_floor", shipped)
