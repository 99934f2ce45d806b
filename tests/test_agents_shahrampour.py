"""NSAR, SAR (Shahrampour & Tarokh 2017; Bubeck et al. 2013) and AT-LUCB (Jun & Nowak 2016)."""

from __future__ import annotations

import math
from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401  (registers the environments)
from agents.base import Pull, ScriptedAgent
from agents.elimination.nsar import NSAR, SAR, c_p, nsar_schedule
from agents.engine.confidence import lucb_beta
from agents.lucb.at_lucb import ATLUCB, widths
from bandit_envs import hardness
from bandit_envs.scoring import top_k


def fb_env(instance, n_arms, k, budget, batch_size=None, repeat_limit=None, **kw):
    return gym.make(
        "TopK-Batch-v0",
        instance=instance,
        n_arms=n_arms,
        k=k,
        budget=budget,
        batch_size=batch_size,
        repeat_limit=repeat_limit,
        answer="agent",
        **kw,
    )


def fc_env(instance, n_arms, k):
    return gym.make(
        "TopK-Batch-v0",
        instance=instance,
        n_arms=n_arms,
        k=k,
        setting="fixed_confidence",
        batch_size=None,
        repeat_limit=1,
        answer="agent",
        max_batches=10**7,
    )


# --------------------------------------------------------------- schedule
def test_c_p_and_schedule_hand_computed():
    # K = 4: C_1 = 1/2 + 1/2 + 1/3 + 1/4 = 19/12; C_2 = 1/4 + 1/4 + 1/9 + 1/16 = 97/144.
    assert c_p(4, 1.0) == pytest.approx(19 / 12, rel=1e-15)
    assert c_p(4, 2.0) == pytest.approx(97 / 144, rel=1e-15)
    # T = 100: n_r = ceil(96 * 12 / (19 (5 - r))) = ceil(15.16), ceil(20.21), ceil(30.32)
    assert nsar_schedule(100, 4, 1.0).tolist() == [0, 16, 21, 31]
    # p = 2: n_r = ceil(96 * 144 / (97 (5 - r)^2)) = ceil(8.91), ceil(15.84), ceil(35.63)
    assert nsar_schedule(100, 4, 2.0).tolist() == [0, 9, 16, 36]
    # p = 0.5, K = 3, T = 30: C = 2^-.5 + 2^-.5 + 3^-.5 = 1.99156;
    # n_1 = ceil(27 / (C sqrt 3)) = ceil(7.83) = 8, n_2 = ceil(27 / (C sqrt 2)) = ceil(9.59) = 10
    assert nsar_schedule(30, 3, 0.5).tolist() == [0, 8, 10]
    # T = K: no pulls at all.
    assert nsar_schedule(5, 5, 1.3).tolist() == [0, 0, 0, 0, 0]


@pytest.mark.parametrize(
    "n_arms,budget", [(2, 2), (3, 7), (4, 100), (10, 1000), (50, 1250), (50, 19171)]
)
def test_sar_schedule_is_bubeck_exact(n_arms, budget):
    """p = 1 gives Bubeck et al.'s n_k = ceil((T - K) / (log-bar(K) (K + 1 - k))), exactly."""
    logbar = Fraction(1, 2) + sum(Fraction(1, i) for i in range(2, n_arms + 1))
    want = [0] + [
        math.ceil(Fraction(budget - n_arms) / (logbar * (n_arms + 1 - k))) for k in range(1, n_arms)
    ]
    assert nsar_schedule(budget, n_arms, 1.0).tolist() == want
    assert c_p(n_arms, 1.0) == pytest.approx(float(logbar), rel=1e-14)


@pytest.mark.parametrize("p", [0.3, 0.7, 0.85, 1.0, 1.1, 1.3, 2.0, 3.0])
@pytest.mark.parametrize(
    "n_arms,budget", [(2, 2), (2, 3), (5, 17), (13, 200), (50, 1250), (50, 20323)]
)
def test_schedule_spends_at_most_budget(p, n_arms, budget):
    sched = nsar_schedule(budget, n_arms, p)
    assert np.all(np.diff(sched) >= 0)
    total = int(sched[1:].sum() + sched[-1])  # sum_r (K - r + 1)(n_r - n_{r-1})
    assert total <= budget
    # ... and wastes fewer than K pulls (each of the K ceilings adds < 1).
    assert total > budget - 2 * n_arms


