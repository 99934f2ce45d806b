"""The learned batch policy (agents.bayesian.learned_batch) and the learned-batch experiment."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.bayesian import learned_batch as lb
from agents.bayesian.beta_prior import posterior
from agents.bayesian.knowledge_gradient import kg_values

FAMILY = lb.Family(n=10, k=3, batch_size=10, repeat_limit=5, batches=8)


def _env(fam: lb.Family = FAMILY, *, budget: int | None = None, max_batches: bool = True):
    kw = dict(
        instance="beta-random",
        instance_params={"a": fam.a, "b": fam.b},
        n_arms=fam.n,
        k=fam.k,
        batch_size=fam.batch_size,
        repeat_limit=fam.repeat_limit,
        budget=budget if budget is not None else fam.batch_size * fam.batches,
        answer="agent",
    )
    if max_batches:
        kw["max_batches"] = fam.batches
    return gym.make("TopK-Batch-v0", **kw)


def _scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.empty(n), np.empty(n), np.empty(n)


def _play(env: gym.Env, agent: agents.Agent, seed: int):
    """Yield ``(counts, means, pulls_before, action)`` per batch of one episode, until the
    pull budget is spent."""
    budget = env.unwrapped.problem.budget
    agent.reset(env.unwrapped.problem, seed=seed)
    obs, _ = env.reset(seed=seed)
    pulls = 0
    while True:
        action = agent.act(obs)
        if action.sum() == 0 or pulls >= budget:
            return
        yield agent.counts.copy(), agent.means.copy(), pulls, action
        pulls += int(action.sum())
        obs, rew, term, trunc, info = env.step(action)
        agent.observe(action, obs, rew, term, trunc, info)
        if term or trunc:
            return


@pytest.mark.parametrize(
    ("fam", "budget", "max_batches"),
    [(FAMILY, None, True), (lb.Family(8, 2, 7, 2, 6), 40, False)],
)
def test_every_batch_is_full_and_valid(fam: lb.Family, budget: int | None, max_batches: bool):
    """Played in the env's default (raise) mode: every batch holds min(b, pulls left, n r)
    pulls, at most r per arm, and the budget is spent."""
    env = _env(fam, budget=budget, max_batches=max_batches)
    total = budget if budget is not None else fam.batch_size * fam.batches
    for seed in range(3):
        agent = agents.make("learned_batch", weights=[0.3, -0.2, 0.1, 0.5, -0.4, -1.0, 0.7, 0.05])
        sizes = []
        for _, _, pulls, action in _play(env, agent, seed):
            assert action.min() >= 0 and action.max() <= fam.repeat_limit
            sizes.append(int(action.sum()))
            assert sizes[-1] == min(fam.batch_size, total - pulls, fam.n * fam.repeat_limit)
        assert sum(sizes) == total


def test_the_agent_fills_its_batches_with_the_fitted_score():
    """Each batch the agent plays is the one :func:`fill_scored` builds from its posterior,
    look-ahead and budget share: compared as the pulls per class of arms of equal
    posterior (arms of one class are exchangeable, so the random tie-breaking within a
    class does not change them)."""
    fam = FAMILY
    weights = np.array([0.2, 0.4, -0.3, 0.6, -0.5, -1.1, -1.6, 0.1])
    env = _env(fam)
    budget = fam.batch_size * fam.batches
    for seed in range(3):
        agent = agents.make("learned_batch", weights=weights)
        for j, (counts, means, pulls, action) in enumerate(_play(env, agent, seed)):
            alpha, beta = posterior(fam.a, fam.b, counts, means)
            left = budget - pulls
            horizon = min(left, fam.repeat_limit * (fam.batches - j))
            reps = np.zeros(fam.n, dtype=np.int64)
            lb.fill_scored(
                alpha.copy(), beta.copy(), fam.k, min(fam.batch_size, left), horizon,
                left / budget, fam.repeat_limit, weights, np.random.default_rng(seed), reps,
                *_scratch(fam.n),
            )  # fmt: skip
            classes: dict[tuple[float, float], list[int]] = {}
            for i in range(fam.n):
                got = classes.setdefault((alpha[i], beta[i]), [0, 0])
                got[0] += int(action[i])
                got[1] += int(reps[i])
            assert all(a == b for a, b in classes.values()), (seed, j, classes)


def test_zero_weights_pick_the_kg_star_arm():
    """With all weights zero the score is log KG*: a batch of one pull goes to the arm of
    largest KG* (:func:`agents.bayesian.knowledge_gradient.kg_values`)."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        alpha = rng.uniform(1.0, 30.0, 8)
        beta = rng.uniform(1.0, 30.0, 8)
        reps = np.zeros(8, dtype=np.int64)
        lb.fill_scored(
            alpha.copy(), beta.copy(), 3, 1, 25, 0.5, 4, np.zeros(8), rng, reps, *_scratch(8)
        )
        assert int(np.argmax(reps)) == int(np.argmax(kg_values(alpha, beta, 3, 25)))


