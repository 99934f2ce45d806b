"""The zero-shot report: best agents per point, paired tests, Holm, outcomes, Markdown, CLI.

Synthetic rows in the store's shape (no episode is played).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from topk_bench.compare import holm, paired_test
from topk_bench.episodes import ROW_COLUMNS
from topk_bench.experiments import zero_shot_report as zs
from topk_bench.store import ResultStore

ZS = "zero-shot (learned)"
RUNS = 30
METRIC_COLUMNS = ("aggregate_regret", "misidentified", "failure", "fnr", "pulls", "batches")

# value(point index, run, rng) -> the agent's metric on that episode
Value = Callable[[int, int, np.random.Generator], float]


def frame(
    agents: dict[str, Value],
    metric: str = "aggregate_regret",
    points: Sequence[str] = ("p1", "p2"),
    runs: int = RUNS,
    misidentified: dict[str, Value] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Rows of every agent at every point and run (same seed per (point, run): paired)."""
    rows = []
    for i, point in enumerate(points):
        for r in range(runs):
            for agent, value in agents.items():
                row = dict.fromkeys(METRIC_COLUMNS, 0.0)
                # the same noise for every agent of an episode (paired episodes)
                rng = np.random.default_rng([seed, i, r])
                row[metric] = float(value(i, r, rng))
                if misidentified and agent in misidentified:
                    row["misidentified"] = float(misidentified[agent](i, r, rng))
                row.update(
                    point=point, panel="P", x=str(i + 1), run=r, agent=agent, seed=100 * i + r
                )
                rows.append(row)
    return pd.DataFrame(rows)


def noisy(level: float | Sequence[float], scale: float = 0.3) -> Value:
    """Level (per point if a sequence) plus the episode's shared noise."""

    def value(i: int, r: int, rng: np.random.Generator) -> float:
        lv = level[i] if isinstance(level, Sequence) else level
        return lv + scale * rng.standard_normal()

    return value


def const(v: float) -> Value:
    return lambda i, r, rng: v


def row_at(table: pd.DataFrame, point: str, experiment: str | None = None) -> pd.Series:
    sel = table["point"] == point
    if experiment is not None:
        sel &= table["experiment"] == experiment
    rows = table[sel]
    assert len(rows) == 1
    return rows.iloc[0]


# ------------------------------------------------------------------ which agents


def test_the_best_paper_agent_is_chosen_per_point():
    """A is the better one at p1, B at p2 (lower regret is better)."""
    df = frame({"A": noisy([1.0, 3.0]), "B": noisy([2.0, 1.5]), ZS: noisy([2.5, 2.5])})
    table = zs.report({"zhou2014-fig1": df})
    assert list(table["point"]) == ["p1", "p2"]
    assert list(table["paper_best"]) == ["A", "B"]
    assert list(table["suite_best"]) == ["A", "B"]
    p1 = row_at(table, "p1")
    a = df[(df.point == "p1") & (df.agent == "A")]["aggregate_regret"].mean()
    assert p1["paper_best_mean"] == pytest.approx(a)
    assert p1["metric"] == "aggregate_regret" and p1["n"] == RUNS and p1["zero_shot"] == ZS
    assert list(table.columns[:6]) == ["experiment", "real_data", "metric", "point", "panel", "x"]


def test_higher_is_better_picks_the_largest_mean():
    df = frame({"A": noisy(0.2), "B": noisy(0.8), ZS: noisy(0.5)}, metric="precision")
    table = zs.report({"custom": df}, metrics={"custom": "precision"})
    assert set(table["paper_best"]) == {"B"}


def test_a_tie_in_the_mean_goes_to_the_first_agent():
    df = frame({"B": const(1.0), "A": const(1.0), ZS: noisy(2.0)})
    table = zs.report({"zhou2014-fig1": df})
    assert set(table["paper_best"]) == {"B"} and set(table["suite_best"]) == {"B"}


