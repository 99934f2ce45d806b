"""KL-LUCB (Kaufmann & Kalyanakrishnan 2013) and UGapE (Gabillon et al. 2012).

* the KL bounds are the bisection of ``T d(mean, q) <= beta`` and the exploration rates
  are the papers' formulas;
* the compiled kernels play exactly the episodes of literal Python loops that recompute
  every bound every round (KL-LUCB's lazy epochs, UGapE's quickselects);
* error rates: at most ``delta`` (KL-LUCB, UGapEc) and small on a budget (UGapEb), by
  exact binomial tests;
* bad parameters raise ``ValueError`` naming the value and the rule.

Small instances only: the whole file runs in a few seconds.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs
from agents.base import Pull, PullOne, ScriptedAgent
from agents.engine import confidence
from agents.lucb import layout
from agents.lucb import ugape as ug
from agents.lucb.family import LUCBFamily
from agents.lucb.kl_lucb import KLLUCB
from agents.lucb.ugape import UGapEb, UGapEc
from bandit_envs import divergences

# KL-LUCB's compile: the LUCB family's kernel; the UGapE tests that play episodes join
# UGapE's group (tests/_kernel_groups.py)
pytestmark = pytest.mark.kernel_group("kl_lucb")

EASY = [0.9, 0.8, 0.5, 0.4, 0.3, 0.2]


def make_env(instance, k: int, **kw) -> gym.Env:
    kw.setdefault("batch_size", 1)
    kw.setdefault("setting", "fixed_confidence")
    return gym.make("TopK-Batch-v0", instance=instance, k=k, answer="agent", **kw)


def _row(res: agents.EpisodeResult) -> dict:
    return res.as_row() | {"wall_time": 0}


# ------------------------------------------------------------ KL bounds, rates
def _bisect_upper(p: float, level: float) -> float:
    lo, hi = p, 1.0
    if divergences.kl_bernoulli(p, hi) <= level:
        return 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if divergences.kl_bernoulli(p, mid) > level:
            hi = mid
        else:
            lo = mid
    return lo


def _bernoulli_kl(p: float, q: float) -> float:
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


@pytest.mark.parametrize("p", [0.0, 0.05, 0.3, 0.5, 0.77, 1.0])
@pytest.mark.parametrize("level", [1e-3, 0.1, 0.9, 5.0])
def test_kl_bounds_are_the_bisection_of_the_divergence(p, level):
    bern = divergences.BERNOULLI
    up = divergences.kl_upper(bern, p, level, 0.5)
    lo = divergences.kl_lower(bern, p, level, 0.5)
    assert up == pytest.approx(_bisect_upper(p, level), abs=1e-12)
    assert lo == pytest.approx(1.0 - _bisect_upper(1.0 - p, level), abs=1e-12)
    assert lo <= p <= up
    for q in (up, lo):  # on the boundary: T d = beta there (or the end of [0, 1])
        if 0.0 < q < 1.0 and 0.0 < p < 1.0:
            assert _bernoulli_kl(p, q) == pytest.approx(level, rel=1e-6)
    sigma = 0.7  # Gaussian: p +- sigma sqrt(2 level), d = (p - q)^2 / (2 sigma^2)
    gu = divergences.kl_upper(divergences.GAUSSIAN, p, level, sigma)
    gl = divergences.kl_lower(divergences.GAUSSIAN, p, level, sigma)
    assert (gu - p) ** 2 / (2 * sigma**2) == pytest.approx(level)
    assert gu - p == pytest.approx(p - gl)


def test_kl_rates_are_the_papers_formulas():
    n, delta, k1, alpha = 20, 0.05, 405.5, 1.1
    for t in (1, 2, 17, 1000):
        x = math.log(k1 * n * t**alpha / delta)
        assert confidence.kl_rate(float(t), n, delta, k1, alpha, confidence.KL_RATE_THEOREM3) == (
            pytest.approx(x + math.log(x), rel=1e-13)
        )
        assert confidence.kl_rate(float(t), n, delta, k1, alpha, confidence.KL_RATE_PRACTICAL) == (
            pytest.approx(math.log((1 + math.log(t)) / delta), rel=1e-13)
        )
    # Theorem 3's condition on k1 at alpha = 1.1: 405.5 is just above it
    e = math.e
    assert 2 * e + 1 + e / 0.1 + (e + 1) / 0.01 < 405.5


# ------------------------------------------------- literal loops (exactness)
class _Literal(ScriptedAgent):
    """A compiled member's algorithm literally in Python, every bound recomputed every round."""

    kernel = None
    episode_kernel = None

    def __init__(self, compiled: ScriptedAgent) -> None:
        super().__init__(seed=None)
        self.member = compiled
        self.best: np.ndarray | None = None

    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        self.member.problem = problem
        self.best = None

    def current_answer(self) -> np.ndarray:
        return self.best if self.best is not None else super().current_answer()


