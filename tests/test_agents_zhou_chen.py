"""OptMAI (zhou2014), AdaptiveTopK (chen2017) and the CLUCB-PAC baseline (Chen et al. 2014).

Statistical assertions use exact one-sided binomial tests (``rate_at_most``) or
Hoeffding's inequality at level 1e-3 on fixed seeds, so each can fail.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents import engine
from agents.elimination.adaptive_topk import AdaptiveTopK
from agents.elimination.optmai import THEORY_BETA, OptMAI
from agents.lucb.clucb_pac import CLUCBPAC
from bandit_envs.scoring import top_k

ALPHA = 1e-3


def fixed_budget_env(instance: str, n: int, k: int, budget: int, **kw) -> gym.Env:
    kw.setdefault("batch_size", None)
    return gym.make(
        "TopK-Batch-v0", instance=instance, n_arms=n, k=k, budget=budget, answer="agent", **kw
    )


def fixed_confidence_env(instance: str, n: int, k: int, **kw) -> gym.Env:
    return gym.make(
        "TopK-Batch-v0",
        instance=instance,
        n_arms=n,
        k=k,
        setting="fixed_confidence",
        batch_size=None,
        repeat_limit=10**9,
        max_batches=10**6,
        answer="agent",
        **kw,
    )


# ---------------------------------------------------------------------- OptMAI
@pytest.mark.parametrize("beta", [0.8, 0.9, "theory"])
@pytest.mark.parametrize("n,k", [(1000, 10), (1000, 100), (1000, 500), (200, 5), (200, 50)])
@pytest.mark.parametrize("per_arm", [20, 50, 100])
def test_optmai_spends_the_budget_but_never_more(n, k, per_arm, beta) -> None:
    """Budget never exceeded; >= 95% of it used (zhou2014 Sec. 6 setups: Q = 20n, 50n, 100n)."""
    budget = per_arm * n
    agent = OptMAI(beta=beta)
    env = fixed_budget_env("zhou2014-two-level", n, k, budget)
    for seed in range(3):
        result = agents.run_episode(env, agent, seed=seed)
        assert result.pulls <= budget
        assert result.pulls >= 0.95 * budget, f"used {result.pulls}/{budget}"
        assert result.terminated and result.recommendation.shape == (k,)


@pytest.mark.parametrize(
    "n,k,budget",
    [
        (10, 9, 10),
        (20, 1, 25),
        (50, 3, 1000),
        (1000, 10, 20000),
        (1000, 500, 10**6),
        (37, 9, 3700),
        (4, 1, 4),
    ],
)
@pytest.mark.parametrize("beta", [0.76, 0.8, THEORY_BETA, 0.99])
def test_optmai_plan_is_the_longest_run_that_fits(n, k, budget, beta) -> None:
    agent = OptMAI(beta=beta)
    sizes = OptMAI.round_sizes(n, k)
    per_arm = agent.plan(n, k, budget)
    total = int(per_arm @ sizes)
    assert total <= budget
    # Rounding leaves at most the pulls of one jump per round (much less in practice).
    assert total >= budget - int(sizes.sum())
    # QE rounds keep |S| - floor(|S|/4) arms, AR rounds |S| - ceil(|S|/4); both remove one or more.
    assert (np.diff(sizes) < 0).all() and sizes[0] == n and sizes[-1] >= 2
    qe = sizes[sizes >= 4 * k]
    assert np.array_equal(qe[1:], qe[:-1] - qe[:-1] // 4)
    # Rounds get geometrically smaller budgets beta^r (1 - beta) Q'.
    spent = per_arm * sizes
    assert (spent[1:] <= spent[:-1] + sizes[:-1]).all()


def test_optmai_batches_and_repeat_limits_respected() -> None:
    env = fixed_budget_env("zhou2014-two-level", 200, 20, 4000, batch_size=64, repeat_limit=8)
    result = agents.run_episode(env, OptMAI(), seed=4)
    assert result.pulls <= 4000 and result.pulls >= 0.95 * 4000
    assert result.batches >= math.ceil(result.pulls / 64)


def test_optmai_answers_its_accepted_set() -> None:
    env = fixed_budget_env("chen2017-twogroup", 100, 10, 100 * 100)
    agent = OptMAI()
    result = agents.run_episode(env, agent, seed=0)
    # Finished on its own: the answer is T, |T| = k.
    assert agent.ctx.iv[engine.HAS_ANSWER] == 1 and agent.accepted.shape == (10,)
    assert set(result.recommendation.tolist()) == set(agent.accepted.tolist())
    # Arms that survived longer were pulled more (every round adds pulls).
    assert agent.counts[agent.accepted].min() >= np.median(agent.counts)


def test_optmai_beats_uniform_on_two_level() -> None:
    """zhou2014 Fig. 1 (two-level, 0.6/0.5): OptMAI's mean regret is below uniform's.

    d = regret(uniform) - regret(OptMAI) lies in [-0.1, 0.1] (regret <= 0.6 - 0.5), so by
    Hoeffding P(mean(d) >= 0.2 sqrt(ln(1/alpha) / 2N)) <= alpha if E[d] <= 0.
    """
    n, k, runs = 100, 10, 1000
    env = fixed_budget_env("zhou2014-two-level", n, k, 50 * n)
    optmai, uniform = OptMAI(), agents.make("uniform")
    d = np.array(
        [
            agents.run_episode(env, uniform, seed=s).aggregate_regret
            - agents.run_episode(env, optmai, seed=s).aggregate_regret
            for s in range(runs)
        ]
    )
    margin = 0.2 * math.sqrt(math.log(1 / ALPHA) / (2 * runs))
    assert d.mean() > margin, f"mean improvement {d.mean():.4f} <= Hoeffding margin {margin:.4f}"


def test_optmai_identifies_a_large_gap_instance(rate_at_most) -> None:
    env = fixed_budget_env("chen2017-twogroup", 100, 10, 50 * 100)
    runs = 100
    misses = sum(agents.run_episode(env, OptMAI(), seed=s).misidentified for s in range(runs))
    rate_at_most(misses, runs, 0.05)


@pytest.mark.parametrize(
    "beta", [0.75, 1.0, 0.5, 1.2, -1, float("nan"), "0.8", "optimal", True, None]
)
def test_optmai_bad_beta_raises(beta) -> None:
    with pytest.raises(ValueError, match="beta"):
        OptMAI(beta=beta)
    with pytest.raises(ValueError, match="beta"):
        agents.make("optmai", beta=beta)


def test_optmai_theory_beta_is_selectable() -> None:
    assert OptMAI(beta="theory").beta == pytest.approx(math.exp(0.2) * 0.75)
    assert OptMAI().beta == 0.8


def test_optmai_refuses_fixed_confidence() -> None:
    env = fixed_confidence_env("zhou2014-two-level", 10, 2)
    with pytest.raises(ValueError, match="cannot play setting='fixed_confidence'"):
        agents.run_episode(env, OptMAI(), seed=0)


def test_optmai_round_is_one_step_with_unlimited_batches() -> None:
    env = fixed_budget_env("zhou2014-two-level", 1000, 10, 100 * 1000)
    agent = OptMAI()
    result = agents.run_episode(env, agent, seed=0)
    rounds_with_pulls = int((agent.per_round > 0).sum())
    assert result.batches <= rounds_with_pulls


# ---------------------------------------------------------------- AdaptiveTopK
def literal_inner_loop(mu: np.ndarray, kp: int, threshold: float) -> tuple[set, set, set, int]:
    """Algorithm 1's inner while loop, one arm at a time, a/b recomputed on the current S."""
    s = list(range(mu.shape[0]))
    acc, rej = set(), set()
    while s and kp > 0 and len(s) > kp:
        vals = np.sort(mu[s])[::-1]
        a, b = vals[kp], vals[kp - 1]  # (kp+1)-th and kp-th largest
        gaps = np.maximum(mu[s] - a, b - mu[s])
        j = int(np.argmax(gaps))
        if gaps[j] <= threshold:
            break
        x = s.pop(j)
        if mu[x] > a:
            acc.add(x)
            kp -= 1
        else:
            rej.add(x)
    return acc, rej, set(s), kp


