"""A learned stop: top-two Thompson sampling that stops on a fitted boundary ``delta_t``.

Fixed confidence on a prior family (means drawn from ``Beta(a, b)`` per episode, the
agent knows the prior). The Bayesian yardstick ``bayes_ttts(delta=...)`` stops when the
posterior probability that its answer (the posterior top k) is wrong, ``eps_t``, falls
to ``delta``: a constant threshold. Averaged over the prior, the error of a rule that
stops at time ``tau`` with the posterior top k is ``E[eps_tau]`` (the posterior is
exact), so any rule with ``E[eps_tau] <= delta`` meets the prior-averaged target, and
a constant threshold is not the cheapest: on near-tied instances ``eps_t`` falls slowly
and the samples spent there buy little error. :class:`LearnedStop` keeps the sampling
rule of ``bayes_ttts`` (Russo 2020, TTTS in top-k form) and its answer, and stops at the
first check where ``eps_t <= delta_t``, with ``delta_t`` a boundary fitted to minimise
the mean number of samples subject to ``E[eps_tau] = target`` on simulated episodes of
the family (:func:`fit_boundary`), in the spirit of learned prior-aware policies
(Zhang, Jain & Jamieson, "Learning to Actively Learn: A Robust Approach",
arXiv:2010.15382; the Bayes-optimal stopping of Chernoff, "Sequential design of
experiments", 1959, trades the sample cost against the error in the same way).

* **Boundary.** ``log delta_t`` is piecewise linear in ``log(1 + t)`` between knots at
  ``t = n 4^j`` (``j = 0, ..., 6``), constant beyond them
  (:func:`agents.bayesian.top_two_thompson.boundary_at`); values above 1 stop at once.
* **Checks.** At pull counts ``0, 1, 2, ...`` and then ``t + max(1, t // 64)``
  (:func:`agents.bayesian.top_two_thompson.next_check`): about 64 checks per doubling of
  ``t`` (up to 1/64 more samples than a check before every pull), each a certified
  lower bound of ``1 - eps_t`` (:func:`agents.bayesian.top_set_probability.confident`).
* **Fit.** :func:`record` plays TTTS on ``episodes`` instances drawn from the prior and
  records ``eps_t`` (to a relative 2%) and whether the posterior top k is wrong at every
  check, until ``eps_t < floor`` or the pull cap; since the sampling rule does not depend
  on the stopping rule, any boundary is then evaluated on the records exactly (its first
  crossing). :func:`fit_boundary` minimises the mean stopping time with the additive
  level of ``log delta_t`` set by bisection so that the mean ``eps`` at the stop equals
  ``target``: a grid of rising shapes, then Nelder-Mead on the seven knot values. The
  level is then set again on independent calibration records (``train``'s
  ``calibration_episodes``): the shape was chosen to stop early on the training records,
  so on new episodes its error would exceed the target.

The guarantee is prior-averaged: ``P(wrong) <= target`` over instances drawn from the
prior (up to the fit's sampling error, which the held-out evaluation measures), weaker
than the per-instance guarantee of the frequentist agents (GLR, LUCB), which hold on
every instance, including those far from the prior's typical ones. Off the family it
was fitted to, the boundary's error is not calibrated, and :class:`LearnedStop`
warns so (a ``UserWarning`` naming the family and the agents tuned to no family
(:data:`agents.bayesian.learned_batch.ZERO_SHOT`)).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numba
import numpy as np

from agents.base import FIXED_CONFIDENCE
from agents.bayesian.beta_prior import check_beta_prior
from agents.bayesian.learned_batch import (
    FamilyGuard,
    field_differences,
    prior_differences,
    warn_off_family,
)
from agents.bayesian.top_set_probability import top_set_bounds
from agents.bayesian.top_two_thompson import (
    P_KNOTS,
    P_SPACING,
    TopTwoThompson,
    choose,
    next_check,
)
from agents.engine.posterior_top_set import new_state, update

__all__ = [
    "DEFAULT_FAMILY",
    "Boundary",
    "LearnedStop",
    "StopFamily",
    "check_times",
    "fit_boundary",
    "record",
]

#: Checks per doubling of the pull count (:func:`next_check`).
SPACING = 64
#: Knots of the boundary: ``t = n * KNOT_BASE ** j``, ``j < KNOTS``.
KNOT_BASE, KNOTS = 4.0, 7
#: Leader probability and resampling cap of the sampling rule (``bayes_ttts``' defaults).
LEADER_PROB, MAX_RESAMPLES = 0.5, 100
#: :class:`LearnedStop`'s default boundary: the one fitted for the ``learned-stopping``
#: experiment to 10 arms, Beta(1, 1), k = 1, target 0.0899 (delta 0.1), training seed 0
#: (``topk_bench/pretrained/learned-stopping/boundaries.json``).
DEFAULT_KNOTS = (10, 40, 160, 640, 2560, 10240, 40960)
DEFAULT_DELTAS = (0.003203, 0.013587, 0.067484, 0.171222, 0.57112, 3.195165, 9.765039)


@dataclass(frozen=True)
class StopFamily:
    """The family a boundary was fitted to: ``n`` Bernoulli arms with means ~ Beta(a, b),
    top ``k``, one pull per step, fixed confidence; ``delta`` the error level it was
    fitted for (named in the off-family warning only: the problem holds no delta)."""

    n: int
    k: int
    delta: float | None = None
    a: float = 1.0
    b: float = 1.0

    def __post_init__(self) -> None:
        for name in ("n", "k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        if self.k >= self.n:
            raise ValueError(f"k={self.k} must be below n={self.n}")
        check_beta_prior(self.a, self.b)

    @classmethod
    def of(cls, family: StopFamily | Mapping[str, Any], a: float, b: float) -> StopFamily:
        """``family`` as a :class:`StopFamily`; a mapping without ``a``, ``b`` takes these."""
        if isinstance(family, cls):
            return family
        if not isinstance(family, Mapping):
            raise ValueError(f"family={family!r} must be a StopFamily or a mapping of its fields")
        try:
            return cls(**{"a": a, "b": b, **family})
        except TypeError as err:
            raise ValueError(f"family={dict(family)!r}: {err}") from None

    @classmethod
    def of_fit(cls, boundary: Boundary) -> StopFamily | None:
        """The family a boundary's training record names (``n``, ``k``; ``None``: none)."""
        fit = boundary.fit or {}
        if "n" not in fit or "k" not in fit:
            return None
        delta = fit.get("delta", fit.get("target"))
        return cls(int(fit["n"]), int(fit["k"]), delta, boundary.a, boundary.b)

    def describe(self) -> str:
        """The family in words (an off-family warning names it)."""
        delta = "" if self.delta is None else f", delta = {self.delta:g}"
        return (
            f"{self.n} arms, k = {self.k}, one pull per step, fixed confidence, Bernoulli "
            f"means ~ Beta({self.a:g}, {self.b:g}){delta}"
        )

    def differences(
        self, problem: Any, prior: tuple[float, float], instance: Any = None
    ) -> list[str]:
        """How ``problem``, the agent's ``prior`` and the env's ``instance`` (``None``: not
        seen) are off the family (empty: on it)."""
        out = field_differences(
            (
                ("n_arms", problem.n_arms, self.n),
                ("k", problem.k, self.k),
                ("pulls per step", problem.max_pulls_per_step, 1),
            )
        )
        return out + prior_differences((self.a, self.b), prior, instance)


