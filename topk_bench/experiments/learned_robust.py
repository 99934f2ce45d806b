"""The ``learned-robust`` experiment: ``zero_shot``'s worst case over classes of bounded hardness.

After Zhang, Jain & Jamieson, "Learning to Actively Learn: A Robust Approach"
(arXiv:2010.15382): a policy is judged by its worst case over a class of instances of
bounded hardness, not by its average over a prior. Here the policy is ``zero_shot`` (one
set of fitted parameters for every problem, :mod:`agents.zero_shot`), the yardstick on each
instance is the best of several scripted fixed-budget agents on that same instance, and
the hardness is ``H1 = sum_i Delta_i^-2`` (:func:`bandit_envs.hardness.h1`; Audibert,
Bubeck & Munos 2010 for k = 1, Chen et al. 2014 for top-k).

**Classes** (:class:`HardnessClass`, :data:`CLASSES`): Bernoulli arms, ``n`` arms, top
``k``, H1 in a band ``[h_lo, h_hi]``, a fixed budget of ``round(c h_hi)`` pulls
(``c = budget_multiple``), one pull per step. A *member* is the image of an unconstrained
vector ``theta`` of ``n + 1`` numbers (:meth:`HardnessClass.member`): the target
``H = h_lo (h_hi / h_lo)^sigmoid(theta[n])`` (a log-uniform position in the band) and the
means ``sigmoid(m + s (theta[:n] - m))``, where ``m`` is the midpoint of the k-th and
(k+1)-th largest of ``theta[:n]`` and the scale ``s > 0`` is found by bisection on
``log s`` so that ``H1 = H``: the gaps are scaled around the top-k boundary in logit
space. H1 is continuous and decreasing in ``s``, from infinity (``s -> 0``: all means
equal) down to ``n`` (``s -> infinity``: every mean at 0 or 1), and has no closed form in
``s``. So every member has H1 in the band and means in [0, 1], and its top k is that of
``theta[:n]``. Scaling in logit space never clips; scaling the means themselves around
their midpoint would need clipping at 0 and 1 and, at the shipped bands, puts 21-47% of
random members' arms within 0.02 of 0 or 1 (14-34% in logit space; 200 members a class).
*Random* members: ``theta ~ N(0, I)``. These classes are none of the shapes of
``zero_shot``'s training generator (:mod:`agents.zero_shot.generator`: Beta, clusters,
power curves), and its budgets are not set by H1.

**Search** (:func:`cross_entropy_search`): the members hardest for ``zero_shot`` are
sought by the cross-entropy method (Rubinstein & Kroese 2004) over ``theta``: a Gaussian
with diagonal covariance, started at ``N(0, I)``, refitted to the ``elite`` best of
``population`` candidates per iteration (smoothed, with a floor on the standard
deviation). A candidate's score is ``zero_shot``'s mean metric on the member over a fixed
set of episode seeds (common random numbers). The ``hardest`` best-scored members found
are then played again, by every agent, on fresh seeds, so that the selection does not
inflate the result (the search's maximum of noisy means is biased upwards).

**Metric**: aggregate regret of the answer (Zhou, Chen & Li 2014, eq. 1) by default, or
the misidentification rate. On every evaluated member ``zero_shot`` and every scripted
agent of the list (those whose ``k_values`` allow the class's k) play the same episodes
(same seeds, paired rewards). The *ratio* is zero_shot's mean metric over the best
scripted agent's mean metric on that member (:func:`compare_to_best`); when the best mean
is 0 the difference is reported instead, marked ``diff`` (a positive difference ranks
worse than any ratio; 0 against 0 counts as a ratio of 1). The best agent is chosen on the
episodes it is scored on, which favours it: the ratios lean against zero_shot. At the
worst member of each class and kind, a 95% paired percentile bootstrap interval over
episodes (the best agent held fixed; :func:`bootstrap_interval`).

Run: ``python -m topk_bench.experiments.learned_robust [--quick] [--jobs J] [--out DIR]``;
it writes ``members.csv`` (every evaluated member, agent and metric) and ``table.md`` to
``--out`` and prints the table and the CPU time used.
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import resource
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.runner import run_episode
from bandit_envs.hardness import h1
from bandit_envs.top_k_batch import TopKBatchEnv

__all__ = [
    "CLASSES",
    "DEFAULT_AGENTS",
    "METRICS",
    "ClassReport",
    "Comparison",
    "HardnessClass",
    "Member",
    "SearchResult",
    "applicable_agents",
    "bootstrap_interval",
    "compare_to_best",
    "cross_entropy_search",
    "main",
    "run",
    "to_markdown",
]

#: the metrics an episode is scored on (fields of :class:`agents.runner.EpisodeResult`).
METRICS = ("aggregate_regret", "misidentified")
#: the learned agent under test.
LEARNED = "zero_shot"
#: the scripted fixed-budget agents (those whose ``k_values`` exclude a class's k are left
#: out there: ``successive_rejects`` and ``sequential_halving`` are k = 1 only).
DEFAULT_AGENTS = (
    "uniform",
    "sar",
    "successive_rejects",
    "sequential_halving",
    "nsar",
    "optmai",
    "adaptive_topk",
    "kg",
)
#: episode seeds are ``seed * 10^7 + class index * 10^6 + purpose * 10^5 + i``, so the
#: seeds of different purposes never meet (``episodes`` < 10^5).
_SEED_STRIDE = (10_000_000, 1_000_000, 100_000)
_PURPOSE = {"random": 1, "search": 2, "searched": 3}


def _whole(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name}={value!r} must be a whole number >= {low}")
    return int(value)


def _finite(value: Any, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} must be a finite number") from None
    if isinstance(value, bool) or not math.isfinite(x):
        raise ValueError(f"{name}={value!r} must be a finite number")
    return x


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # the logistic function, without overflow


@dataclass(frozen=True)
class HardnessClass:
    """Bernoulli instances of ``n`` arms, top ``k``, with ``H1`` in ``[h_lo, h_hi]``.

    The robust setting of Zhang, Jain & Jamieson (arXiv:2010.15382): a class of instances
    of bounded hardness on which a policy is judged by its worst member. The fixed budget
    is :attr:`budget` = ``round(budget_multiple * h_hi)`` pulls.

    Raises:
        ValueError: ``n < 2``; ``k`` outside ``1..n-1``; ``h_lo < n`` (no member: every
            gap of means in [0, 1] is at most 1, so ``H1 >= n``); ``h_hi <= h_lo``;
            ``budget_multiple <= 0``; a budget below ``n`` (one pull per arm).
    """

    name: str
    n: int
    k: int
    h_lo: float
    h_hi: float
    budget_multiple: float

    def __post_init__(self) -> None:
        n = _whole(self.n, "n", 2)
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
            raise ValueError(f"k={self.k!r} must be a whole number in 1..n-1 = 1..{n - 1}")
        if not 1 <= self.k <= n - 1:
            raise ValueError(f"k={self.k!r} must be in 1..n-1 = 1..{n - 1}")
        lo, hi = _finite(self.h_lo, "h_lo"), _finite(self.h_hi, "h_hi")
        if lo <= n:
            raise ValueError(f"h_lo={self.h_lo!r} must exceed n={n}: H1 > n for means in (0, 1)")
        if hi <= lo:
            raise ValueError(f"h_hi={self.h_hi!r} must exceed h_lo={self.h_lo!r}")
        c = _finite(self.budget_multiple, "budget_multiple")
        if c <= 0:
            raise ValueError(f"budget_multiple={self.budget_multiple!r} must be > 0")
        if round(c * hi) < n:
            raise ValueError(
                f"budget = round(budget_multiple * h_hi) = {round(c * hi)} must be at least "
                f"n={n} (budget_multiple={self.budget_multiple!r}, h_hi={self.h_hi!r})"
            )

    @property
    def budget(self) -> int:
        """The fixed budget: ``round(budget_multiple * h_hi)`` pulls."""
        return round(self.budget_multiple * self.h_hi)

    @property
    def dim(self) -> int:
        """The length of the unconstrained vector ``theta`` (``n`` means and the target H1)."""
        return self.n + 1

    def target_h1(self, theta: np.ndarray) -> float:
        """``h_lo (h_hi / h_lo)^sigmoid(theta[n])``: where in the band the member lies."""
        u = float(_sigmoid(np.asarray(theta[self.n], dtype=np.float64)))
        return float(min(self.h_hi, max(self.h_lo, self.h_lo * (self.h_hi / self.h_lo) ** u)))

    def member(self, theta: Sequence[float] | np.ndarray) -> np.ndarray:
        """The member of ``theta``: means in [0, 1] with H1 in ``[h_lo, h_hi]``.

        ``sigmoid(m + s (theta[:n] - m))`` with ``m`` the midpoint of the k-th and
        (k+1)-th largest ``theta[:n]`` and ``s > 0`` found by bisection on ``log s`` so that
        H1 equals :meth:`target_h1` (to a relative 1e-9; the endpoint inside the band is
        returned).

        Raises:
            ValueError: ``theta`` is not ``n + 1`` finite numbers, or the k-th and (k+1)-th
                largest of ``theta[:n]`` are equal (no top k: H1 is infinite at every scale).
        """
        th = np.asarray(theta, dtype=np.float64)
        if th.shape != (self.dim,) or not np.all(np.isfinite(th)):
            raise ValueError(
                f"theta must be {self.dim} finite numbers (n + 1 for n={self.n}), "
                f"got shape {th.shape}"
            )
        x = th[: self.n]
        desc = np.sort(x)[::-1]
        if not desc[self.k - 1] > desc[self.k]:
            raise ValueError(
                f"theta gives a tie at the top-k boundary (k={self.k}): "
                f"theta_(k) = theta_(k+1) = {desc[self.k]!r}"
            )
        mid = 0.5 * (desc[self.k - 1] + desc[self.k])
        target = self.target_h1(th)

        def at(log_s: float) -> np.ndarray:
            return _sigmoid(mid + math.exp(log_s) * (x - mid))

        def excess(log_s: float) -> float:  # log H1 - log target: decreasing in log s
            return math.log(h1(at(log_s), self.k)) - math.log(target)

        lo = hi = 0.0
        for _ in range(200):
            if excess(hi) <= 0.0:
                break
            lo, hi = hi, hi + 1.0
        else:  # pragma: no cover - H1 reaches n at a finite scale
            raise RuntimeError(f"no scale brings H1 down to {target}")
        for _ in range(200):
            if excess(lo) >= 0.0:
                break
            lo, hi = lo - 1.0, lo
        else:  # pragma: no cover - H1 grows without bound as s -> 0
            raise RuntimeError(f"no scale brings H1 up to {target}")
        for _ in range(200):
            if hi - lo < 1e-12:
                break
            mid_s = 0.5 * (lo + hi)
            e = excess(mid_s)
            if abs(e) < 1e-9:
                lo = hi = mid_s
                break
            if e > 0:
                lo = mid_s
            else:
                hi = mid_s
        for log_s in (hi, lo):
            means = at(log_s)
            if self.h_lo <= h1(means, self.k) <= self.h_hi:
                return means
        raise RuntimeError(
            f"bisection left the band [{self.h_lo}, {self.h_hi}]"
        )  # pragma: no cover

    def random_theta(self, rng: np.random.Generator) -> np.ndarray:
        """A random member's vector: ``theta ~ N(0, I)`` of length ``n + 1``."""
        return rng.standard_normal(self.dim)

    def env(self, means: np.ndarray) -> TopKBatchEnv:
        """The fixed-budget environment of a member (one pull per step, paired rewards)."""
        return TopKBatchEnv(
            k=self.k,
            instance=np.asarray(means, dtype=np.float64),
            budget=self.budget,
            batch_size=None,
            answer="agent",
            paired=True,
            invalid_action="raise",
        )


