"""Jun, Jamieson, Nowak, Zhu (AISTATS 2016): BatchRacing, BatchSAR, Halving, RoundRobin.

Statistical checks use exact one-sided binomial tests (``rate_at_most``). Fixed-budget
correctness uses a sound anytime Hoeffding bound: if every arm has at least ``T`` pulls
whenever a decision is made, the probability that some top arm's empirical mean ever
falls ``gap/2`` below its mean, or some other arm's rises ``gap/2`` above its own, at
any count ``t >= T``, is at most ``n exp(-T gap^2 / 2) / (1 - exp(-gap^2 / 2))``; outside
that event every comparison of a top arm with a bottom arm is right, so all four
algorithms answer the top k.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE
from agents.elimination.batch_racing import BatchRacing
from agents.elimination.batch_sar import BatchSAR
from agents.elimination.halving import Halving
from agents.elimination.round_robin import RoundRobin

SPARSE = {
    "instance": "jun2016-sparse",
    "n_arms": 20,
    "k": 4,
    "instance_params": {"high": 0.8, "low": 0.2},
}
LINEAR = {"instance": "jun2016-linear", "n_arms": 6, "k": 2}
TWOGROUP = {"instance": "chen2017-twogroup", "n_arms": 20, "k": 5}  # 0.7 / 0.3


def confidence_env(spec: dict, b: int | None, r: int | None, **kw) -> gym.Env:
    return gym.make(
        "TopK-Batch-v0",
        setting="fixed_confidence",
        batch_size=b,
        repeat_limit=r,
        answer="agent",
        **spec,
        **kw,
    )


def budget_env(spec: dict, b: int | None, r: int | None, **kw) -> gym.Env:
    return gym.make(
        "TopK-Batch-v0",
        setting="fixed_budget",
        batch_size=b,
        repeat_limit=r,
        answer="agent",
        **spec,
        **kw,
    )


def anytime_bound(n: int, pulls: int, gap: float) -> float:
    """P(some arm's empirical mean strays gap/2 to the wrong side at some t >= pulls)."""
    q = math.exp(-gap * gap / 2.0)
    return min(1.0, n * q**pulls / (1.0 - q))


# ----------------------------------------------------------------- registry
@pytest.mark.parametrize(
    ("name", "cls", "settings"),
    [
        ("batch_racing", BatchRacing, {FIXED_BUDGET, FIXED_CONFIDENCE}),
        ("batch_sar", BatchSAR, {FIXED_BUDGET}),
        ("halving", Halving, {FIXED_BUDGET}),
        ("round_robin", RoundRobin, {FIXED_BUDGET, FIXED_CONFIDENCE}),
    ],
)
def test_registry_builds_with_paper_defaults(name, cls, settings) -> None:
    agent = agents.make(name)
    assert type(agent) is cls and agent.name == name and set(cls.settings) == settings
    if hasattr(agent, "delta"):
        assert agent.delta == 0.1


@pytest.mark.parametrize("delta", [0, 1, 1.5, -0.1, "0.1", None])
@pytest.mark.parametrize("name", ["batch_racing", "round_robin"])
def test_bad_delta_raises(name, delta) -> None:
    with pytest.raises(ValueError, match="delta"):
        agents.make(name, delta=delta)


@pytest.mark.parametrize("name", ["batch_sar", "halving"])
def test_fixed_budget_agents_reject_unknown_params_and_fixed_confidence(name) -> None:
    with pytest.raises(ValueError):
        agents.make(name, delta=0.1)
    env = confidence_env(SPARSE, 4, 2)
    with pytest.raises(ValueError, match="fixed_confidence"):
        agents.run_episode(env, agents.make(name), seed=0)


# ------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", ["batch_racing", "batch_sar", "halving", "round_robin"])
@pytest.mark.parametrize(("b", "r"), [(1, 1), (6, 2), (None, None)])
def test_seeded_runs_are_identical(name, b, r) -> None:
    if agents.agent_class(name).settings == {FIXED_BUDGET} or b is None:
        env = budget_env(SPARSE, b, r, budget=600)
    else:
        env = confidence_env(LINEAR, b, r, max_batches=300)
    rows = []
    for _ in range(2):
        agent = agents.make(name)
        res = agents.run_episode(env, agent, seed=11)
        rows.append((res.recommendation.tolist(), res.pulls, res.batches, agent.counts.tolist()))
    assert rows[0] == rows[1]


# ------------------------------------------------------------ BatchRacing
@pytest.mark.parametrize(
    ("spec", "b", "r"),
    [(SPARSE, 8, 2), (SPARSE, 16, 16), (LINEAR, 4, 1), (LINEAR, 6, 3)],
    ids=["sparse-8-2", "sparse-16-16", "linear-4-1", "linear-6-3"],
)
def test_batch_racing_error_rate_at_most_delta(spec, b, r, rate_at_most) -> None:
    delta, runs = 0.1, 20
    env = confidence_env(spec, b, r)
    failures = 0
    for seed in range(runs):
        agent = agents.make("batch_racing", delta=delta)
        res = agents.run_episode(env, agent, seed=seed, max_steps=10**6)
        assert res.terminated and not res.truncated
        assert agent.accepted.size == spec["k"] and agent.surviving.size == 0
        failures += res.misidentified
    rate_at_most(failures, runs, delta)


@pytest.mark.expensive
@pytest.mark.parametrize(
    ("instance", "b", "r"), [("jun2016-sparse", 64, 32), ("jun2016-sparse", 16, 8)]
)
def test_batch_racing_error_rate_paper_sparse(instance, b, r, rate_at_most) -> None:
    env = confidence_env({"instance": instance, "n_arms": 100, "k": 10}, b, r)
    runs = 30
    failures = sum(
        agents.run_episode(env, agents.make("batch_racing"), seed=s).misidentified
        for s in range(runs)
    )
    rate_at_most(failures, runs, 0.1)


def test_batch_racing_accepts_the_rest_when_undecided_arms_number_k_minus_accepted() -> None:
    # The two top arms are 0.02 apart: separating them would take ~1e5 pulls each, but
    # once the bottom arms are rejected the two survivors are exactly k - |A| = 2.
    means = [0.9, 0.88, 0.1, 0.1, 0.1]
    env = gym.make(
        "TopK-Batch-v0",
        instance=means,
        k=2,
        setting="fixed_confidence",
        batch_size=5,
        repeat_limit=5,
        answer="agent",
        max_batches=10**4,
    )
    for seed in range(5):
        agent = agents.make("batch_racing")
        res = agents.run_episode(env, agent, seed=seed)
        assert not res.truncated and not res.misidentified
        assert res.batches < 300
        assert sorted(agent.accepted.tolist()) == res.recommendation.tolist()
        assert agent.rejected.size == 3


def test_batch_racing_speedup_is_about_b_when_gaps_are_equal() -> None:
    # Sec. 5.1 / Table 1 "Sparse": equal gaps give a b-fold speedup almost regardless of r.
    def mean_batches(b: int, r: int) -> float:
        env = confidence_env(SPARSE, b, r, paired=True)
        return float(
            np.mean(
                [
                    agents.run_episode(env, agents.make("batch_racing"), seed=s).batches
                    for s in range(2)
                ]
            )
        )

    base = mean_batches(1, 1)
    for b, r in [(8, 4), (8, 1)]:
        assert 0.9 * b <= base / mean_batches(b, r) <= 1.1 * b


def test_batch_racing_unbounded_batch_and_anytime_fixed_budget() -> None:
    env = confidence_env(SPARSE, None, 3)
    res = agents.run_episode(env, agents.make("batch_racing"), seed=1)
    assert res.terminated and not res.misidentified
    env = budget_env(SPARSE, 4, 2, max_batches=60)
    agent = agents.make("batch_racing")
    res = agents.run_episode(env, agent, seed=1)
    assert res.batches == 60 and res.pulls <= 240
    assert set(agent.accepted.tolist()) <= set(res.recommendation.tolist())


# ------------------------------------------------------------ RoundRobin
@pytest.mark.parametrize(
    ("spec", "b", "r"), [(TWOGROUP, 16, 8), (SPARSE, 8, 2)], ids=["twogroup", "sparse"]
)
def test_round_robin_fixed_confidence_error_rate(spec, b, r, rate_at_most) -> None:
    env = confidence_env(spec, b, r)
    runs = 15
    failures = sum(
        agents.run_episode(env, agents.make("round_robin"), seed=s).misidentified
        for s in range(runs)
    )
    rate_at_most(failures, runs, 0.1)


def test_round_robin_needs_more_batches_than_batch_racing() -> None:
    # No eliminations: decided arms keep being pulled (the paper's Sec. 5.2 point).
    env = confidence_env(TWOGROUP, 16, 8, paired=True)
    rr = [agents.run_episode(env, agents.make("round_robin"), seed=s).batches for s in range(3)]
    br = [agents.run_episode(env, agents.make("batch_racing"), seed=s).batches for s in range(3)]
    assert np.mean(rr) > np.mean(br)


# -------------------------------------------------------- fixed budget
BUDGET_CASES = [
    (1, 1, {"max_batches": 300}),
    (4, 1, {"max_batches": 90}),
    (16, 4, {"max_batches": 40}),
    (16, 16, {"max_batches": 25}),
    (7, 3, {"max_batches": 61}),
    (8, 2, {"budget": 555}),  # pull budget only, not a multiple of b
    (8, 2, {"max_batches": 50, "budget": 300}),  # the pull budget binds first
    (None, None, {"budget": 500}),
    (None, 2, {"budget": 501}),
    (None, None, {"budget": 400, "max_batches": 3}),
]


@pytest.mark.parametrize("name", ["batch_sar", "halving", "round_robin"])
@pytest.mark.parametrize(("b", "r", "kw"), BUDGET_CASES)
def test_fixed_budget_is_never_exceeded(name, b, r, kw) -> None:
    env = budget_env({"instance": "uniform-random", "n_arms": 20, "k": 3}, b, r, **kw)
    problem = env.unwrapped.problem
    for seed in range(3):
        agent = agents.make(name)
        res = agents.run_episode(env, agent, seed=seed, max_steps=10**5)
        assert res.pulls <= problem.budget
        if problem.max_batches is not None:
            assert res.batches <= problem.max_batches
        assert res.recommendation.shape == (3,) and np.unique(res.recommendation).size == 3
        if name == "batch_sar" and not agent.early_exit and kw != {"budget": 400, "max_batches": 3}:
            # BatchSAR spends the whole budget (eq. 10, then the last stage).
            spent = res.pulls == problem.budget or res.batches == problem.max_batches
            assert spent, (res.pulls, res.batches)
        if name == "halving" and b is not None and "max_batches" in kw and "budget" not in kw:
            assert res.batches == problem.max_batches


@pytest.mark.parametrize(
    ("n", "k", "b", "r"),
    [
        (20, 5, 1, 1),
        (20, 5, 2, 1),
        (20, 5, 4, 2),
        (20, 5, 8, 1),
        (20, 5, 10, 3),
        (30, 3, 16, 4),
        (30, 3, 16, 16),
        (30, 3, 64, 8),
    ],
)
def test_batch_sar_stage_targets_fit_the_budget(n, k, b, r) -> None:
    # Whenever eq. (10)'s numerator is positive at s = 1, the n - n~ elimination stages
    # end within the budget: the last stage is reached (or the answer settled early).
    checked = 0
    for batches in (n // b + 3, 2 * n // b + 5, 5 * n // b + 5, 40 * n // b + 5):
        if batches * b < n:
            continue
        spec = {"instance": "uniform-random", "n_arms": n, "k": k}
        env = budget_env(spec, b, r, max_batches=batches)
        agent = agents.make("batch_sar")
        res = agents.run_episode(env, agent, seed=batches)
        nt, rt = agent.n_tilde, agent.r_tilde
        extra = sum(-(-b // i) for i in range(nt + 1, n + 1))
        numerator = agent.capacity - extra - (b + nt * rt + n)
        assert res.pulls <= agent.capacity == b * batches and res.batches <= batches
        if numerator <= 0:
            continue
        checked += 1
        assert agent.last_stage_start is not None or agent.early_exit
        if agent.last_stage_start is not None:
            assert agent.last_stage_start <= agent.capacity
            assert len(agent.stage_targets) == n - nt
            assert res.pulls == agent.capacity or res.batches == batches
    assert checked >= 2


def test_batch_sar_eq10_by_hand() -> None:
    # n = 4, b = r = 1, B = 100: n~ = 2, r~ = 1; s = 1: (100 - 0 - (1 + 1) - (1 + 2 + 4)) /
    # ((1 + 1/3 + 1/4) * 4) = 91 / 6.33 = 14.4 -> 15.
    env = budget_env({"instance": [0.9, 0.5, 0.4, 0.1], "k": 1}, 1, 1, max_batches=100)
    agent = agents.make("batch_sar")
    agent.reset(env.unwrapped.problem, seed=0)
    assert (agent.n_tilde, agent.r_tilde, agent.capacity) == (2, 1, 100)
    assert agent.stage_target(1, 0) == 15
    # s = 2 after removing an arm with 15 pulls:
    # (100 - 15 - 1 - (1 + 2 + 3)) / ((1 + 1/3) * 3) = 19.5 -> 20.
    assert agent.stage_target(2, 15) == 20


def test_batch_sar_n_tilde_and_unbounded_batch() -> None:
    env = budget_env(SPARSE, 16, 4, max_batches=50)
    agent = agents.make("batch_sar")
    agent.reset(env.unwrapped.problem, seed=0)
    assert (agent.n_tilde, agent.r_tilde) == (4, 4)
    env = budget_env(SPARSE, 64, 1, max_batches=50)  # b/r > n: uniform sampling, one stage
    agent = agents.make("batch_sar")
    res = agents.run_episode(env, agent, seed=0)
    assert agent.n_tilde == 20 and agent.stage_targets == [] and res.batches == 50
    env = budget_env(SPARSE, None, None, budget=2000)  # SAR: b = r = 1, one step per stage
    agent = agents.make("batch_sar")
    res = agents.run_episode(env, agent, seed=0)
    assert (agent.b, agent.r, agent.n_tilde) == (1, 1, 2)
    assert res.batches <= 20 and (res.pulls == 2000 or agent.early_exit)


@pytest.mark.parametrize(
    ("n", "k", "b", "r"),
    [
        (100, 10, 1, 1),
        (100, 10, 64, 1),
        (40, 6, 8, 4),
        (50, 3, None, None),
        (12, 5, 4, 4),
        (40, 5, 4, 1),
    ],
)
def test_halving_keeps_at_least_k_arms(n, k, b, r) -> None:
    kw = {"budget": 40 * n} if b is None else {"max_batches": 40 * n // b}
    env = budget_env({"instance": "uniform-random", "n_arms": n, "k": k}, b, r, **kw)
    agent = agents.make("halving")
    res = agents.run_episode(env, agent, seed=0)
    stages = math.ceil(math.log2(n / k))
    assert agent.n_stages == stages and len(agent.stage_sizes) == stages + 1
    assert min(agent.stage_sizes) >= k
    floor = k if b is None else max(k, -(-b // r))
    assert agent.stage_sizes[-1] == min(n, floor)
    assert set(res.recommendation.tolist()) <= set(agent.surviving.tolist())
    # The literal rule max(ceil(|S|/2), ceil(b/r)) drops below k for these n/k.
    literal = n
    for _ in range(stages):
        literal = max(-(-literal // 2), 1 if b is None else -(-b // r))
    if (n, k, b) in {(100, 10, 1), (40, 6, 8), (50, 3, None)}:
        assert literal < k


def test_halving_spreads_the_leftover_budget_at_random() -> None:
    env = budget_env({"instance": "uniform-random", "n_arms": 100, "k": 10}, 4, 2, max_batches=103)
    placements = set()
    for seed in range(8):
        agent = agents.make("halving")
        agent.reset(env.unwrapped.problem, seed=seed)
        shares = agent.stage_budgets
        assert shares.sum() == 103 and set(shares.tolist()) <= {25, 26}
        placements.add(tuple(shares.tolist()))
    assert len(placements) > 1


@pytest.mark.parametrize(
    ("name", "b", "r", "batches"),
    [
        ("round_robin", 8, 2, 400),
        ("halving", 8, 2, 800),
        ("batch_sar", 8, 2, 1500),
        ("batch_sar", 16, 16, 800),
    ],
)
def test_fixed_budget_identifies_an_easy_instance(name, b, r, batches, rate_at_most) -> None:
    env = budget_env(TWOGROUP, b, r, max_batches=batches)
    runs, failures, least = 15, 0, None
    for seed in range(runs):
        agent = agents.make(name)
        res = agents.run_episode(env, agent, seed=seed)
        failures += res.misidentified
        # Fewest pulls any arm had at a decision: stage targets (BatchSAR), the first
        # stage's end (Halving), the end (RoundRobin): a lower bound known in advance.
        if name == "batch_sar":
            t = min(agent.stage_targets)
        elif name == "halving":
            t = int(agent.stage_budgets[0]) * min(b, 20 * r) // 20
        else:
            t = b * batches // 20
        least = t if least is None else min(least, t)
    bound = anytime_bound(20, least, 0.4)
    assert bound < 0.01
    rate_at_most(failures, runs, bound)