# ------------------------------------------------------------------ budget
BUDGET_CASES = [
    # (n, k, T, b, r)
    (5, 2, 5, None, None),
    (5, 2, 37, None, None),
    (12, 3, 400, None, None),
    (12, 3, 400, 1, 1),
    (12, 3, 401, 7, 3),
    (10, 1, 250, 4, 4),
    (10, 9, 250, 16, 2),
    (50, 2, 1250, None, None),
    (50, 4, 1250, 64, 8),
]


@pytest.mark.parametrize("n,k,T,b,r", BUDGET_CASES)
@pytest.mark.parametrize(
    "name,params", [("nsar", {}), ("nsar", {"p": 0.7}), ("sar", {}), ("at_lucb", {})]
)
def test_budget_never_exceeded(n, k, T, b, r, name, params):
    env = fb_env("shahrampour2017-setup3" if n > 3 * k else "uniform-random", n, k, T, b, r)
    agent = agents.make(name, **params)
    for seed in range(3):
        res = agents.run_episode(env, agent, seed=seed)
        assert res.pulls <= T
        assert res.recommendation.shape == (k,)
        assert np.unique(res.recommendation).size == k
        if name == "at_lucb":
            assert res.pulls == T  # anytime: spends the whole budget
        else:
            sched = nsar_schedule(T, n, agent.p)
            assert res.pulls <= int(sched[1:].sum() + sched[-1])


def test_phase_is_one_step_without_batch_limit():
    env = fb_env("shahrampour2017-setup1", 50, 2, 1250)
    agent = agents.make("nsar")
    res = agents.run_episode(env, agent, seed=0)
    # one env step per round r = 1..K-1 that pulls (n_r > n_{r-1}), fewer when the answer
    # is known early
    assert res.batches <= 49
    assert len(agent.accepted) == 2
    sched = nsar_schedule(1250, 50, agent.p)
    pulling = [r for r in range(1, 50) if sched[r] > sched[r - 1]]
    assert res.batches <= len(pulling)
    if agent.active.size > 0:
        # stopped at m_r = 0: every decision came from a round, rounds 1..R were played
        rounds = len(agent.accepted) + len(agent.rejected)
        assert res.batches == sum(1 for r in pulling if r <= rounds)


def test_truncated_by_max_batches_answers_current_set():
    # NSAR's plan for 130 pulls takes 30 batches of at most b = 5: max_batches ends it
    env = fb_env("shahrampour2017-setup1", 20, 2, 130, 5, 1, max_batches=26)
    agent = agents.make("nsar", p=0.85)
    res = agents.run_episode(env, agent, seed=4)
    assert res.batches == 26 and res.pulls < 130
    assert res.recommendation.shape == (2,)


# ------------------------------------------------------------- correctness
def _proposition2_bound(means, k, budget, p):
    """Shahrampour & Tarokh Prop. 2: 2 K^2 exp(-(T - K) / (8 C_p H^(M)(p)))."""
    n = len(means)
    return 2 * n**2 * math.exp(-(budget - n) / (8 * c_p(n, p) * hardness.h_nsar(means, k, p)))


@pytest.mark.parametrize("name,p", [("sar", 1.0), ("nsar", 0.7), ("nsar", 1.3)])
def test_easy_instance_identified(name, p, rate_at_most):
    means = np.array([0.9, 0.85, 0.3, 0.2, 0.15, 0.1])
    k, budget = 2, 3000
    bound = _proposition2_bound(means, k, budget, p)
    assert bound < 1e-3  # the instance is easy enough for the bound to say something
    env = fb_env(means, 6, k, budget)
    agent = agents.make(name, **({} if name == "sar" else {"p": p}))
    runs = 60
    failures = sum(agents.run_episode(env, agent, seed=s).misidentified for s in range(runs))
    rate_at_most(failures, runs, bound)


def test_sar_on_catalog_instance_beats_proposition_bound(rate_at_most):
    # setup 1 with 10 arms: gaps 0.2 everywhere, H2 = 10 / 0.04 = 250, C_1 = 2.43; the
    # bound 200 exp(-(T - 10) / 4860) needs T = 50000 to drop below 0.01.
    env = fb_env("shahrampour2017-setup1", 10, 2, 50000)
    means = np.array([0.7, 0.7] + [0.5] * 8)
    bound = _proposition2_bound(means, 2, 50000, 1.0)
    assert bound < 0.01
    runs = 60
    failures = sum(agents.run_episode(env, SAR(), seed=s).misidentified for s in range(runs))
    rate_at_most(failures, runs, bound)


