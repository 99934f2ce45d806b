"""Means with 95% confidence intervals per (point, agent) and metric.

Intervals: Student's t for real-valued metrics (``mean +- t_{0.975, n-1} s / sqrt(n)``)
and Wilson's score interval for 0/1 metrics (misidentification, failure), which stays
inside [0, 1] and is not degenerate at 0 or 1 successes. With one run the t interval
is undefined (NaN). A t interval is cut to the metric's range
(:data:`topk_bench.episodes.METRIC_RANGES`: regret, pulls and batches are >= 0, precision
and FNR in [0, 1]), which keeps its coverage.

The text tables (:func:`format_tables`) compare the agents at a glance: per metric and
panel, one table whose cells are ``mean ± half-width`` of the 95% interval
(:func:`topk_bench.tables.plus_minus`), the agents as rows and the panel's points as
columns (or the other way round when the experiment has fewer agents than a panel has
points, so that tables grow down rather than across), the run count stated once per
metric; every figure to 3 significant digits, fit to the terminal's width
(:mod:`topk_bench.tables`). ``summary.csv`` keeps both ends of every interval at full
precision.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from topk_bench.episodes import BINARY_METRICS, METRIC_RANGES
from topk_bench.tables import plus_minus, sig, text_table, wrap

__all__ = [
    "SUMMARY_COLUMNS",
    "clopper_pearson",
    "format_tables",
    "ratio_table",
    "summarize",
    "summarize_dir",
    "t_quantile",
    "wilson",
]

#: The columns of a summary (:func:`summarize`, ``summary.csv``).
SUMMARY_COLUMNS = (
    "panel",
    "point",
    "x",
    "x_value",
    "agent",
    "metric",
    "n",
    "mean",
    "ci_low",
    "ci_high",
)

_Z = 1.959963984540054
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def t_quantile(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom.

    Exact table (3 decimals) up to 30, then the Cornish-Fisher expansion (error < 1e-4).
    """
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z, float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion."""
    if n < 1:
        return math.nan, math.nan
    p = successes / n
    denom = 1 + _Z**2 / n
    center = (p + _Z**2 / (2 * n)) / denom
    half = _Z * math.sqrt(p * (1 - p) / n + _Z**2 / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def clopper_pearson(successes: float, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval for a proportion (beta quantiles)."""
    if n < 1:
        return math.nan, math.nan
    from scipy.stats import beta

    x = int(round(successes))
    lo = 0.0 if x == 0 else float(beta.ppf(0.025, x, n - x + 1))
    hi = 1.0 if x == n else float(beta.ppf(0.975, x + 1, n - x))
    return lo, hi


def _interval(
    values: Any,
    binary: bool,
    bounds: tuple[float, float] = (-math.inf, math.inf),
    binary_ci: str = "wilson",
) -> tuple[int, float, float, float]:
    """n, mean and 95% interval: Wilson's (or Clopper-Pearson's) for 0/1 values, else Student's t.

    The t-interval is intersected with ``bounds``, the range every value lies in: the
    mean lies there too, so the intersection keeps the coverage (a regret interval
    does not reach below 0).
    """
    import numpy as np

    arr = np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    n = int(arr.size)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = float(arr.mean())
    if binary:
        ci = clopper_pearson if binary_ci == "clopper-pearson" else wilson
        lo, hi = ci(float(arr.sum()), n)
        return n, mean, lo, hi
    if n == 1:
        return n, mean, math.nan, math.nan
    half = t_quantile(n - 1) * float(arr.std(ddof=1)) / math.sqrt(n)
    return n, mean, max(bounds[0], mean - half), min(bounds[1], mean + half)


