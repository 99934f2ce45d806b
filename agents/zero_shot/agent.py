"""``zero_shot``: one set of fitted parameters for every instance, both settings.

The parameters (:data:`FITTED`, ``agents/zero_shot/fitted.toml``) are fitted once by
:mod:`agents.zero_shot.fit` on simulated episodes of a documented generator
(:mod:`agents.zero_shot.generator`) that contains none of the catalog's instances; the
agent then plays any instance without retraining and without a prior: what it needs of
one it estimates from the episode (empirical Bayes across arms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import tomllib

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE
from agents.engine.dispatch import compiled_call
from agents.glr import top_two
from agents.zero_shot import index

__all__ = [
    "FITTED",
    "FITTED_PATH",
    "ZeroShot",
    "check_opening",
    "check_top_two_from",
    "check_weights",
    "load_fitted",
    "pulls_per_arm",
]

#: the shipped parameters.
FITTED_PATH = Path(__file__).with_name("fitted.toml")
#: the compiled episode loop of the fixed-budget kernel.
_FAST_PATH = engine.fast_path(index.run)
#: the Top-Two sampling rules fixed confidence chooses among (the fitted ``leader``).
LEADERS = {"eb": top_two.EB, "ts": top_two.TS}


def check_weights(weights: Any) -> tuple[float, ...]:
    """``weights`` as :data:`~agents.zero_shot.index.N_WEIGHTS` finite floats (a mapping by
    :data:`~agents.zero_shot.index.WEIGHT_NAMES` or a sequence), else a ``ValueError``."""
    if isinstance(weights, Mapping):
        unknown = sorted(set(weights) - set(index.WEIGHT_NAMES))
        if unknown:
            raise ValueError(
                f"unknown weights {unknown}: the score's weights are {list(index.WEIGHT_NAMES)}"
            )
        weights = [weights.get(name, 0.0) for name in index.WEIGHT_NAMES]
    try:
        values = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"weights={weights!r} must be {index.N_WEIGHTS} finite numbers") from None
    if len(values) != index.N_WEIGHTS or not all(math.isfinite(w) for w in values):
        raise ValueError(f"weights={list(weights)!r} must be {index.N_WEIGHTS} finite numbers")
    return values


def load_fitted(path: str | Path = FITTED_PATH) -> dict[str, Any]:
    """The fitted parameters of a ``fitted.toml`` (:mod:`agents.zero_shot.fit` writes it)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    for section in ("fixed_budget", "fixed_confidence", "misidentification"):
        if section not in data:
            raise ValueError(f"{path}: no [{section}] section")
    check_weights(data["fixed_budget"]["weights"])
    for key in ("leader", "beta", "tracking", "forced"):
        if key not in data["fixed_confidence"]:
            raise ValueError(f"{path}: no {key} in [fixed_confidence]")
    check_top_two_from(data["misidentification"].get("top_two_from"))
    return data


def check_opening(value: Any) -> float:
    """``opening`` as a float in [0, 1): the share of the budget the opening rounds spend."""
    number = not isinstance(value, bool) and isinstance(
        value, (int, float, np.floating, np.integer)
    )
    if not (number and 0.0 <= float(value) < 1.0):
        raise ValueError(f"opening={value!r} must be a share of the budget in [0, 1)")
    return float(value)


def check_top_two_from(value: Any) -> float:
    """``value`` as a number of pulls per arm in [0, inf], else a ``ValueError``."""
    number = not isinstance(value, bool) and isinstance(
        value, (int, float, np.integer, np.floating)
    )
    if not number or math.isnan(value) or value < 0:
        raise ValueError(f"top_two_from={value!r} must be a number of pulls per arm >= 0 (or inf)")
    return float(value)


def pulls_per_arm(problem: Any) -> float | None:
    """The episode's pulls per arm: the pull budget, else ``max_batches x batch_size``,
    over ``n_arms`` (``None`` where neither bounds the pulls)."""
    budget = getattr(problem, "budget", None)
    if budget is None:
        batches, size = getattr(problem, "max_batches", None), getattr(problem, "batch_size", None)
        if batches is None or size is None:
            return None
        budget = batches * size
    return budget / problem.n_arms


#: the shipped parameters (:data:`FITTED_PATH`).
FITTED: dict[str, Any] = load_fitted()