def test_the_simulator_and_the_environment_agree():
    """The fit's simulator and the env score the same policy alike: mean aggregate regret
    of 4,000 simulated and 1,500 played episodes (independent), difference within 4
    standard errors."""
    weights = [0.1, 0.3, 0.0, 0.6, -0.5, -1.1, -1.6, 0.1]
    means, streams = FAMILY.draw(4000, (7, 7))
    sim = lb.evaluate(FAMILY, weights, means, streams)[:, 1]
    env = _env()
    played = np.array(
        [
            agents.run_episode(
                env, agents.make("learned_batch", weights=weights), seed=s
            ).aggregate_regret
            for s in range(1500)
        ]
    )
    se = math.sqrt(sim.var(ddof=1) / sim.size + played.var(ddof=1) / played.size)
    assert abs(sim.mean() - played.mean()) < 4 * se


def test_the_shipped_weights_beat_kg_batch():
    """On 20,000 fresh episodes of the 10-arm family (seeds not used by the fit), each
    shipped fit's terminal value exceeds that of the kg_batch yardstick by more than 3
    paired standard errors (common random numbers)."""
    from topk_bench.experiments import learned_batch as exp

    fits = [f for f in json.loads(exp.WEIGHTS.read_text()) if f["point"] == "10 arms"]
    means, streams = FAMILY.draw(20_000, (99, 99))
    teacher = lb.evaluate(FAMILY, None, means, streams)[:, 0]
    for fit in fits:
        diff = lb.evaluate(FAMILY, fit["weights"], means, streams)[:, 0] - teacher
        assert diff.mean() > 3 * diff.std(ddof=1) / math.sqrt(diff.size), fit["fit"]["seed"]


def test_fits_are_reproducible_and_report_what_they_measured():
    fam = lb.Family(6, 2, 6, 3, 4)
    one = lb.train(fam, seed=3, episodes=200, validation=300, iterations=3, population=6, elite=2)
    two = lb.train(fam, seed=3, episodes=200, validation=300, iterations=3, population=6, elite=2)
    assert one.weights == two.weights and len(one.weights) == lb.N_WEIGHTS
    means, streams = fam.draw(200, (3, 0))
    start = lb.evaluate(fam, np.zeros(lb.N_WEIGHTS), means, streams)[:, 0].mean()
    assert one.fit["train_value"][0] == round(float(start), 6)
    vmeans, vstreams = fam.draw(300, (3, 1))
    gain = (
        lb.evaluate(fam, one.weights, vmeans, vstreams)[:, 0]
        - lb.evaluate(fam, None, vmeans, vstreams)[:, 0]
    )
    assert one.fit["validation_gain_over_kg_batch"][0] == round(float(gain.mean()), 6)
    assert one.fit["cpu_seconds"] >= 0


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match=r"weights=\[1.0, 2.0\] must be 8 finite numbers"):
        agents.make("learned_batch", weights=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"must be 8 finite numbers"):
        agents.make("learned_batch", weights=[0.0] * 7 + [math.nan])
    with pytest.raises(ValueError, match=r"prior a=-1.0 must be a positive finite number"):
        agents.make("learned_batch", a=-1.0)
    with pytest.raises(ValueError, match=r"k=4 must be below n=4"):
        lb.Family(4, 4, 2, 1, 3)
    with pytest.raises(ValueError, match=r"batches=0 must be a positive integer"):
        lb.Family(4, 2, 2, 1, 0)
    with pytest.raises(ValueError, match=r"elite=6 must be in \[1, population=6\)"):
        lb.fit_weights(FAMILY, *FAMILY.draw(2, (0, 0)), seed=0, population=6, elite=6)
    env = gym.make(
        "TopK-Batch-v0", instance="uniform-random", n_arms=5, k=2, budget=20, batch_size=2,
        distribution="gaussian", sigma=0.5,
    )  # fmt: skip
    with pytest.raises(ValueError, match="needs distribution='bernoulli'"):
        agents.make("learned_batch").reset(env.unwrapped.problem, seed=0)