@pytest.mark.parametrize("seed", range(300))
def test_adaptive_vectorized_inner_loop_matches_the_literal_loop(seed) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 40))
    kp = int(rng.integers(1, size))
    levels = int(rng.integers(2, 12))  # few distinct values: many ties
    mu = rng.integers(0, levels, size) / (levels - 1)
    threshold = float(rng.choice([0.05, 0.1, 0.25, 0.5]))
    acc_lit, rej_lit, rest_lit, kp_lit = literal_inner_loop(mu, kp, threshold)
    acc, removed = AdaptiveTopK.accept_reject(mu, kp, threshold)
    acc_vec = set(np.flatnonzero(acc).tolist())
    rest_vec = set(np.flatnonzero(~removed).tolist())
    assert acc_vec.issuperset(acc_lit)
    assert len(acc_vec) <= kp and len(rest_vec) >= kp - len(acc_vec)

    def answer(accepted: set, rest: set) -> set:
        need = kp - len(accepted)
        rest = np.array(sorted(rest), dtype=np.int64)
        return accepted | (set(rest[top_k(mu[rest], need, None)].tolist()) if need > 0 else set())

    # Same final answer (deterministic tie-breaking in the last line for the comparison).
    assert answer(acc_vec, rest_vec) == answer(acc_lit, rest_lit)
    if kp_lit > 0 and len(rest_lit) > kp_lit:
        assert acc_vec == acc_lit and rest_vec == rest_lit