def test_jiang2017_leaves_out_eb_tc_and_t3c_from_the_papers_agents():
    df = frame(
        {
            "LUCB": noisy(500.0, 20),
            "lil'LUCB (heuristic)": noisy(450.0, 20),
            "EB-TC (GLR, practical threshold)": noisy(200.0, 20),
            "T3C (GLR, practical threshold)": noisy(250.0, 20),
            ZS: noisy(300.0, 20),
        },
        metric="pulls",
    )
    table = zs.report({"jiang2017-fig1": df})
    assert set(table["paper_best"]) == {"lil'LUCB (heuristic)"}
    assert set(table["suite_best"]) == {"EB-TC (GLR, practical threshold)"}
    assert set(table["outcome_paper"]) == {"win"} and set(table["outcome_suite"]) == {"loss"}


def test_garivier2016_exclusions():
    for label in ("EB-TCI, delta = 0.1", "EB-TC, delta = 0.1", "T3C, delta = 0.1", "TTTS, delta"):
        assert not zs.is_papers("garivier2016-sec5", label)
    for label in ("Track-and-Stop (D), delta = 0.1", "LUCB, delta = 0.1", "lil'UCB (heuristic)"):
        assert zs.is_papers("garivier2016-sec5", label)
    assert zs.is_papers("zhou2014-fig1", "EB-TC")  # no exclusion elsewhere
    assert not zs.is_papers("zhou2014-fig1", ZS)


def test_modern_vs_papers_counts_only_the_listed_papers():
    papers = ["LUCB, delta = 0.1", "lil'LUCB, delta = 0.01", "LUCB++, delta = 0.1",
              "lil'RandLUCB, delta = 0.1", "lil'CLUCB, delta = 0.1", "BatchRacing, delta = 0.1",
              "AT-LUCB, delta = 0.1"]  # fmt: skip
    others = ["KL-LUCB, delta = 0.1", "EB-TC, delta = 0.1", "EB-TC (IDS), delta = 0.1",
              "T3C, delta = 0.1", "UGapEc, delta = 0.1", "lil'UCB, delta = 0.1",
              "Track-and-Stop (D), delta = 0.1", "EB-TCI, delta = 0.1", "TTTS, delta = 0.1",
              "Frank-Wolfe, delta = 0.1", "AdaHedge vs BR, delta = 0.1",
              "zero-shot (learned), delta = 0.1"]  # fmt: skip
    assert all(zs.is_papers("modern-vs-papers", a) for a in papers)
    assert not any(zs.is_papers("modern-vs-papers", a) for a in others)

    zero = "zero-shot (learned), delta = 0.1"
    df = frame(
        {
            "LUCB, delta = 0.1": noisy(900.0, 20),
            "LUCB++, delta = 0.1": noisy(600.0, 20),
            "KL-LUCB, delta = 0.1": noisy(400.0, 20),
            zero: noisy(500.0, 20),
        },
        metric="pulls",
    )
    table = zs.report({"modern-vs-papers": df})
    assert set(table["paper_best"]) == {"LUCB++, delta = 0.1"}
    assert set(table["suite_best"]) == {"KL-LUCB, delta = 0.1"}
    # without LUCB++, plain LUCB is the papers' best even though KL-LUCB is better
    table = zs.report({"modern-vs-papers": df[df["agent"] != "LUCB++, delta = 0.1"]})
    assert set(table["paper_best"]) == {"LUCB, delta = 0.1"}
    assert set(table["suite_best"]) == {"KL-LUCB, delta = 0.1"}


def test_experiment_names_map_by_longest_prefix():
    assert zs.experiment_key("zhou2014-fig1-lite") == "zhou2014-fig1"
    assert zs.experiment_key("modern-vs-papers") == "modern-vs-papers"
    assert zs.experiment_key("quick") is None
    df = frame({"A": noisy(1.0), ZS: noisy(1.0)})
    table = zs.report({"zhou2014-rte-small": df})
    assert set(table["metric"]) == {"aggregate_regret"} and table["real_data"].all()


