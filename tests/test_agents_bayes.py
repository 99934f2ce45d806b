"""Prior-aware yardsticks: knowledge gradient, top-two Thompson sampling, exact Bayes DP."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.bayesian.bayes_dp import BayesOptimalDP, bayes_value
from agents.bayesian.beta_prior import beta_binomial_pmf, prior_of
from agents.bayesian.knowledge_gradient import KnowledgeGradient, kg_choice, kg_values
from agents.bayesian.top_two_thompson import TopTwoThompson
from agents.bayesian.top_two_thompson import choose as ttts_choose
from agents.engine.posterior_top_set import new_state, sample_top_set
from agents.engine.posterior_top_set import update as update_top_set
from bandit_envs import instances


def test_priors_of_the_catalog_families() -> None:
    assert prior_of(instances.make("uniform-random", n_arms=3, k=1)) == (1.0, 1.0)
    assert prior_of(instances.make("beta-random", n_arms=3, k=1, a=2.0, b=7.0)) == (2.0, 7.0)
    with pytest.raises(ValueError, match="no means from a known Beta prior"):
        prior_of(instances.make("zhou2014-two-level", n_arms=10, k=2))


def test_bad_input_raises_naming_the_value() -> None:
    with pytest.raises(ValueError, match=r"prior a=0 must be a positive finite number"):
        KnowledgeGradient(a=0)
    with pytest.raises(ValueError, match=r"prior b=nan"):
        TopTwoThompson(b=float("nan"))
    with pytest.raises(ValueError, match=r"beta=1.0 must lie in \(0, 1\)"):
        TopTwoThompson(beta=1.0)
    env = gym.make("TopK-Batch-v0", n_arms=3, k=1, budget=200, batch_size=1, answer="agent")
    with pytest.raises(
        ValueError,
        match=r"n_arms=3 with budget=200 has at least \d+ posterior states .* max_states=40000000",
    ):
        agents.run_episode(env, BayesOptimalDP(), seed=0)
    gauss = gym.make(
        "TopK-Batch-v0",
        instance=[0.5, 0.2, 0.1],
        k=1,
        distribution="gaussian",
        sigma=1.0,
        budget=9,
        batch_size=1,
        answer="agent",
    )
    for agent in (KnowledgeGradient(), TopTwoThompson(), BayesOptimalDP()):
        with pytest.raises(ValueError, match="needs distribution='bernoulli'"):
            agents.run_episode(gauss, agent, seed=0)


def test_kg_values_by_hand_and_against_the_beta_binomial_sum() -> None:
    # two fresh arms, k = 1: one pull lifts E[max] from 1/2 to (2/3 + 1/2) / 2 = 7/12
    assert kg_values(np.ones(2), np.ones(2), 1, 1) == pytest.approx([1 / 12, 1 / 12])
    rng = np.random.default_rng(0)
    alpha, beta = rng.integers(1, 20, 5).astype(float), rng.integers(1, 20, 5).astype(float)
    mu = alpha / (alpha + beta)
    got = kg_values(alpha, beta, 2, 1)
    for i in range(5):
        c = np.sort(np.delete(mu, i))[::-1][1]
        after = (alpha[i] + np.arange(2)) / (alpha[i] + beta[i] + 1)
        want = beta_binomial_pmf(1, alpha[i], beta[i]) @ np.maximum(after, c) - max(mu[i], c)
        assert got[i] == pytest.approx(want, abs=1e-12)


def test_bayes_value_by_hand() -> None:
    assert bayes_value(2, 1, 0) == pytest.approx(0.5)
    assert bayes_value(2, 1, 1) == pytest.approx(7 / 12)
    values = [bayes_value(3, 1, t) for t in range(8)]
    assert all(b > a for a, b in zip(values, values[1:], strict=False))
    assert values[-1] < 3 / 4  # E[max of 3 uniforms]: full information


@pytest.fixture(scope="module")
def tiny_family_results():
    """3 arms, k = 1, 10 pulls, means ~ U[0, 1]: 300 paired episodes per agent."""
    env = gym.make(
        "TopK-Batch-v0",
        instance="uniform-random",
        n_arms=3,
        k=1,
        budget=10,
        batch_size=1,
        answer="agent",
        paired=True,
    )
    players = {
        "bayes_dp": BayesOptimalDP(),
        "kg": KnowledgeGradient(),
        "ttts": TopTwoThompson(),
        "uniform": agents.make("uniform"),
    }
    out = {}
    for name, agent in players.items():
        results = [agents.run_episode(env, agent, seed=seed) for seed in range(300)]
        assert all(r.pulls == 10 for r in results)
        out[name] = np.array([r.aggregate_regret for r in results])
    return out


def test_dp_is_the_ceiling_on_its_family(tiny_family_results) -> None:
    """The exact DP is Bayes-optimal: no agent has a lower mean regret (paired, 3 SE)."""
    dp = tiny_family_results["bayes_dp"]
    for name, regret in tiny_family_results.items():
        diff = regret - dp
        se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.any() else 0.0
        assert diff.mean() >= -3 * se, name


def test_dp_value_matches_its_play() -> None:
    """E[regret of the DP] = E[max of 3 uniforms] - bayes_value (Monte Carlo, 4 SE)."""
    env = gym.make(
        "TopK-Batch-v0",
        instance="uniform-random",
        n_arms=3,
        k=1,
        budget=6,
        batch_size=1,
        answer="agent",
    )
    agent = BayesOptimalDP()
    regret = np.array(
        [agents.run_episode(env, agent, seed=s).aggregate_regret for s in range(1500)]
    )
    want = 3 / 4 - bayes_value(3, 1, 6)
    assert abs(regret.mean() - want) < 4 * regret.std(ddof=1) / np.sqrt(regret.size)


@pytest.mark.parametrize("make", [KnowledgeGradient, TopTwoThompson])
def test_recovers_the_top_k_of_an_easy_instance(make) -> None:
    env = gym.make(
        "TopK-Batch-v0",
        instance=[0.9, 0.85, 0.2, 0.15, 0.1],
        k=2,
        budget=150,
        batch_size=1,
        answer="agent",
    )
    right = [agents.run_episode(env, make(), seed=s).misidentified is False for s in range(30)]
    assert sum(right) >= 28


def test_ttts_fills_batches_within_b_and_r_and_is_seeded() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        instance="beta-random",
        n_arms=8,
        k=3,
        budget=60,
        batch_size=4,
        repeat_limit=2,
        answer="agent",
    )
    agent = TopTwoThompson(a=5, b=5)
    first = agents.run_episode(env, agent, seed=3)
    again = agents.run_episode(env, agent, seed=3)
    assert first.pulls == 60 and first.batches == 15  # full batches of b = 4
    assert first.as_row() | {"wall_time": 0} == again.as_row() | {"wall_time": 0}


def _kg_values_by_definition(alpha, beta, k, pulls):
    """KG* written out in NumPy: every m, every Beta-binomial term (log domain), no bounds."""
    mu = alpha / (alpha + beta)
    ranked = np.sort(mu)[::-1]
    order = np.argsort(-mu, kind="stable")
    in_top = np.zeros(mu.size, dtype=bool)
    in_top[order[:k]] = True
    c = np.where(in_top, ranked[min(k, mu.size - 1)], ranked[k - 1])
    out = np.zeros(mu.size)
    for m in sorted({1, *(2**e for e in range(1, 12) if 2**e <= pulls), pulls}):
        for i in range(mu.size):
            pmf = beta_binomial_pmf(m, alpha[i], beta[i])
            after = (alpha[i] + np.arange(m + 1)) / (alpha[i] + beta[i] + m)
            gain = pmf @ np.maximum(after, c[i]) - max(mu[i], c[i])
            out[i] = max(out[i], gain / m)
    return out


def _kg_states(count: int):
    """Posterior states: spread, equal arms (shared evaluations), priors below 1, long looks."""
    rng = np.random.default_rng(11)
    for trial in range(count):
        n = int(rng.integers(2, 40))
        k = int(rng.integers(1, n + 1))
        prior = (0.5, 0.7) if trial % 4 == 0 else (1.0, 1.0)
        pulls_made = rng.integers(0, 40, n)
        if trial % 3 == 0:  # many arms in a few posterior states
            pulls_made = rng.choice(pulls_made[:3], n)
        wins = rng.binomial(pulls_made, 0.5)
        if trial % 3 == 0:
            wins = pulls_made // 2
        alpha, beta = prior[0] + wins, prior[1] + pulls_made - wins
        pulls = int(rng.choice([1, 2, 3, 5, 17, 64, 300, 2500]))
        yield alpha.astype(float), beta.astype(float), k, pulls


def test_kg_values_are_the_definition() -> None:
    """The compiled values (linear-domain pmf, early stops) equal the term-by-term sum."""
    for alpha, beta, k, pulls in _kg_states(40):
        want = _kg_values_by_definition(alpha, beta, k, min(pulls, 300))
        assert kg_values(alpha, beta, k, min(pulls, 300)) == pytest.approx(want, abs=1e-12)


def test_kg_choice_is_the_tied_argmax_of_every_value() -> None:
    """Skipping arms by the bound U_1 and sharing equal arms' values changes no decision.

    The reference evaluates every arm in full and draws the tie as the agent documents it
    (``rng.choice`` over the arms within 1e-12 of the largest value, in index order); the
    generators must also end in the same state.
    """
    for seed, (alpha, beta, k, pulls) in enumerate(_kg_states(300)):
        values = kg_values(alpha, beta, k, pulls)
        ref_rng, rng = np.random.default_rng(seed), np.random.default_rng(seed)
        want = int(ref_rng.choice(np.flatnonzero(values >= values.max() - 1e-12)))
        assert kg_choice(alpha, beta, k, pulls, rng) == want
        assert rng.random() == ref_rng.random()


def _ttts_choice_by_definition(alpha, beta, k, leader_prob, max_resamples, counts, st, rng):
    """One TTTS draw written in Python sets over the sampler's top-k sets."""
    lead, other = np.empty(k, np.int64), np.empty(k, np.int64)
    sample_top_set(alpha, beta, k, st, rng, lead)
    for _ in range(max_resamples):
        sample_top_set(alpha, beta, k, st, rng, other)
        if set(other.tolist()) != set(lead.tolist()):
            if rng.random() < leader_prob:
                side = [i for i in lead.tolist() if i not in other]
            else:
                side = [i for i in other.tolist() if i not in lead]
            return side[int(rng.integers(0, len(side)))]
    return min(lead.tolist(), key=lambda i: (counts[i], i))