#: The family of :data:`DEFAULT_KNOTS` and :data:`DEFAULT_DELTAS`.
DEFAULT_FAMILY = StopFamily(n=10, k=1, delta=0.1)


@dataclass(frozen=True)
class Boundary:
    """A fitted stopping boundary and what it was fitted on."""

    knots: tuple[int, ...]  #: pull counts of the knots
    deltas: tuple[float, ...]  #: ``delta_t`` at the knots
    spacing: int = SPACING
    a: float = 1.0  #: the prior
    b: float = 1.0
    fit: dict[str, Any] | None = None  #: training record (family, target, seed, costs)

    def __post_init__(self) -> None:
        knots, deltas = list(self.knots), list(self.deltas)
        if len(knots) < 1 or len(knots) != len(deltas):
            raise ValueError(
                f"knots ({len(knots)}) and deltas ({len(deltas)}) must be equal, non-empty"
            )
        if any(int(t) != t or t < 0 for t in knots) or any(
            u >= v for u, v in zip(knots, knots[1:], strict=False)
        ):
            raise ValueError(f"knots={knots} must be increasing pull counts >= 0")
        if not all(0.0 < d < math.inf for d in deltas):
            raise ValueError(f"deltas={deltas} must be positive and finite")
        if isinstance(self.spacing, bool) or not isinstance(self.spacing, int) or self.spacing < 1:
            raise ValueError(f"spacing={self.spacing!r} must be an integer >= 1")

    def at(self, t: Any) -> np.ndarray:
        """``delta_t`` at pull counts ``t`` (the agent's interpolation)."""
        x = np.log1p(np.asarray(t, dtype=float))
        return np.exp(np.interp(x, np.log1p(self.knots), np.log(self.deltas)))

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Boundary:
        data = json.loads(text)
        data["knots"], data["deltas"] = tuple(data["knots"]), tuple(data["deltas"])
        return cls(**data)