# ------------------------------------------------------------------ outcomes


def test_a_clear_win_survives_holm():
    # zero-shot constant 1.0, A at 2 +- 0.3: better by a wide margin on every episode
    df = frame({"A": noisy(2.0), "B": noisy(3.0), ZS: const(1.0)})
    table = zs.report({"zhou2014-fig1": df})
    assert set(table["outcome_paper"]) == {"win"} and set(table["outcome_suite"]) == {"win"}
    assert (table["diff_paper"] < 0).all() and (table["p_holm_paper"] < 1e-6).all()


def test_a_constant_margin_is_a_win_by_the_sign_test():
    df = frame({"A": noisy(2.0), ZS: noisy(1.0)})  # same noise: zero-shot = A - 1 exactly
    table = zs.report({"zhou2014-fig1": df})
    assert set(table["outcome_paper"]) == {"win"}
    assert table["diff_paper"].to_numpy() == pytest.approx([-1.0, -1.0])
    raw = stats.binomtest(RUNS, RUNS, 0.5).pvalue
    assert table["p_holm_paper"].to_numpy() == pytest.approx([2 * raw, 2 * raw])


def test_identical_values_tie():
    df = frame({"A": noisy(2.0), ZS: noisy(2.0)})
    table = zs.report({"zhou2014-fig1": df})
    assert set(table["outcome_paper"]) == {"tie"} and set(table["outcome_suite"]) == {"tie"}
    assert (table["diff_paper"] == 0).all() and (table["p_holm_paper"] == 1).all()


def test_a_clear_loss():
    df = frame({"A": noisy(1.0), "B": noisy(1.5), ZS: noisy(2.0)})
    table = zs.report({"zhou2014-fig1": df})
    assert set(table["outcome_paper"]) == {"loss"} and set(table["outcome_suite"]) == {"loss"}
    assert (table["diff_suite"] > 0).all()


def test_holm_runs_within_an_experiment_separately_for_paper_and_suite():
    df = frame(
        {"A": noisy(2.0, 1.0), "EB-TC": noisy([1.0, 5.0, 1.0], 1.0), ZS: noisy(1.8, 1.2)},
        points=("p1", "p2", "p3"),
        metric="pulls",
        seed=3,
    )
    other = frame({"A": noisy(2.0), ZS: noisy(1.0)})
    table = zs.report({"jiang2017-fig1": df, "zhou2014-fig1": other})
    mine = table[table["experiment"] == "jiang2017-fig1"]
    raw_paper, raw_suite = [], []
    for p in ("p1", "p2", "p3"):
        at = df[df["point"] == p].pivot(index="run", columns="agent", values="pulls")
        raw_paper.append(paired_test(at[ZS], at["A"], False)["p_value"])
        best = "EB-TC" if p != "p2" else "A"
        raw_suite.append(paired_test(at[ZS], at[best], False)["p_value"])
    assert list(mine["suite_best"]) == ["EB-TC", "A", "EB-TC"]
    assert mine["p_holm_paper"].to_numpy() == pytest.approx(holm(raw_paper))
    assert mine["p_holm_suite"].to_numpy() == pytest.approx(holm(raw_suite))


def test_a_binary_metric_uses_mcnemar():
    """Failures: A fails on 12 of 30 episodes, zero-shot never; 12 discordant pairs."""
    df = frame(
        {"A": lambda i, r, rng: float(r < 12), ZS: const(0.0)},
        metric="failure",
        points=("p1",),
    )
    table = zs.report({"chen2017-fig1": df})
    row = table.iloc[0]
    assert row["p_holm_paper"] == pytest.approx(stats.binomtest(0, 12, 0.5).pvalue)
    a = df[df.agent == "A"]["failure"].to_numpy()
    t_p = stats.ttest_rel(np.zeros(RUNS), a).pvalue
    assert not math.isclose(row["p_holm_paper"], t_p)
    res = paired_test(np.zeros(RUNS), a, True)
    assert res["test"] == "mcnemar"
    assert (row["ci_low_paper"], row["ci_high_paper"]) == pytest.approx(
        (res["ci_low"], res["ci_high"])
    )
    assert row["outcome_paper"] == "win" and row["diff_paper"] == pytest.approx(-0.4)
    assert row["error"] is None or math.isnan(row["error"])  # fixed budget: no error check


