"""The compiled exact DP and policy evaluation (agents.bayesian.exact) on tiny families."""

from __future__ import annotations

import itertools
import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import integrate, stats

import agents
import bandit_envs  # noqa: F401
from agents.bayesian.exact import (
    BatchDP,
    BetaBernoulliDP,
    batch_uniform_rule,
    kg_rule,
    kg_top_batch_rule,
    rule_weights,
    state_count,
)
from agents.bayesian.knowledge_gradient import kg_values


class _Recursion:
    """The Bellman recursion written plainly (memoised over sorted states): the reference."""

    def __init__(self, a: float, b: float, k: int) -> None:
        self.a, self.b, self.k = a, b, k
        self.memo: dict = {}

    def q_values(self, state, t):
        out = []
        for i, (s, f) in enumerate(state):
            p = (self.a + s) / (self.a + self.b + s + f)
            win = state[:i] + ((s + 1, f),) + state[i + 1 :]
            loss = state[:i] + ((s, f + 1),) + state[i + 1 :]
            out.append(p * self.value(win, t - 1) + (1 - p) * self.value(loss, t - 1))
        return out

    def value(self, state, t):
        if t == 0:
            means = sorted(((self.a + s) / (self.a + self.b + s + f) for s, f in state))[::-1]
            return float(sum(means[: self.k]))
        key = (tuple(sorted(state)), t)
        if key not in self.memo:
            self.memo[key] = max(self.q_values(key[0], t))
        return self.memo[key]


TINY = [
    (1, 1, 3, 1.0, 1.0),
    (2, 1, 6, 1.0, 1.0),
    (3, 1, 9, 1.0, 1.0),
    (3, 2, 8, 0.5, 2.0),
    (3, 3, 4, 1.0, 1.0),
    (4, 2, 6, 5.0, 5.0),
    (4, 1, 5, 0.7, 0.3),
    (5, 2, 4, 1.0, 1.0),
]


@pytest.mark.parametrize(("n", "t"), [(1, 5), (2, 6), (3, 6), (4, 5), (5, 4)])
def test_levels_hold_every_multiset_once_in_rank_order(n: int, t: int) -> None:
    dp = BetaBernoulliDP(n, 1, t)
    total = 0
    for level in range(t + 1):
        pairs = [(m - f, f) for m in range(level + 1) for f in range(m + 1)]
        want = {
            c
            for c in itertools.combinations_with_replacement(pairs, n)
            if sum(map(sum, c)) == level
        }
        s, f = dp.level_states(level)
        got = [tuple(sorted(zip(s[r].tolist(), f[r].tolist(), strict=True))) for r in range(len(s))]
        assert len(got) == len(want) == dp.level_sizes[level]
        assert set(got) == {tuple(sorted(c)) for c in want}
        assert [dp.rank(s[r], f[r]) for r in range(len(s))] == list(range(len(s)))
        assert dp.rank(s[-1][::-1], f[-1][::-1]) == len(s) - 1  # any order of the arms
        total += len(want)
    assert dp.n_states == state_count(n, t) == total


@pytest.mark.parametrize(("n", "k", "budget", "a", "b"), TINY)
def test_compiled_dp_equals_the_recursion(n, k, budget, a, b) -> None:
    ref = _Recursion(a, b, k)
    dp = BetaBernoulliDP(n, k, budget, a, b)
    assert dp.solve() == pytest.approx(ref.value(((0, 0),) * n, budget), abs=1e-12)
    rng = np.random.default_rng(n * 100 + budget)
    for _ in range(20):  # arm values at random states, arms in any order
        t = int(rng.integers(0, budget))
        counts = rng.multinomial(t, np.ones(n) / n)
        s = rng.binomial(counts, 0.5)
        state = tuple(zip(s.tolist(), (counts - s).tolist(), strict=True))
        want = ref.q_values(state, budget - t)
        assert dp.q_values(s, counts - s) == pytest.approx(want, abs=1e-12)
    for t in range(budget + 1):
        s, f = dp.level_states(t)
        r = int(rng.integers(0, len(s)))
        state = tuple(zip(s[r].tolist(), f[r].tolist(), strict=True))
        assert dp.values(t)[r] == pytest.approx(ref.value(state, budget - t), abs=1e-12)