def check_times(cap: int, spacing: int = SPACING) -> np.ndarray:
    """Pull counts of the stopping checks up to ``cap`` (the last check is at ``cap``)."""
    out, t = [], 0
    while t < cap:
        out.append(t)
        t = int(next_check(t, spacing))
    out.append(cap)
    return np.asarray(out, dtype=np.int64)


@numba.njit(cache=True)
def _episode(means, a, b, k, cap, floor, spacing, rng, eps_out, wrong_out):
    """One TTTS episode on ``means``: ``eps_t`` and the posterior top k's error at every
    check (:func:`check_times`) until ``eps_t < floor`` or ``cap``; returns the number
    of checks written."""
    n = means.shape[0]
    alpha, beta = np.full(n, a), np.full(n, b)
    st = new_state(n)
    lead, other = np.empty(k, np.int64), np.empty(k, np.int64)
    mark, member = np.zeros((2, n), np.int8), np.zeros(n, np.int8)
    counts = np.zeros(n, np.int64)
    arms = np.empty(1, np.int64)
    update(alpha, beta, k, st, arms[:0])
    cut = np.sort(means)[n - k]  # the k-th largest mean: a set of k arms >= it is correct
    t, c, check_at, prev = 0, 0, 0, 1.0
    while True:
        if t >= check_at or t >= cap:
            check_at = next_check(t, spacing)
            order = np.argsort(-(alpha / (alpha + beta)), kind="mergesort")
            member[:] = 0
            wrong = False
            for i in order[:k]:
                member[i] = 1
                wrong = wrong or means[i] < cut
            lo, _, _ = top_set_bounds(
                alpha, beta, member, -1.0, max(0.02 * prev, 0.05 * floor), 4096
            )
            eps_out[c], wrong_out[c] = 1.0 - lo, wrong
            c += 1
            prev = max(1.0 - lo, floor)
            if 1.0 - lo < floor or t >= cap:
                return c
        arm = choose(alpha, beta, k, LEADER_PROB, MAX_RESAMPLES, counts, rng, st, lead, other, mark)
        if rng.random() < means[arm]:
            alpha[arm] += 1.0
        else:
            beta[arm] += 1.0
        counts[arm] += 1
        arms[0] = arm
        update(alpha, beta, k, st, arms)
        t += 1


def record(
    n: int,
    k: int,
    *,
    a: float = 1.0,
    b: float = 1.0,
    cap: int,
    floor: float,
    episodes: int,
    seed: int | tuple[int, ...],
    spacing: int = SPACING,
) -> tuple[np.ndarray, np.ndarray]:
    """``(eps, wrong)``, float32[episodes, checks] and bool: TTTS episodes of the family
    (means drawn from ``Beta(a, b)``), at every check of :func:`check_times`; a row that
    ended below ``floor`` repeats its last value (every boundary >= ``floor`` has
    stopped by then)."""
    if not 1 <= k < n:
        raise ValueError(f"k={k} must lie in [1, n - 1] with n={n}")
    if not 0.0 < floor < 1.0:
        raise ValueError(f"floor={floor!r} must lie in (0, 1)")
    grid = check_times(cap, spacing)
    eps = np.empty((episodes, grid.size), dtype=np.float32)
    wrong = np.empty((episodes, grid.size), dtype=bool)
    e_row, w_row = np.empty(grid.size), np.empty(grid.size, dtype=np.bool_)
    rng = np.random.default_rng(seed)
    for e in range(episodes):
        means = rng.beta(a, b, n)
        play = np.random.default_rng(rng.integers(2**63))
        m = _episode(means, float(a), float(b), k, cap, floor, spacing, play, e_row, w_row)
        eps[e, :m], wrong[e, :m] = e_row[:m], w_row[:m]
        eps[e, m:], wrong[e, m:] = e_row[m - 1], w_row[m - 1]
    return eps, wrong