#: The shipped classes: bands of width 3 (``h_hi = 3 h_lo``) and budget multiple
#: ``c = 0.25``, set by a measurement on random members (10 members, 40 episodes) so that
#: the best scripted agent misidentifies neither almost never nor almost always: its mean
#: misidentification rate was 0.20 (n10-k1), 0.28 (n10-k3), 0.28 (n20-k2), 0.28 (n50-k5).
CLASSES: dict[str, HardnessClass] = {
    c.name: c
    for c in (
        HardnessClass("n10-k1", n=10, k=1, h_lo=200.0, h_hi=600.0, budget_multiple=0.25),
        HardnessClass("n10-k3", n=10, k=3, h_lo=200.0, h_hi=600.0, budget_multiple=0.25),
        HardnessClass("n20-k2", n=20, k=2, h_lo=400.0, h_hi=1200.0, budget_multiple=0.25),
        HardnessClass("n50-k5", n=50, k=5, h_lo=1500.0, h_hi=4500.0, budget_multiple=0.25),
    )
}


def applicable_agents(names: Iterable[str], k: int) -> list[str]:
    """The agents of ``names`` that can identify a top ``k`` (their ``k_values``)."""
    out = []
    for name in names:
        k_values = getattr(agents.agent_class(name), "k_values", None)
        if k_values is None or k in k_values:
            out.append(name)
    return out