@pytest.mark.parametrize(
    "instance,n,k", [("jiang2017-1-sparse", 6, 2), ("chen2017-twogroup", 6, 2)]
)
def test_at_lucb_fixed_confidence_error_rate(instance, n, k, rate_at_most):
    delta = 0.3  # a large delta makes the test sharper (it fails at >= 22/40 failures)
    env = fc_env(instance, n, k)
    agent = agents.make("at_lucb", delta=delta)
    runs = 40
    failures = 0
    for s in range(runs):
        res = agents.run_episode(env, agent, seed=s)
        assert res.terminated and not res.truncated  # stopped by its own rule
        failures += res.misidentified
    rate_at_most(failures, runs, delta)


def test_at_lucb_fixed_budget_easy_instance(rate_at_most):
    means = np.array([0.9, 0.85, 0.3, 0.2, 0.15, 0.1])
    env = fb_env(means, 6, 2, 600)
    runs = 40
    failures = sum(agents.run_episode(env, ATLUCB(), seed=s).misidentified for s in range(runs))
    rate_at_most(failures, runs, 0.01)


# ------------------------------------------------------ AT-LUCB internals
class _SlowATLUCB(ATLUCB):
    """The paper's loop literally, in Python: full top_k every time, s stepped one by one,
    lucb_beta; the anytime answer J(t + 1). Compared on Gaussian instances with
    ``batch_size=None``, where neither version draws from its generator (no ties), so
    the episodes must agree exactly."""

    kernel = None
    episode_kernel = None

    def _widths(self, t, delta):
        return lucb_beta(self.counts, t, self.problem.n_arms, delta, self.problem.sigma, self.k1)

    def _term(self, t, s, low):
        w = self._widths(t, self.delta_1 * self.alpha ** (s - 1))
        mu = self.means
        return (mu[low] + w[low]).max() - (mu[~low] - w[~low]).min() < self.epsilon

    def _update(self, t):
        self.t_lit = t
        high = top_k(self.means, self.problem.k, self.rng)
        low = np.ones(self.problem.n_arms, dtype=bool)
        low[high] = False
        self.high = high
        if self._term(t, self.S_lit, low):
            s = self.S_lit + 1
            while self._term(t, s, low):
                s += 1
            self.S_lit = s
            self.J = high
        elif self.S_lit == 1 or self.J is None:
            self.J = high
        return low, self._widths(t, self.delta_1 * self.alpha ** (self.S_lit - 1))

    def _run(self):
        n = self.problem.n_arms
        self.S_lit, self.J, self.t_lit = 1, None, 0
        yield Pull.each(np.arange(n), 1)
        t = 1
        while True:
            low, w = self._update(t)
            if not self.problem.fixed_budget:
                wd = self._widths(t, self.delta)
                mu = self.means
                if (mu[low] + wd[low]).max() - (mu[~low] - wd[~low]).min() < self.epsilon:
                    return self.high
            mu = self.means
            h = top_k(np.where(low, -np.inf, w - mu), 1, self.rng)[0]
            l_ = top_k(np.where(low, mu + w, -np.inf), 1, self.rng)[0]
            yield Pull(np.array([h, l_], dtype=np.int64), np.ones(2, dtype=np.int64))
            t += 1

    def current_answer(self):
        self._update(self.t_lit + 1)
        return self.J

    def recommend(self):
        return ScriptedAgent.recommend(self)


def _trace(agent, env, seed):
    """Per-step pulls of one episode (arms, reps) and the result."""
    steps = []
    orig = agent.update

    def update(arms, reps, counts, means):
        steps.append((arms.tolist(), reps.tolist()))
        orig(arms, reps, counts, means)

    agent.update = update
    # the step path (the compiled fast path plays the same episode, tests/test_fast_path.py,
    # but records no steps)
    res = agents.run_episode(env, agent, seed=seed, fast=False)
    return steps, res


@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_at_lucb_fast_paths_match_literal_loop(setting):
    kw = {"alpha": 0.9}
    if setting == "fixed_budget":
        # long run on an easy instance: S climbs by up to ~9 levels in one step
        env = fb_env("jiang2017-1-sparse", 4, 2, 4000)
    else:
        env = fc_env("jiang2017-1-sparse", 6, 2)
    for seed in range(2):
        fast, slow = ATLUCB(**kw), _SlowATLUCB(**kw)
        a, ra = _trace(fast, env, seed)
        b, rb = _trace(slow, env, seed)
        assert a == b
        assert np.array_equal(ra.recommendation, rb.recommendation)
        assert fast.S == slow.S_lit
        compiled = agents.run_episode(env, ATLUCB(**kw), seed=seed)
        assert ra.as_row() | {"wall_time": 0} == compiled.as_row() | {"wall_time": 0}
        if setting == "fixed_budget":
            assert fast.S > 100