def test_values_of_the_three_arm_budget_30_family() -> None:
    """n = 3, k = 1, T = 30, Beta(1, 1): the optimum, KG* and round robin.

    Round robin pulls every arm 10 times; each arm's successes are then uniform on
    0..10 (Beta-binomial(10, 1, 1)), so its value is ``E[max of 3 uniforms on 0..10]
    + 1`` over 12 = ``(11 - sum_{i <= 11} i^3 / 11^3 + 1) / 12 = 8 / 11``.
    """
    dp = BetaBernoulliDP(3, 1, 30)
    v, kg, rr = dp.solve(), dp.evaluate("kg"), dp.evaluate("uniform")
    assert rr == pytest.approx((11 - sum(i**3 for i in range(1, 12)) / 11**3 + 1) / 12, abs=1e-12)
    assert (round(v, 5), round(kg, 5), round(rr, 5)) == (0.73239, 0.73230, 0.72727)
    assert rr < kg < v


def _uniform_by_counts(n: int, budget: int, a: float, b: float, k: int) -> float:
    """Round robin's value from its final allocation: an independent computation.

    ``budget mod n`` arms get one more pull; each arm's successes are Beta-binomial and
    independent, so E[top-k posterior means] is a sum over the outcome grid.
    """
    m = budget // n
    counts = [m + 1] * (budget % n) + [m] * (n - budget % n)
    grids = []
    for c in counts:
        j = np.arange(c + 1)
        pmf = np.array(
            [
                math.comb(c, x)
                * math.exp(
                    math.lgamma(a + x)
                    + math.lgamma(b + c - x)
                    - math.lgamma(a + b + c)
                    - math.lgamma(a)
                    - math.lgamma(b)
                    + math.lgamma(a + b)
                )
                for x in j
            ]
        )
        grids.append(list(zip(pmf, (a + j) / (a + b + c), strict=True)))
    total = 0.0
    for outcome in itertools.product(*grids):
        p = math.prod(x[0] for x in outcome)
        total += p * sum(sorted((x[1] for x in outcome), reverse=True)[:k])
    return total


@pytest.mark.parametrize(
    ("n", "k", "budget", "a", "b"), [(3, 1, 10, 1.0, 1.0), (4, 2, 9, 5.0, 5.0)]
)
def test_uniform_rule_is_round_robin(n, k, budget, a, b) -> None:
    dp = BetaBernoulliDP(n, k, budget, a, b)
    assert dp.evaluate("uniform") == pytest.approx(
        _uniform_by_counts(n, budget, a, b, k), abs=1e-12
    )


@pytest.mark.parametrize(
    ("n", "k", "budget", "a", "b"), [*TINY, (3, 1, 20, 1.0, 1.0), (4, 2, 12, 5.0, 5.0)]
)
def test_the_optimal_policy_evaluates_to_v_star_and_bounds_every_policy(n, k, budget, a, b) -> None:
    dp = BetaBernoulliDP(n, k, budget, a, b)
    v = dp.solve()
    assert dp.evaluate("optimal") == pytest.approx(v, abs=1e-12)
    for policy in ("kg", "uniform"):
        assert dp.evaluate(policy) <= v + 1e-12


def test_a_python_level_policy_equals_the_compiled_rule() -> None:
    """KG* given as a Python callable (kg_values row by row, ties within 1e-12), called on
    chunks of 7 states, and as the compiled rule: the same value."""

    def kg_by_rows(alpha, beta, k, pulls):
        out = np.empty(alpha.shape)
        for r in range(alpha.shape[0]):
            v = kg_values(alpha[r], beta[r], k, pulls)
            out[r] = v >= v.max() - 1e-12
        return out

    for n, k, budget, a, b in [(3, 1, 10, 1.0, 1.0), (4, 2, 8, 5.0, 5.0)]:
        dp = BetaBernoulliDP(n, k, budget, a, b)
        want = dp.evaluate(kg_rule)
        assert dp.evaluate(kg_by_rows, chunk=7) == pytest.approx(want, abs=1e-12)
        assert dp.evaluate(lambda al, be, kk, p: rule_weights(kg_rule, al, be, kk, p)) == want


