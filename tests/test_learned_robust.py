"""The ``learned-robust`` experiment: classes, members, the CEM search, ratios, the CLI.

After Zhang, Jain & Jamieson (arXiv:2010.15382): zero_shot judged by its worst case over
classes of bounded hardness (:mod:`topk_bench.experiments.learned_robust`).
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from bandit_envs.hardness import h1
from topk_bench.experiments import learned_robust as lr


def test_the_shipped_classes() -> None:
    assert list(lr.CLASSES) == ["n10-k1", "n10-k3", "n20-k2", "n50-k5"]
    for c in lr.CLASSES.values():
        assert c.budget == round(c.budget_multiple * c.h_hi) >= c.n
        assert c.dim == c.n + 1


@pytest.mark.parametrize("name", list(lr.CLASSES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_members_lie_in_the_band_and_in_the_unit_interval(name: str, seed: int) -> None:
    c = lr.CLASSES[name]
    rng = np.random.default_rng(seed)
    for spread in (1.0, 0.05, 6.0):  # random, nearly tied, far apart
        for _ in range(3):
            theta = spread * c.random_theta(rng)
            means = c.member(theta)
            assert means.shape == (c.n,)
            assert np.all((means >= 0) & (means <= 1))
            assert c.h_lo <= h1(means, c.k) <= c.h_hi
            # the top k is that of theta (scaling keeps the order)
            top = set(np.argsort(-theta[: c.n])[: c.k].tolist())
            assert set(np.argsort(-means)[: c.k].tolist()) == top


def test_the_last_coordinate_places_the_member_in_the_band() -> None:
    c = lr.CLASSES["n10-k3"]
    theta = np.random.default_rng(3).standard_normal(c.dim)
    h = []
    for last in (-4.0, 0.0, 4.0):
        theta[-1] = last
        means = c.member(theta)
        h.append(h1(means, c.k))
        assert h[-1] == pytest.approx(c.target_h1(theta), rel=1e-6)
    assert h[0] < h[1] < h[2]
    assert h[1] == pytest.approx(math.sqrt(c.h_lo * c.h_hi), rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 1}, r"n=1 must be a whole number >= 2"),
        ({"k": 0}, r"k=0 must be in 1\.\.n-1 = 1\.\.9"),
        ({"k": 10}, r"k=10 must be in 1\.\.n-1"),
        ({"h_lo": 10.0}, r"h_lo=10\.0 must exceed n=10"),
        ({"h_hi": 100.0}, r"h_hi=100\.0 must exceed h_lo=200\.0"),
        ({"h_hi": float("nan")}, r"h_hi=nan must be a finite number"),
        ({"budget_multiple": 0.0}, r"budget_multiple=0\.0 must be > 0"),
        ({"budget_multiple": 0.01}, r"budget = round\(budget_multiple \* h_hi\) = 6 must be"),
    ],
)
def test_a_bad_class_raises_naming_the_value(kwargs: dict, match: str) -> None:
    base = {"name": "x", "n": 10, "k": 1, "h_lo": 200.0, "h_hi": 600.0, "budget_multiple": 0.25}
    with pytest.raises(ValueError, match=match):
        lr.HardnessClass(**{**base, **kwargs})


def test_a_bad_theta_raises() -> None:
    c = lr.CLASSES["n10-k1"]
    with pytest.raises(ValueError, match=r"theta must be 11 finite numbers"):
        c.member(np.zeros(10))
    with pytest.raises(ValueError, match=r"theta must be 11 finite numbers"):
        c.member(np.full(11, np.inf))
    tied = np.zeros(11)
    tied[3] = tied[5] = 1.0  # the two largest equal: no top 1
    with pytest.raises(ValueError, match=r"tie at the top-k boundary \(k=1\)"):
        c.member(tied)


def test_applicable_agents_respect_k_values() -> None:
    names = ("uniform", "sequential_halving", "successive_rejects", "sar")
    assert lr.applicable_agents(names, 1) == list(names)
    assert lr.applicable_agents(names, 3) == ["uniform", "sar"]


def test_the_search_climbs_a_toy_score() -> None:
    target = np.array([2.0, -1.5, 3.0, 0.5])

    def score(cands: list[np.ndarray]) -> list[float]:
        return [-float(np.sum((t - target) ** 2)) for t in cands]

    res = lr.cross_entropy_search(
        score, 4, population=12, elite=3, iterations=6, rng=np.random.default_rng(0)
    )
    start = score([np.zeros(4)])[0]
    assert score([res.mean])[0] > start
    assert res.best_per_iteration[-1] > res.best_per_iteration[0]
    assert max(res.best_per_iteration) > start
    assert res.thetas.shape == (72, 4) and res.scores.shape == (72,)
    top, scores = res.top(3)
    assert scores[0] == res.scores.max() and list(scores) == sorted(scores, reverse=True)
    assert np.allclose(score(list(top)), scores)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"elite": 5, "population": 4}, r"elite=5 must be at most population=4"),
        ({"population": 1}, r"population=1 must be a whole number >= 2"),
        ({"iterations": 0}, r"iterations=0 must be a whole number >= 1"),
        ({"smoothing": 0.0}, r"smoothing=0\.0 must be in \(0, 1\]"),
    ],
)
def test_the_search_rejects_bad_sizes(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        lr.cross_entropy_search(lambda c: [0.0] * len(c), 2, rng=np.random.default_rng(0), **kwargs)


def test_the_ratio_to_the_best_scripted_agent() -> None:
    c = lr.compare_to_best(0.03, {"uniform": 0.05, "sar": 0.02, "kg": 0.02})
    assert (c.best_agent, c.is_difference) == ("sar", False)  # first of the tied best
    assert c.value == pytest.approx(1.5) and c.label() == "1.50"
    assert c.severity == (0, pytest.approx(1.5))


def test_a_best_of_zero_reports_the_difference() -> None:
    c = lr.compare_to_best(0.01, {"uniform": 0.05, "kg": 0.0})
    assert (c.best_agent, c.is_difference, c.value) == ("kg", True, 0.01)
    assert c.label() == "+0.0100 (diff)" and c.as_ratio == math.inf
    both = lr.compare_to_best(0.0, {"kg": 0.0})
    assert both.is_difference and both.value == 0.0 and both.as_ratio == 1.0
    # a positive difference ranks worse than any ratio; 0 against 0 as a ratio of 1
    ratio = lr.compare_to_best(0.5, {"kg": 0.1})
    assert c.severity > ratio.severity > both.severity


def test_the_ratio_rejects_bad_means() -> None:
    with pytest.raises(ValueError, match="scripted is empty"):
        lr.compare_to_best(0.1, {})
    with pytest.raises(ValueError, match=r"'kg' = -0\.1 must be finite and >= 0"):
        lr.compare_to_best(0.1, {"kg": -0.1})


def test_the_bootstrap_interval() -> None:
    rng = np.random.default_rng(0)
    x, y = np.full(50, 0.2), np.full(50, 0.1)
    assert lr.bootstrap_interval(x, y, rng=rng) == (pytest.approx(2.0), pytest.approx(2.0))
    lo, hi = lr.bootstrap_interval(x, y, difference=True, rng=rng)
    assert lo == pytest.approx(0.1) and hi == pytest.approx(0.1)
    noisy = rng.random(200)
    lo, hi = lr.bootstrap_interval(noisy, noisy * 0.5, rng=rng)
    assert lo == pytest.approx(2.0) and hi == pytest.approx(2.0)  # paired: exactly 2
    zero = np.zeros(20)
    one_hit = zero.copy()
    one_hit[0] = 1.0
    lo, hi = lr.bootstrap_interval(one_hit, zero, rng=rng)
    assert hi == math.inf and lo >= 1.0  # 0/0 resamples count as 1
    with pytest.raises(ValueError, match="equal 1-D arrays"):
        lr.bootstrap_interval(x, y[:3], rng=rng)


def test_run_rejects_bad_input() -> None:
    c = [lr.CLASSES["n10-k1"]]
    with pytest.raises(ValueError, match=r"metric='regret' must be one of"):
        lr.run(c, metric="regret")
    with pytest.raises(ValueError, match=r"names 'zero_shot'"):
        lr.run(c, agent_names=("zero_shot",))
    with pytest.raises(ValueError, match=r"episodes=0 must be a whole number >= 1"):
        lr.run(c, episodes=0)


def test_the_quick_cli_writes_the_csv_and_the_table(tmp_path, capsys) -> None:
    out = tmp_path / "lr"
    argv = ["--quick", "--classes", "n10-k1", "--members", "2", "--episodes", "2"]
    argv += ["--iterations", "1", "--agents", "uniform", "sar", "--out", str(out)]
    assert lr.main(argv) == 0
    printed = capsys.readouterr().out
    assert "| n10-k1 | 10 | 1 | [200, 600] | 150 | random | 2 | 2 |" in printed
    assert "| n10-k1 | 10 | 1 | [200, 600] | 150 | searched | 1 | 2 |" in printed
    assert "CPU time:" in printed
    assert (out / "table.md").read_text() in printed
    with open(out / "members.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == lr.CSV_COLUMNS
    # 2 random members and 1 searched, 3 agents each
    assert len(rows) == 9
    assert {r["agent"] for r in rows} == {"zero_shot", "uniform", "sar"}
    assert {r["kind"] for r in rows} == {"random", "searched"}
    for r in rows:
        means = np.array(r["means"].split(), dtype=float)
        assert means.shape == (10,) and 200 <= float(r["h1"]) <= 600
        assert r["episodes"] == "2" and r["metric"] == "aggregate_regret"
        assert (r["search_score"] == "") == (r["kind"] == "random")


def test_the_cli_names_a_bad_agent(capsys) -> None:
    with pytest.raises(SystemExit):
        lr.main(["--quick", "--agents", "no_such_agent", "--out", "unused"])
    assert "no_such_agent" in capsys.readouterr().err