def test_at_lucb_widths_equal_lucb_beta():
    env = fb_env("jun2016-linear", 8, 3, 200)
    agent = ATLUCB()
    agents.run_episode(env, agent, seed=1)
    for t, d in [(1, 0.5), (37, 0.01), (10**5, 1e-9)]:
        want = lucb_beta(agent.counts, t, 8, d, 0.5, 1.25)
        assert np.array_equal(widths(agent.counts, t, 8, d, 0.5, 1.25), want)


def test_at_lucb_s_nondecreasing_and_j_certified():
    env = fb_env("chen2017-twogroup", 8, 2, 4000)
    agent = ATLUCB(alpha=0.9)
    trace = []
    obs, _ = env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=0)
    while True:  # the act/observe path, reading S after every step
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, obs, float(reward), terminated, truncated, info)
        trace.append(agent.S)
        if terminated or truncated:
            break
    assert all(after >= before for before, after in zip(trace, trace[1:], strict=False))
    assert trace[-1] > 1  # the easy instance certifies J at some level
    assert not info["misidentified"]


# ------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", ["nsar", "sar", "at_lucb"])
@pytest.mark.parametrize("b,r", [(None, None), (3, 2)])
def test_determinism(name, b, r):
    env = fb_env("shahrampour2017-setup2", 12, 2, 600, b, r)
    s1, r1 = _trace(agents.make(name), env, 11)
    s2, r2 = _trace(agents.make(name), env, 11)
    assert s1 == s2
    assert np.array_equal(r1.recommendation, r2.recommendation)
    s3, _ = _trace(agents.make(name), env, 12)
    assert s3 != s1


@pytest.mark.parametrize("b,r", [(None, None), (1, 1), (5, 2)])
def test_nsar_p1_is_sar(b, r):
    env = fb_env("shahrampour2017-setup5", 20, 3, 900, b, r)
    for seed in range(4):
        n1, s1 = NSAR(p=1), SAR()
        t1, res1 = _trace(n1, env, seed)
        t2, res2 = _trace(s1, env, seed)
        assert t1 == t2
        assert n1.accepted == s1.accepted and n1.rejected == s1.rejected
        assert np.array_equal(res1.recommendation, res2.recommendation)


def test_ties_are_random_not_lowest_index():
    # all arms equal: the accepted set must vary with the seed, not be {0, 1}
    env = fb_env(np.full(8, 0.5), 8, 2, 8, shuffle=False)  # T = K: nothing is pulled
    answers = {tuple(agents.run_episode(env, SAR(), seed=s).recommendation) for s in range(30)}
    assert len(answers) > 5


# -------------------------------------------------------------- bad params
@pytest.mark.parametrize("p", [0, -1, 0.0, float("nan"), float("inf"), True, "1", None])
def test_nsar_bad_p(p):
    with pytest.raises(ValueError, match="p="):
        NSAR(p=p)


@pytest.mark.parametrize(
    "params",
    [
        {"delta_1": 0},
        {"delta_1": 1},
        {"alpha": 0},
        {"alpha": 1.0},
        {"alpha": 1.5},
        {"epsilon": -0.1},
        {"epsilon": float("inf")},
        {"delta": 0},
        {"delta": 1},
        {"delta": float("nan")},
        {"k1": 0.5},
        {"delta_1": True},
    ],
)
def test_at_lucb_bad_params(params):
    with pytest.raises(ValueError):
        ATLUCB(**params)


def test_sar_has_no_p_and_registry():
    with pytest.raises(ValueError):
        agents.make("sar", p=1.1)
    assert isinstance(agents.make("sar"), SAR)
    assert agents.make("nsar").p == 1.1
    assert isinstance(agents.make("at_lucb"), ATLUCB)


def test_nsar_rejects_fixed_confidence():
    env = fc_env("chen2017-twogroup", 6, 2)
    with pytest.raises(ValueError, match="fixed_confidence"):
        agents.run_episode(env, agents.make("nsar"), seed=0)


def test_schedule_bad_input():
    with pytest.raises(ValueError):
        nsar_schedule(4, 5, 1.0)  # T < K
    with pytest.raises(ValueError):
        nsar_schedule(10.5, 5, 1.0)
    with pytest.raises(ValueError):
        c_p(1, 1.0)
