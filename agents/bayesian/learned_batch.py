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
valid batches but is not tuned, and :class:`LearnedBatch` warns so (a ``UserWarning``
naming the family and :data:`ZERO_SHOT`, agents tuned to no family).
:class:`FamilyGuard` and :func:`warn_off_family` are shared with the other
family-fitted agents (:mod:`agents.bayesian.learned_stop`,
:class:`agents.learned.adapter.PolicyAgent`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from agents import engine
from agents.bayesian.batch_knowledge_gradient import BatchKnowledgeGradient, as_request, fill
from agents.bayesian.beta_prior import check_beta_prior, posterior_into, prior_of
from agents.bayesian.knowledge_gradient import TIE, _other_boundaries, arm_value
from bandit_envs.problem import Problem

__all__ = [
    "DEFAULT_FAMILY",
    "DEFAULT_WEIGHTS",
    "N_WEIGHTS",
    "ZERO_SHOT",
    "field_differences",
    "Family",
    "FamilyGuard",
    "Fit",
    "LearnedBatch",
    "check_weights",
    "evaluate",
    "fit_weights",
    "prior_differences",
    "train",
    "warn_off_family",
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

    def describe(self) -> str:
        """The family in words (an off-family warning names it)."""
        return (
            f"{self.n} arms, k = {self.k}, b = {self.batch_size}, r = {self.repeat_limit}, "
            f"{self.batches} batches, budget {self.batch_size * self.batches}, Bernoulli means "
            f"~ Beta({self.a:g}, {self.b:g}), aggregate regret"
        )

    def differences(
        self, problem: Problem, prior: tuple[float, float], instance: Any = None
    ) -> list[str]:
        """How ``problem``, the agent's ``prior`` and the env's ``instance`` (``None``: not
        seen) are off the family (empty: on it)."""
        out = field_differences(
            (
                ("n_arms", problem.n_arms, self.n),
                ("k", problem.k, self.k),
                ("batch_size", problem.batch_size, self.batch_size),
                ("repeat_limit", problem.repeat_limit, self.repeat_limit),
                ("max_batches", problem.max_batches, self.batches),
                ("budget", problem.budget, self.batch_size * self.batches),
                ("objective", problem.objective, "aggregate_regret"),
            )
        )
        return out + prior_differences((self.a, self.b), prior, instance)

    @classmethod
    def of(cls, family: Family | Mapping[str, Any], a: float, b: float) -> Family:
        """``family`` as a :class:`Family`; a mapping without ``a``, ``b`` takes these."""
        if isinstance(family, cls):
            return family
        if not isinstance(family, Mapping):
            raise ValueError(f"family={family!r} must be a Family or a mapping of its fields")
        try:
            return cls(**{"a": a, "b": b, **family})
        except TypeError as err:
            raise ValueError(f"family={dict(family)!r}: {err}") from None


#: The family of :data:`DEFAULT_WEIGHTS`.
DEFAULT_FAMILY = Family(n=10, k=3, batch_size=10, repeat_limit=5, batches=8)
#: What an off-family warning points to: agents tuned to no family.
ZERO_SHOT = (
    'an agent tuned to no family: agents.make("zero_shot") (fitted once for every instance: '
    'any n, k, batch model and reward law; agents.make("zero_shot", delta=...) in fixed '
    "confidence)"
)


def _prior_text(prior: tuple[float, float]) -> str:
    return f"Beta({prior[0]:g}, {prior[1]:g})"


def field_differences(fields: Sequence[tuple[str, Any, Any]]) -> list[str]:
    """``name=got (fitted: want)`` for each ``(name, got, want)`` of ``fields`` off the
    family (``got != want``)."""
    return [f"{name}={got!r} (fitted: {want!r})" for name, got, want in fields if got != want]


def prior_differences(
    fitted: tuple[float, float], prior: tuple[float, float], instance: Any = None
) -> list[str]:
    """How an agent's Beta ``prior`` and the env's ``instance`` (``None``: not seen) are
    off the prior ``fitted`` its parameters were fitted to (empty: on it). An instance
    whose means are drawn from no known Beta prior (fixed means, another random family;
    :func:`~agents.bayesian.beta_prior.prior_of`) is off it."""
    out = []
    if not all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(prior, fitted, strict=True)):
        out.append(f"the agent's prior {_prior_text(prior)} (fitted: {_prior_text(fitted)})")
    if instance is not None:
        try:
            drawn: tuple[float, float] | None = prior_of(instance)
        except (ValueError, KeyError, AttributeError):
            drawn = None
        if drawn is None:
            name = getattr(instance, "name", type(instance).__name__)
            out.append(
                f"instance {name!r}, whose means are drawn from no known Beta prior "
                f"(fitted: means ~ {_prior_text(fitted)})"
            )
        elif not all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(drawn, fitted, strict=True)):
            out.append(f"means ~ {_prior_text(drawn)} (fitted: {_prior_text(fitted)})")
    return out


