"""``zero_shot``: plays every setting and batch model, its score's maths, its fit's inputs."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import special, stats

import agents
import bandit_envs
from agents.runner import run_episode
from agents.zero_shot import generator, index
from agents.zero_shot.agent import FITTED, ZeroShot, check_weights, load_fitted

pytestmark = pytest.mark.xdist_group("zero_shot")  # one compile of the kernels


def _env(**kwargs):
    base = dict(answer="agent", paired=True, invalid_action="raise")
    base.update(kwargs)
    return gym.make("TopK-Batch-v0", **base)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(instance="uniform-random", n_arms=12, k=3, budget=200, batch_size=None),
        dict(instance="uniform-random", n_arms=12, k=3, budget=200, batch_size=1),
        dict(instance="uniform-random", n_arms=12, k=11, budget=60, batch_size=5, repeat_limit=2),
        dict(
            instance="uniform-random", n_arms=9, k=2, max_batches=30, batch_size=6, repeat_limit=3
        ),
        dict(instance="uniform-random", n_arms=9, k=2, budget=100, max_batches=10, batch_size=None),
        dict(instance="uniform-random", n_arms=2, k=1, budget=5, batch_size=None),
        dict(instance="uniform-random", n_arms=30, k=4, budget=30, batch_size=None),
        dict(instance="jiang2017-1-sparse", n_arms=10, k=2, budget=300, batch_size=None),
        dict(instance="beta-random", n_arms=15, k=5, budget=300, batch_size=None),
    ],
)
def test_plays_fixed_budget_models(kwargs) -> None:
    """Every batch model and budget kind, Bernoulli and Gaussian: valid actions
    (``invalid_action="raise"``), the whole budget spent, k distinct arms answered."""
    env = _env(**kwargs)
    agent = agents.make("zero_shot", seed=1)
    for seed in range(3):
        res = run_episode(env, agent, seed=seed)
        problem = env.unwrapped.problem
        assert len(set(res.recommendation.tolist())) == problem.k
        if problem.budget is not None:
            assert res.pulls == problem.budget
        else:
            assert res.batches == problem.max_batches


def test_plays_categorical_rewards() -> None:
    """Rewards in [0, 1] that are not 0/1 (a categorical law): the Bernoulli bound."""
    support = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(5), size=8)
    inst = bandit_envs.instances.from_categorical(probs, support, k=2)
    env = _env(instance=inst, budget=160, batch_size=None)
    res = run_episode(env, agents.make("zero_shot", seed=0), seed=0)
    assert res.pulls == 160 and len(res.recommendation) == 2


def test_same_seed_same_episode() -> None:
    env = _env(instance="beta-random", n_arms=20, k=3, budget=300, batch_size=4, repeat_limit=2)
    a = [run_episode(env, agents.make("zero_shot", seed=5), seed=9) for _ in range(2)]
    assert a[0].recommendation.tolist() == a[1].recommendation.tolist()
    assert a[0].aggregate_regret == a[1].aggregate_regret


def test_beats_uniform_on_a_family_it_was_not_fitted_to() -> None:
    """Paired aggregate regret on jun2016-linear (50 arms, k = 5, budget 1,000), 100
    seeded episodes: the paired t statistic of uniform minus zero_shot exceeds 3.4
    (one-sided p < 5e-4 under 'no better')."""
    env = _env(instance="jun2016-linear", n_arms=50, k=5, budget=1000, batch_size=None)
    zs, uni = agents.make("zero_shot", seed=0), agents.make("uniform", seed=0)
    d = np.array(
        [
            run_episode(env, uni, seed=s).aggregate_regret
            - run_episode(env, zs, seed=s).aggregate_regret
            for s in range(100)
        ]
    )
    t = d.mean() / (d.std(ddof=1) / math.sqrt(d.size))
    assert t > 3.4, (d.mean(), t)


def test_fixed_confidence_error_within_delta() -> None:
    """``threshold="gk2016"`` is delta-correct whatever the sampling (Garivier & Kaufmann
    2016, Thm 10): 200 runs at delta = 0.1 on a 5-arm instance, errors at most the
    binomial(200, 0.1) quantile of 0.999 (a true rate <= delta exceeds it with p < 1e-3)."""
    inst = bandit_envs.instances.from_means([0.6, 0.5, 0.45, 0.4, 0.3], k=1)
    env = _env(instance=inst, setting="fixed_confidence", batch_size=1, max_batches=10**6)
    agent = agents.make("zero_shot", delta=0.1, threshold="gk2016", seed=0)
    errors = 0
    for s in range(200):
        res = run_episode(env, agent, seed=s)
        assert res.terminated
        errors += int(res.misidentified)
    assert errors <= stats.binom.ppf(0.999, 200, 0.1)


def test_fixed_confidence_gaussian_top_k() -> None:
    env = _env(
        instance="jiang2017-1-sparse",
        n_arms=8,
        k=2,
        setting="fixed_confidence",
        batch_size=1,
        max_batches=10**6,
    )
    res = run_episode(env, agents.make("zero_shot", delta=0.05, seed=0), seed=0)
    assert res.terminated and len(res.recommendation) == 2


def test_log_f_neg_matches_scipy() -> None:
    """``log f(-u)`` against scipy's ``erfcx`` (Mills' ratio without cancellation)."""
    for u in [0.0, 0.3, 1.0, 2.5, 5.0, 7.9, 8.0, 8.1, 12.0, 30.0]:
        mills = 0.5 * special.erfcx(u / math.sqrt(2.0)) * math.sqrt(2.0 * math.pi)
        want = stats.norm.logpdf(u) + math.log1p(-u * mills)
        assert index.log_f_neg(u) == pytest.approx(want, rel=2e-6, abs=1e-9), u


def test_gaussian_kg_matches_monte_carlo() -> None:
    """``KG_m = E[max(mu', c)] - max(mu, c)`` of a normal update, by 4e6 draws (the
    estimate's standard error is far below the 2% tolerance at these values)."""
    rng = np.random.default_rng(0)
    noise, neff, d = 0.25, 10.0, 0.08
    for m in (1, 4):
        t = math.sqrt(noise * m / (neff * (neff + m)))
        draws = rng.normal(0.0, t, size=4_000_000)
        want = np.maximum(draws - d, 0.0).mean()
        got = math.exp(index.log_kg_star(d, noise, neff, m) + math.log(m))
        assert got >= want * 0.98  # KG* is the max over m' <= m of KG_m' / m'
    got1 = math.exp(index.log_kg_star(d, noise, neff, 1))
    t1 = math.sqrt(noise / (neff * (neff + 1)))
    want1 = np.maximum(rng.normal(0.0, t1, size=4_000_000) - d, 0.0).mean()
    assert got1 == pytest.approx(want1, rel=0.02)


def test_posterior_recovers_prior_moments() -> None:
    """Method of moments: 400 Bernoulli arms with means from Beta(2, 6) (mean 0.25,
    variance 0.0208), 30 pulls each: the estimated prior weight ``n0 = q / v0 - 1`` is
    within 40% of the true ``a + b = 8``."""
    rng = np.random.default_rng(1)
    p = rng.beta(2, 6, size=400)
    counts = np.full(400, 30)
    means = rng.binomial(30, p) / 30
    mu, noise, neff = np.empty(400), np.empty(400), np.empty(400)
    n0 = index.posterior(counts, means, False, 0.0, 0.0, mu, noise, neff)
    assert 8 * 0.6 < n0 < 8 * 1.4


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="weights"):
        ZeroShot(weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="unknown weights"):
        ZeroShot(weights={"w_bogus": 1.0})
    with pytest.raises(ValueError, match="leader='x'"):
        ZeroShot(leader="x")
    with pytest.raises(ValueError, match="delta"):
        ZeroShot(delta=2.0)
    assert check_weights({"w_z": 1.0})[1] == 1.0


def test_shipped_parameters_load() -> None:
    data = load_fitted()
    assert data == FITTED
    assert len(check_weights(data["fixed_budget"]["weights"])) == index.N_WEIGHTS
    assert data["fixed_confidence"]["leader"] in ("eb", "ts")


def test_generator_is_reproducible_and_within_its_ranges() -> None:
    a, b = generator.draw_specs(50, 7), generator.draw_specs(50, 7)
    assert a == b
    for spec in a:
        assert 4 <= spec.n <= 400 and 1 <= spec.k < spec.n
        assert spec.shape in ("beta", "clusters", "power")
        assert (spec.budget is None) != (spec.max_batches is None) or spec.budget is not None
        means = spec.means(np.random.default_rng(0))
        assert means.shape == (spec.n,) and np.all((means >= 0) & (means <= 1))


def test_the_fit_runs_end_to_end_and_writes_loadable_parameters(tmp_path) -> None:
    """A tiny fit (2 problems, one generation of 2 candidates; a 2-problem grid) writes a
    ``fitted.toml`` that loads, with the history of the generation means' losses."""
    from agents.zero_shot import fit

    budget = fit.fit_budget(
        seed=3,
        problems=2,
        per_problem=1,
        iterations=1,
        population=2,
        elite=1,
        jobs=1,
        log=lambda *_: None,
    )
    assert len(budget["history"]) == 2 and budget["loss"] == min(budget["history"])
    confidence = fit.fit_confidence(seed=3, problems=2, runs=1, jobs=1, log=lambda *_: None)
    assert confidence["leader"] in ("eb", "ts") and 0 < confidence["beta"] < 1
    path = tmp_path / "fitted.toml"
    fit.write(path, budget, confidence, {"seed": 3})
    data = load_fitted(path)
    assert data["seed"] == 3
    assert list(data["fixed_budget"]["weights"]) == budget["weights"]
    ZeroShot(weights=data["fixed_budget"]["weights"])