# ------------------------------------------------------------------ fixed confidence


def test_fixed_confidence_error_consistency():
    z1, z2 = "zero-shot (learned), delta = 0.1", "zero-shot (learned), delta = 0.01"
    ok = np.zeros(RUNS)
    bad = (np.arange(RUNS) < 20).astype(float)
    df1 = frame(
        {"LUCB, delta = 0.1": noisy(500.0, 20), z1: noisy(400.0, 20)},
        metric="pulls",
        points=("mu1, delta = 0.1",),
        misidentified={z1: lambda i, r, rng: ok[r]},
    )
    df2 = frame(
        {"LUCB, delta = 0.01": noisy(700.0, 20), z2: noisy(600.0, 20)},
        metric="pulls",
        points=("mu1, delta = 0.01",),
        misidentified={z2: lambda i, r, rng: bad[r]},
    )
    table = zs.report({"garivier2016-sec5": pd.concat([df1, df2])})
    first, second = table.iloc[0], table.iloc[1]
    assert (first["zero_shot"], first["delta"], first["error"]) == (z1, 0.1, 0.0)
    assert first["error_consistent"]
    assert second["delta"] == 0.01 and second["error"] == pytest.approx(20 / 30)
    assert second["error_consistent"] is not None and not second["error_consistent"]
    s = zs.summary(table)
    assert s.iloc[0]["error_consistent"] == 1 and s.iloc[0]["error_checked"] == 2


def test_the_delta_of_unlabelled_fixed_confidence_experiments():
    """jun2016-table1 and jiang2017-fig1 zero-shot labels carry no delta: 0.1 and 0.01."""
    few = lambda i, r, rng: float(r < 2)  # noqa: E731 - 2 errors in 30
    for name, metric, delta, consistent in (
        ("jun2016-table1", "batches", 0.1, True),  # 2/30 at 0.1: fine
        ("jiang2017-fig1", "pulls", 0.01, False),  # 2/30 at 0.01: too many
    ):
        df = frame(
            {"BatchRacing": noisy(50.0, 5), ZS: noisy(40.0, 5)},
            metric=metric,
            misidentified={ZS: few},
        )
        table = zs.report({name: df})
        assert set(table["delta"]) == {delta}
        assert set(table["error_consistent"]) == {consistent}
        assert table["error"].to_numpy() == pytest.approx([2 / 30, 2 / 30])


def test_fixed_budget_experiments_have_no_error_check():
    df = frame({"NSAR(p=1.1)": noisy(0.3), ZS: noisy(0.2)}, metric="misidentified")
    df["misidentified"] = (df["misidentified"] > 0.25).astype(float)
    table = zs.report({"shahrampour2017-fig2": df})
    assert table["error_consistent"].isna().all() and table["delta"].isna().all()
    assert zs.summary(table).iloc[0]["error_consistent"] is None or math.isnan(
        zs.summary(table).iloc[0]["error_consistent"]
    )


# ------------------------------------------------------------------ winnable points


def fails_on(count: int) -> Value:
    """1 on the first ``count`` runs of every point, 0 after."""
    return lambda i, r, rng: float(r < count)


def per_run(values: np.ndarray) -> Value:
    """The run's entry of ``values`` at every point."""
    return lambda i, r, rng: float(values[r])