def warn_off_family(
    agent: Any, family: str, differences: Sequence[str], *, stacklevel: int = 2
) -> None:
    """Warn (``UserWarning``) that ``agent``, fitted to ``family`` (in words), plays off it
    (``differences``, empty: on it, no warning), naming the agent for every instance;
    once per agent object and distinct ``differences`` (a benchmark's thousands of
    episodes of one point warn once)."""
    if not differences:
        return
    key = tuple(differences)
    warned: set[tuple[str, ...]] | None = getattr(agent, "_off_family_warned", None)
    if warned is None:
        warned = set()
        agent._off_family_warned = warned
    if key in warned:
        return
    warned.add(key)
    warnings.warn(
        f"agent {agent.name!r} was fitted to one family ({family}) and this env is off it: "
        f"{'; '.join(differences)}. Off its family its fitted parameters are not tuned and "
        f"carry no guarantee: play {ZERO_SHOT}",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


class FamilyGuard:
    """What the family-fitted agents share: the env's instance seen before ``reset``.

    :func:`agents.run_episode` calls :meth:`see_instance` with the env's instance before
    ``reset``, so that ``reset`` can check the prior the instance draws its means from
    (the problem does not show it); ``reset`` forgets it. An agent reset by hand, without
    :meth:`see_instance`, checks what the problem shows.
    """

    _seen_instance: Any = None

    def see_instance(self, instance: Any) -> None:
        """Show the next ``reset`` the env's instance (the family of its means)."""
        self._seen_instance = instance

    def _take_instance(self) -> Any:
        """The instance seen since the last reset (``None``: none), forgotten."""
        seen, self._seen_instance = self._seen_instance, None
        return seen


class LearnedBatch(FamilyGuard, BatchKnowledgeGradient):
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
        family: the :class:`Family` the weights were fitted to, or a mapping of its
            fields (``a``, ``b`` default to the agent's); ``None``: the default weights'
            family (:data:`DEFAULT_FAMILY`) for the default weights, unknown for others.
        seed: seeds tie-breaking.

    Off its family: the weights are tuned to one family only. ``reset`` warns
    (``UserWarning``, once per agent and distinct mismatch) when the problem is off it
    (``n_arms``, ``k``, ``batch_size``, ``repeat_limit``, ``max_batches``, ``budget``,
    ``objective``), when the agent's prior is not the family's, and, played by
    :func:`agents.run_episode` (which shows it the env's instance), when the instance's
    means are not drawn from the family's prior; the warning names the family and
    :data:`ZERO_SHOT`, agents tuned to no family. Reset by hand it checks
    what the problem shows. Weights of unknown family (no ``family``, weights other than
    the default) are not checked.

    :meth:`from_fit` builds it from a :class:`Fit` (with its family). Setting: fixed
    budget (a pull budget, and ``max_batches`` if set); Bernoulli arms only.
    """

    name = "learned_batch"
    kernel = staticmethod(run)

    def __init__(
        self,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        a: float = 5.0,
        b: float = 5.0,
        *,
        family: Family | Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(a, b, seed=seed)
        self.weights = check_weights(weights)
        if family is None and self.weights == DEFAULT_WEIGHTS:
            family = DEFAULT_FAMILY
        #: The family the weights were fitted to (``None``: unknown, not checked).
        self.family = None if family is None else Family.of(family, self.a, self.b)

    @classmethod
    def from_fit(cls, fit: Fit, *, seed: int | None = None) -> LearnedBatch:
        return cls(fit.weights, fit.a, fit.b, family=fit.family, seed=seed)

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode; warn if it is off the weights' family (class docstring)."""
        seen = self._take_instance()
        super().reset(problem, seed=seed)
        if self.family is not None:
            differences = self.family.differences(problem, (self.a, self.b), seen)
            warn_off_family(self, self.family.describe(), differences, stacklevel=2)

    def params(self) -> np.ndarray:
        return np.concatenate([super().params(), np.asarray(self.weights)])

    def __repr__(self) -> str:
        return (
            f"LearnedBatch(weights={[round(w, 6) for w in self.weights]}, a={self.a}, "
            f"b={self.b}, family={self.family!r}, seed={self.seed})"
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
