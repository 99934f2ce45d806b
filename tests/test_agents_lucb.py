"""Tests of the LUCB family: lil'RandLUCB, lil'CLUCB; LUCB, lil'LUCB, LUCB++, lil'UCB."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents import confidence
from agents.lil_clucb import LilCLUCB
from agents.lil_rand_lucb import LilRandLUCB
from agents.lucb import LUCB
from agents.lucb_common import CountTable
from agents.lucb_pp import LUCBPlusPlus

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


def test_count_table_matches_lil_bound():
    w, eps, sigma = 1e-6, 0.01, 0.5
    table = CountTable(lambda t: confidence.lil_bound(t, w, eps, sigma))
    for t in (1, 2, 7, 1023, 1024, 5000, (1 << 20) + 3):
        assert table(t) == pytest.approx(float(confidence.lil_bound(t, w, eps, sigma)), rel=1e-12)


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
def _bounds(agent):
    """Brute-force (High mask, LCB, UCB) from the agent's own statistics."""
    t = agent.counts.astype(float)
    c = agent._scale()
    lcb = agent.means - c * np.array([agent._a(int(x)) for x in t])
    ucb = agent.means + c * np.array([agent._b(int(x)) for x in t])
    high = np.array(agent._side)
    return high, lcb, ucb


def _check_round(agent, lcb_h, ucb_l):
    """The bounds the agent's incremental state gives equal a brute-force recomputation."""
    high, lcb, ucb = _bounds(agent)
    assert high.sum() == agent.problem.k
    assert agent.means[high].min() >= agent.means[~high].max()  # High = top k by mean
    assert lcb_h == pytest.approx(lcb[high].min(), abs=1e-12)
    assert ucb_l == pytest.approx(ucb[~high].max(), abs=1e-12)
    agent.checked = getattr(agent, "checked", 0) + 1


class _CheckedRand(LilRandLUCB):
    def _stop(self, lcb_h, ucb_l):  # called every round with the state's LCB_h, UCB_l
        _check_round(self, lcb_h, ucb_l)
        return super()._stop(lcb_h, ucb_l)


class _CheckedPlusPlus(LUCBPlusPlus):
    def _stop(self, lcb_h, ucb_l):
        _check_round(self, lcb_h, ucb_l)
        return super()._stop(lcb_h, ucb_l)


class _CheckedLUCB(LUCB):
    rebuild_pops = 2  # re-key often, to exercise both the slack query and the rebuild

    def _extremes(self):
        h, lcb_h, lo, ucb_l = super()._extremes()
        _check_round(self, lcb_h, ucb_l)
        _, lcb, ucb = _bounds(self)
        assert lcb[h] == pytest.approx(lcb_h, abs=1e-12)
        assert ucb[lo] == pytest.approx(ucb_l, abs=1e-12)
        return h, lcb_h, lo, ucb_l


class _CheckedCLUCB(LilCLUCB):
    def _choose(self, h, l):  # noqa: E741
        (pick,) = super()._choose(h, l)
        high, lcb, ucb = _bounds(self)
        revised = np.where(high, lcb, ucb)
        k = self.problem.k
        m_tilde = np.zeros_like(high)
        m_tilde[np.argsort(-revised)[:k]] = True
        diff = np.flatnonzero(high != m_tilde)
        radius = np.where(high, self.means - lcb, ucb - self.means)
        assert pick in diff
        assert radius[pick] == pytest.approx(radius[diff].max())
        self.checked = getattr(self, "checked", 0) + 1
        return (pick,)


@pytest.mark.parametrize(
    "cls, instance, n, k",
    [
        (_CheckedRand, "jiang2017-exponential", 30, 2),
        (_CheckedRand, "jiang2017-1-sparse", 20, 10),
        (_CheckedPlusPlus, "jiang2017-exponential", 30, 2),
        (_CheckedPlusPlus, "jiang2017-1-sparse", 20, 10),
        (_CheckedLUCB, "jiang2017-exponential", 30, 3),
        (_CheckedLUCB, "jiang2017-1-sparse", 20, 10),
        (_CheckedCLUCB, "jiang2017-exponential", 30, 3),
        (_CheckedCLUCB, "jiang2017-1-sparse", 16, 8),
    ],
)
def test_incremental_state_matches_brute_force(cls, instance, n, k):
    env = make_env(instance, n, k)
    agent = cls(variant="heuristic") if cls is not _CheckedLUCB else cls()
    res = agents.run_episode(env, agent, seed=2)
    assert agent.checked > 50
    assert not res.misidentified


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


@pytest.mark.parametrize(
    "instance, n, k", [("jiang2017-1-sparse", 40, 20), ("chen2017-twogroup", 30, 15)]
)
def test_clucb_vectorised_choice_equals_heap_walk(instance, n, k, monkeypatch):
    """lil'CLUCB's numpy fallback (large M (+) M~) picks exactly the heap walk's arm."""
    env = make_env(instance, n, k)
    runs = []
    for walk in (10**9, 0):
        monkeypatch.setattr(LilCLUCB, "lockstep_max", walk)
        res = agents.run_episode(env, agents.make("lil_clucb", variant="heuristic"), seed=7)
        runs.append((res.pulls, res.recommendation.tolist()))
    assert runs[0] == runs[1]
