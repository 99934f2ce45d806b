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

# one compile of the kernels, the Top-Two one shared with EB-TC, T3C, TTTS
# (tests/_kernel_groups.py)
pytestmark = pytest.mark.kernel_group("zero_shot")


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


@pytest.mark.parametrize("batch", [dict(batch_size=None), dict(batch_size=6, repeat_limit=2)])
def test_fixed_budget_misidentification_from_the_threshold_plays_the_top_two_rule(batch) -> None:
    """On the misidentification objective with at least ``top_two_from`` pulls per arm the
    fixed budget plays the fitted Top-Two rule (shipped: T3C's leader and challenger with
    tracking) to the end of the budget: the same pulls, arm by arm, as T3C with tracking.
    Below the threshold, and on the regret objective, it plays the index rule."""
    assert (FITTED["fixed_confidence"]["leader"], FITTED["fixed_confidence"]["forced"]) == (
        "ts",
        False,
    )
    # 300 pulls on 12 arms: 25 per arm
    cases = (
        ("misidentification", 25.0, True),
        ("misidentification", 0.0, True),
        ("misidentification", 25.5, False),
        ("misidentification", math.inf, False),
        ("aggregate_regret", 0.0, False),
    )
    for objective, top_two_from, same in cases:
        env = _env(instance="beta-random", n_arms=12, k=3, budget=300, objective=objective,
                   **batch)  # fmt: skip
        differ = 0
        for seed in range(3):
            zs = agents.make("zero_shot", top_two_from=top_two_from, seed=seed)
            t3c = agents.make("t3c", tracking=True, seed=seed)
            t3c.fill_batches = zs.fill_batches
            a, b = run_episode(env, zs, seed=seed), run_episode(env, t3c, seed=seed)
            assert a.pulls == b.pulls == 300
            if same:
                assert zs.counts.tolist() == t3c.counts.tolist()
                assert a.recommendation.tolist() == b.recommendation.tolist()
            differ += zs.counts.tolist() != t3c.counts.tolist()
        assert differ == (0 if same else 3), (objective, top_two_from)


def test_pulls_per_arm_reads_the_budget_or_the_batches() -> None:
    from agents.zero_shot.agent import pulls_per_arm

    def problem(**kw):
        return _env(instance="uniform-random", n_arms=10, k=2, **kw).unwrapped.problem

    assert pulls_per_arm(problem(budget=250, batch_size=None)) == 25.0
    assert pulls_per_arm(problem(max_batches=30, batch_size=4, repeat_limit=2)) == 12.0
    fc = _env(instance="uniform-random", n_arms=10, k=2, setting="fixed_confidence",
              batch_size=None, repeat_limit=2).unwrapped.problem  # fmt: skip
    assert pulls_per_arm(fc) is None


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
    assert _proven_threshold_errors(batch_size=1) <= stats.binom.ppf(0.999, 200, 0.1)


def _proven_threshold_errors(**batch) -> int:
    """Misidentified episodes of 200 at ``delta = 0.1``, ``threshold="gk2016"``, on a
    5-arm Bernoulli instance (k = 1), every episode stopped by the GLR rule."""
    inst = bandit_envs.instances.from_means([0.6, 0.5, 0.45, 0.4, 0.3], k=1)
    env = _env(instance=inst, setting="fixed_confidence", max_batches=10**6, **batch)
    agent = agents.make("zero_shot", delta=0.1, threshold="gk2016", seed=0)
    errors = 0
    for s in range(200):
        res = run_episode(env, agent, seed=s)
        assert res.terminated
        errors += int(res.misidentified)
    return errors


def _dense_batches(env, agent, seed):
    """The act/observe path through ``env.step``: the sampling batches (pull-count
    vectors, not the empty action that ends sampling), with the observation each was
    chosen on, the final ``info`` and the final observation."""
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    steps = []
    while True:
        action = agent.act(obs)
        if int(obs.get("phase", 0)) == 0 and action.any():
            steps.append((action.copy(), obs["counts"].copy(), obs["means"].copy()))
        obs, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, obs, float(reward), terminated, truncated, info)
        if terminated or truncated:
            return steps, info, obs