class _KLLiteral(_Literal):
    def _run(self):
        p, rng = self.problem, self.rng
        n, k = p.n_arms, p.k
        prm = self.member.params()
        fam = int(prm[layout.P_FAMILY])
        yield Pull.each(np.arange(n), 1)
        tb = np.array([rng.random() for _ in range(n)])
        rounds = 1
        while True:
            mu, t = self.means.copy(), self.counts.copy()
            high = np.zeros(n, dtype=bool)
            high[np.lexsort((tb, mu))[n - k :]] = True
            rate = int(prm[layout.P_RATE])
            beta = confidence.kl_rate(
                float(rounds), n, prm[layout.P_DELTA], prm[layout.P_K1], prm[layout.P_ALPHA], rate
            )
            levels = [beta / float(t[i]) for i in range(n)]
            lcb = np.array([divergences.kl_lower(fam, mu[i], levels[i], p.sigma) for i in range(n)])
            ucb = np.array([divergences.kl_upper(fam, mu[i], levels[i], p.sigma) for i in range(n)])
            hi, lo = np.flatnonzero(high), np.flatnonzero(~high)
            h = hi[np.lexsort((tb[hi], lcb[hi]))[0]]
            l_ = lo[np.lexsort((tb[lo], -ucb[lo]))[0]]
            first = rounds == 1 and prm[layout.P_FIRST_ROUND] != 0.0  # KK13 Alg. 2: B(1) = inf
            if not first and ucb[l_] - lcb[h] < prm[layout.P_STOP_EPS]:
                return hi
            if p.batch_size == 1:
                first = h
                if t[l_] < t[h] or (t[l_] == t[h] and agents.engine.below(rng, 2) == 1):
                    first = l_
                yield PullOne(int(first))
                yield PullOne(int(l_ if first == h else h))
            else:
                yield Pull(np.array([h, l_], dtype=np.int64), np.ones(2, dtype=np.int64))
            for i in (h, l_):
                if self.counts[i] != t[i]:
                    tb[i] = rng.random()
            rounds += 1


class _UGapELiteral(_Literal):
    def _run(self):
        p, rng = self.problem, self.rng
        n, m = p.n_arms, p.k
        prm = self.member.params()
        conf = prm[ug.P_MODE] == ug.MODE_CONFIDENCE
        b = 2.0 * p.sigma
        yield Pull.each(np.arange(n), 1)
        tb = np.array([rng.random() for _ in range(n)])
        t, best = n + 1, np.inf
        while True:
            if conf:
                rate = math.log(4.0 * n * float(t - 1) ** 3 / prm[ug.P_DELTA])
                scale = b * math.sqrt(prm[ug.P_C] * rate)
            else:
                scale = b * math.sqrt(prm[ug.P_A])
            w = np.array([scale / math.sqrt(float(c)) for c in self.counts])
            upper, lower = self.means + w, self.means - w
            by_u = np.lexsort((tb, -upper))
            top = set(by_u[:m].tolist())
            u_m, u_m1 = upper[by_u[m - 1]], upper[by_u[m]]
            gaps = np.array([(u_m1 if i in top else u_m) - lower[i] for i in range(n)])
            big_j = np.lexsort((tb, gaps))[:m]
            rest = np.setdiff1d(np.arange(n), big_j)
            ut = rest[np.lexsort((tb[rest], -upper[rest]))[0]]
            lt = big_j[np.lexsort((tb[big_j], lower[big_j]))[0]]
            bj = gaps[big_j].max()
            if conf or bj <= best:
                best, self.best = bj, np.sort(big_j)
            if conf and bj < prm[ug.P_EPS]:
                return big_j
            if w[ut] != w[lt]:
                arm = ut if w[ut] > w[lt] else lt
            else:
                arm = ut if agents.engine.below(rng, 2) == 0 else lt
            yield PullOne(int(arm))
            tb[arm] = rng.random()
            t += 1


