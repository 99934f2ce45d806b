"""The learned stop (agents.bayesian.learned_stop) and the learned-stopping experiment."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.bayesian import learned_stop as stopping
from agents.bayesian.learned_stop import Boundary, check_times, fit_boundary, stop_on
from agents.bayesian.top_two_thompson import boundary_at, next_check
from agents.runner import run_episode


def test_boundary_interpolation_matches_the_kernel() -> None:
    """The kernel's boundary_at and Boundary.at agree; constant beyond the end knots."""
    bnd = Boundary((10, 40, 160), (0.01, 0.05, 2.0))
    knots, logd = np.log1p(bnd.knots), np.log(bnd.deltas)
    for t in (0, 5, 10, 11, 39, 40, 100, 160, 161, 10_000):
        assert math.isclose(boundary_at(knots, logd, t), float(bnd.at(t)), rel_tol=1e-12)
    assert float(bnd.at(0)) == pytest.approx(0.01) and float(bnd.at(10**6)) == pytest.approx(2.0)
    # log-linear between knots: the midpoint in log(1 + t) is the geometric mean
    mid = math.expm1(0.5 * (knots[0] + knots[1]))
    assert boundary_at(knots, logd, mid) == pytest.approx(math.sqrt(0.01 * 0.05))


def test_check_times() -> None:
    grid = check_times(1000, 64)
    assert grid[0] == 0 and grid[-1] == 1000
    assert list(grid[:66]) == list(range(66))  # every pull up to 2 * 64
    steps = np.diff(grid[:-1])
    assert np.all(steps == np.maximum(1, grid[:-2] // 64))
    assert next_check(640, 64) == 650
    assert next_check(5, 10**9) == 6  # a huge spacing: every pull


def test_stop_on_is_the_first_crossing() -> None:
    eps = np.array([[0.5, 0.2, 0.05, 0.01], [0.5, 0.4, 0.3, 0.3], [0.01, 0.5, 0.5, 0.5]])
    assert stop_on(eps, np.full(4, 0.1)).tolist() == [2, 3, 0]  # row 1: the cap (last)


def _synthetic(cap: int) -> tuple[np.ndarray, np.ndarray]:
    """95 easy episodes (eps halves every 4 pulls, after a shift) and 5 hard ones (eps stays
    0.4): the boundary that gives up on the hard ones early is far cheaper."""
    grid = check_times(cap)
    rows = []
    for i in range(100):
        if i % 20 == 0:
            rows.append(np.full(grid.size, 0.4))
        else:
            rows.append(np.minimum(0.5, 0.5 * 2.0 ** (-(grid - (i % 7)) / 4.0)))
    eps = np.asarray(rows, dtype=np.float32)
    return eps, np.zeros_like(eps, dtype=bool)


def test_the_fit_meets_its_target_and_beats_a_constant_threshold() -> None:
    """Deterministic records: the fitted boundary's mean eps at the stop is the target, and its
    mean stopping time is under half the constant threshold's at the same target (the constant
    one must run the hard episodes to the cap)."""
    cap, target = 2000, 0.05
    eps, wrong = _synthetic(cap)
    bnd = fit_boundary(eps, wrong, n=10, cap=cap, target=target, floor=1e-4)
    assert bnd.fit is not None
    assert abs(bnd.fit["mean_eps"] - target) < 2e-3
    grid = check_times(cap)
    levels = bnd.at(grid)
    at = stop_on(eps, levels)
    assert grid[at].mean() == pytest.approx(bnd.fit["mean_pulls"])
    # the best constant threshold with mean eps <= target
    best = None
    for h in np.geomspace(1e-4, 0.5, 400):
        j = stop_on(eps, np.full(grid.size, h))
        if eps[np.arange(100), j].mean() <= target:
            best = grid[j].mean()
    assert best is not None and bnd.fit["mean_pulls"] < 0.5 * best


def test_calibration_records_set_the_level() -> None:
    """With calibration records the level is set on them: the mean eps at the stop is the
    target there (not on the training records, where the easy episodes ease more slowly)."""
    cap, target = 2000, 0.05
    eps, wrong = _synthetic(cap)
    harder = np.minimum(0.5, eps * 1.5).astype(np.float32)  # the same shapes, 1.5x the error
    bnd = fit_boundary(eps, wrong, n=10, cap=cap, target=target, floor=1e-4)
    cal = fit_boundary(
        eps, wrong, n=10, cap=cap, target=target, floor=1e-4, calibration=(harder, wrong)
    )
    assert bnd.fit is not None and cal.fit is not None
    assert abs(cal.fit["calibration_mean_eps"] - target) < 2e-3
    assert cal.fit["calibration_episodes"] == 100
    assert "calibration_mean_eps" not in bnd.fit
    grid = check_times(cap)
    at = stop_on(harder, cal.at(grid))
    assert harder[np.arange(100), at].mean() == pytest.approx(cal.fit["calibration_mean_eps"])
    # the shape is the same fit; a harder calibration set lowers the level
    assert all(c < b for c, b in zip(cal.deltas, bnd.deltas, strict=True) if b > 1e-4)
    with pytest.raises(ValueError, match=r"calibration records \(100, 3\) do not match"):
        fit_boundary(
            eps,
            wrong,
            n=10,
            cap=cap,
            target=target,
            floor=1e-4,
            calibration=(eps[:, :3], wrong[:, :3]),
        )


def test_train_keeps_both_record_sets(tmp_path) -> None:
    """``train`` records the calibration episodes from another seed, keeps both sets beside
    ``records`` and reads them back (the same fit, no recording)."""
    path = tmp_path / "rec.npz"
    kw = {"targets": [0.2], "seed": 3, "cap": 300, "floor": 1e-3, "episodes": 4}
    (first,) = stopping.train(5, 2, calibration_episodes=5, records=path, **kw)
    calibration = tmp_path / "rec.calibration.npz"
    assert path.exists() and calibration.exists()
    with np.load(path) as a, np.load(calibration) as b:
        assert a["eps"].shape[0] == 4 and b["eps"].shape[0] == 5
        assert not np.array_equal(a["eps"][:4], b["eps"][:4])  # other episodes
    (again,) = stopping.train(5, 2, calibration_episodes=5, records=path, **kw)
    assert again.deltas == first.deltas and again.fit["calibration_episodes"] == 5
    with pytest.raises(ValueError, match=r"records \(5, \d+\) are not 6 episodes"):
        stopping.train(5, 2, calibration_episodes=6, records=path, **kw)


def _family_env(n: int, k: int, cap: int) -> gym.Env:
    """Fixed confidence on n Beta(1, 1) Bernoulli arms, truncated at ``cap`` pulls."""
    return gym.make(
        "TopK-v0",
        n_arms=n,
        k=k,
        instance="uniform-random",
        setting="fixed_confidence",
        max_batches=cap,
    )


def test_a_flat_boundary_checked_every_pull_is_the_posterior_stop() -> None:
    """learned_stop with delta_t = delta everywhere and a check before every pull plays the
    same episodes as bayes_ttts(delta) (same seeds: the same pulls and answer)."""
    env = _family_env(6, 2, 5000)
    for seed in range(4):
        a = run_episode(env, agents.make("bayes_ttts", delta=0.1, seed=seed), seed=seed)
        b = run_episode(
            env,
            agents.make("learned_stop", knots=[1], deltas=[0.1], spacing=10**9, seed=seed),
            seed=seed,
        )
        assert (a.pulls, a.recommendation.tolist()) == (b.pulls, b.recommendation.tolist())
        assert a.terminated and b.terminated


def test_a_rising_boundary_stops_sooner() -> None:
    """A boundary that reaches 1 at 200 pulls ends every episode by the first check past 200."""
    env = _family_env(10, 1, 20_000)
    ag = agents.make("learned_stop", knots=[10, 200], deltas=[1e-3, 1.0], seed=0)
    for seed in range(5):
        res = run_episode(env, ag, seed=seed)
        assert res.terminated and not res.truncated and res.pulls <= next_check(200, 64)


def test_record_and_cli(capsys: pytest.CaptureFixture[str]) -> None:
    eps, wrong = stopping.record(5, 2, cap=300, floor=1e-3, episodes=3, seed=1)
    assert eps.shape == wrong.shape == (3, check_times(300).size)
    assert np.all((eps >= 0) & (eps <= 1))
    assert (
        stopping.main(
            [
                "--n",
                "5",
                "--k",
                "1",
                "--target",
                "0.1",
                "--cap",
                "300",
                "--episodes",
                "6",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    (out,) = json.loads(capsys.readouterr().out)
    bnd = Boundary.from_json(json.dumps(out))
    assert bnd.fit is not None and bnd.fit["k"] == 1 and len(bnd.knots) == stopping.KNOTS


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"knots=\[40, 10\] must be increasing"):
        Boundary((40, 10), (0.1, 0.1))
    with pytest.raises(ValueError, match=r"deltas=\[0.1, 0.0\] must be positive"):
        Boundary((10, 40), (0.1, 0.0))
    with pytest.raises(ValueError, match=r"knots \(2\) and deltas \(1\)"):
        agents.make("learned_stop", knots=[1, 2], deltas=[0.1])
    with pytest.raises(ValueError, match=r"k=5 must lie in \[1, n - 1\]"):
        stopping.record(5, 5, cap=10, floor=0.01, episodes=1, seed=0)
    with pytest.raises(ValueError, match=r"target=0.5 must lie in \[floor=0.6, 1\)"):
        fit_boundary(np.zeros((1, 2)), np.zeros((1, 2), bool), n=2, cap=1, target=0.5, floor=0.6)


def test_the_shipped_config_is_the_generators_output() -> None:
    from topk_bench.config import shipped
    from topk_bench.experiments import learned_stopping as ls

    shipped_path = shipped()["learned-stopping"]
    boundaries = json.loads(ls.BOUNDARIES.read_text())
    assert shipped_path.read_text() == ls.to_toml(ls.experiment_config(boundaries))
    # every (k, delta, seed) fitted, each to its target
    keys = {(b["fit"]["k"], b["fit"]["delta"], b["fit"]["seed"]) for b in boundaries}
    assert keys == {(k, d, s) for k in ls.KS for d in ls.DELTAS for s in ls.SEEDS}
    for b in boundaries:
        assert b["fit"]["target"] == ls.target_of(b["fit"]["delta"])


def test_the_default_boundary_is_the_shipped_k1_delta_01_seed_0() -> None:
    from topk_bench.experiments import learned_stopping as ls

    (entry,) = [
        b
        for b in json.loads(ls.BOUNDARIES.read_text())
        if (b["fit"]["k"], b["fit"]["delta"], b["fit"]["seed"]) == (1, 0.1, 0)
    ]
    assert list(stopping.DEFAULT_KNOTS) == entry["knots"]
    assert list(stopping.DEFAULT_DELTAS) == [round(d, 6) for d in entry["deltas"]]


def test_run_retrain_refits_the_boundaries(tmp_path) -> None:
    """``topk-bench run learned-stopping --retrain`` fits the boundaries anew (a few
    episodes with --reduced) into OUT/fitted.json and plays them."""
    from topk_bench.cli import main

    out = tmp_path / "ls"
    argv = ["run", "learned-stopping", "--reduced", "--retrain", "--jobs", "1", "--out", str(out)]
    assert main([*argv, "--no-progress", "--no-report"]) == 0
    fits = json.loads((out / "fitted.json").read_text())
    assert len(fits) == 12 and all(f["fit"]["episodes"] == 8 for f in fits)
    assert all(f["fit"]["calibration_episodes"] == 8 for f in fits)
    manifest = json.loads((out / "manifest.json").read_text())
    played = [a["params"]["knots"] for a in manifest["agents"] if a["name"] == "learned_stop"]
    assert played == [f["knots"] for f in fits]