class ZeroShot(top_two.TopTwo):
    """One learned agent for every instance: any n, k, batch model, reward law, setting.

    Fixed budget (:mod:`agents.zero_shot.index`): blocks of pulls chosen by a score with
    :data:`~agents.zero_shot.index.N_WEIGHTS` fitted weights, the logarithm of the Gaussian
    knowledge gradient KG* (Frazier, Powell & Dayanik 2008, eq. (16); Frazier & Powell
    2010) on an empirical-Bayes normal posterior (the prior's mean and variance estimated
    across arms by the method of moments, Efron & Morris 1975) plus fitted terms in the
    arm's distance to the top-k boundary, its posterior spread and its share of the batch;
    each (b, r)-batch is filled pull by pull on a fantasy posterior (the kriging believer
    of Ginsbourger, Le Riche & Carraro 2010). Answer: the posterior top k. The weights are
    fitted by the cross-entropy method (Rubinstein & Kroese 2004) on the episodes of
    :mod:`agents.zero_shot.generator`, as the policy search of Zhang, Jain & Jamieson
    ("Learning to Actively Learn: A Robust Approach", arXiv:2010.15382), but over a
    generator of many families instead of one prior.

    Fixed budget on the misidentification objective (the env's ``objective``) with at
    least ``top_two_from`` pulls per arm (fitted, :func:`pulls_per_arm`): the fitted
    Top-Two sampling rule below, without its stop, until the budget ends; answer: the
    empirical top k. The index rule's value, the sum of the top-k posterior means, is the
    aggregate regret's; the Top-Two rule aims at the allocation that identifies the top-k
    set (Russo 2016; Jourdan, Degenne, Baudry, de Heide & Kaufmann 2022, whose Top Two
    rules are anytime: they play a fixed budget without change), an asymptotic target
    that a few pulls per arm do not reach; the threshold between the two is fitted on
    misidentification problems of the generator
    (:func:`agents.zero_shot.fit.fit_misidentification`).

    Fixed confidence: a Top-Two sampling rule (:mod:`agents.glr.top_two`: leader,
    transportation-cost challenger, leader probability) whose leader rule, leader
    probability, tracking (or a coin) and forced exploration (on or off) are the fitted
    ones (shipped: a Thompson-sample leader, ``beta = 1/2``, tracking, no forced
    exploration), stopped by the GLR rule of :mod:`agents.glr.stopping`. In the (b, r)
    batch model each batch is filled (:func:`agents.glr.top_two._plan`): ``min(b, n r)``
    pulls, the Top-Two round repeated on the counts with the batch's planned pulls added
    (no rewards; the leader set drawn from the posterior of the real pulls; an arm with
    ``r`` planned pulls gives its place to the other arm of its pair, else to the arm
    with room of fewest pulls); with no batch size the batch ends before the first round
    that picks an arm with ``r`` planned pulls; at ``b = 1`` this is the one-pull rule.

    **Guarantee**: the GLR statistic is checked on the real counts and means before every
    batch, the only times the agent can stop. With ``threshold="gk2016"`` (Garivier &
    Kaufmann 2016, Theorem 10) or ``"kk2021"`` (Gaussian rewards; Kaufmann & Koolen 2021,
    Theorem 9) that stop is delta-correct on every instance whatever the sampling rule,
    batched or not, so whatever was fitted (the theorems bound the probability that the
    statistic ever exceeds the threshold with a wrong empirical answer, at any time; a
    rule that looks only at batch boundaries looks at fewer times). With the default
    ``"log"`` (the threshold of the papers' experiments and of the suite's other GLR
    agents) it carries no proof, as for them (``delta-calibration`` measures the error it
    delivers).

    Args:
        delta: the confidence parameter of fixed confidence, in (0, 1).
        threshold: the GLR threshold (``"log"``, ``"gk2016"``, ``"kk2021"``).
        weights: the fixed-budget score's weights (default: the fitted ones), a sequence
            or a mapping by :data:`~agents.zero_shot.index.WEIGHT_NAMES`.
        leader: fixed confidence's leader rule, ``"eb"`` or ``"ts"`` (default: fitted).
        beta: fixed confidence's leader probability (default: fitted).
        tracking: fixed confidence's selection of the leader, ``True`` by tracking,
            ``False`` by a coin (default: fitted).
        forced: fixed confidence's forced exploration, ``True`` or ``False`` (default:
            fitted).
        top_two_from: fixed budget on the misidentification objective: the pulls per arm
            from which the Top-Two rule plays instead of the index rule (default: fitted;
            ``0``: always, ``math.inf``: never).
        opening: fixed budget where batches are free: the share of the budget spent
            pulling every arm equally before the score decides (default 0, the shipped
            agent; not fitted, see :mod:`~agents.zero_shot.index`).
        block: fixed budget where batches are free: a block is ``max(b, pulls left //
            block)`` pulls (default :data:`~agents.zero_shot.index.BLOCK`; a value above the
            budget decides every pull).
        seed: seeds ties, blocks' first pulls and the Top-Two coins.

    Settings: fixed budget (a pull budget or ``max_batches``, any ``batch_size`` and
    ``repeat_limit``) and fixed confidence (any ``batch_size`` and ``repeat_limit``);
    Bernoulli, categorical (rewards in [0, 1]) and Gaussian rewards (the env's sigma).
    """

    name = "zero_shot"
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    fill_batches = True

    def __init__(
        self,
        delta: float = 0.1,
        threshold: str = "log",
        *,
        weights: Any = None,
        leader: str | None = None,
        beta: float | None = None,
        tracking: bool | None = None,
        forced: bool | None = None,
        block: int = index.BLOCK,
        top_two_from: float | None = None,
        opening: float = 0.0,
        seed: int | None = None,
    ) -> None:
        fc = FITTED["fixed_confidence"]
        leader = fc["leader"] if leader is None else leader
        if leader not in LEADERS:
            raise ValueError(f"leader={leader!r} must be one of {sorted(LEADERS)}")
        beta = float(fc["beta"]) if beta is None else beta
        tracking = bool(fc["tracking"]) if tracking is None else tracking
        forced = bool(fc["forced"]) if forced is None else forced
        for name, value in (("tracking", tracking), ("forced", forced)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name}={value!r} must be True or False (or None: fitted)")
        super().__init__(
            delta=delta,
            threshold=threshold,
            beta=beta,
            tracking=tracking,
            forced=forced,
            seed=seed,
        )
        self.leader_name = leader
        self.leader = LEADERS[leader]
        self.weights = check_weights(
            FITTED["fixed_budget"]["weights"] if weights is None else weights
        )
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise ValueError(f"block={block!r} must be an integer >= 1 (pulls left per block)")
        self.block = int(block)
        self.top_two_from = check_top_two_from(
            FITTED["misidentification"]["top_two_from"] if top_two_from is None else top_two_from
        )
        self.opening = check_opening(opening)

    def _plays_index(self, problem: Any) -> bool:
        """Whether the episode plays the index rule (fixed budget, see the class)."""
        if getattr(problem, "setting", None) != FIXED_BUDGET:
            return False
        if getattr(problem, "objective", "aggregate_regret") != "misidentification":
            return True
        per_arm = pulls_per_arm(problem)
        return per_arm is None or per_arm < self.top_two_from

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode: the fixed-budget kernel or the Top-Two one (see the class)."""
        if self._plays_index(problem):
            self.kernel = index.run
            self.episode_kernel = _FAST_PATH
        else:
            self.__dict__.pop("kernel", None)
            self.__dict__.pop("episode_kernel", None)
        super().reset(problem, seed=seed)

    def params(self) -> np.ndarray:
        if self._plays_index(self.problem):
            gauss = self.problem.distribution == "gaussian"
            sigma = float(self.problem.sigma) if gauss else 0.0
            head = [1.0 if gauss else 0.0, sigma, float(self.block), self.opening]
            return np.array([*head, *self.weights])
        return super().params()

    def current_answer(self) -> np.ndarray:
        """The index rule's: the posterior top k; the Top-Two rule's: the empirical top k."""
        if not self._plays_index(self.problem):
            return super().current_answer()
        p = self.params()
        return compiled_call(
            index.top_k,
            self.counts,
            self.means,
            bool(p[index.P_GAUSS] > 0),
            float(p[index.P_SIGMA]),
            float(self.weights[5]),
            int(self.problem.k),
            self.rng,
        )

    def __repr__(self) -> str:
        return (
            f"ZeroShot(delta={self.delta}, threshold={self.threshold!r}, "
            f"leader={self.leader_name!r}, beta={self.beta}, tracking={self.tracking}, "
            f"forced={self.forced}, weights={list(self.weights)}, opening={self.opening})"
        )
