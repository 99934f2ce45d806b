"""Means with 95% confidence intervals per (point, agent) and metric.

Intervals: Student's t for real-valued metrics (``mean +- t_{0.975, n-1} s / sqrt(n)``)
and Wilson's score interval for 0/1 metrics (misidentification, failure), which stays
inside [0, 1] and is not degenerate at 0 or 1 successes. With one run the t interval
is undefined (NaN). A t interval is cut to the metric's range
(:data:`topk_bench.episodes.METRIC_RANGES`: regret, pulls and batches are >= 0, precision
and FNR in [0, 1]), which keeps its coverage.

The text tables (:func:`format_tables`) give every figure to 3 significant digits and
fit the terminal's width (:mod:`topk_bench.tables`); ``summary.csv`` keeps full
precision.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from topk_bench.episodes import BINARY_METRICS, METRIC_RANGES
from topk_bench.tables import interval, sig, text_table, wrap

__all__ = [
    "clopper_pearson",
    "format_tables",
    "ratio_table",
    "summarize",
    "summarize_dir",
    "t_quantile",
    "wilson",
]

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
    out = pd.DataFrame.from_records(
        records,
        columns=[
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
        ],
    )
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


def format_tables(summary: Any, x_label: str = "x", width: int | None = None) -> str:
    """One text table per metric: a row per point, a column per agent, ``mean [95% CI]``.

    Figures to 3 significant digits; a table wider than ``width`` (default: the
    terminal's, :func:`topk_bench.tables.terminal_width`) is split into narrower tables
    that repeat the panel and x columns (:func:`topk_bench.tables.text_table`).
    """
    blocks = []
    for metric, mdf in summary.groupby("metric", sort=False):
        agents = list(dict.fromkeys(mdf["agent"]))
        rows = []
        for _point, pdf in mdf.groupby("point", sort=False):
            first = pdf.iloc[0]
            cells = {r.agent: interval(r.mean, r.ci_low, r.ci_high) for r in pdf.itertuples()}
            ns = sorted(set(pdf["n"]))
            rows.append(
                [
                    str(first["panel"]),
                    str(first["x"]),
                    *(cells.get(a, "") for a in agents),
                    "/".join(map(str, ns)),
                ]
            )
        header = ["panel", x_label, *agents, "n"]
        table = text_table(header, rows, keys=2, width=width)
        blocks.append(f"{metric}: mean [95% CI]\n" + table)
    return "\n\n".join(blocks)


def ratio_table(
    summary: Any, ratio: Mapping[str, Any], x_label: str = "x", width: int | None = None
) -> str:
    """Ratios of means to a reference point of the same panel and agent (e.g. speedups).

    ``ratio = {metric, reference_x, name}``: ``name`` at a point is
    ``mean(metric at the panel's point with x == reference_x) / mean(metric here)``.
    """
    metric, ref_x, name = ratio["metric"], str(ratio["reference_x"]), ratio.get("name", "ratio")
    mdf = summary[summary["metric"] == metric]
    rows = []
    agents = list(dict.fromkeys(mdf["agent"]))
    for (panel, _point), pdf in mdf.groupby(["panel", "point"], sort=False):
        ref = mdf[(mdf["panel"] == panel) & (mdf["x"].astype(str) == ref_x)]
        refmean = {r.agent: r.mean for r in ref.itertuples()}
        cells = {}
        for r in pdf.itertuples():
            base = refmean.get(r.agent, math.nan)
            cells[r.agent] = sig(base / r.mean) if r.mean and not math.isnan(base) else "-"
        rows.append([str(panel), str(pdf.iloc[0]["x"]), *(cells.get(a, "") for a in agents)])
    header = ["panel", x_label, *agents]
    title = wrap(f"{name} ({metric} at {x_label}={ref_x} / {metric})", width)
    return title + "\n" + text_table(header, rows, keys=2, width=width)


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
    title = f"{manifest.get('name', Path(root).name)}: {len(df)} episodes"
    text = wrap(title, width) + "\n\n" + format_tables(summary, x_label, width)
    ratio = (manifest.get("summary") or {}).get("ratio")
    if ratio:
        ratio_summary = summary if ratio["metric"] in metrics else summarize(df, [ratio["metric"]])
        text += "\n\n" + ratio_table(ratio_summary, ratio, x_label, width)
    return text