def test_adaptive_round_pulls() -> None:
    agent = AdaptiveTopK(delta=0.01)
    env = fixed_confidence_env("chen2017-twogroup", 1000, 100)
    env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=0)
    assert agent.pulls_in_round(1) == math.ceil(2 * math.log(4 * 1000 / 0.01))  # notes: 26
    assert agent.pulls_in_round(3) == math.ceil(2**5 * math.log(4 * 1000 * 9 / 0.01))
    paper = AdaptiveTopK(delta=0.01, round_pulls="paper")
    paper.reset(env.unwrapped.problem, seed=0)
    assert paper.pulls_in_round(1) == math.ceil(4 * math.log(2 * 1000 / 0.01))  # 49
    # Claim 1: 2 exp(-2 m_r 4^-r) <= delta / (2 n r^2) for both rules.
    for a in (agent, paper):
        for r in range(1, 8):
            assert 2 * math.exp(-2 * a.pulls_in_round(r) * 4.0**-r) <= 0.01 / (2 * 1000 * r * r) * (
                1 + 1e-12
            )


def test_adaptive_scales_pulls_for_gaussian_sigma() -> None:
    env = fixed_confidence_env("jiang2017-1-sparse", 10, 2, distribution="gaussian", sigma=1.0)
    agent = AdaptiveTopK(delta=0.1)
    env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=0)
    assert agent.pulls_in_round(2) == math.ceil(4 * 2**3 * math.log(4 * 10 * 4 / 0.1))


@pytest.mark.parametrize(
    "instance,n,k,epsilon",
    [("zhou2014-two-level", 50, 5, 0.01), ("chen2017-uniform", 100, 10, 0.005)],
)
def test_adaptive_pac_guarantee(rate_at_most, instance, n, k, epsilon) -> None:
    """P(aggregate regret > epsilon) <= delta (Theorem 4), exact binomial test."""
    delta, runs = 0.1, 100
    env = fixed_confidence_env(instance, n, k)
    agent = AdaptiveTopK(epsilon=epsilon, delta=delta)
    failures = 0
    for seed in range(runs):
        result = agents.run_episode(env, agent, seed=seed)
        assert result.terminated and not result.truncated
        failures += result.aggregate_regret > epsilon
    rate_at_most(failures, runs, delta)


def test_adaptive_exit_condition_eq13() -> None:
    """Fixed confidence stops once 2 * 2^-r * (k - |A|) <= eps * k, or the answer is settled."""
    env = fixed_confidence_env("chen2017-synthetic", 100, 10)
    agent = AdaptiveTopK(epsilon=0.05, delta=0.1)
    for seed in range(5):
        agents.run_episode(env, agent, seed=seed)
        kp = 10 - agent.accepted.shape[0]
        r = agent.round
        settled = kp == 0 or agent.undecided.shape[0] == kp
        assert settled or 2 * 2.0**-r * kp <= 0.05 * 10
        assert agent.pulls_in_round(r) <= agent.counts.max()  # round r was pulled in full


def test_adaptive_fixed_budget_conversion() -> None:
    """Fixed budget: no exit condition, rounds until the budget ends, answer = last line."""
    n, k = 100, 10
    small = fixed_budget_env("chen2017-twogroup", n, k, 40 * n)
    agent = AdaptiveTopK()
    for seed in range(3):
        result = agents.run_episode(small, agent, seed=seed)
        assert result.pulls == 40 * n  # spends everything: round 2 is cut by the budget
        assert agent.round == 2 and agent.accepted.size == 0
    big = fixed_budget_env("chen2017-twogroup", n, k, 10**6)
    result = agents.run_episode(big, agent, seed=0)
    # Large gaps: settled well before the budget ends, and returns at once.
    assert result.pulls < 10**6 and agent.ctx.iv[engine.HAS_ANSWER] == 1
    assert not result.misidentified
    # With epsilon this large the fixed-confidence version would stop at round 0; the
    # fixed-budget conversion ignores the exit condition and keeps sampling.
    result = agents.run_episode(small, AdaptiveTopK(epsilon=5.0), seed=0)
    assert result.pulls == 40 * n


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": float("inf")}, "epsilon"),
        ({"epsilon": "0.1"}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"delta": True}, "delta"),
        ({"round_pulls": "fast"}, "round_pulls"),
    ],
)
def test_adaptive_bad_params_raise(kw, match) -> None:
    with pytest.raises(ValueError, match=match):
        AdaptiveTopK(**kw)
    with pytest.raises(ValueError, match=match):
        agents.make("adaptive_topk", **kw)