def test_a_binary_point_is_winnable_when_the_oracle_wins_after_holm():
    # the paper's best fails 12 of 30 times at p1 (oracle p = 2^-11), 3 times at p2 (0.25)
    df = frame(
        {"A": lambda i, r, rng: float(r < (12, 3)[i]), ZS: const(0.0)},
        metric="failure",
    )
    table = zs.report({"chen2017-fig1": df})
    assert list(table["winnable_paper"]) == [True, False]
    # zero-shot is the oracle here: its own outcomes are what the bound allows
    assert list(table["outcome_paper"]) == ["win", "tie"]
    assert zs.summary(table).iloc[0]["winnable_paper"] == 1


def test_holm_can_make_a_binary_point_unwinnable():
    # 6 failures: oracle p = 2^-5 = 0.031 < 0.05 alone, but 3 points make it 0.094
    alone = zs.report(
        {
            "chen2017-fig1": frame(
                {"A": fails_on(6), ZS: const(0.0)}, metric="failure", points=("p1",)
            )
        }
    )
    three = zs.report(
        {
            "chen2017-fig1": frame(
                {"A": fails_on(6), ZS: const(0.0)}, metric="failure", points=("p1", "p2", "p3")
            )
        }
    )
    assert list(alone["winnable_paper"]) == [True]
    assert list(three["winnable_paper"]) == [False, False, False]


def test_no_agent_wins_a_binary_point_the_bound_calls_unwinnable():
    rng = np.random.default_rng(7)
    for trial in range(100):
        a_fails = rng.random(RUNS) < rng.uniform(0, 0.4)
        z_fails = rng.random(RUNS) < rng.uniform(0, 0.4)
        df = frame(
            {"A": per_run(a_fails), ZS: per_run(z_fails)},
            metric="failure",
            points=("p1",),
        )
        row = zs.report({"chen2017-fig1": df}).iloc[0]
        if not row["winnable_paper"]:
            assert row["outcome_paper"] != "win", trial
        # and the oracle's bound is the same test zero-shot gets at its best
        oracle = paired_test(np.zeros(RUNS), a_fails.astype(float), True)["p_value"]
        assert row["winnable_paper"] == (oracle < 0.05)


def test_real_valued_points_are_unwinnable_only_at_the_floor():
    df = frame(
        {"A": lambda i, r, rng: (0.0, abs(rng.standard_normal()))[i], ZS: const(0.0)},
        metric="aggregate_regret",
    )
    table = zs.report({"zhou2014-fig1": df})
    assert list(table["winnable_paper"]) == [False, True]


def test_sample_cost_metrics_have_no_winnable_bound():
    df = frame({"A": noisy(500.0, 20), ZS: noisy(400.0, 20)}, metric="pulls")
    table = zs.report({"jiang2017-fig1": df})
    assert table["winnable_paper"].isna().all()
    s = zs.summary(table)
    assert s.iloc[0]["winnable_paper"] is None or math.isnan(s.iloc[0]["winnable_paper"])
    text = zs.to_markdown(table, s)
    assert "| jiang2017-fig1 | pulls | 2 | 2/0/0 | 100% | - |" in text


# ------------------------------------------------------------------ summary, markdown


def _two_experiments() -> pd.DataFrame:
    win = frame({"A": noisy(2.0), "B": noisy([3.0, 0.5]), ZS: noisy(1.0)})
    rte = frame({"A": noisy(1.0), ZS: noisy(1.0)})
    return zs.report({"zhou2014-fig1": win, "zhou2014-rte": rte})


def test_summary_counts_outcomes_per_experiment():
    table = _two_experiments()
    s = zs.summary(table).set_index("experiment")
    fig1, rte = s.loc["zhou2014-fig1"], s.loc["zhou2014-rte"]
    assert fig1["points"] == 2 and not fig1["real_data"] and rte["real_data"]
    assert (fig1["wins_paper"], fig1["ties_paper"], fig1["losses_paper"]) == (1, 0, 1)
    assert (fig1["wins_suite"], fig1["losses_suite"]) == (1, 1)
    assert fig1["share_win_paper"] == 0.5 and fig1["share_win_or_tie_suite"] == 0.5
    assert (rte["ties_paper"], rte["share_win_paper"], rte["share_win_or_tie_suite"]) == (2, 0, 1)


