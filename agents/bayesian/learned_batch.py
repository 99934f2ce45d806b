"""A learned batch policy: each (b, r)-batch filled by a fitted score (Beta-Bernoulli prior).

Fixed budget on a prior family (means drawn from ``Beta(a, b)`` per episode, the agent
knows the prior), in the (b, r)-batch model of Jun et al. (2016) with a binding number
of batches. The batch yardstick ``kg_batch``
(:mod:`agents.bayesian.batch_knowledge_gradient`) fills a batch greedily with the
myopic KG* value; :class:`LearnedBatch` fills it the same way, pull by pull on a
fantasy posterior, but ranks the arms by a *score* whose weights are fitted on
simulated episodes of the family to maximise the expected terminal value (policy
search, as in the learned prior-aware policies of Zhang, Jain & Jamieson, "Learning to
Actively Learn: A Robust Approach", arXiv:2010.15382):

* **Batch.** ``size = min(b, pulls left, n r)`` pulls (every batch is full), the
  ``j``-th to the arm of largest score among the arms with fewer than ``r`` pulls in the
  batch; after each pull the arm's posterior becomes the fantasy ``Beta(alpha + mu,
  beta + 1 - mu)`` (its mean ``mu`` kept, as in ``kg_batch``) and its score is
  recomputed. The batch is valid by construction: no projection is ever needed.
* **Score** of arm ``i`` (posterior ``Beta(alpha_i, beta_i)``, mean ``mu_i``, standard
  deviation ``sigma_i``; ``c_i`` the k-th largest posterior mean of the other arms,
  ``z_i = |mu_i - c_i| / sigma_i``; ``tau`` the share of the budget left when the batch
  starts; ``q_i`` the arm's pulls in the batch so far over ``r``)::

      log KG*_i(H) + w1 z + w2 z tau + w3 log sigma + w4 tau log sigma
                   + w5 q + w6 q tau + w7 z^2,      H = round(h e^{w0}) >= 1,

  with ``KG*_i(H)`` the knowledge-gradient value of Frazier & Powell (2010) with
  look-ahead up to ``H`` pulls (:func:`agents.bayesian.knowledge_gradient.arm_value`)
  and ``h = min(pulls left, r x batches left)`` (pulls left without ``max_batches``).
  All weights zero is a KG* batch fill (it differs from ``kg_batch`` only in keeping the
  look-ahead ``h`` over the whole batch, where ``kg_batch`` lowers it by one per pull).
* **Fit** (:func:`fit_weights`): the cross-entropy method (Rubinstein & Kroese, *The
  Cross-Entropy Method*, Springer 2004) over the 8 weights, starting at zero, each
  candidate scored by the mean terminal value ``(1/k) sum of the top-k posterior means``
  over the same simulated episodes (common random numbers: every arm's reward stream is
  drawn once per episode). Averaged over the prior, that value is the expected sum of
  the true means of the posterior top k, so maximising it minimises the Bayes
  (prior-averaged) aggregate regret with a lower variance than the regret itself.

The answer is the posterior top k (Bayes-optimal for aggregate regret). The fitted
weights belong to the family they were fitted on; elsewhere the policy still fills
valid batches but is not tuned.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from agents import engine
from agents.bayesian.batch_knowledge_gradient import BatchKnowledgeGradient, as_request, fill
from agents.bayesian.beta_prior import check_beta_prior, posterior_into
from agents.bayesian.knowledge_gradient import TIE, _other_boundaries, arm_value

__all__ = [
    "DEFAULT_WEIGHTS",
    "N_WEIGHTS",
    "Fit",
    "LearnedBatch",
    "check_weights",
    "evaluate",
    "fit_weights",
    "train",
]

#: The number of weights of the score (module docstring).
N_WEIGHTS = 8
#: The shipped weights of 10 arms, Beta(5, 5), k = 3, b = 10, r = 5, 8 batches, seed 0.
DEFAULT_WEIGHTS: tuple[float, ...] = (
    -0.0463,
    0.2616,
    -0.5018,
    0.5186,
    0.1957,
    -0.3474,
    -2.9722,
    0.3933,
)
#: Added to KG* before its logarithm (KG* is 0 for an arm no outcome can move).
FLOOR = 1e-12


def check_weights(weights: Any) -> tuple[float, ...]:
    """``weights`` as :data:`N_WEIGHTS` finite floats, else a ``ValueError``."""
    try:
        values = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"weights={weights!r} must be {N_WEIGHTS} finite numbers") from None
    if len(values) != N_WEIGHTS or not all(math.isfinite(w) for w in values):
        raise ValueError(f"weights={list(weights)!r} must be {N_WEIGHTS} finite numbers")
    return values


@numba.njit(cache=True)
def score(a, b, c, horizon, tau, j, r, w):
    """The score of an arm of posterior Beta(a, b) (module docstring); ``j`` its pulls in
    the batch so far, ``w`` the weights."""
    look = max(1, int(horizon * math.exp(w[0]) + 0.5))
    value = arm_value(a, b, c, look, -np.inf)
    ab = a + b
    mu = a / ab
    log_sigma = 0.5 * math.log(mu * (1.0 - mu) / (ab + 1.0))
    z = abs(mu - c) / math.exp(log_sigma)
    q = j / r
    return (
        math.log(value + FLOOR)
        + w[1] * z
        + w[2] * z * tau
        + w[3] * log_sigma
        + w[4] * log_sigma * tau
        + w[5] * q
        + w[6] * q * tau
        + w[7] * z * z
    )


@numba.njit(cache=True)
def fill_scored(alpha, beta, k, size, horizon, tau, r, w, rng, reps, mu, c, val):
    """Fill one batch of ``size`` pulls into ``reps`` (int64[n], zeros on entry): the
    ``j``-th pull to the arm of largest score among those with fewer than ``r`` pulls in
    the batch (``r = -1``: no limit), scores within :data:`~agents.bayesian.
    knowledge_gradient.TIE` tied at random. ``alpha``, ``beta`` are overwritten with the
    fantasy posterior; ``mu``, ``c``, ``val`` are float64[n] scratch."""
    n = alpha.shape[0]
    _other_boundaries(alpha, beta, k, mu, c)  # the fantasy keeps every mean, so c too
    for i in range(n):
        val[i] = score(alpha[i], beta[i], c[i], horizon, tau, 0, r, w)
    for _ in range(size):
        best = -np.inf
        for i in range(n):
            if (r < 0 or reps[i] < r) and val[i] > best:
                best = val[i]
        tied = 0
        for i in range(n):
            if (r < 0 or reps[i] < r) and val[i] >= best - TIE:
                tied += 1
        pick = rng.integers(0, tied) if tied > 1 else 0
        arm = -1
        for i in range(n):
            if (r < 0 or reps[i] < r) and val[i] >= best - TIE:
                if pick == 0:
                    arm = i
                    break
                pick -= 1
        reps[arm] += 1
        alpha[arm] += mu[arm]
        beta[arm] += 1.0 - mu[arm]
        val[arm] = score(alpha[arm], beta[arm], c[arm], horizon, tau, reps[arm], r, w)


@numba.njit(cache=True)
def _batch_shape(n, r, b, left, budget, batches):
    """``(size, horizon, tau)`` of the next batch: its pulls, KG*'s look-ahead and the
    share of the budget left."""
    size = left
    for cap in (b, n * r if r >= 0 else -1):
        if cap >= 0 and cap < size:
            size = cap
    horizon = left
    if batches >= 0:
        horizon = min(horizon, (r if r >= 0 else left) * batches)
    return size, max(horizon, 1), left / budget


@numba.njit
def run(ctx, prm):
    """Batches filled by the fitted score (``prm = [a, b, w0, ..., w7]``) until the budget
    ends."""
    a, b, w = prm[0], prm[1], prm[2:]
    iv = ctx.iv
    n, k, r = iv[engine.N], iv[engine.K], iv[engine.R]
    alpha, beta = np.empty(n), np.empty(n)
    mu, c, val = np.empty(n), np.empty(n), np.empty(n)
    reps = np.zeros(n, dtype=np.int64)
    arms = np.empty(n, dtype=np.int64)
    times = np.empty(n, dtype=np.int64)
    while True:
        left = engine.pulls_left(ctx)
        size, horizon, tau = _batch_shape(
            n, r, iv[engine.B], left, iv[engine.BUDGET], engine.batches_left(ctx)
        )
        posterior_into(a, b, ctx.counts, ctx.means, alpha, beta)
        fill_scored(alpha, beta, k, size, horizon, tau, r, w, ctx.rng, reps, mu, c, val)
        m = as_request(reps, arms, times)
        if size == 1:
            yield arms[0]
        else:
            yield engine.request_pull(ctx, arms[:m], times[:m])


class LearnedBatch(BatchKnowledgeGradient):
    """Batches filled by a score fitted to the family (module docstring).

    Paper:
        The (b, r)-batch model: Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin
        Zhu, "Top arm identification in multi-armed bandits with batch arm pulls",
        AISTATS 2016. The score's first feature is KG* (Frazier, Powell & Dayanik, SIAM
        J. Control Optim. 47(5), 2008; Frazier & Powell, Decision Analysis 7(4), 2010);
        the batch is filled on the "kriging believer" fantasy of Ginsbourger, Le Riche &
        Carraro (2010, Sec. 3.2), as in ``kg_batch``; the weights are fitted by the
        cross-entropy method (Rubinstein & Kroese 2004) on episodes of the prior.

    Every batch holds ``min(b, pulls left, n r)`` pulls, at most ``r`` per arm: a valid
    batch, never projected. The answer is the posterior top k. Compiled (:func:`run`);
    a batch of ``b`` pulls costs ``n + b`` KG* evaluations.

    Args:
        weights: the score's :data:`N_WEIGHTS` weights (default :data:`DEFAULT_WEIGHTS`,
            fitted to 10 arms, Beta(5, 5), k = 3, b = 10, r = 5, 8 batches).
        a: the family's Beta prior's first parameter (default 5).
        b: its second parameter (default 5).
        seed: seeds tie-breaking.

    :meth:`from_fit` builds it from a :class:`Fit`. Setting: fixed budget (a pull
    budget, and ``max_batches`` if set); Bernoulli arms only.
    """

    name = "learned_batch"
    kernel = staticmethod(run)

    def __init__(
        self,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        a: float = 5.0,
        b: float = 5.0,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(a, b, seed=seed)
        self.weights = check_weights(weights)

    @classmethod
    def from_fit(cls, fit: Fit, *, seed: int | None = None) -> LearnedBatch:
        return cls(fit.weights, fit.a, fit.b, seed=seed)

    def params(self) -> np.ndarray:
        return np.concatenate([super().params(), np.asarray(self.weights)])

    def __repr__(self) -> str:
        return (
            f"LearnedBatch(weights={[round(w, 6) for w in self.weights]}, a={self.a}, "
            f"b={self.b}, seed={self.seed})"
        )


# ---------------------------------------------------------------- fitting


@numba.njit(cache=True)
def _episode(means, stream, k, b, r, batches, a, b0, w, teacher, rng, scratch):
    """One simulated episode (pull ``j`` of arm ``i`` succeeds iff ``stream[i, j] <
    means[i]``): returns ``(value, regret)``, the mean of the posterior top k's posterior
    means and the aggregate regret of the posterior top k. ``teacher``: play ``kg_batch``
    instead of the score."""
    n = means.shape[0]
    alpha, beta, mu, c, val, s, cnt, reps, arms, times, kg_scratch = scratch
    s[:] = 0.0
    cnt[:] = 0
    budget = b * batches
    left = budget
    for t in range(batches):
        size, horizon, tau = _batch_shape(n, r, b, left, budget, batches - t)
        for i in range(n):
            alpha[i] = a + s[i]
            beta[i] = b0 + cnt[i] - s[i]
        if teacher:
            m, _ = fill(alpha, beta, k, size, horizon, r, rng, reps, arms, times, kg_scratch)
            for q in range(m):
                reps[arms[q]] = times[q]
        else:
            fill_scored(alpha, beta, k, size, horizon, tau, r, w, rng, reps, mu, c, val)
        for i in range(n):
            for _ in range(reps[i]):
                s[i] += 1.0 if stream[i, cnt[i]] < means[i] else 0.0
                cnt[i] += 1
            reps[i] = 0
        left -= size
    for i in range(n):
        mu[i] = (a + s[i]) / (a + b0 + cnt[i])
    order = np.argsort(-mu)
    value, chosen = 0.0, 0.0
    for q in range(k):
        value += mu[order[q]]
        chosen += means[order[q]]
    best = np.sort(means)[n - k :].sum()
    return value / k, (best - chosen) / k


@numba.njit
def _evaluate(means, streams, k, b, r, batches, a, b0, w, teacher, rng):
    episodes, n = means.shape
    size = 1
    while size < 2 * n:
        size *= 2
    scratch = (
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        (
            np.empty(n),
            np.empty(n),
            np.empty(n),
            np.empty(size, dtype=np.int64),
            np.ones(n, dtype=np.int64),
        ),
    )
    out = np.empty((episodes, 2))
    for e in range(episodes):
        out[e, 0], out[e, 1] = _episode(
            means[e], streams[e], k, b, r, batches, a, b0, w, teacher, rng, scratch
        )
    return out


@dataclass(frozen=True)
class Family:
    """A fixed-budget batch family: ``n`` Bernoulli arms with means ~ Beta(a, b), top
    ``k``, ``batches`` batches of at most ``batch_size`` pulls, at most ``repeat_limit``
    per arm, a pull budget of ``batch_size x batches``."""

    n: int
    k: int
    batch_size: int
    repeat_limit: int
    batches: int
    a: float = 5.0
    b: float = 5.0

    def __post_init__(self) -> None:
        for name in ("n", "k", "batch_size", "repeat_limit", "batches"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        if self.k >= self.n:
            raise ValueError(f"k={self.k} must be below n={self.n}")
        check_beta_prior(self.a, self.b)

    def draw(self, episodes: int, seed: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``episodes`` instances of the family and every arm's reward stream (uniforms)."""
        rng = np.random.default_rng(list(seed))
        depth = min(self.batch_size, self.repeat_limit) * self.batches
        means = rng.beta(self.a, self.b, size=(episodes, self.n))
        return means, rng.random((episodes, self.n, depth))