@pytest.mark.parametrize(
    "n,k,b,r,leader",
    [(12, 3, 8, 2, "ts"), (12, 3, 8, 2, "eb"), (10, 1, 16, 3, "ts"), (4, 1, 6, 1, "eb")],
)
def test_fixed_confidence_fills_batches(n, k, b, r, leader) -> None:
    """With b > 1 every batch after the first round (every arm once, by RoundRobin) has
    ``min(b, n r)`` pulls, none with more than ``r`` pulls of one arm, and the fast path
    plays the same episode."""
    inst = bandit_envs.instances.from_means(np.linspace(0.3, 0.7, n), k=k)
    env = _env(
        instance=inst, setting="fixed_confidence", batch_size=b, repeat_limit=r, max_batches=10**5
    )
    for seed in range(3):
        agent = ZeroShot(delta=0.1, leader=leader, seed=seed)
        steps, info, _ = _dense_batches(env, agent, seed)
        sizes = [int(a.sum()) for a, _, _ in steps]
        first = -(-n // b)  # the first round's batches
        assert sum(sizes[:first]) == n
        assert sizes[first:] and all(s == min(b, n * r) for s in sizes[first:]), sizes
        assert all(int(a.max()) <= r for a, _, _ in steps)
        fast = run_episode(env, ZeroShot(delta=0.1, leader=leader, seed=seed), seed=seed)
        assert (
            (fast.pulls, fast.batches)
            == (info["pulls"], info["batches"])
            == (
                sum(sizes),
                len(sizes),
            )
        )


@pytest.mark.parametrize("r", [1, 3])
def test_fixed_confidence_without_a_batch_size_ends_batches_at_the_repeat_limit(r) -> None:
    """``batch_size=None``: a batch is the planned pulls up to the first that the repeat
    limit would refuse, so no batch pulls an arm more than ``r`` times, none pulls every
    arm ``r`` times (uniform allocation), some pull several arms, and the fast path plays
    the same episode."""
    n = 6
    inst = bandit_envs.instances.from_means(np.linspace(0.3, 0.7, n), k=2)
    env = _env(
        instance=inst,
        setting="fixed_confidence",
        batch_size=None,
        repeat_limit=r,
        max_batches=10**5,
    )
    for seed in range(2):
        steps, info, _ = _dense_batches(env, ZeroShot(delta=0.1, seed=seed), seed=seed)
        later = [a for a, _, _ in steps[1:]]  # (the first: every arm once)
        assert steps[0][0].tolist() == [1] * n
        assert all(int(a.max()) <= r and int(a.sum()) < n * r for a in later)
        assert max(int((a > 0).sum()) for a in later) > 1
        fast = run_episode(env, ZeroShot(delta=0.1, seed=seed), seed=seed)
        assert (fast.pulls, fast.batches) == (info["pulls"], info["batches"])


@pytest.mark.parametrize("b,r,leader", [(8, 2, "ts"), (8, 8, "eb"), (1, 1, "ts")])
def test_batched_fixed_confidence_stops_only_by_the_glr_rule(b, r, leader) -> None:
    """Before every sampling batch the GLR statistic of the observed counts and means is
    at most the threshold, and when the agent answers it exceeds it: the stop (and so its
    guarantee) is the GLR rule's, whatever fills the batches. Gaussian rewards (no ties);
    the statistic by the full pass over the pairs."""
    from agents.glr import stopping
    from bandit_envs.divergences import GAUSSIAN, transport_cost

    n, k, delta = 8, 2, 0.05
    inst = bandit_envs.instances.from_means(
        np.linspace(0.2, 0.8, n), k=k, distribution="gaussian", sigma=0.5
    )
    env = _env(
        instance=inst, setting="fixed_confidence", batch_size=b, repeat_limit=r, max_batches=10**5
    )

    def glr(counts, means):
        top = np.argsort(-means, kind="stable")[:k]
        rest = [j for j in range(n) if j not in top]
        return min(
            transport_cost(GAUSSIAN, 0.5, float(counts[i]), means[i], float(counts[j]), means[j])
            for i in top
            for j in rest
        )

    for seed in range(3):
        agent = ZeroShot(delta=delta, threshold="gk2016", leader=leader, seed=seed)
        steps, info, obs = _dense_batches(env, agent, seed)
        assert info["recommendation"] is not None
        for _, counts, means in steps:
            if counts.min() > 0:
                t = float(counts.sum())
                assert glr(counts, means) <= stopping.beta("gk2016", t, delta, n, k)
        t = float(obs["counts"].sum())
        assert glr(obs["counts"], obs["means"]) > stopping.beta("gk2016", t, delta, n, k)


def test_batched_fixed_confidence_error_within_delta() -> None:
    """The proven threshold with batches of 4 (r = 2): errors of 200 runs at delta = 0.1
    at most the binomial(200, 0.1) quantile of 0.999 (as at one pull per batch)."""
    errors = _proven_threshold_errors(batch_size=4, repeat_limit=2)
    assert errors <= stats.binom.ppf(0.999, 200, 0.1)


def test_batched_pruned_pass_plays_the_full_pass_episode() -> None:
    """The fronts of :mod:`agents.glr.fronts`, moved by planned pulls and then by a batch's
    real means, give the statistic and the challenger of the full pass: the same
    episodes (Gaussian rewards, the empirical-best leader: no draws for ties)."""
    from agents.glr import top_two

    class Full(ZeroShot):
        def params(self):
            prm = super().params()
            assert prm[top_two.P_PRUNED] == 1.0
            prm[top_two.P_PRUNED] = 0.0
            return prm

    inst = bandit_envs.instances.from_means(
        np.linspace(0.2, 0.8, 12), k=3, distribution="gaussian", sigma=0.5
    )
    for b, r in ((8, 2), (16, 4)):
        env = _env(
            instance=inst,
            setting="fixed_confidence",
            batch_size=b,
            repeat_limit=r,
            max_batches=20_000,
        )
        for seed in range(2):
            out = []
            for cls in (ZeroShot, Full):
                res = run_episode(env, cls(leader="eb", seed=seed), seed=seed)
                out.append((res.recommendation.tolist(), res.pulls, env.unwrapped._counts.tolist()))
            assert out[0] == out[1]


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
    with pytest.raises(ValueError, match="tracking='yes' must be True or False"):
        ZeroShot(tracking="yes")
    with pytest.raises(ValueError, match="forced=1 must be True or False"):
        ZeroShot(forced=1)
    with pytest.raises(ValueError, match="beta=1.5"):
        ZeroShot(beta=1.5)
    agent = ZeroShot(tracking=False, forced=False, leader="eb", beta=0.4)
    assert (agent.tracking, agent.forced, agent.leader_name, agent.beta) == (
        False,
        False,
        "eb",
        0.4,
    )
    fitted = FITTED["fixed_confidence"]
    assert (ZeroShot().tracking, ZeroShot().forced) == (fitted["tracking"], fitted["forced"])
    with pytest.raises(ValueError, match="delta"):
        ZeroShot(delta=2.0)
    assert check_weights({"w_z": 1.0})[1] == 1.0
    for bad in (-1.0, math.nan, "10", True):
        with pytest.raises(ValueError, match="top_two_from=.* must be a number of pulls per arm"):
            ZeroShot(top_two_from=bad)
    assert ZeroShot().top_two_from == FITTED["misidentification"]["top_two_from"]
    assert ZeroShot(top_two_from=math.inf).top_two_from == math.inf


def _first_actions(env, agent, count: int) -> list[np.ndarray]:
    """The first ``count`` actions of an episode through ``env.step`` (act/observe)."""
    obs, _ = env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=0)
    out = []
    for _ in range(count):
        action = agent.act(obs)
        out.append(np.asarray(action).copy())
        obs, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, obs, float(reward), terminated, truncated, info)
    return out


