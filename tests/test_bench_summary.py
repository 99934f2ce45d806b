"""The summary's text tables: per metric and panel, agents against points, mean ± 95% CI."""

from __future__ import annotations

import math

import pandas as pd

from topk_bench.summary import SUMMARY_COLUMNS, format_tables, ratio_table
from topk_bench.tables import plus_minus


def _summary(
    agents: list[str],
    xs: list[int],
    *,
    metric: str = "aggregate_regret",
    panel: str = "two-level",
    n: int = 80,
    skip: tuple[tuple[str, int], ...] = (),
    counts: dict[tuple[str, int], int] | None = None,
) -> pd.DataFrame:
    """A summary frame (the columns :func:`topk_bench.summary.summarize` writes) whose
    means grow with the agent and the point, each with a 95% CI of +-10%."""
    rows = []
    for x in xs:
        for i, agent in enumerate(agents):
            if (agent, x) in skip:
                continue
            mean = 0.01 * (i + 1) * x + 0.001
            rows.append(
                {
                    "panel": panel,
                    "point": f"{panel}: k={x}",
                    "x": str(x),
                    "x_value": float(x),
                    "agent": agent,
                    "metric": metric,
                    "n": (counts or {}).get((agent, x), n),
                    "mean": mean,
                    "ci_low": 0.9 * mean,
                    "ci_high": 1.1 * mean,
                }
            )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def _table_lines(text: str) -> list[list[str]]:
    """The cells of every table line (header, rule and rows) of ``text``, split on 2 spaces."""
    return [
        [c.strip() for c in line.split("  ") if c.strip()]
        for line in text.splitlines()
        if "  " in line
    ]


def test_agents_are_rows_and_the_points_columns():
    agents = ["uniform", "OptMAI(0.8)", "SAR"]
    summary = _summary(agents, [5, 10])
    text = format_tables(summary, "k", width=100)
    assert text.splitlines()[0] == (
        "aggregate_regret (lower is better): mean ± 95% CI, 80 runs per cell"
    )
    assert "two-level" in text.splitlines()
    header, rule, *rows = _table_lines(text)
    assert header == ["agent", "k=5", "k=10"]  # the panel's name is not repeated
    assert [r[0] for r in rows] == agents
    for r in summary.itertuples():
        row = rows[agents.index(r.agent)]
        assert row[1 + [5, 10].index(int(r.x))] == plus_minus(r.mean, r.ci_low, r.ci_high)
    assert text.count("80") == 1  # the run count once, in the title
    assert "(n=" not in text


def test_a_panel_with_more_points_than_agents_has_the_points_as_rows():
    summary = _summary(["uniform", "SAR"], [2, 3, 4, 5])
    header, _, *rows = _table_lines(format_tables(summary, "k", width=100))
    assert header == ["k", "uniform", "SAR"]
    assert [r[0] for r in rows] == ["k=2", "k=3", "k=4", "k=5"]


def test_the_plus_minus_signs_of_a_column_line_up():
    summary = _summary(["a", "b", "c"], [1, 40])  # means from 0.011 to 1.20: widths differ
    text = format_tables(summary, width=100)
    lines = [line for line in text.splitlines() if line[:2] in ("a ", "b ", "c ")]
    assert len(lines) == 3 and " 1.20 ± 0.120" in text
    for column in range(2):
        at = {line.index("±", line.index("±") + 1) if column else line.index("±") for line in lines}
        assert len(at) == 1, lines


def test_a_cell_with_another_run_count_says_so():
    summary = _summary(["uniform", "SAR"], [5, 10], counts={("SAR", 10): 40})
    text = format_tables(summary, width=100)
    assert "80 runs per cell unless marked (n=...)" in text.splitlines()[0]
    _, _, *rows = _table_lines(text)
    assert rows[1][2].endswith(" (n=40)") and "(n=" not in " ".join(rows[0] + rows[1][:2])


def test_agents_keep_the_config_order_when_the_first_point_lacks_one():
    summary = _summary(["a", "b", "c"], [1, 2], skip=(("a", 1),))
    _, _, *rows = _table_lines(format_tables(summary, width=100, agent_order=["a", "b", "c"]))
    assert [r[0] for r in rows] == ["a", "b", "c"]
    assert len(rows[0]) == 2  # a's cell at k=1 is empty


def test_one_block_per_metric_with_its_direction():
    summary = pd.concat(
        [_summary(["a", "b"], [1, 2]), _summary(["a", "b"], [1, 2], metric="precision")]
    )
    blocks = format_tables(summary, width=100).split("\n\n\n")
    assert [b.splitlines()[0].split(":")[0] for b in blocks] == [
        "aggregate_regret (lower is better)",
        "precision (higher is better)",
    ]


def test_a_table_wider_than_the_terminal_is_split_and_every_cell_kept():
    agents = [f"agent{i}" for i in range(6)]
    summary = _summary(agents, [1, 2, 3, 4, 5, 6])
    text = format_tables(summary, width=60)
    assert max(map(len, text.splitlines())) <= 60
    for r in summary.itertuples():
        assert plus_minus(r.mean, r.ci_low, r.ci_high) in text


def test_the_ratio_table_has_the_same_layout():
    summary = _summary(["a", "b"], [1, 2], metric="batches")
    text = ratio_table(summary, {"metric": "batches", "reference_x": 1, "name": "speedup"})
    header, _, *rows = _table_lines(text)
    assert header == ["agent", "k=1", "k=2"]
    mean = {(r.agent, int(r.x)): r.mean for r in summary.itertuples()}
    assert rows[1][2] == f"{mean[('b', 1)] / mean[('b', 2)]:#.3g}"
    assert rows[0][1] == "1.00" and not math.isnan(float(rows[0][2]))