def evaluate(
    family: Family,
    weights: Sequence[float] | None,
    means: np.ndarray,
    streams: np.ndarray,
    *,
    seed: int = 0,
) -> np.ndarray:
    """``(value, regret)`` per episode (rows) of the score with ``weights`` on the drawn
    episodes (:meth:`Family.draw`); ``weights=None`` plays ``kg_batch`` instead."""
    w = np.zeros(N_WEIGHTS) if weights is None else np.asarray(check_weights(weights))
    f = family
    return _evaluate(
        means,
        streams,
        f.k,
        f.batch_size,
        f.repeat_limit,
        f.batches,
        f.a,
        f.b,
        w,
        weights is None,
        np.random.default_rng(seed),
    )


def fit_weights(
    family: Family,
    means: np.ndarray,
    streams: np.ndarray,
    *,
    seed: int,
    iterations: int = 25,
    population: int = 24,
    elite: int = 6,
    spread: float = 0.5,
    verbose: bool = False,
) -> tuple[np.ndarray, list[float]]:
    """The cross-entropy method over the weights (module docstring): a Gaussian of mean 0
    and standard deviation ``spread`` per weight; each iteration scores ``population``
    candidates (the first is the current mean) by their mean value on the episodes and
    refits the Gaussian to the ``elite`` best (standard deviations at least 0.02).

    Returns the final mean and the training value of the mean at every iteration (the
    first: all weights zero)."""
    if not 1 <= elite < population:
        raise ValueError(f"elite={elite} must be in [1, population={population})")
    rng = np.random.default_rng([seed, 2])
    mean = np.zeros(N_WEIGHTS)
    sd = np.full(N_WEIGHTS, float(spread))
    history = []
    for it in range(iterations):
        cands = mean + sd * rng.standard_normal((population, N_WEIGHTS))
        cands[0] = mean
        values = np.array([evaluate(family, w, means, streams)[:, 0].mean() for w in cands])
        history.append(float(values[0]))
        best = np.argsort(-values, kind="stable")[:elite]
        mean = cands[best].mean(axis=0)
        sd = np.maximum(cands[best].std(axis=0), 0.02)
        if verbose:
            print(f"iteration {it}: mean's value {values[0]:.6f}, best {values[best[0]]:.6f}")
    return mean, history