def test_opening_pulls_every_arm_equally_before_the_score() -> None:
    """``opening=0.25`` at n = 10, budget 200: every arm once, then floor(0.25 x 200 / 10)
    - 1 = 4 more pulls of every arm in one request; the shipped ``opening=0`` goes from
    the first round to a block of max(1, 190 // 32) = 5 pulls chosen by the score."""
    env = _env(instance="uniform-random", n_arms=10, k=3, budget=200, batch_size=None)
    first, second = _first_actions(env, ZeroShot(opening=0.25, seed=0), 2)
    assert first.tolist() == [1] * 10 and second.tolist() == [4] * 10
    first, second = _first_actions(env, ZeroShot(opening=0.0, seed=0), 2)
    assert first.tolist() == [1] * 10 and second.sum() == 5
    # the budget bounds the rounds: 0.99 of 25 pulls over 10 arms is one round more
    small = _env(instance="uniform-random", n_arms=10, k=3, budget=25, batch_size=None)
    assert _first_actions(small, ZeroShot(opening=0.99, seed=0), 2)[1].tolist() == [1] * 10
    res = run_episode(small, ZeroShot(opening=0.99, seed=0), seed=0)
    assert res.pulls == 25
    assert ZeroShot().opening == 0.0
    for bad in (-0.1, 1.0, math.nan, "0.2", True):
        with pytest.raises(ValueError, match="opening=.* must be a share of the budget in"):
            ZeroShot(opening=bad)