def summarize(
    df: Any,
    metrics: Sequence[str],
    point_order: Sequence[str] = (),
    agent_order: Sequence[str] = (),
    binary_ci: str = "wilson",
) -> Any:
    """Long table: one row per (point, agent, metric) with n, mean, ci_low, ci_high.

    ``binary_ci``: the interval of 0/1 metrics, ``"wilson"`` or ``"clopper-pearson"``
    (exact; what a calibration check against delta wants).
    """
    if binary_ci not in ("wilson", "clopper-pearson"):
        raise ValueError(f"binary_ci={binary_ci!r} must be 'wilson' or 'clopper-pearson'")
    import pandas as pd

    records = []
    for (point, agent), group in df.groupby(["point", "agent"], sort=False):
        first = group.iloc[0]
        for metric in metrics:
            n, mean, lo, hi = _interval(
                group[metric].to_numpy(),
                metric in BINARY_METRICS,
                METRIC_RANGES.get(metric, (-math.inf, math.inf)),
                binary_ci,
            )
            records.append(
                {
                    "panel": first["panel"],
                    "point": point,
                    "x": first["x"],
                    "x_value": first["x_value"],
                    "agent": agent,
                    "metric": metric,
                    "n": n,
                    "mean": mean,
                    "ci_low": lo,
                    "ci_high": hi,
                }
            )
    out = pd.DataFrame.from_records(records, columns=list(SUMMARY_COLUMNS))
    prank = {p: i for i, p in enumerate(point_order)}
    arank = {a: i for i, a in enumerate(agent_order)}
    mrank = {m: i for i, m in enumerate(metrics)}
    if len(out):
        out["_p"] = out["point"].map(lambda p: prank.get(p, len(prank)))
        out["_a"] = out["agent"].map(lambda a: arank.get(a, len(arank)))
        out["_m"] = out["metric"].map(mrank)
        out = out.sort_values(["_m", "_p", "point", "_a", "agent"], kind="stable")
        out = out.drop(columns=["_p", "_a", "_m"]).reset_index(drop=True)
    return out


def _higher_is_better(metric: str) -> bool:
    from topk_bench.compare import HIGHER_IS_BETTER

    return metric in HIGHER_IS_BETTER


def _ordered(values: Sequence[str], order: Sequence[str]) -> list[str]:
    """The distinct ``values``: those in ``order`` first, in its order, then the others."""
    present = dict.fromkeys(values)
    return [v for v in order if v in present] + [v for v in present if v not in set(order)]


def point_name(point: str, panel: str) -> str:
    """A point's label without its panel's prefix (``"k=5"`` for ``"two-level: k=5"``)."""
    prefix = f"{panel}: "
    return point[len(prefix) :] if panel and point.startswith(prefix) else point


def agents_as_rows(summary: Any) -> bool:
    """Whether the tables put the agents in rows (and a panel's points in columns): when
    no panel has more points than there are agents. Tables then grow downwards."""
    if not len(summary):
        return True
    agents = summary["agent"].nunique()
    points = summary.drop_duplicates("point").groupby("panel", sort=False).size().max()
    return int(points) <= agents


def _align(cells: Sequence[str]) -> list[str]:
    """One column's ``mean ± half`` cells with their ``±`` signs aligned (means right-aligned)."""
    parts = [c.split(" ± ", 1) if c else [] for c in cells]
    left = max((len(p[0]) for p in parts if p), default=0)
    out = []
    for p in parts:
        if not p:
            out.append("")
        elif len(p) == 1:
            head, _, tail = p[0].partition(" ")  # "1.00 (n=4)": align the figure
            out.append(head.rjust(left) + (f" {tail}" if tail else ""))
        else:
            out.append(f"{p[0].rjust(left)} ± {p[1]}")
    return out


def _panel_tables(
    mdf: Any,
    cell: Callable[[Any], str],
    rows_are_agents: bool,
    agent_order: Sequence[str],
    x_label: str,
    width: int | None,
) -> list[str]:
    """Per panel of ``mdf`` (one metric's rows of a summary): the panel's name and a table
    of ``cell(row)``, with the agents as rows and the points as columns, or transposed."""
    blocks = []
    agents = _ordered(list(mdf["agent"]), agent_order)
    for panel, pdf in mdf.groupby("panel", sort=False):
        panel = str(panel)
        points = list(dict.fromkeys(pdf["point"]))
        names = [point_name(str(p), panel) for p in points]
        by = {(r.agent, r.point): cell(r) for r in pdf.itertuples()}
        here = [a for a in agents if any((a, p) in by for p in points)]
        if rows_are_agents:
            keys, header = here, ["agent", *names]
            columns = [_align([by.get((a, p), "") for a in here]) for p in points]
        else:
            keys, header = names, [x_label, *here]
            columns = [_align([by.get((a, p), "") for p in points]) for a in here]
        rows = [[key, *(col[i] for col in columns)] for i, key in enumerate(keys)]
        table = text_table(header, rows, keys=1, width=width)
        blocks.append((wrap(panel, width) + "\n" if panel else "") + table)
    return blocks