def _same_episode(
    env: gym.Env, compiled: ScriptedAgent, literal: _Literal, seed: int
) -> agents.EpisodeResult:
    """The fast path of ``compiled`` and the literal loop play the same episode."""
    fast = agents.run_episode(env, compiled, seed=seed)
    state = (env.unwrapped._counts.copy(), env.unwrapped._sums.copy())
    slow = agents.run_episode(env, literal, seed=seed)
    assert _row(fast) == _row(slow)
    assert np.array_equal(state[0], env.unwrapped._counts)
    assert np.array_equal(state[1], env.unwrapped._sums)
    assert compiled.rng.random() == literal.rng.random()  # the same draws
    return fast


@pytest.mark.parametrize(
    "instance, k, params, extra",
    [
        (EASY, 2, {"rate": "practical"}, {}),
        (EASY, 2, {"rate": "practical"}, {"batch_size": 4, "repeat_limit": 1}),
        ("chen2017-twogroup", 2, {"rate": "practical", "epsilon": 0.05}, {"n_arms": 10}),
        ("jiang2017-1-sparse", 2, {"rate": "practical"}, {"n_arms": 8}),
        ("jiang2017-1-sparse", 4, {}, {"n_arms": 8, "setting": "fixed_budget", "budget": 300}),
        # Bernoulli, many arms sharing (mean, count): long walks, skipped ties
        ("zhou2014-two-level", 4, {}, {"n_arms": 40, "setting": "fixed_budget", "budget": 1000}),
    ],
)
def test_kl_lucb_kernel_equals_the_literal_loop(instance, k, params, extra):
    """The lazy epochs and best-first walks decide as recomputing every bound would."""
    env = make_env(instance, k, **extra)
    for seed in (1, 2):
        res = _same_episode(env, KLLUCB(**params), _KLLiteral(KLLUCB(**params)), seed)
        assert res.pulls > 6 * env.unwrapped.problem.n_arms  # many rounds, several epochs


@pytest.mark.parametrize(
    "cls, params, extra",
    [
        (UGapEc, {"delta": 0.2}, {"max_batches": 700}),
        (UGapEc, {"epsilon": 0.1, "delta": 0.2}, {"batch_size": 3, "repeat_limit": 2}),
        (UGapEc, {}, {"setting": "fixed_budget", "budget": 200}),
        (UGapEb, {}, {"setting": "fixed_budget", "budget": 200}),
        (UGapEb, {"a": 0.05}, {"setting": "fixed_budget", "budget": 150, "batch_size": None}),
    ],
)
def test_ugape_kernel_equals_the_literal_loop(cls, params, extra):
    """The quickselects give J(t), u_t, l_t and the answer of the literal sorting loop."""
    for instance, k, seeds in ((EASY, 2, (3, 4)), ("chen2017-twogroup", 3, (3,))):
        env = make_env(instance, k, **({"n_arms": 7} if isinstance(instance, str) else {}), **extra)
        for seed in seeds:
            _same_episode(env, cls(**params), _UGapELiteral(cls(**params)), seed)


@pytest.mark.parametrize("rate", ["theorem3", "practical"])
def test_kl_lucb_plays_the_first_round_before_stopping(rate):
    """Kaufmann & Kalyanakrishnan (2013) Algorithm 2 starts with ``B(1) = inf``.

    With gaps far wider than ``sigma`` the stop rule already holds after the initial
    pulls (``UCB_l - LCB_h < 0`` at ``t = 1``); the paper still plays round 1 (pulls
    ``u_1`` and ``l_1``) and stops at ``t = 2``: ``n + 2`` pulls, not ``n``.
    """
    inst = bandit_envs.instances.from_means(
        [1.0, 0.0, 0.0], k=1, distribution="gaussian", sigma=0.1
    )
    env = make_env(inst, 1)
    fast = agents.run_episode(env, KLLUCB(delta=0.1, rate=rate), seed=0)
    assert fast.pulls == 3 + 2
    assert not fast.misidentified
    # the rule held at t = 1 already: checked from the initial pulls on, it stops there
    assert agents.run_episode(env, _NoFirstRound(delta=0.1, rate=rate), seed=0).pulls == 3


class _NoFirstRound(KLLUCB):
    """KL-LUCB with the stop rule checked at ``t = 1`` too (the rule before the fix)."""

    def params(self) -> np.ndarray:
        prm = super().params()
        prm[layout.P_FIRST_ROUND] = 0.0
        return prm


# ------------------------------------------------------------ error rates
def test_kl_lucb_error_rate_at_most_delta(rate_at_most):
    """Theorem 3's rate: (0, k, delta)-PAC. delta = 0.2, 40 runs, Bernoulli and Gaussian."""
    delta, runs = 0.2, 40
    for instance in ("jiang2017-1-sparse", "chen2017-twogroup"):
        env = make_env(instance, 2, n_arms=6)
        failures = 0
        for s in range(runs):
            res = agents.run_episode(env, KLLUCB(delta=delta), seed=100 + s)
            assert res.terminated and not res.truncated
            failures += res.misidentified
        rate_at_most(failures, runs, delta)