def test_shipped_parameters_load(tmp_path) -> None:
    from agents.zero_shot.agent import FITTED_PATH

    bad = tmp_path / "fitted.toml"
    bad.write_text(FITTED_PATH.read_text().replace("tracking = ", "tracked = "))
    with pytest.raises(ValueError, match="no tracking in"):
        load_fitted(bad)
    data = load_fitted()
    assert data == FITTED
    assert len(check_weights(data["fixed_budget"]["weights"])) == index.N_WEIGHTS
    assert data["fixed_confidence"]["leader"] in ("eb", "ts")
    assert isinstance(data["fixed_confidence"]["tracking"], bool)
    assert isinstance(data["fixed_confidence"]["forced"], bool)
    misid = data["misidentification"]
    assert misid["top_two_from"] in misid["candidates"]
    assert misid["loss"] == min(misid["losses"])
    bad.write_text(FITTED_PATH.read_text().replace("top_two_from = ", "top_two = "))
    with pytest.raises(ValueError, match="top_two_from=None"):
        load_fitted(bad)


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
    assert confidence["tracking"] in (True, False) and confidence["forced"] in (True, False)
    misid = fit.fit_misidentification(seed=3, problems=3, per_problem=2, jobs=1,
                                      log=lambda *_: None)  # fmt: skip
    assert misid["top_two_from"] in fit.TOP_TWO_FROM
    assert misid["loss"] == min(misid["losses"]) and len(misid["losses"]) == len(fit.TOP_TWO_FROM)
    path = tmp_path / "fitted.toml"
    fit.write(path, budget, confidence, {"seed": 3}, misid)
    data = load_fitted(path)
    assert data["seed"] == 3
    assert list(data["fixed_budget"]["weights"]) == budget["weights"]
    assert data["fixed_confidence"]["tracking"] == confidence["tracking"]
    assert data["misidentification"]["candidates"][-1] == math.inf  # written as TOML inf
    assert data["misidentification"]["top_two_from"] == misid["top_two_from"]
    ZeroShot(weights=data["fixed_budget"]["weights"])