def test_the_shipped_config_is_the_generators_output():
    from topk_bench.config import shipped
    from topk_bench.experiments import learned_batch as exp

    fits = json.loads(exp.WEIGHTS.read_text())
    assert shipped()["learned-batch"].read_text() == exp.to_toml(exp.experiment_config(fits))
    assert {(f["point"], f["fit"]["seed"]) for f in fits} == {
        (p, s) for p in exp.POINTS for s in exp.SEEDS
    }
    (default,) = [f for f in fits if (f["point"], f["fit"]["seed"]) == ("10 arms", 0)]
    assert list(lb.DEFAULT_WEIGHTS) == default["weights"]


def test_the_train_and_config_commands(tmp_path, capsys):
    from topk_bench.experiments import learned_batch as exp

    out = tmp_path / "w.json"
    args = ["train", "--point", "10 arms", "--seed", "5", "--scale", "0.002", "--out", str(out)]
    assert exp.main(args) == 0
    (fit,) = json.loads(out.read_text())
    assert fit["point"] == "10 arms" and fit["fit"]["seed"] == 5
    assert fit["fit"]["episodes"] == 20 and len(fit["weights"]) == lb.N_WEIGHTS
    assert exp.main(["config"]) == 0
    assert 'name = "learned-batch"' in capsys.readouterr().out


def test_run_retrain_refits_into_the_results_directory(tmp_path):
    """``topk-bench run learned-batch --retrain`` fits the weights anew into
    OUT/fitted.json and plays them; a rerun reads that file instead of fitting again."""
    from topk_bench.cli import main

    out = tmp_path / "lb"
    argv = ["run", "learned-batch", "--reduced", "--retrain", "--jobs", "1", "--out", str(out)]
    argv += ["--no-progress", "--no-report"]
    assert main(argv) == 0
    fitted = out / "fitted.json"
    fits = json.loads(fitted.read_text())
    assert len(fits) == 6
    manifest = json.loads((out / "manifest.json").read_text())
    played = {a["label"]: a["params"] for a in manifest["agents"]}
    for fit in fits:
        label = f"learned batch, {fit['point']} (seed {fit['fit']['seed']})"
        assert played[label]["weights"] == fit["weights"]
    stamp = fitted.stat().st_mtime_ns
    assert main(argv) == 0
    assert fitted.stat().st_mtime_ns == stamp


def test_refit_config_refuses_what_it_cannot_refit(tmp_path):
    from topk_bench.config import ConfigError, load
    from topk_bench.run import refit_config

    with pytest.raises(ConfigError, match="no fitted_by: nothing to refit"):
        refit_config(load("quick", reduced=True), tmp_path)
    cfg = _shipped_config()
    cfg["fitted_by"] = "topk_bench.seeds"
    with pytest.raises(ConfigError, match=r"'topk_bench.seeds' has no refit"):
        refit_config(load(cfg, reduced=True), tmp_path)
    cfg["fitted_by"] = "topk_bench.no_such_module"
    with pytest.raises(ConfigError, match="cannot import 'topk_bench.no_such_module'"):
        refit_config(load(cfg, reduced=True), tmp_path)


def _shipped_config() -> dict:
    from topk_bench.experiments import learned_batch as exp

    return exp.experiment_config(json.loads(exp.WEIGHTS.read_text()))