# --------------------------------------------------------------------------- the search


@dataclass
class SearchResult:
    """What :func:`cross_entropy_search` evaluated: every candidate and its score."""

    thetas: np.ndarray
    scores: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    best_per_iteration: list[float] = field(default_factory=list)
    mean_per_iteration: list[float] = field(default_factory=list)

    def top(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` best-scored candidates (ties to the earlier) and their scores."""
        order = np.argsort(-self.scores, kind="stable")[:count]
        return self.thetas[order], self.scores[order]


def cross_entropy_search(
    evaluate: Callable[[list[np.ndarray]], Sequence[float]],
    dim: int,
    *,
    population: int = 12,
    elite: int = 3,
    iterations: int = 3,
    rng: np.random.Generator,
    init_mean: np.ndarray | None = None,
    init_std: float = 1.0,
    smoothing: float = 0.7,
    min_std: float = 0.05,
) -> SearchResult:
    """Maximise a score over ``R^dim`` by the cross-entropy method (Rubinstein & Kroese 2004).

    Each iteration draws ``population`` candidates from ``N(mean, diag(std^2))``, scores
    them all at once (``evaluate``: a list of vectors to their scores, so the caller can
    play them in parallel), and moves ``mean`` and ``std`` to ``smoothing`` times the
    elite's mean and standard deviation plus ``1 - smoothing`` times the old ones, with
    ``std >= min_std``. Starts at ``init_mean`` (default 0) and ``init_std``.

    Raises:
        ValueError: a size below 1, ``elite > population``, a ``population`` below 2,
            ``smoothing`` outside (0, 1], a non-positive ``init_std`` or negative ``min_std``.
    """
    dim = _whole(dim, "dim", 1)
    population = _whole(population, "population", 2)
    elite = _whole(elite, "elite", 1)
    iterations = _whole(iterations, "iterations", 1)
    if elite > population:
        raise ValueError(f"elite={elite} must be at most population={population}")
    if not 0 < smoothing <= 1:
        raise ValueError(f"smoothing={smoothing!r} must be in (0, 1]")
    if not init_std > 0:
        raise ValueError(f"init_std={init_std!r} must be > 0")
    if not min_std >= 0:
        raise ValueError(f"min_std={min_std!r} must be >= 0")
    mean = np.zeros(dim) if init_mean is None else np.asarray(init_mean, dtype=np.float64).copy()
    if mean.shape != (dim,):
        raise ValueError(f"init_mean has shape {mean.shape}, want ({dim},)")
    std = np.full(dim, float(init_std))
    thetas: list[np.ndarray] = []
    scores: list[float] = []
    best, means = [], []
    for _ in range(iterations):
        cands = [mean + std * rng.standard_normal(dim) for _ in range(population)]
        got = np.asarray([float(s) for s in evaluate(cands)], dtype=np.float64)
        if got.shape != (population,) or not np.all(np.isfinite(got)):
            raise ValueError(f"evaluate must return {population} finite scores, got {got!r}")
        thetas.extend(cands)
        scores.extend(got.tolist())
        best.append(float(got.max()))
        means.append(float(got.mean()))
        top = np.stack(cands)[np.argsort(-got, kind="stable")[:elite]]
        mean = smoothing * top.mean(axis=0) + (1 - smoothing) * mean
        std = np.maximum(smoothing * top.std(axis=0) + (1 - smoothing) * std, min_std)
    return SearchResult(np.stack(thetas), np.asarray(scores), mean, std, best, means)


# ------------------------------------------------------------------------ playing members


def _episode_seeds(seed: int, class_index: int, purpose: str, count: int) -> list[int]:
    a, b, c = _SEED_STRIDE
    base = seed * a + class_index * b + _PURPOSE[purpose] * c
    return [base + i for i in range(count)]


def play_member(
    cls: HardnessClass, means: np.ndarray, names: Sequence[str], seeds: Sequence[int], metric: str
) -> dict[str, np.ndarray]:
    """Every agent of ``names`` on the member ``means``, one episode per seed (paired)."""
    env = cls.env(means)
    out = {}
    for name in names:
        agent = agents.make(name)
        out[name] = np.asarray(
            [float(getattr(run_episode(env, agent, seed=s), metric)) for s in seeds]
        )
    env.close()
    return out


def _play_task(task: tuple[Any, ...]) -> dict[str, np.ndarray]:
    return play_member(*task)


class _Pool:
    """``map`` in this process (``jobs == 1``) or over ``jobs`` forked workers."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool: Any = None
        if jobs > 1:
            self._pool = multiprocessing.get_context("fork").Pool(jobs)

    def map(self, tasks: list[tuple[Any, ...]]) -> list[dict[str, np.ndarray]]:
        if self._pool is None:
            return [_play_task(t) for t in tasks]
        return self._pool.map(_play_task, tasks, chunksize=1)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Comparison:
    """zero_shot against the best scripted agent on one member (:func:`compare_to_best`)."""

    best_agent: str
    learned_mean: float
    best_mean: float
    value: float
    is_difference: bool

    @property
    def severity(self) -> tuple[int, float]:
        """Sort key, larger is worse for zero_shot: a positive difference beats any ratio."""
        if self.is_difference:
            return (1, self.value) if self.value > 0 else (0, 1.0)
        return (0, self.value)

    @property
    def as_ratio(self) -> float:
        """The ratio, with a difference read as ``inf`` (positive) or 1 (0 against 0)."""
        if self.is_difference:
            return math.inf if self.value > 0 else 1.0
        return self.value

    def label(self) -> str:
        """``1.23`` for a ratio, ``+0.0123 (diff)`` for a difference."""
        if self.is_difference:
            return f"{self.value:+.4f} (diff)"
        return f"{self.value:.2f}"


def compare_to_best(learned: float, scripted: Mapping[str, float]) -> Comparison:
    """The ratio of ``learned`` to the smallest of ``scripted`` (its agent: first on ties).

    If the best scripted mean is 0, the difference ``learned - 0`` is returned instead,
    with ``is_difference`` set (a ratio would be infinite or undefined).

    Raises:
        ValueError: ``scripted`` is empty, or a mean is negative or not finite.
    """
    if not scripted:
        raise ValueError("scripted is empty: no agent to compare with")
    for name, v in {LEARNED: learned, **scripted}.items():
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"mean metric of {name!r} = {v!r} must be finite and >= 0")
    best = min(scripted, key=lambda a: scripted[a])
    b = float(scripted[best])
    if b == 0.0:
        return Comparison(best, float(learned), b, float(learned), True)
    return Comparison(best, float(learned), b, float(learned) / b, False)


def bootstrap_interval(
    learned: np.ndarray,
    best: np.ndarray,
    *,
    difference: bool = False,
    resamples: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """Paired percentile bootstrap interval of ``mean(learned) / mean(best)`` (or difference).

    Episodes are resampled in pairs (the same seeds); a resample whose ``best`` mean is 0
    counts as ``inf`` (1 when both means are 0). No interpolation between resamples.
    """
    x, y = np.asarray(learned, dtype=np.float64), np.asarray(best, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"learned and best must be equal 1-D arrays, got {x.shape}, {y.shape}")
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    mx, my = x[idx].mean(axis=1), y[idx].mean(axis=1)
    if difference:
        stat = mx - my
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.where(my > 0, mx / np.where(my > 0, my, 1.0), np.where(mx > 0, np.inf, 1.0))
    a = (1 - level) / 2
    lo, hi = np.quantile(stat, [a, 1 - a], method="inverted_cdf")
    return float(lo), float(hi)


# ----------------------------------------------------------------------------- the run


@dataclass
class Member:
    """One evaluated member: its means, H1, every agent's per-episode metric."""

    cls: str
    kind: str
    index: int
    means: np.ndarray
    h1: float
    values: dict[str, np.ndarray]
    search_score: float | None = None

    def comparison(self) -> Comparison:
        """zero_shot against the best scripted agent here."""
        return compare_to_best(
            float(self.values[LEARNED].mean()),
            {a: float(v.mean()) for a, v in self.values.items() if a != LEARNED},
        )


@dataclass
class ClassReport:
    """One class's results: random and searched members, the search's trace."""

    cls: HardnessClass
    agents: list[str]
    members: list[Member]
    search: SearchResult | None
    episodes: int
    search_episodes: int

    def of_kind(self, kind: str) -> list[Member]:
        return [m for m in self.members if m.kind == kind]


def run(
    classes: Sequence[HardnessClass],
    *,
    agent_names: Sequence[str] = DEFAULT_AGENTS,
    metric: str = "aggregate_regret",
    episodes: int = 400,
    search_episodes: int | None = 200,
    members: int = 16,
    iterations: int = 6,
    population: int = 12,
    elite: int = 3,
    hardest: int = 3,
    seed: int = 0,
    jobs: int = 1,
    log: Callable[[str], None] = lambda s: None,
) -> list[ClassReport]:
    """Evaluate ``zero_shot`` on random and searched members of every class (module doc)."""
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r} must be one of {METRICS}")
    episodes = _whole(episodes, "episodes", 1)
    search_episodes = _whole(
        episodes if search_episodes is None else search_episodes, "search_episodes", 1
    )
    if max(episodes, search_episodes) >= _SEED_STRIDE[2]:
        raise ValueError(f"episodes must be below {_SEED_STRIDE[2]}")
    members = _whole(members, "members", 0)
    hardest = _whole(hardest, "hardest", 0)
    iterations = _whole(iterations, "iterations", 0)
    jobs = _whole(jobs, "jobs", 1)
    seed = _whole(seed, "seed", 0)
    for name in agent_names:
        if name == LEARNED:
            raise ValueError(f"agent list names {LEARNED!r}: it is the agent under test")
        agents.agent_class(name)  # an unknown name raises here, before any episode
    index_of = {name: i for i, name in enumerate(CLASSES)}
    _warm_up(classes, agent_names)
    pool = _Pool(jobs)
    reports = []
    try:
        for cls in classes:
            ci = index_of.get(cls.name, len(CLASSES))
            names = [LEARNED, *applicable_agents(agent_names, cls.k)]
            if len(names) == 1:
                raise ValueError(f"no agent of {list(agent_names)} plays k={cls.k} ({cls.name})")
            rng = np.random.default_rng([seed, ci, 0])
            out: list[Member] = []
            # random members
            thetas = [cls.random_theta(rng) for _ in range(members)]
            seeds = _episode_seeds(seed, ci, "random", episodes)
            means = [cls.member(t) for t in thetas]
            got = pool.map([(cls, m, names, seeds, metric) for m in means])
            out += [
                Member(cls.name, "random", i, m, h1(m, cls.k), v)
                for i, (m, v) in enumerate(zip(means, got, strict=True))
            ]
            log(f"{cls.name}: {members} random members played")
            # the search (zero_shot only), then the hardest on fresh seeds
            search = None
            if iterations > 0 and hardest > 0:
                s_seeds = _episode_seeds(seed, ci, "search", search_episodes)

                def evaluate(cands: list[np.ndarray], cls=cls, s_seeds=s_seeds) -> list[float]:
                    tasks = [(cls, cls.member(t), [LEARNED], s_seeds, metric) for t in cands]
                    return [float(v[LEARNED].mean()) for v in pool.map(tasks)]

                search = cross_entropy_search(
                    evaluate,
                    cls.dim,
                    population=population,
                    elite=min(elite, population),
                    iterations=iterations,
                    rng=np.random.default_rng([seed, ci, 1]),
                )
                log(f"{cls.name}: search best per iteration {search.best_per_iteration}")
                top, scores = search.top(hardest)
                f_seeds = _episode_seeds(seed, ci, "searched", episodes)
                means = [cls.member(t) for t in top]
                got = pool.map([(cls, m, names, f_seeds, metric) for m in means])
                out += [
                    Member(cls.name, "searched", i, m, h1(m, cls.k), v, float(sc))
                    for i, (m, v, sc) in enumerate(zip(means, got, scores, strict=True))
                ]
            reports.append(ClassReport(cls, names[1:], out, search, episodes, search_episodes))
    finally:
        pool.close()
    return reports


def _warm_up(classes: Sequence[HardnessClass], names: Sequence[str]) -> None:
    """Compile every agent's kernels once in this process (forked workers inherit them)."""
    for k in sorted({c.k for c in classes}):
        cls = HardnessClass(
            "warm-up", n=k + 3, k=k, h_lo=float(k + 4), h_hi=50.0, budget_multiple=1
        )
        means = cls.member(np.linspace(1.0, -1.0, cls.dim))
        play_member(cls, means, [LEARNED, *applicable_agents(names, k)], [0], "aggregate_regret")


# ----------------------------------------------------------------------------- outputs

CSV_COLUMNS = (
    "class",
    "kind",
    "member",
    "h1",
    "means",
    "agent",
    "metric",
    "mean",
    "se",
    "episodes",
    "search_score",
)


def write_csv(reports: Sequence[ClassReport], path: Path, metric: str) -> None:
    """One row per (member, agent): the columns of :data:`CSV_COLUMNS`."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for rep in reports:
            for m in rep.members:
                for agent, v in m.values.items():
                    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
                    w.writerow(
                        [
                            m.cls,
                            m.kind,
                            m.index,
                            f"{m.h1:.6g}",
                            " ".join(f"{x:.6f}" for x in m.means),
                            agent,
                            metric,
                            f"{v.mean():.6g}",
                            f"{se:.3g}",
                            v.size,
                            "" if m.search_score is None else f"{m.search_score:.6g}",
                        ]
                    )


def _worst(members: Sequence[Member]) -> Member | None:
    return max(members, key=lambda m: m.comparison().severity) if members else None


def to_markdown(reports: Sequence[ClassReport], metric: str, *, seed: int = 0) -> str:
    """The results table (worst case per class and kind) and the search's trace."""
    label = {"aggregate_regret": "aggregate regret", "misidentified": "misidentification"}[metric]
    lines = [
        f"Metric: {label}. Ratio = zero_shot's mean / the best scripted agent's mean on the "
        "same member and episodes (`diff`: the best is 0, zero_shot's excess is shown). "
        "Interval: 95% paired percentile bootstrap over episodes at the worst member "
        "(2,000 resamples, the best agent held fixed).",
        "",
        "| class | n | k | H1 band | budget | kind | members | episodes | worst ratio "
        "| 95% interval | best scripted there | zero_shot there | best there | H1 there "
        "| median ratio |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
        "| --- |",
    ]
    rng = np.random.default_rng([seed, 0xB007])
    for rep in reports:
        c = rep.cls
        for kind in ("random", "searched"):
            ms = rep.of_kind(kind)
            w = _worst(ms)
            if w is None:
                continue
            cmp = w.comparison()
            lo, hi = bootstrap_interval(
                w.values[LEARNED], w.values[cmp.best_agent], difference=cmp.is_difference, rng=rng
            )
            fmt = (lambda x: f"{x:+.4f}") if cmp.is_difference else (lambda x: f"{x:.2f}")
            median = f"{np.median([m.comparison().as_ratio for m in ms]):.2f}"
            lines.append(
                f"| {c.name} | {c.n} | {c.k} | [{c.h_lo:g}, {c.h_hi:g}] | {c.budget} | {kind} "
                f"| {len(ms)} | {rep.episodes} | {cmp.label()} | [{fmt(lo)}, {fmt(hi)}] "
                f"| {cmp.best_agent} | {cmp.learned_mean:.4f} | {cmp.best_mean:.4f} "
                f"| {w.h1:.0f} | {median} |"
            )
    lines += [
        "",
        f"Search (zero_shot's {label} on the search's episodes; the hardest members "
        "re-played on fresh episodes):",
        "",
        "| class | iterations x population | search episodes | best per iteration "
        "| worst random member (zero_shot) | hardest found, search episodes "
        "| same, fresh episodes |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rep in reports:
        s = rep.search
        if s is None:
            continue
        rand = rep.of_kind("random")
        worst_rand = max((float(m.values[LEARNED].mean()) for m in rand), default=float("nan"))
        top = max(rep.of_kind("searched"), key=lambda m: m.search_score or 0.0)
        lines.append(
            f"| {rep.cls.name} | {len(s.best_per_iteration)} x "
            f"{len(s.scores) // len(s.best_per_iteration)} | {rep.search_episodes} "
            f"| {', '.join(f'{b:.4f}' for b in s.best_per_iteration)} | {worst_rand:.4f} "
            f"| {top.search_score:.4f} | {float(top.values[LEARNED].mean()):.4f} |"
        )
    return "\n".join(lines) + "\n"


def _cpu_seconds() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


#: the full run's sizes (the CLI's defaults).
SIZES = {
    "episodes": 400,
    "search_episodes": 200,
    "members": 16,
    "iterations": 6,
    "population": 12,
    "elite": 3,
    "hardest": 3,
}
#: ``--quick``: a smoke test of seconds (one class unless ``--classes``).
QUICK = {
    "episodes": 3,
    "search_episodes": 3,
    "members": 2,
    "iterations": 1,
    "population": 4,
    "elite": 2,
    "hardest": 1,
}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring)."""
    p = argparse.ArgumentParser(
        prog="python -m topk_bench.experiments.learned_robust",
        description="zero_shot's worst case over classes of bounded H1 (arXiv:2010.15382).",
    )
    p.add_argument("--classes", nargs="+", choices=tuple(CLASSES), default=None)
    p.add_argument("--agents", nargs="+", default=None, help=f"default: {' '.join(DEFAULT_AGENTS)}")
    p.add_argument("--metric", choices=METRICS, default="aggregate_regret")
    p.add_argument("--episodes", type=int, help="per evaluated member and agent (400)")
    p.add_argument("--search-episodes", type=int, help="per search candidate (200)")
    p.add_argument("--members", type=int, help="random members per class (16)")
    p.add_argument("--iterations", type=int, help="CEM iterations (6; 0: no search)")
    p.add_argument("--population", type=int, help="CEM candidates per iteration (12)")
    p.add_argument("--elite", type=int, help="CEM elite (3)")
    p.add_argument("--hardest", type=int, help="searched members re-played (3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("results/learned-robust"))
    p.add_argument("--quick", action="store_true", help="tiny sizes, a smoke test")
    args = p.parse_args(argv)
    sizes = dict(SIZES)
    if args.quick:
        sizes.update(QUICK)
    for key in sizes:
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    classes = [CLASSES[c] for c in (args.classes or CLASSES)]
    if args.quick and args.classes is None:
        classes = classes[:1]
    t0 = time.perf_counter()
    try:
        reports = run(
            classes,
            agent_names=tuple(args.agents or DEFAULT_AGENTS),
            metric=args.metric,
            seed=args.seed,
            jobs=args.jobs,
            log=lambda s: print(s, file=sys.stderr, flush=True),
            **sizes,
        )
    except (ValueError, KeyError) as e:
        p.error(str(e))
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(reports, args.out / "members.csv", args.metric)
    table = to_markdown(reports, args.metric, seed=args.seed)
    (args.out / "table.md").write_text(table)
    print(table, end="")
    own, kids = _cpu_seconds()
    print(
        f"CPU time: {own + kids:.1f} s (this process {own:.1f} s, workers {kids:.1f} s); "
        f"wall {time.perf_counter() - t0:.1f} s; jobs {args.jobs}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