# ------------------------------------------------------------------ CLUCB-PAC
@pytest.mark.parametrize(
    "instance,n,k",
    [("jiang2017-1-sparse", 10, 2), ("chen2017-synthetic", 10, 3)],
)
def test_clucb_pac_guarantee(rate_at_most, instance, n, k) -> None:
    """P(aggregate regret > epsilon) <= delta, exact binomial test."""
    epsilon, delta, runs = 0.05, 0.1, 40
    env = fixed_confidence_env(instance, n, k)
    agent = CLUCBPAC(epsilon=epsilon, delta=delta)
    failures = 0
    for seed in range(runs):
        result = agents.run_episode(env, agent, seed=seed)
        assert result.terminated and not result.truncated
        failures += result.aggregate_regret > epsilon
    rate_at_most(failures, runs, delta)


def test_clucb_pac_radius_and_stopping_rule() -> None:
    env = fixed_confidence_env("chen2017-synthetic", 10, 3)
    agent = CLUCBPAC(epsilon=0.05, delta=0.1)
    agents.run_episode(env, agent, seed=3)
    p = env.unwrapped.problem
    t = agent.total_pulls
    rad = agent.radius(agent.counts, t)
    assert np.allclose(rad, 0.5 * np.sqrt(2 * np.log(4 * 10 * t**3 / 0.1) / agent.counts))
    # At the stop, the adjusted-weight gain of the best swap is at most k * epsilon.
    m = np.zeros(10, dtype=bool)
    m[top_k(agent.means, 3, None)] = True
    w = np.where(m, agent.means - rad, agent.means + rad)
    gain = np.sort(w)[-3:].sum() - w[m].sum()
    assert gain <= 3 * 0.05 + 1e-12
    assert agent.total_pulls == 10 + agent.steps and p.k == 3


def test_clucb_epsilon_zero_is_exact_clucb(rate_at_most) -> None:
    env = fixed_confidence_env("chen2017-twogroup", 8, 2)
    runs = 20
    misses = sum(
        agents.run_episode(env, CLUCBPAC(epsilon=0.0, delta=0.1), seed=s).misidentified
        for s in range(runs)
    )
    rate_at_most(misses, runs, 0.1)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"epsilon": -0.01}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": None}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": "0.1"}, "delta"),
    ],
)
def test_clucb_bad_params_raise(kw, match) -> None:
    with pytest.raises(ValueError, match=match):
        CLUCBPAC(**kw)
    with pytest.raises(ValueError, match=match):
        agents.make("clucb_pac", **kw)


def test_clucb_runs_anytime_in_fixed_budget() -> None:
    env = fixed_budget_env("chen2017-synthetic", 50, 5, 30 * 50, batch_size=4, repeat_limit=1)
    result = agents.run_episode(env, CLUCBPAC(), seed=2)
    assert result.pulls == 30 * 50 and result.terminated


# ----------------------------------------------------------------- all three
CASES = [
    ("optmai", {}, "fixed_budget"),
    ("optmai", {"beta": "theory"}, "fixed_budget"),
    ("adaptive_topk", {"epsilon": 0.05, "delta": 0.1}, "fixed_budget"),
    ("adaptive_topk", {"epsilon": 0.05, "delta": 0.1}, "fixed_confidence"),
    ("clucb_pac", {"epsilon": 0.05, "delta": 0.1}, "fixed_budget"),
    ("clucb_pac", {"epsilon": 0.05, "delta": 0.1}, "fixed_confidence"),
]


@pytest.mark.parametrize("name,kw,setting", CASES)
@pytest.mark.parametrize("batch", [(None, None), (7, 3)])
def test_seeded_determinism(name, kw, setting, batch) -> None:
    b, r = batch
    common = {
        "instance": "uniform-random",
        "n_arms": 30,
        "k": 4,
        "answer": "agent",
        "batch_size": b,
    }
    if setting == "fixed_budget":
        env = gym.make("TopK-Batch-v0", budget=30 * 40, repeat_limit=r, **common)
    else:
        env = gym.make(
            "TopK-Batch-v0",
            setting="fixed_confidence",
            repeat_limit=r or 10**9,
            max_batches=3000,
            **common,
        )
    runs = []
    for _ in range(2):
        agent = agents.make(name, seed=123, **kw)
        result = agents.run_episode(env, agent, seed=11)
        runs.append(
            (
                result.recommendation.tolist(),
                result.pulls,
                result.batches,
                result.aggregate_regret,
                agent.counts.tolist(),
            )
        )
    assert runs[0] == runs[1]
    other = agents.run_episode(env, agents.make(name, **kw), seed=12)
    assert other.pulls > 0
    if setting == "fixed_budget":
        assert runs[0][1] <= 30 * 40