def test_a_one_step_look_ahead_by_hand() -> None:
    """Two fresh arms, k = 1, one pull: any arm, 7/12 (the first KG example)."""
    dp = BetaBernoulliDP(2, 1, 1)
    assert dp.solve() == pytest.approx(7 / 12, abs=1e-15)
    assert dp.q_values([0, 0], [0, 0]) == pytest.approx([7 / 12, 7 / 12], abs=1e-15)
    # a policy that always pulls arm "0" of the canonical order: the same here
    assert dp.evaluate(lambda al, be, k, p: np.eye(2)[[0] * len(al)]) == pytest.approx(7 / 12)


def test_bad_input_raises_naming_the_value() -> None:
    with pytest.raises(ValueError, match=r"n_arms=4 with budget=60 has at least \d+ posterior"):
        BetaBernoulliDP(4, 1, 60)
    with pytest.raises(ValueError, match=r"n_arms=3 with budget=10 has 1506 posterior states"):
        BetaBernoulliDP(3, 1, 10, max_states=1400)  # (C(16, 6) / 3! = 1334 <= 1400)
    with pytest.raises(ValueError, match=r"k=4 must satisfy 1 <= k <= n_arms=3"):
        BetaBernoulliDP(3, 4, 10)
    with pytest.raises(ValueError, match=r"prior b=0 must be a positive finite number"):
        BetaBernoulliDP(3, 1, 10, 1.0, 0)
    with pytest.raises(ValueError, match=r"budget=-1 must be an integer >= 0"):
        BetaBernoulliDP(3, 1, -1)
    dp = BetaBernoulliDP(3, 1, 4)
    with pytest.raises(ValueError, match=r"policy='kgg' must be"):
        dp.evaluate("kgg")
    with pytest.raises(ValueError, match=r"must be finite and >= 0"):
        dp.evaluate(lambda al, be, k, p: -np.ones(al.shape))
    with pytest.raises(ValueError, match=r"are all 0 for some state"):
        dp.evaluate(lambda al, be, k, p: np.zeros(al.shape))
    with pytest.raises(ValueError, match=r"at level t=3 have shape \(14, 2\), not \(14, 3\)"):
        dp.evaluate(lambda al, be, k, p: np.ones((al.shape[0], 2)))
    with pytest.raises(ValueError, match=r"no pull is left of budget=4"):
        dp.q_values([2, 1, 0], [0, 0, 1])
    with pytest.raises(ValueError, match=r"at most budget=4 pulls"):
        dp.q_values([2, 1, 2], [0, 0, 1])


# ---------------------------------------------------------------------------------------
# Batches


@pytest.mark.parametrize("k", [1, 2])
def test_batch_dp_with_batches_of_one_is_the_sequential_dp(k) -> None:
    assert BatchDP(3, k, 1, 1, 7).solve() == pytest.approx(BetaBernoulliDP(3, k, 7).solve())
    assert BatchDP(4, k, 1, 1, 5, 5.0, 5.0).solve() == pytest.approx(
        BetaBernoulliDP(4, k, 5, 5.0, 5.0).solve(), abs=1e-12
    )


@pytest.mark.parametrize(("k", "batches", "a", "b"), [(1, 4, 1.0, 1.0), (2, 6, 5.0, 5.0)])
def test_batch_optimum_lies_between_its_sequential_bounds(k, batches, a, b) -> None:
    """b = 2, r = 1: B batches of two pulls are worth at least B single pulls, at most 2B
    (a sequential policy can play any batch policy one pull at a time); partial batches
    add nothing (more information never lowers a Bayes-optimal value), and round robin
    in batches is round robin over 2B pulls (non-adaptive: the same final allocation)."""
    dp = BatchDP(3, k, 2, 1, batches, a, b)
    assert dp.actions.shape == (6, 3)  # 3 single pulls and 3 pairs
    v = dp.solve()
    one = BetaBernoulliDP(3, k, batches, a, b).solve()
    two = BetaBernoulliDP(3, k, 2 * batches, a, b)
    assert one < v < two.solve()
    assert BatchDP(3, k, 2, 1, batches, a, b, partial=False).solve() == pytest.approx(v, abs=1e-12)
    assert dp.evaluate(batch_uniform_rule) == pytest.approx(two.evaluate("uniform"), abs=1e-12)