def test_the_misidentification_threshold_picks_the_rule_per_problem(monkeypatch) -> None:
    """The loss of a threshold is the mean over problems of the rate of the rule it picks
    there (Top-Two from ``top_two_from`` pulls per arm on), ties to the larger threshold:
    rates stubbed, problems of 5, 50 and 500 pulls per arm."""
    from agents.zero_shot import fit

    specs = [generator.Spec(n=10, k=2, shape="power", budget=10 * per) for per in (5, 50, 500)]
    eps = [fit.Episode(s, np.zeros(10), j) for s in specs for j in range(2)]
    monkeypatch.setattr(fit, "_misidentification_episodes", lambda *_: eps)
    rates = {math.inf: [0.2, 0.2, 0.6, 0.6, 0.5, 0.5], 0.0: [0.4, 0.4, 0.2, 0.2, 0.5, 0.5]}
    monkeypatch.setattr(
        fit, "_misidentified", lambda args: np.array([rates[args[0]][j] for j in args[2]])
    )
    res = fit.fit_misidentification(problems=3, per_problem=2, jobs=1, log=lambda *_: None)
    # thresholds 10-40 pick the index at 5/arm and Top-Two at 50 and 500: (0.2+0.2+0.5)/3
    assert res["losses"][:4] == pytest.approx([(0.4 + 0.2 + 0.5) / 3] + [0.9 / 3] * 3, abs=1e-4)
    assert res["top_two_from"] == 40.0 and res["loss"] == pytest.approx(0.3, abs=1e-4)


def test_confidence_only_refit_keeps_the_fixed_budget_section(tmp_path, monkeypatch) -> None:
    """``--retrain --confidence-only`` writes the fit of fixed confidence and copies the
    fixed-budget section and the top-level numbers of ``--params`` unchanged (the grid
    replaced by a stub: the plumbing, not the fit, is tested here)."""
    from agents.zero_shot import fit
    from agents.zero_shot.agent import FITTED_PATH

    stub = {
        "leader": "eb",
        "beta": 0.6,
        "tracking": False,
        "forced": True,
        "loss": -0.1,
        "error": 0.0,
        "cpu_seconds": 1.0,
    }
    monkeypatch.setattr(fit, "fit_confidence", lambda **_: dict(stub))
    out = tmp_path / "fitted.toml"
    seed = str(FITTED["seed"])
    assert fit.main(["--retrain", "--confidence-only", "--seed", seed, "--out", str(out)]) == 0
    data = load_fitted(out)
    assert data["fixed_budget"] == FITTED["fixed_budget"]
    assert {k: v for k, v in data.items() if not isinstance(v, dict)} == {
        k: v for k, v in FITTED.items() if not isinstance(v, dict)
    }
    assert data["fixed_confidence"] == stub
    section = FITTED_PATH.read_text().split("[fixed_confidence]")[0]
    assert out.read_text().split("[fixed_confidence]")[0] == section
    with pytest.raises(SystemExit):
        fit.main(["--retrain", "--confidence-only", "--seed", "12345", "--out", str(out)])
    assert data["misidentification"] == FITTED["misidentification"]
    with pytest.raises(SystemExit):
        fit.main(["--confidence-only"])
    with pytest.raises(SystemExit):
        fit.main(["--retrain", "--confidence-only", "--misidentification-only"])


def test_misidentification_only_refit_keeps_the_other_sections(tmp_path, monkeypatch) -> None:
    from agents.zero_shot import fit

    stub = {"top_two_from": 80.0, "loss": 0.2, "candidates": [80.0, math.inf],
            "losses": [0.2, 0.3], "cpu_seconds": 1.0}  # fmt: skip
    monkeypatch.setattr(fit, "fit_misidentification", lambda **_: dict(stub))
    out = tmp_path / "fitted.toml"
    seed = str(FITTED["seed"])
    assert (
        fit.main(["--retrain", "--misidentification-only", "--seed", seed, "--out", str(out)]) == 0
    )
    data = load_fitted(out)
    assert data["misidentification"] == stub
    for section in ("fixed_budget", "fixed_confidence"):
        assert data[section] == FITTED[section]
    with pytest.raises(SystemExit):
        fit.main(["--misidentification-only"])