def test_markdown_has_the_summary_and_a_table_per_experiment():
    table = _two_experiments()
    text = zs.to_markdown(table, zs.summary(table))
    assert text.index("## Summary") < text.index("## zhou2014-fig1")
    assert "| experiment | metric | points | W/T/L vs paper |" in text
    assert "## zhou2014-rte (real data)" in text
    assert "| zhou2014-rte (real data) | aggregate_regret | 2 | 0/2/0 | 0% | 2 (100%) |" in text
    assert "## zhou2014-fig1 (real data)" not in text
    # 3 significant digits; zero-shot is A - 1 on every episode (the sign test's interval)
    p1 = row_at(table, "p1", "zhou2014-fig1")
    assert f"| p1 | {p1['zero_shot_mean']:#.3g} | A | {p1['paper_best_mean']:#.3g} |" in text
    assert "| -1.00 [-1.00, -1.00] | win |" in text and "| loss |" in text
    fig1 = text.split("## zhou2014-fig1\n")[1].split("## ")[0]
    header = next(line for line in fig1.splitlines() if line.startswith("| point"))
    assert "error" not in header and "best paper algorithm" in header


def test_markdown_of_a_fixed_confidence_experiment_shows_error_and_delta():
    zero = "zero-shot (learned), delta = 0.1"
    df = frame(
        {"LUCB, delta = 0.1": noisy(500.0, 20), zero: noisy(400.0, 20)},
        metric="pulls",
        misidentified={zero: const(0.0)},
    )
    table = zs.report({"modern-vs-papers": df})
    text = zs.to_markdown(table, zs.summary(table))
    assert "| error | delta | consistent |" in text
    assert "| 0 | 0.1 | yes |" in text
    assert "| 2/2 |" in text


# ------------------------------------------------------------------ bad input


def test_no_zero_shot_agent_names_the_experiment_and_its_agents():
    df = frame({"A": noisy(1.0), "B": noisy(2.0)})
    with pytest.raises(zs.ReportError, match=r"zhou2014-fig1: no zero-shot agent.*A, B"):
        zs.report({"zhou2014-fig1": df})


def test_bad_inputs_are_named(tmp_path):
    df = frame({"A": noisy(1.0), ZS: noisy(1.0)})
    with pytest.raises(zs.ReportError, match="'quick'"):
        zs.report({"quick": df})
    with pytest.raises(zs.ReportError, match="alpha"):
        zs.report({"zhou2014-fig1": df}, alpha=1.5)
    with pytest.raises(zs.ReportError, match="'pulls'"):
        zs.report({"zhou2014-fig1": df.drop(columns="pulls")}, metrics={"zhou2014-fig1": "pulls"})
    with pytest.raises(zs.ReportError, match="not a results directory"):
        zs.report({"zhou2014-fig1": tmp_path})
    with pytest.raises(zs.ReportError, match="no such directory"):
        zs.report({"zhou2014-fig1": tmp_path / "missing"})
    two = pd.concat([df, df[df.agent == ZS].assign(agent="zero-shot (learned), delta = 0.1")])
    with pytest.raises(zs.ReportError, match="several zero-shot agents"):
        zs.report({"zhou2014-fig1": two})
    unpaired = df.copy()
    unpaired.loc[unpaired["agent"] == ZS, "seed"] += 1
    with pytest.raises(zs.ReportError, match="zhou2014-fig1: point 'p1' run 0"):
        zs.report({"zhou2014-fig1": unpaired})
    with pytest.raises(zs.ReportError, match=str(tmp_path)):
        zs.main([str(tmp_path)])
    with pytest.raises(zs.ReportError, match="EXPERIMENT=METRIC"):
        zs.main([str(tmp_path), "--metric", "pulls"])