def test_batch_dp_pmf_of_repeated_pulls() -> None:
    """r = 2 (two pulls of one arm in a batch): one batch of two pulls on a single arm, k = 1,
    is worth the two-pull sequential optimum (a single arm: nothing to choose)."""
    assert BatchDP(1, 1, 2, 2, 3).solve() == pytest.approx(0.5)
    got = BatchDP(2, 1, 2, 2, 2).solve()
    assert BetaBernoulliDP(2, 1, 2).solve() - 1e-12 <= got <= BetaBernoulliDP(2, 1, 4).solve()


# ---------------------------------------------------------------------------------------
# Played episodes against the exact values


def _expected_top_k(n: int, k: int, a: float, b: float) -> float:
    """E[sum of the k largest of n i.i.d. Beta(a, b)] = sum_j int P(at least j exceed x) dx."""

    def at_least(x, j):
        s = stats.beta.sf(x, a, b)
        return sum(math.comb(n, i) * s**i * (1 - s) ** (n - i) for i in range(j, n + 1))

    return sum(
        integrate.quad(at_least, 0, 1, args=(j,), epsabs=1e-13, epsrel=1e-13)[0]
        for j in range(1, k + 1)
    )


def _bernstein(x: np.ndarray, delta: float) -> float:
    """Empirical Bernstein radius for the mean of [0, 1] variables, two-sided, level delta
    (Maurer & Pontil, "Empirical Bernstein bounds and sample variance penalization",
    COLT 2009, Thm. 4, with delta / 2 a side)."""
    n = x.size
    log = math.log(4 / delta)
    return math.sqrt(2 * x.var(ddof=1) * log / n) + 7 * log / (3 * (n - 1))


@pytest.mark.parametrize(
    ("name", "n", "k", "budget", "a", "b", "batches"),
    [
        ("kg", 3, 1, 12, 1.0, 1.0, None),
        ("uniform", 3, 1, 12, 1.0, 1.0, None),
        ("kg", 3, 2, None, 5.0, 5.0, 6),  # one pull per batch, 6 batches of b = 2
    ],
)
def test_evaluated_policy_matches_played_episodes(name, n, k, budget, a, b, batches) -> None:
    """Mean regret of seeded episodes (per arm of the answer, as the env scores it) within
    an empirical Bernstein radius (delta = 1e-6) of ``(E[top-k sum] - exact value) / k``.

    Round robin answers with the empirical top k: with 12 pulls of 3 arms every arm has
    4, and the empirical order is the posterior order. In the batch row KG pulls once a
    batch: ``batches`` pulls, looking ahead the pulls its budget (``2 batches``) has left.
    """
    kw = dict(instance="beta-random", instance_params={"a": a, "b": b}, n_arms=n, k=k)
    kw |= dict(answer="agent")
    if batches is None:
        env = gym.make("TopK-Batch-v0", budget=budget, batch_size=1, **kw)
        dp = BetaBernoulliDP(n, k, budget, a, b)
        value = dp.evaluate(name)
    else:
        env = gym.make("TopK-Batch-v0", max_batches=batches, batch_size=2, repeat_limit=1, **kw)
        dp = BetaBernoulliDP(n, k, batches, a, b)
        value = dp.evaluate(lambda al, be, kk, p: rule_weights(kg_rule, al, be, kk, p + batches))
    agent = agents.make(name, **({} if name == "uniform" else {"a": a, "b": b}))
    regret = []
    for seed in range(20_000):
        res = agents.run_episode(env, agent, seed=seed)
        assert res.pulls == (budget if batches is None else batches)
        regret.append(res.aggregate_regret)
    regret = np.array(regret)
    want = (_expected_top_k(n, k, a, b) - value) / k
    assert abs(regret.mean() - want) <= _bernstein(regret, 1e-6)


@pytest.mark.parametrize(("k", "a", "b"), [(1, 1.0, 1.0), (2, 5.0, 5.0)])
def test_kg_top_batch_of_one_is_kg(k, a, b) -> None:
    """Batches of one pull: the top-1 batch rule is KG* itself; with b = 2 it is below V*."""
    got = BatchDP(3, k, 1, 1, 8, a, b).evaluate(kg_top_batch_rule)
    assert got == pytest.approx(BetaBernoulliDP(3, k, 8, a, b).evaluate("kg"), abs=1e-12)
    dp = BatchDP(3, k, 2, 1, 5, a, b)
    assert dp.evaluate(kg_top_batch_rule) <= dp.solve() + 1e-12