def format_tables(
    summary: Any,
    x_label: str = "x",
    width: int | None = None,
    agent_order: Sequence[str] = (),
) -> str:
    """Per metric, one table per panel: ``mean ± half-width`` of the 95% CI per agent and point.

    The agents are rows and the panel's points columns (:func:`agents_as_rows`; else
    the points are rows under ``x_label``); a column's ``±`` signs line up. The metric's
    title says which way is better and how many runs each cell has (a cell with another
    count says ``(n=...)``). Figures to 3 significant digits; a table wider than
    ``width`` (default: the terminal's, :func:`topk_bench.tables.terminal_width`) is
    split into narrower tables that repeat the key column
    (:func:`topk_bench.tables.text_table`).
    """
    rows_are_agents = agents_as_rows(summary)
    blocks = []
    for metric, mdf in summary.groupby("metric", sort=False):
        counts = Counter(int(n) for n in mdf["n"])
        common = counts.most_common(1)[0][0]
        runs = f"{common} runs per cell" + ("" if len(counts) == 1 else " unless marked (n=...)")
        better = "higher" if _higher_is_better(str(metric)) else "lower"

        def cell(r: Any, common: int = common) -> str:
            text = plus_minus(r.mean, r.ci_low, r.ci_high)
            return text if r.n == common or r.n == 0 else f"{text} (n={r.n})"

        title = wrap(f"{metric} ({better} is better): mean ± 95% CI, {runs}", width)
        tables = _panel_tables(mdf, cell, rows_are_agents, agent_order, x_label, width)
        blocks.append(title + "\n\n" + "\n\n".join(tables))
    return "\n\n\n".join(blocks)


def ratio_table(
    summary: Any,
    ratio: Mapping[str, Any],
    x_label: str = "x",
    width: int | None = None,
    agent_order: Sequence[str] = (),
) -> str:
    """Ratios of means to a reference point of the same panel and agent (e.g. speedups).

    ``ratio = {metric, reference_x, name}``: ``name`` at a point is
    ``mean(metric at the panel's point with x == reference_x) / mean(metric here)``;
    laid out as :func:`format_tables` lays out the means.
    """
    metric, ref_x, name = ratio["metric"], str(ratio["reference_x"]), ratio.get("name", "ratio")
    mdf = summary[summary["metric"] == metric]
    refmean = {(r.panel, r.agent): r.mean for r in mdf[mdf["x"].astype(str) == ref_x].itertuples()}

    def cell(r: Any) -> str:
        base = refmean.get((r.panel, r.agent), math.nan)
        return sig(base / r.mean) if r.mean and not math.isnan(base) else "-"

    title = wrap(f"{name} ({metric} at {x_label}={ref_x} / {metric})", width)
    tables = _panel_tables(mdf, cell, agents_as_rows(mdf), agent_order, x_label, width)
    return title + "\n\n" + "\n\n".join(tables)


def summarize_dir(
    root: str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    write: bool = True,
    width: int | None = None,
) -> str:
    """Summarise a results directory; write ``summary.csv`` there (full precision); return
    the text tables (:func:`format_tables`, no wider than ``width`` where they can be)."""
    from topk_bench.store import ResultStore, read_results

    store = ResultStore(root)
    manifest = store.manifest() or {}
    df = read_results(root)
    metrics = list(metrics or manifest.get("metrics") or ["aggregate_regret"])
    summary = summarize(
        df,
        metrics,
        [p["label"] for p in manifest.get("points", [])],
        [a["label"] for a in manifest.get("agents", [])],
    )
    if write:
        summary.to_csv(Path(root) / "summary.csv", index=False)
    x_label = manifest.get("x_label", "x")
    agent_order = [a["label"] for a in manifest.get("agents", [])]
    title = (
        f"{manifest.get('name', Path(root).name)}: {len(df)} episodes, "
        f"{df['point'].nunique() if len(df) else 0} points, "
        f"{df['agent'].nunique() if len(df) else 0} agents. Each cell: mean ± the larger "
        f"side of its 95% CI (Student t; Wilson for 0/1 metrics), 3 significant digits; "
        f"summary.csv has both ends at full precision."
    )
    text = wrap(title, width) + "\n\n\n" + format_tables(summary, x_label, width, agent_order)
    ratio = (manifest.get("summary") or {}).get("ratio")
    if ratio:
        ratio_summary = summary if ratio["metric"] in metrics else summarize(df, [ratio["metric"]])
        text += "\n\n\n" + ratio_table(ratio_summary, ratio, x_label, width, agent_order)
    return text