# ------------------------------------------------------------------ a real results directory


def _store_rows(df: pd.DataFrame, name: str) -> list[dict]:
    rows = []
    for rec in df.to_dict("records"):
        row = dict.fromkeys(ROW_COLUMNS)
        row.update(rec)
        row.update(
            experiment=name,
            x_value=float(rec["x"]),
            agent_name=rec["agent"],
            params="{}",
            agent_seed=0,
            pulls=int(rec["pulls"]),
            batches=int(rec["batches"]),
            terminated=True,
            truncated=False,
        )
        rows.append(row)
    return rows


def _results_dir(path, name: str, df: pd.DataFrame, agents: Sequence[str]) -> None:
    store = ResultStore(path)
    store.write(_store_rows(df, name))
    points = list(dict.fromkeys(df["point"]))
    store.merge_manifest(
        {
            "name": name,
            "metrics": ["aggregate_regret"],
            "runs": RUNS,
            "x_label": "x",
            "reduced": False,
            "points": [
                {"label": p, "panel": "P", "x": str(i + 1), "env_id": "e", "env": {}}
                for i, p in enumerate(points)
            ],
            "agents": [{"label": a, "name": a, "params": {}} for a in agents],
        },
        0,
    )


def test_a_results_directory_through_the_cli(tmp_path, capsys):
    # "B-agent" and "A-agent" tie in the mean: the manifest lists B first, the store
    # sorts rows by label, so only the manifest order makes B the best
    agents = ["B-agent", "A-agent", ZS]
    df = frame({"A-agent": const(2.0), "B-agent": const(2.0), ZS: noisy(1.0, 0.1)})
    _results_dir(tmp_path / "fig1", "zhou2014-fig1-lite", df, agents)
    virus = frame({"BatchSAR": noisy(0.3, 0.05), ZS: noisy(0.5, 0.05)}, metric="fnr")
    _results_dir(tmp_path / "virus", "jun2016-virus", virus, ["BatchSAR", ZS])
    out, csv = tmp_path / "report" / "zs.md", tmp_path / "report" / "zs.csv"
    args = [str(tmp_path / "fig1"), str(tmp_path / "virus"), "--out", str(out), "--csv", str(csv)]
    assert zs.main(args) == 0
    printed = capsys.readouterr().out
    assert printed == out.read_text()
    assert "## zhou2014-fig1-lite\n" in printed and "## jun2016-virus (real data)" in printed
    table = pd.read_csv(csv)
    assert list(table.columns) == zs.COLUMNS
    fig1 = table[table["experiment"] == "zhou2014-fig1-lite"]
    assert set(fig1["paper_best"]) == {"B-agent"} and set(fig1["outcome_paper"]) == {"win"}
    virus_rows = table[table["experiment"] == "jun2016-virus"]
    assert set(virus_rows["metric"]) == {"fnr"} and set(virus_rows["outcome_suite"]) == {"loss"}
    # the same directory twice is refused, naming the experiment
    with pytest.raises(zs.ReportError, match="zhou2014-fig1-lite"):
        zs.main([str(tmp_path / "fig1"), str(tmp_path / "fig1")])


def test_means_and_tests_use_only_the_runs_zero_shot_played():
    """An agent with extra runs (an interrupted, larger run) is judged on zero-shot's runs:
    B is better on its extra runs only, so it must not be chosen as the best."""
    df = frame({"A": const(1.0), "B": lambda i, r, rng: 2.0 if r < RUNS else 0.0, ZS: const(1.5)})
    extra = frame({"B": const(0.0)}, runs=3 * RUNS)
    extra = extra[extra["run"] >= RUNS]
    table = zs.report({"zhou2014-fig1": pd.concat([df, extra], ignore_index=True)})
    assert set(table["suite_best"]) == {"A"}
    assert set(table["n"]) == {RUNS}