def stop_on(eps: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Index of the first check with ``eps <= levels`` in each row (the last check if
    none: the cap)."""
    hit = eps <= levels[None, :]
    hit[:, -1] = True
    return hit.argmax(axis=1)


def fit_boundary(
    eps: np.ndarray,
    wrong: np.ndarray,
    *,
    n: int,
    cap: int,
    target: float,
    floor: float,
    spacing: int = SPACING,
    a: float = 1.0,
    b: float = 1.0,
    max_evals: int = 600,
    calibration: tuple[np.ndarray, np.ndarray] | None = None,
) -> Boundary:
    """The boundary of least mean stopping time with mean ``eps`` at the stop equal to
    ``target`` on the records (:func:`record`), never below ``floor``.

    ``calibration``: independent records ``(eps, wrong)`` of the same family. The shape
    of the boundary is fitted on ``eps``, and its level is then set again so that the
    mean ``eps`` at the stop equals ``target`` on the calibration records: the shape
    is chosen to stop early on the training records, so its level set on them
    underestimates the error on new episodes; the calibration records remove that
    selection bias (``fit`` reports both sets)."""
    from scipy.optimize import minimize

    if not floor <= target < 1.0:
        raise ValueError(f"target={target!r} must lie in [floor={floor}, 1)")
    grid = check_times(cap, spacing)
    for name, rec in (("records", (eps, wrong)), ("calibration records", calibration)):
        if rec is not None and (
            rec[0].shape != (rec[0].shape[0], grid.size) or rec[1].shape != rec[0].shape
        ):
            raise ValueError(f"{name} {rec[0].shape} do not match {grid.size} checks of cap={cap}")
    knots = np.asarray([int(n * KNOT_BASE**j) for j in range(KNOTS)])
    lg, lk = np.log1p(grid), np.log1p(knots)
    rows = np.arange(eps.shape[0])

    def levels(shape: np.ndarray, c: float) -> np.ndarray:  # the agent's delta_t exactly
        return np.exp(np.interp(lg, lk, np.maximum(c + shape, math.log(floor))))

    def level_for(shape: np.ndarray, on: np.ndarray = eps) -> float:  # E[eps_tau] rises with c
        lo, hi = math.log(floor) - 1.0 - float(shape.max()), 1.0 - float(shape.min())
        at_row = np.arange(on.shape[0])
        for _ in range(40):  # bisection
            c = 0.5 * (lo + hi)
            if on[at_row, stop_on(on, levels(shape, c))].mean() > target:
                hi = c
            else:
                lo = c
        return lo

    def mean_tau(shape: np.ndarray) -> float:
        return float(grid[stop_on(eps, levels(shape, level_for(shape)))].mean())

    best, best_tau = np.zeros(KNOTS), mean_tau(np.zeros(KNOTS))
    for slope in (0.25, 0.5, 1.0, 1.5, 2.0):
        for j0 in range(KNOTS - 1):
            shape = slope * np.maximum(0.0, lk - lk[j0])
            tau = mean_tau(shape)
            if tau < best_tau:
                best, best_tau = shape, tau
    for step in (0.5, 0.25, 0.1):  # Nelder-Mead, restarted with smaller simplices
        simplex = np.vstack([best, best + step * np.eye(KNOTS)])
        res = minimize(
            mean_tau,
            best,
            method="Nelder-Mead",
            options={"maxfev": max_evals, "initial_simplex": simplex, "xatol": 1e-3, "fatol": 0.01},
        )
        if res.fun < best_tau:
            best, best_tau = res.x, float(res.fun)
    shape = best
    c = level_for(shape) if calibration is None else level_for(shape, calibration[0])
    at = stop_on(eps, levels(shape, c))
    deltas = np.maximum(np.exp(c + shape), floor)
    fit: dict[str, Any] = {
        "target": target,
        "floor": floor,
        "cap": cap,
        "episodes": int(eps.shape[0]),
        "mean_pulls": float(grid[at].mean()),
        "mean_eps": float(eps[rows, at].mean()),
        "error_rate": float(wrong[rows, at].mean()),
    }
    if calibration is not None:
        ce, cw = calibration
        c_at, c_rows = stop_on(ce, levels(shape, c)), np.arange(ce.shape[0])
        fit.update(
            calibration_episodes=int(ce.shape[0]),
            calibration_mean_pulls=float(grid[c_at].mean()),
            calibration_mean_eps=float(ce[c_rows, c_at].mean()),
            calibration_error_rate=float(cw[c_rows, c_at].mean()),
        )
    return Boundary(
        knots=tuple(int(t) for t in knots),
        deltas=tuple(float(d) for d in deltas),
        spacing=spacing,
        a=float(a),
        b=float(b),
        fit=fit,
    )


class LearnedStop(FamilyGuard, TopTwoThompson):
    """Top-two Thompson sampling stopped by a fitted boundary (module docstring).

    Args:
        knots: pull counts of the boundary's knots, increasing (default
            :data:`DEFAULT_KNOTS`).
        deltas: ``delta_t`` at the knots (> 0; above 1: stop; default
            :data:`DEFAULT_DELTAS`, fitted to 10 arms, Beta(1, 1), k = 1, delta = 0.1: on
            other families it keeps its sampling rule, and its error is not calibrated).
        spacing: checks per doubling of the pull count (default 64).
        a: the family's Beta prior's first parameter.
        b: its second parameter.
        family: the :class:`StopFamily` the boundary was fitted to, or a mapping of its
            fields (``a``, ``b`` default to the agent's); ``None``: the default
            boundary's family (:data:`DEFAULT_FAMILY`) for the default knots and deltas,
            unknown for others.
        seed: seeds the posterior samples.

    Off its family: the boundary is calibrated on one family only. ``reset`` warns
    (``UserWarning``, once per agent and distinct mismatch) when the problem is off it
    (``n_arms``, ``k``, more than one pull per step), when the agent's prior is not the
    family's, and, played by :func:`agents.run_episode` (which shows it the env's
    instance), when the instance's means are not drawn from the family's prior; the
    warning names the family and the agents tuned to no family
    (:data:`agents.bayesian.learned_batch.ZERO_SHOT`). Reset by hand it checks what the problem
    shows. The target delta is the agent's own (the problem holds none), and ``max_batches`` only
    truncates. A boundary of unknown family (no ``family``, knots or deltas other than the default)
    is not checked.

    :meth:`from_boundary` builds it from a :class:`Boundary` (with the family its
    training record names). Setting: fixed confidence; Bernoulli only.
    """

    name = "learned_stop"
    stopping_hint: ClassVar[str] = "it stops on its boundary"
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_CONFIDENCE})

    def __init__(
        self,
        knots: Sequence[int] = DEFAULT_KNOTS,
        deltas: Sequence[float] = DEFAULT_DELTAS,
        spacing: int = SPACING,
        a: float = 1.0,
        b: float = 1.0,
        *,
        family: StopFamily | Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        self.boundary = Boundary(tuple(knots), tuple(float(d) for d in deltas), spacing, a, b)
        super().__init__(a, b, LEADER_PROB, MAX_RESAMPLES, None, seed=seed)
        default = (
            self.boundary.knots == DEFAULT_KNOTS
            and self.boundary.deltas == DEFAULT_DELTAS
            and self.boundary.spacing == SPACING
        )
        if family is None and default:
            family = DEFAULT_FAMILY
        #: The family the boundary was fitted to (``None``: unknown, not checked).
        self.family = None if family is None else StopFamily.of(family, self.a, self.b)

    @classmethod
    def from_boundary(cls, boundary: Boundary, *, seed: int | None = None) -> LearnedStop:
        return cls(
            boundary.knots,
            boundary.deltas,
            boundary.spacing,
            boundary.a,
            boundary.b,
            family=StopFamily.of_fit(boundary),
            seed=seed,
        )

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode; warn if it is off the boundary's family (class docstring)."""
        seen = self._take_instance()
        super().reset(problem, seed=seed)
        if self.family is not None:
            differences = self.family.differences(problem, (self.a, self.b), seen)
            warn_off_family(self, self.family.describe(), differences, stacklevel=2)

    def stops_by_itself(self, problem: Any) -> bool:
        return True

    def params(self) -> np.ndarray:
        prm = super().params()
        m = len(self.boundary.knots)
        prm[P_SPACING], prm[P_KNOTS] = self.boundary.spacing, m
        return np.concatenate(
            [prm, np.log1p(np.asarray(self.boundary.knots, float)), np.log(self.boundary.deltas)]
        )

    def __repr__(self) -> str:
        return (
            f"LearnedStop(knots={list(self.boundary.knots)}, deltas="
            f"{[round(d, 6) for d in self.boundary.deltas]}, spacing={self.boundary.spacing}, "
            f"a={self.a}, b={self.b}, family={self.family!r}, seed={self.seed})"
        )