def test_kl_lucb_beats_lucb1_on_bernoulli_means_near_one():
    """KL bounds are far tighter than Hoeffding's near the ends of [0, 1] (KK13 Sec. 5)."""
    env = make_env([0.98, 0.95, 0.8, 0.75, 0.7], 2)
    kl = [agents.run_episode(env, KLLUCB(delta=0.1), seed=s).pulls for s in range(5)]
    lucb = [agents.run_episode(env, agents.make("lucb", delta=0.1), seed=s).pulls for s in range(5)]
    assert np.median(kl) < 0.5 * np.median(lucb)


@pytest.mark.kernel_group("ugape_c")
def test_ugape_c_stops_and_is_correct_on_an_easy_instance(rate_at_most):
    delta, runs = 0.1, 30
    env = make_env(EASY, 2)
    failures = 0
    for s in range(runs):
        res = agents.run_episode(env, UGapEc(delta=delta), seed=200 + s)
        assert res.terminated and not res.truncated
        failures += res.misidentified
    rate_at_most(failures, runs, delta)


@pytest.mark.kernel_group("ugape_c")
def test_ugape_b_answer_on_a_budget(rate_at_most):
    """Budget 300 on EASY (H_0 = 164): the default a errs rarely (< 5%), exact binomial test."""
    env = make_env(EASY, 2, setting="fixed_budget", budget=300)
    runs = 100
    failures = sum(
        agents.run_episode(env, UGapEb(), seed=300 + s).misidentified for s in range(runs)
    )
    rate_at_most(failures, runs, 0.05)


def test_ugape_b_exploration_parameter():
    env = make_env(EASY, 2, setting="fixed_budget", budget=300)
    problem = env.unwrapped.problem
    agent = UGapEb()
    agent.reset(problem)
    assert agent.exploration() == pytest.approx(0.5 * math.log(2 * 6 * 300))
    agent = UGapEb(h_eps=164.0)
    agent.reset(problem)
    assert agent.exploration() == pytest.approx((300 - 6) / (4 * 164.0))
    agent = UGapEb(a=2.5)
    agent.reset(problem)
    assert agent.params()[ug.P_A] == 2.5


# ------------------------------------------------------------------ registry, bad input
def test_registry():
    for name, cls in (("kl_lucb", KLLUCB), ("ugape_b", UGapEb), ("ugape_c", UGapEc)):
        agent = agents.make(name)
        assert type(agent) is cls and agent.name == name
    assert agents.make("ugape_b").settings == {"fixed_budget"}
    assert issubclass(KLLUCB, LUCBFamily)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("kl_lucb", {"delta": 0.0}, "delta"),
        ("kl_lucb", {"epsilon": -0.1}, "epsilon=-0.1 must be >= 0"),
        ("kl_lucb", {"rate": "fast"}, "rate='fast' must be one of"),
        ("kl_lucb", {"alpha": 1.0}, "alpha=1.0 must be > 1"),
        ("kl_lucb", {"k1": 0.0}, "k1=0.0 must be > 0"),
        ("ugape_b", {"a": 0.0}, "a=0.0 must be a finite number > 0"),
        ("ugape_b", {"h_eps": -1.0}, "h_eps=-1.0 must be"),
        ("ugape_b", {"a": 1.0, "h_eps": 2.0}, "not both"),
        ("ugape_c", {"delta": 1.5}, "delta"),
        ("ugape_c", {"c": 0}, "c=0 must be"),
        ("ugape_c", {"epsilon": float("nan")}, "epsilon=nan must be"),
    ],
)
def test_bad_params_raise(name, params, match):
    with pytest.raises(ValueError, match=match):
        agents.make(name, **params)


def test_kl_lucb_refuses_rewards_outside_unit_interval():
    probs = np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])
    inst = bandit_envs.instances.from_categorical(probs, np.array([0.0, 2.0]), k=1)
    env = make_env(inst, 1)
    with pytest.raises(ValueError, match=r"rewards in \[0.0, 2.0\] must lie in \[0, 1\]"):
        agents.run_episode(env, KLLUCB(), seed=0)


def test_ugape_b_refuses_fixed_confidence():
    env = make_env(EASY, 2)
    with pytest.raises(ValueError, match="cannot play setting='fixed_confidence'"):
        agents.run_episode(env, UGapEb(), seed=0)
