"""Tests of the LUCB family: lil'RandLUCB, lil'CLUCB; LUCB, lil'LUCB, LUCB++, lil'UCB."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents import engine
from agents.base import Pull, PullOne, ScriptedAgent
from agents.engine import confidence
from agents.lucb import layout
from agents.lucb.family import LilFamily, LUCBFamily
from agents.lucb.lil import LilCLUCB, LilLUCB, LilRandLUCB, LUCBPlusPlus
from agents.lucb.lucb import LUCB

# one compile of the family's kernel (tests/_kernel_groups.py)
pytestmark = pytest.mark.kernel_group("lucb")

LIL_NAMES = ("lil_rand_lucb", "lil_clucb", "lil_lucb", "lucb_pp")
TOPK_CONFIGS = [(name, {"variant": v}) for name in LIL_NAMES for v in ("faithful", "heuristic")] + [
    ("lucb", {})
]
K1_CONFIGS = [("lil_ucb", {"variant": "faithful"}), ("lil_ucb", {"variant": "heuristic"})]
ALL_CONFIGS = TOPK_CONFIGS + K1_CONFIGS
CLASSES = {
    "lil_rand_lucb": "LilRandLUCB",
    "lil_clucb": "LilCLUCB",
    "lucb": "LUCB",
    "lil_lucb": "LilLUCB",
    "lucb_pp": "LUCBPlusPlus",
    "lil_ucb": "LilUCB",
}


def _id(cfg: tuple[str, dict]) -> str:
    name, params = cfg
    return name + ("-" + params["variant"] if "variant" in params else "")


def make_env(instance: str, n: int, k: int, **kw) -> gym.Env:
    kw.setdefault("batch_size", 1)
    kw.setdefault("setting", "fixed_confidence")
    return gym.make("TopK-Batch-v0", instance=instance, n_arms=n, k=k, answer="agent", **kw)


# ------------------------------------------------------------------ registry
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_registry_builds_each_agent(name):
    agent = agents.make(name)
    assert type(agent).__name__ == CLASSES[name]
    assert agent.name == name
    assert agent.delta == 0.01  # jiang2017 Sec. 5: nu = 0.01
    assert set(agent.settings) == {"fixed_budget", "fixed_confidence"}


# ---------------------------------------------------------------- bad params
@pytest.mark.parametrize(
    "name, params",
    [
        *[(n, {"delta": d}) for n in CLASSES for d in (0.0, 1.0, -0.1, 1.5)],
        *[(n, {"variant": "bogus"}) for n in (*LIL_NAMES, "lil_ucb")],
        *[
            (n, {"variant": "faithful", "eps": e})
            for n in (*LIL_NAMES, "lil_ucb")
            for e in (0.0, 1.0, -0.5)
        ],
        *[
            (n, {"variant": "heuristic", "eps": e})
            for n in (*LIL_NAMES, "lil_ucb")
            for e in (1.0, -0.1)
        ],
        ("lucb", {"epsilon": -0.1}),
        ("lucb", {"k1": 0.5}),
        ("lil_ucb", {"beta": 0.0}),
        ("lil_ucb", {"lam": -1.0}),
        ("lil_rand_lucb", {"bogus": 1}),
    ],
)
def test_bad_params_raise(name, params):
    with pytest.raises(ValueError):
        agents.make(name, **params)


def test_lil_ucb_raises_for_k_above_one():
    env = make_env("jiang2017-1-sparse", 10, 2)
    with pytest.raises(ValueError, match="k=1"):
        agents.run_episode(env, agents.make("lil_ucb"), seed=0)


def test_faithful_lemma_condition_is_checked():
    # nu and eps near 1 on 2 arms: w = delta/N reaches log(1+eps)/e, Lemma 2.1 does not apply
    env = make_env("jiang2017-1-sparse", 2, 1)
    with pytest.raises(ValueError, match="Lemma 2.1"):
        agents.run_episode(env, agents.make("lil_clucb", delta=0.999, eps=0.99), seed=0)
    agents.run_episode(env, agents.make("lil_clucb", delta=0.999, eps=0.5), seed=0)


# --------------------------------------------------------------- confidence
def test_lil_c_eps_formula():
    eps = 0.01
    expected = (2 + eps) / eps * (1 / math.log(1 + eps)) ** (1 + eps)
    assert confidence.lil_c_eps(eps) == pytest.approx(expected)
    with pytest.raises(ValueError):
        confidence.lil_c_eps(0.0)


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5])
def test_faithful_delta_meets_each_bound_exactly(eps):
    nu, n = 0.01, 1000
    c = confidence.lil_c_eps(eps)
    d = confidence.lil_faithful_delta(nu, eps, "theorem_3_1")
    assert c * d == pytest.approx(nu)
    d = confidence.lil_faithful_delta(nu, eps, "union", n)
    assert c * d ** (1 + eps) / n**eps == pytest.approx(nu)
    d = confidence.lil_faithful_delta(nu, eps, "lil_ucb")
    assert 4 * math.sqrt(c * d) + 4 * c * d == pytest.approx(nu)
    with pytest.raises(ValueError):
        confidence.lil_faithful_delta(nu, eps, "union")
    with pytest.raises(ValueError):
        confidence.lil_faithful_delta(nu, eps, "bogus")


def test_kernel_radii_match_the_numpy_formulas():
    """The compiled radii of the LUCB family equal :func:`lil_bound` and :func:`lucb_beta`."""
    w, eps, sigma = 1e-6, 0.01, 0.5
    for t in (1, 2, 7, 1023, 1024, 5000, (1 << 20) + 3):
        want = float(confidence.lil_bound(t, w, eps, sigma))
        assert confidence.lil_width(float(t), w, eps, sigma) == pytest.approx(want, rel=1e-12)
        for rnd in (1, 37, 10**5):
            rate = confidence.lucb_rate(float(rnd), 50, 0.01, 1.25)
            beta = math.sqrt(rate) * confidence.lucb_coef(float(t), sigma)
            want = float(confidence.lucb_beta(t, rnd, 50, 0.01, sigma, 1.25))
            assert beta == pytest.approx(want, rel=1e-12)


def test_variant_parameters():
    heur = agents.make("lil_rand_lucb", delta=0.05, variant="heuristic")
    assert heur.lil_params(100) == (0.0, 0.05)
    faith = agents.make("lil_rand_lucb", delta=0.05)
    eps, lil_delta = faith.lil_params(100)
    assert eps == 0.01 and confidence.lil_c_eps(0.01) * lil_delta == pytest.approx(0.05)
    clucb = agents.make("lil_clucb", delta=0.05)
    eps, lil_delta = clucb.lil_params(100)
    assert confidence.lil_c_eps(eps) * lil_delta ** (1 + eps) / 100**eps == pytest.approx(0.05)
    lil_ucb = agents.make("lil_ucb", delta=0.05, variant="heuristic")
    assert lil_ucb.variant_params(20) == {"eps": 0.0, "beta": 0.5, "lam": 1.5, "lil_delta": 0.01}
    assert agents.make("lil_ucb").variant_params(20)["lam"] == 9.0


# ------------------------------------------------------------- determinism
@pytest.mark.parametrize("cfg", ALL_CONFIGS, ids=_id)
def test_seeded_determinism(cfg):
    name, params = cfg
    k = 1 if name == "lil_ucb" else 2
    env = make_env("chen2017-twogroup", 8, k)
    runs = [agents.run_episode(env, agents.make(name, **params), seed=s) for s in (5, 5, 6)]
    assert runs[0].pulls == runs[1].pulls
    assert np.array_equal(runs[0].recommendation, runs[1].recommendation)
    assert runs[0].pulls != runs[2].pulls  # another seed gives another trajectory


# ------------------------------------------------- error rate <= delta
# Two catalog instances (Gaussian and Bernoulli with ties), small n so that runs are
# fast; delta = 0.2 and 50 runs: the exact binomial test fails from 20 errors on.
# Faithful lil'UCB needs ~30x more samples (lambda = 9): 20 runs (fails from 11 errors).
ERROR_INSTANCES = ("jiang2017-1-sparse", "chen2017-twogroup")
ERROR_DELTA, ERROR_RUNS = 0.2, 50


def _error_runs(cfg: tuple[str, dict]) -> int:
    return 20 if cfg == ("lil_ucb", {"variant": "faithful"}) else ERROR_RUNS


@pytest.mark.parametrize("instance", ERROR_INSTANCES)
@pytest.mark.parametrize("cfg", ALL_CONFIGS, ids=_id)
def test_error_rate_at_most_delta(cfg, instance, rate_at_most):
    name, params = cfg
    k = 1 if name == "lil_ucb" else 2
    env = make_env(instance, 6, k)
    runs = _error_runs(cfg)
    failures = 0
    for s in range(runs):
        res = agents.run_episode(env, agents.make(name, delta=ERROR_DELTA, **params), seed=1000 + s)
        assert res.terminated and not res.truncated  # it stopped by itself
        failures += res.misidentified
    rate_at_most(failures, runs, ERROR_DELTA)


# -------------------------------------------------------------- paper claim
def test_lil_rand_lucb_needs_fewer_samples_than_lucb_on_1_sparse():
    """jiang2017 Sec. 5.1 / Fig. 1(a): on 1-sparse with K = 2 lil'RandLUCB draws fewer samples.

    Paired comparison on 12 common seeds (same instance draw and arm order per seed);
    a one-sided sign test: under "no difference" P(all 12 wins) = 2^-12 < 1e-3.
    """
    env = make_env("jiang2017-1-sparse", 20, 2)
    wins = 0
    ratios = []
    for s in range(12):
        rand = agents.run_episode(env, agents.make("lil_rand_lucb"), seed=s)
        lucb = agents.run_episode(env, agents.make("lucb"), seed=s)
        assert not rand.misidentified and not lucb.misidentified
        wins += rand.pulls < lucb.pulls
        ratios.append(lucb.pulls / rand.pulls)
    assert 0.5**wins < 1e-3 or wins == 12, f"lil'RandLUCB fewer samples on only {wins}/12 seeds"
    assert np.median(ratios) > 1.2


def test_heuristic_uses_fewer_samples_than_faithful():
    env = make_env("jiang2017-1-sparse", 20, 2)
    for name in LIL_NAMES:
        faith = agents.run_episode(env, agents.make(name, variant="faithful"), seed=3).pulls
        heur = agents.run_episode(env, agents.make(name, variant="heuristic"), seed=3).pulls
        assert heur < faith, name


def test_lucb_pp_equals_lil_lucb_heuristic_when_k_is_half():
    """jiang2017 Sec. 5.1: "LUCB++ ... coincides with lil'LUCB when K = N/2"."""
    env = make_env("jiang2017-1-sparse", 12, 6)
    for s in range(3):
        a = agents.run_episode(env, agents.make("lucb_pp", variant="heuristic"), seed=s)
        b = agents.run_episode(env, agents.make("lil_lucb", variant="heuristic"), seed=s)
        assert a.pulls == b.pulls and np.array_equal(a.recommendation, b.recommendation)


# ---------------------------------------------- incremental state is exact
class _Literal(ScriptedAgent):
    """The family's loop literally, in Python, for the parameters of a compiled member.

    Every round ``High`` (top ``k`` by (mean, tie key)), every LCB and UCB, ``h``, ``l``
    and lil'CLUCB's ``M~`` are recomputed from scratch over all arms, with the tie keys
    and the draws the kernel makes (module docstring of :mod:`agents.lucb.family`): the
    episodes must agree exactly (same pulls in the same steps, same answer, same draws).
    """

    kernel = None
    episode_kernel = None

    def __init__(self, compiled: LUCBFamily) -> None:
        super().__init__(seed=None)
        self.member = compiled
        self.checked = 0

    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        self.member.problem = problem

    def _coef(self, prm, t, low_side):
        sigma = self.problem.sigma
        if prm[layout.P_RADIUS] == layout.RADIUS_LUCB1:
            return confidence.lucb_coef(float(t), sigma)
        w = prm[layout.P_W_UP] if low_side else prm[layout.P_W_LOW]
        return confidence.lil_width(float(t), w, prm[layout.P_EPS], sigma)

    def _run(self):
        p, rng = self.problem, self.rng
        n, k = p.n_arms, p.k
        prm = self.member.params()
        lucb1 = prm[layout.P_RADIUS] == layout.RADIUS_LUCB1
        rule = int(prm[layout.P_RULE])
        yield Pull.each(np.arange(n), 1)
        tb = np.array([rng.random() for _ in range(n)])
        rounds = 1
        while True:
            mu, t = self.means.copy(), self.counts.copy()
            high = np.zeros(n, dtype=bool)
            high[np.lexsort((tb, mu))[n - k :]] = True
            c = 1.0
            if lucb1:
                c = math.sqrt(
                    confidence.lucb_rate(float(rounds), n, prm[layout.P_DELTA], prm[layout.P_K1])
                )
            a = np.array([self._coef(prm, x, False) for x in t])
            b = np.array([self._coef(prm, x, True) for x in t])
            lcb, ucb = mu - c * a, mu + c * b
            hi, lo = np.flatnonzero(high), np.flatnonzero(~high)
            h = hi[np.lexsort((tb[hi], lcb[hi]))[0]]
            l_ = lo[np.lexsort((tb[lo], -ucb[lo]))[0]]
            self.checked += 1
            eps = prm[layout.P_STOP_EPS]
            if (lcb[h] >= ucb[l_]) if eps < 0 else (ucb[l_] - lcb[h] < eps):
                return hi
            if rule == layout.RULE_BOTH:
                arms = (h, l_)
                if p.batch_size == 1:
                    first = h
                    if t[l_] < t[h] or (t[l_] == t[h] and engine.below(rng, 2) == 1):
                        first = l_
                    yield PullOne(int(first))
                    yield PullOne(int(l_ if first == h else h))
                else:
                    yield Pull(np.array([h, l_], dtype=np.int64), np.ones(2, dtype=np.int64))
            else:
                if rule == layout.RULE_RANDOM:
                    arm = h if rng.random() * (t[h] + t[l_]) < t[l_] else l_
                else:  # Algorithm 2 literally: M~ = top k revised means; ties: not swapped,
                    # then by tie key (High arms with larger keys stay, Low arms with smaller come)
                    revised = np.where(high, lcb, ucb)
                    m_tilde = np.zeros(n, dtype=bool)
                    m_tilde[np.lexsort((np.where(high, -tb, tb), ~high, -revised))[:k]] = True
                    diff = np.flatnonzero(high != m_tilde)
                    radius = np.where(high, a, b)[diff]
                    arm = diff[np.lexsort((tb[diff], -radius))[0]]
                arms = (arm,)
                yield PullOne(int(arm))
            for i in arms:
                if self.counts[i] != t[i]:
                    tb[i] = rng.random()
            rounds += 1


def _trace(agent, env, seed, fast=False):
    """The episode's steps (arms, reps) through the step path, and its result."""
    steps = []
    one, many = agent.update_one, agent.update

    def update_one(arm, counts, means):
        steps.append(((int(arm),), (1,)))
        one(arm, counts, means)

    def update(arms, reps, counts, means):
        steps.append((tuple(np.asarray(arms).tolist()), tuple(np.asarray(reps).tolist())))
        many(arms, reps, counts, means)

    agent.update_one, agent.update = update_one, update
    res = agents.run_episode(env, agent, seed=seed, fast=fast)
    return steps, res