def _recorded(
    path: str | Path | None,
    n: int,
    k: int,
    *,
    seed: int | tuple[int, ...],
    episodes: int,
    **kw: Any,
) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`record`'s ``(eps, wrong)`` and its CPU seconds, read from the ``.npz`` file
    ``path`` when it exists (then checked to hold ``episodes`` episodes to the cap),
    else recorded and written there."""
    grid_size = check_times(kw["cap"]).size
    if path is not None and Path(path).exists():
        with np.load(path) as saved:
            eps, wrong, cpu = saved["eps"], saved["wrong"], float(saved["cpu_s"])
        if eps.shape != (episodes, grid_size):
            raise ValueError(
                f"{path}: records {eps.shape} are not {episodes} episodes to cap={kw['cap']}"
            )
        return eps, wrong, cpu
    start = time.process_time()
    eps, wrong = record(n, k, episodes=episodes, seed=seed, **kw)  # type: ignore[arg-type]
    cpu = time.process_time() - start
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(path).with_suffix(".tmp.npz")
        np.savez_compressed(tmp, eps=eps, wrong=wrong, cpu_s=cpu)
        tmp.replace(path)
    return eps, wrong, cpu


def train(
    n: int,
    k: int,
    *,
    targets: Sequence[float],
    seed: int,
    a: float = 1.0,
    b: float = 1.0,
    cap: int = 20_000,
    floor: float = 5e-4,
    episodes: int = 800,
    calibration_episodes: int = 0,
    records: str | Path | None = None,
) -> list[Boundary]:
    """Record ``episodes`` TTTS episodes of the family (seeded by ``seed``) and fit one
    boundary per target (:func:`fit_boundary`); with ``calibration_episodes`` > 0, record
    that many more (seeded by ``(seed, 1)``: other episodes) and set each boundary's level
    on them. ``fit`` records the CPU seconds.

    ``records``: an ``.npz`` file that keeps the records, the calibration records in
    ``NAME.calibration.npz`` beside it (read instead of recording again when they exist:
    the same family, seed and episodes)."""
    kw: dict[str, Any] = {"a": a, "b": b, "cap": cap, "floor": floor}
    eps, wrong, recorded = _recorded(records, n, k, seed=seed, episodes=episodes, **kw)
    calibration = None
    if calibration_episodes > 0:
        path = None if records is None else Path(records).with_suffix(".calibration.npz")
        c_eps, c_wrong, c_cpu = _recorded(
            path, n, k, seed=(seed, 1), episodes=calibration_episodes, **kw
        )
        calibration, recorded = (c_eps, c_wrong), recorded + c_cpu
    out = []
    for target in targets:
        t0 = time.process_time()
        bnd = fit_boundary(
            eps, wrong, n=n, cap=cap, target=target, floor=floor, a=a, b=b, calibration=calibration
        )
        fit = dict(bnd.fit or {})
        fit.update(
            n=n,
            k=k,
            seed=seed,
            record_cpu_s=round(recorded, 1),
            fit_cpu_s=round(time.process_time() - t0, 1),
        )
        out.append(Boundary(bnd.knots, bnd.deltas, bnd.spacing, bnd.a, bnd.b, fit))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.bayesian.learned_stop --n 10 --k 1 --target 0.0899 0.0429 --seed 0``:
    fit one boundary per target and print them as JSON."""
    p = argparse.ArgumentParser(
        prog="python -m agents.bayesian.learned_stop", description=main.__doc__
    )
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument(
        "--target", type=float, nargs="+", required=True, help="mean posterior error at the stop"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prior", type=float, nargs=2, default=(1.0, 1.0), metavar=("A", "B"))
    p.add_argument("--cap", type=int, default=20_000)
    p.add_argument("--floor", type=float, default=5e-4)
    p.add_argument("--episodes", type=int, default=800)
    p.add_argument(
        "--calibration-episodes",
        type=int,
        default=0,
        help="more episodes on which the level of each boundary is set (0: none)",
    )
    p.add_argument("--records", type=Path, help="an .npz file that keeps the records")
    args = p.parse_args(argv)
    out = train(
        args.n,
        args.k,
        targets=args.target,
        seed=args.seed,
        a=args.prior[0],
        b=args.prior[1],
        cap=args.cap,
        floor=args.floor,
        episodes=args.episodes,
        calibration_episodes=args.calibration_episodes,
        records=args.records,
    )
    print(json.dumps([asdict(bnd) for bnd in out], indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
