"""Plot layout and the metric-range cut of the summary's intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from topk_bench.plot import agent_styles, grid_shape, plot_summary
from topk_bench.summary import summarize, t_quantile


@pytest.mark.parametrize(
    ("n", "shape"),
    [(1, (1, 1)), (2, (1, 2)), (3, (1, 3)), (4, (2, 2)), (5, (2, 3)), (6, (2, 3)), (7, (3, 3))],
)
def test_grid_shape(n, shape) -> None:
    assert grid_shape(n) == shape


def test_grid_shape_rejects_no_panels() -> None:
    with pytest.raises(ValueError, match="n_panels=0"):
        grid_shape(0)


def test_variants_of_one_algorithm_share_a_colour() -> None:
    labels = ["LUCB", "lil'LUCB (faithful)", "lil'LUCB (heuristic)", "LUCB++ (faithful)"]
    names = {
        "LUCB": "lucb",
        "lil'LUCB (faithful)": "lil_lucb",
        "lil'LUCB (heuristic)": "lil_lucb",
        "LUCB++ (faithful)": "lucb_pp",
    }
    assert agent_styles(labels, names) == {
        "LUCB": (0, 0),
        "lil'LUCB (faithful)": (1, 0),
        "lil'LUCB (heuristic)": (1, 1),
        "LUCB++ (faithful)": (2, 0),
    }
    assert agent_styles(["a", "b"]) == {"a": (0, 0), "b": (1, 0)}


def _rows(values: dict[str, list[float]], metric: str) -> pd.DataFrame:
    rows = []
    for agent, vals in values.items():
        for v in vals:
            rows.append(
                {"point": "p", "panel": "", "x": "1", "x_value": 1.0, "agent": agent, metric: v}
            )
    return pd.DataFrame(rows)


def test_regret_interval_does_not_reach_below_zero() -> None:
    vals = [0.0] * 9 + [0.9]  # mean 0.09, t half-width ~0.20
    s = summarize(_rows({"a": vals}, "aggregate_regret"), ["aggregate_regret"])
    row = s.iloc[0]
    half = t_quantile(9) * np.std(vals, ddof=1) / math.sqrt(10)
    assert row["ci_low"] == 0.0 and 0.09 - half < 0
    assert row["ci_high"] == pytest.approx(0.09 + half)


def test_precision_interval_stays_in_unit_interval() -> None:
    vals = [1.0] * 9 + [0.1]
    s = summarize(_rows({"a": vals}, "precision"), ["precision"])
    assert s.iloc[0]["ci_high"] == 1.0 and s.iloc[0]["ci_low"] < s.iloc[0]["mean"]


def test_unbounded_metric_keeps_the_t_interval() -> None:
    vals = [-1.0, 0.0, 1.0, -2.0]
    s = summarize(_rows({"a": vals}, "reward"), ["reward"])
    half = t_quantile(3) * np.std(vals, ddof=1) / 2
    assert s.iloc[0]["ci_low"] == pytest.approx(-0.5 - half)


def test_plot_summary_draws_four_panels_log_x(tmp_path) -> None:
    rows = []
    for panel in ["A", "B", "C", "D"]:
        for x in [10, 50, 300]:
            for agent in ["lucb (f)", "lucb (h)"]:
                rows.append(
                    {
                        "panel": panel,
                        "point": f"{panel}{x}",
                        "x": str(x),
                        "x_value": float(x),
                        "agent": agent,
                        "metric": "pulls",
                        "n": 3,
                        "mean": float(x),
                        "ci_low": x - 1.0,
                        "ci_high": x + 1.0,
                    }
                )
    paths = plot_summary(
        pd.DataFrame(rows),
        tmp_path,
        logx=True,
        agent_names={"lucb (f)": "lucb", "lucb (h)": "lucb"},
    )
    assert [p.name for p in paths] == ["pulls.png"] and paths[0].stat().st_size > 0


def test_bar_plot_takes_a_zero_width_interval_an_ulp_off_the_mean(tmp_path) -> None:
    # all runs equal: the interval's end may sit an ulp on the wrong side of the mean
    mean = 0.1 + 0.2
    rows = [
        {
            "panel": "P",
            "point": f"P{x}",
            "x": x,
            "x_value": math.nan,
            "agent": "a",
            "metric": "batches",
            "n": 10,
            "mean": mean,
            "ci_low": 0.3,
            "ci_high": 0.3,
        }
        for x in ("b=1", "b=4")
    ]
    assert rows[0]["ci_low"] < rows[0]["mean"] or rows[0]["ci_high"] < rows[0]["mean"]
    paths = plot_summary(pd.DataFrame(rows), tmp_path, kind="bar")
    assert [p.name for p in paths] == ["batches.png"] and paths[0].stat().st_size > 0


def test_log_axis_labels_are_spaced_and_short() -> None:
    from topk_bench.plot import _compact, _spaced_log_ticks

    xs = [10000, 15000, 20000, 25000, 30000, 40000, 50000, 100000, 200000]
    ticks = _spaced_log_ticks(xs)
    assert ticks[0] == 10000 and ticks[-1] == 200000
    ratios = [b / a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert min(ratios) >= 20 ** (1 / 8)  # at least 1/8 of the axis apart
    assert _spaced_log_ticks([10, 20, 50, 100, 200, 500]) == [10, 20, 50, 100, 200, 500]
    assert [_compact(v) for v in (20000, 1500000, 1250, 0.01)] == ["20k", "1.5M", "1250", "0.01"]


def test_clopper_pearson_matches_scipy() -> None:
    from scipy.stats import binomtest

    from topk_bench.summary import clopper_pearson

    for x, n in ((0, 20), (3, 20), (20, 20), (7, 1000)):
        ci = binomtest(x, n).proportion_ci(method="exact")
        assert clopper_pearson(x, n) == pytest.approx((ci.low, ci.high))


def test_bar_panels_group_only_their_own_agents(tmp_path, monkeypatch) -> None:
    """Two panels with disjoint agents (e.g. one per delta): each bar group is sized for the
    panel's own agents, and wide bar panels are stacked, not laid side by side."""
    import matplotlib.axes

    rows = []
    for panel, group in (("delta = 0.1", "ABCDEFGHIJ"), ("delta = 0.01", "KLMNOPQRST")):
        for x in ("i1", "i2", "i3", "i4", "i5", "i6", "i7"):
            for agent in group:
                rows.append(
                    {
                        "panel": panel,
                        "point": f"{panel}{x}",
                        "x": x,
                        "x_value": math.nan,
                        "agent": f"{agent}, {panel}",
                        "metric": "pulls",
                        "n": 5,
                        "mean": 1.0,
                        "ci_low": 0.5,
                        "ci_high": 1.5,
                    }
                )
    widths: list[float] = []
    real_bar = matplotlib.axes.Axes.bar

    def bar(self, x, height, width=0.8, *args, **kwargs):
        widths.append(float(width))
        return real_bar(self, x, height, width, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", bar)
    paths = plot_summary(pd.DataFrame(rows), tmp_path, kind="bar")
    assert len(widths) == 20 and all(w == pytest.approx(0.08) for w in widths)  # 0.8 / 10
    from PIL import Image

    w, h = Image.open(paths[0]).size
    assert h > w / 3, (w, h)  # stacked: 10 agents x 7 instances per panel, 8.4 + 1 inch wide