@pytest.mark.parametrize(
    "cls, instance, n, k, extra",
    [
        (LilRandLUCB, "jiang2017-exponential", 30, 2, {}),
        (LilRandLUCB, "jiang2017-1-sparse", 20, 10, {}),
        (LUCBPlusPlus, "jiang2017-exponential", 30, 2, {}),
        (LUCBPlusPlus, "jiang2017-1-sparse", 20, 10, {"batch_size": 4, "repeat_limit": 1}),
        (LilLUCB, "jiang2017-exponential", 30, 3, {"batch_size": None, "repeat_limit": 2}),
        (LUCB, "jiang2017-exponential", 30, 3, {}),
        (LUCB, "jiang2017-1-sparse", 20, 10, {}),
        (LUCB, "jiang2017-1-sparse", 20, 2, {"batch_size": 4, "repeat_limit": 2}),
        (LilCLUCB, "jiang2017-exponential", 30, 3, {}),
        (LilCLUCB, "jiang2017-1-sparse", 16, 8, {}),
        (LilCLUCB, "jiang2017-1-sparse", 40, 20, {}),
        (LilCLUCB, "chen2017-twogroup", 30, 15, {}),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_incremental_state_matches_literal_loop(cls, instance, n, k, extra):
    """The kernel's heaps, kinetic trees and lockstep walks decide as the literal loop does."""
    env = make_env(instance, n, k, **extra)
    kw = {"variant": "heuristic"} if issubclass(cls, LilFamily) else {}
    for seed in (2, 3):
        compiled = cls(**kw)
        literal = _Literal(cls(**kw))
        a, ra = _trace(compiled, env, seed)
        b, rb = _trace(literal, env, seed)
        assert a == b
        assert ra.as_row() | {"wall_time": 0} == rb.as_row() | {"wall_time": 0}
        assert compiled.rng.random() == literal.rng.random()  # the same draws
        assert literal.checked > 50
        assert not ra.misidentified
        fast = agents.run_episode(env, cls(**kw), seed=seed)
        assert fast.as_row() | {"wall_time": 0} == ra.as_row() | {"wall_time": 0}


# ------------------------------------------------------ anytime, budgets, batches
@pytest.mark.parametrize("cfg", ALL_CONFIGS, ids=_id)
def test_anytime_in_fixed_budget(cfg):
    name, params = cfg
    k = 1 if name == "lil_ucb" else 2
    for budget in (10, 11, 150):  # 10 = n: only the first round; 11: one pull after it
        env = make_env("jiang2017-1-sparse", 10, k, setting="fixed_budget", budget=budget)
        res = agents.run_episode(env, agents.make(name, **params), seed=1)
        assert res.pulls == budget and res.recommendation.shape == (k,)
        assert np.unique(res.recommendation).size == k


@pytest.mark.parametrize("name", ["lil_rand_lucb", "lucb_pp", "lil_clucb", "lucb"])
def test_anytime_answer_improves_with_budget(name):
    """With a budget that is large for the instance the current High is right on most seeds."""
    env = make_env("jiang2017-1-sparse", 10, 2, setting="fixed_budget", budget=600)
    wrong = sum(agents.run_episode(env, agents.make(name), seed=s).misidentified for s in range(20))
    assert wrong <= 2


@pytest.mark.parametrize(
    "cfg", [("lucb_pp", {}), ("lil_rand_lucb", {}), ("lucb", {}), ("lil_ucb", {})], ids=_id
)
@pytest.mark.parametrize(
    "batch",
    [
        {"batch_size": None, "repeat_limit": 3},
        {"batch_size": 4, "repeat_limit": 2},
        {"batch_size": 3, "repeat_limit": 1},
    ],
)
def test_any_batch_model(cfg, batch):
    name, params = cfg
    k = 1 if name == "lil_ucb" else 2
    env = make_env("jiang2017-1-sparse", 8, k, **batch)
    res = agents.run_episode(env, agents.make(name, **params), seed=4)
    assert res.terminated and not res.misidentified
    env = make_env("jiang2017-1-sparse", 8, k, setting="fixed_budget", budget=101, **batch)
    res = agents.run_episode(env, agents.make(name, **params), seed=4)
    assert res.pulls <= 101


def test_pairs_with_batch_size_one():
    """batch_size=1: each pair (h, l) is two one-pull steps; the agent stops between rounds."""
    env = make_env("jiang2017-1-sparse", 10, 2)
    a = agents.make("lucb_pp", variant="heuristic")
    res = agents.run_episode(env, a, seed=0)
    assert res.pulls % 2 == 0  # init n pulls, then whole pairs: the agent stops between rounds
    assert res.batches == res.pulls