@dataclass(frozen=True)
class Fit:
    """Fitted weights and how they were fitted (``fit``: seed, episodes, CPU seconds,
    training and validation values)."""

    family: Family
    weights: tuple[float, ...]
    fit: dict[str, Any] = field(default_factory=dict)

    @property
    def a(self) -> float:
        return self.family.a

    @property
    def b(self) -> float:
        return self.family.b


def train(
    family: Family,
    *,
    seed: int,
    episodes: int = 5000,
    validation: int = 5000,
    iterations: int = 25,
    population: int = 24,
    elite: int = 6,
    verbose: bool = False,
) -> Fit:
    """Fit the weights on ``episodes`` simulated episodes (seeded by ``seed``) and score
    the fit, all-zero weights and ``kg_batch`` on ``validation`` other episodes (paired:
    the same instances and reward streams). ``fit`` records the CPU seconds."""
    start = time.process_time()
    means, streams = family.draw(episodes, (seed, 0))
    weights, history = fit_weights(
        family,
        means,
        streams,
        seed=seed,
        iterations=iterations,
        population=population,
        elite=elite,
        verbose=verbose,
    )
    weights = np.round(weights, 4)
    cpu = time.process_time() - start
    report: dict[str, Any] = {
        "seed": seed,
        "episodes": episodes,
        "iterations": iterations,
        "population": population,
        "elite": elite,
        "train_value": [round(v, 6) for v in history],
        "cpu_seconds": round(cpu, 1),
    }
    if validation:
        vmeans, vstreams = family.draw(validation, (seed, 1))
        fitted = evaluate(family, weights, vmeans, vstreams)
        for name, w in (("zero", np.zeros(N_WEIGHTS)), ("kg_batch", None)):
            other = evaluate(family, w, vmeans, vstreams)
            diff = fitted[:, 0] - other[:, 0]
            report[f"validation_gain_over_{name}"] = [
                round(float(diff.mean()), 6),
                round(float(diff.std(ddof=1) / math.sqrt(validation)), 6),
            ]
        report["validation"] = validation
        report["validation_regret"] = round(float(fitted[:, 1].mean()), 6)
    return Fit(family, tuple(float(w) for w in weights), report)