def test_ttts_draw_is_the_documented_one() -> None:
    """Leader set, resamples, coin and side as documented, draw for draw, over the
    posterior top-k sets of ``agents.engine.posterior_top_set`` (its law: its own tests)."""
    rng0 = np.random.default_rng(5)
    fallbacks = 0
    for trial in range(300):
        n = int(rng0.integers(2, 40))
        k = int(rng0.integers(1, n))
        counts = rng0.integers(0, 60 if trial % 5 else 2000, n)
        wins = rng0.binomial(counts, rng0.uniform(0.1, 0.9, n))
        alpha, beta = 1.0 + wins, 1.0 + counts - wins
        cap = 1 if trial % 7 == 0 else 100  # a cap of 1: the fallback happens
        st = new_state(n)
        update_top_set(alpha, beta, k, st, np.empty(0, np.int64))
        ref_rng, rng = np.random.default_rng(trial), np.random.default_rng(trial)
        want = _ttts_choice_by_definition(alpha, beta, k, 0.5, cap, counts, st, ref_rng)
        mark = np.zeros((2, n), np.int8)
        scratch = np.empty(k, np.int64), np.empty(k, np.int64), mark
        got = ttts_choose(alpha, beta, k, 0.5, cap, counts, rng, st, *scratch)
        assert got == want
        assert rng.random() == ref_rng.random()
        assert not mark.any()  # the scratch is left clean
        lead = np.empty(k, np.int64)
        sample_top_set(alpha, beta, k, st, np.random.default_rng(trial), lead)
        fallbacks += cap == 1 and got == min(lead.tolist(), key=lambda i: (counts[i], i))
    assert fallbacks >= 5  # (the least-pulled-leader branch is played)
