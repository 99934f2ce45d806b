"""Figures of a results directory: one PNG per metric, one subplot per panel.

Numeric x values give lines with a shaded 95% confidence band per agent; labels
(e.g. Shahrampour's setups) give grouped bars with 95% error bars. The intervals are
those of :mod:`topk_bench.summary`. Variants of one algorithm (agents with the same
registry name, e.g. jiang2017's faithful and heuristic parameter sets) share a colour
and differ in line style (bars: hatching). A log x axis is labelled at the x values of
the data when there are at most 12 of them (those at least 1/8 of the axis apart, in
short form: 20k, 1.5M).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["agent_styles", "grid_shape", "plot_dir", "plot_summary"]

_LINESTYLES = ("-", "--", ":", "-.")
_HATCHES = ("", "//", "..", "xx", "\\\\", "--", "++", "oo")


def _compact(v: float) -> str:
    """A short tick label: 20000 -> '20k', 1500000 -> '1.5M'."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= scale and v % (scale / 10) == 0:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


def _spaced_log_ticks(xs: list[float], slots: int = 8) -> list[float]:
    """The x values to label on a log axis, at least 1/``slots`` of its span apart."""
    positive = [v for v in xs if v > 0]
    if len(positive) < 2:
        return list(xs)
    span = math.log(positive[-1]) - math.log(positive[0])
    kept = [positive[0]]
    for v in positive[1:]:
        if math.log(v) - math.log(kept[-1]) >= span / slots:
            kept.append(v)
    if kept[-1] != positive[-1]:  # always label the largest value
        if len(kept) > 1 and math.log(positive[-1]) - math.log(kept[-1]) < span / slots:
            kept.pop()
        kept.append(positive[-1])
    return kept


def grid_shape(n_panels: int) -> tuple[int, int]:
    """(rows, columns) of the subplot grid: at most 3 columns, no row left mostly empty."""
    if n_panels < 1:
        raise ValueError(f"n_panels={n_panels} must be >= 1")
    rows = math.ceil(n_panels / 3)
    return rows, math.ceil(n_panels / rows)


def agent_styles(
    labels: Sequence[str], names: Mapping[str, str] | None = None
) -> dict[str, tuple[int, int]]:
    """Label -> (colour index, variant index): one colour per registry name, in order.

    ``names`` maps a label to its agent's registry name; labels without one are their
    own algorithm. The variant index counts earlier labels of the same name.
    """
    names = names or {}
    colour: dict[str, int] = {}
    seen: dict[str, int] = {}
    styles = {}
    for label in labels:
        name = names.get(label, label)
        colour.setdefault(name, len(colour))
        styles[label] = (colour[name], seen.get(name, 0))
        seen[name] = seen.get(name, 0) + 1
    return styles


def finish_grid(fig: Any, axes: Any, used: int) -> None:
    """Hide the grid's panels past the first ``used``, and put one legend below the figure
    with every label once (also those missing from some panels)."""
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    legend: dict[str, Any] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    if legend:
        fig.legend(
            list(legend.values()),
            list(legend),
            loc="outside lower center",
            ncol=min(len(legend), 5),
            fontsize=8,
        )


def _plt() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError as err:  # pragma: no cover - depends on the install
        raise RuntimeError("plots need matplotlib: pip install 'topk-bandit-envs[bench]'") from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_summary(
    summary: Any,
    out_dir: str | os.PathLike[str],
    *,
    title: str = "",
    x_label: str = "x",
    kind: str = "auto",
    logx: bool = False,
    logy: Sequence[str] = (),
    agent_names: Mapping[str, str] | None = None,
    diagonal: Sequence[str] = (),
) -> list[Path]:
    """Draw every metric of ``summary`` (:func:`topk_bench.summary.summarize`); return the PNGs.

    ``agent_names`` (label -> registry name) lets variants of one algorithm share a colour.
    ``diagonal``: metrics whose line panels get the line ``y = x`` (e.g. an error rate
    against the delta it was asked for).
    """
    import numpy as np

    plt = _plt()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for metric, mdf in summary.groupby("metric", sort=False):
        panels = list(dict.fromkeys(mdf["panel"]))
        agents = list(dict.fromkeys(mdf["agent"]))
        rows, cols = grid_shape(len(panels))
        # Grouped bars need room: about 0.12 inch per bar in the widest panel (a panel groups
        # only the agents that play in it).
        per_panel = mdf.groupby("panel")
        bars = int((per_panel["agent"].nunique() * per_panel["x"].nunique()).max())
        any_bars = kind == "bar" or (kind == "auto" and not mdf["x_value"].notna().all())
        width = max(5.0, 0.12 * bars + 1.0) if any_bars else 5.0
        if any_bars and width * cols > 16.0:  # wide bar panels: one above the other
            rows, cols = len(panels), 1
        fig, axes = plt.subplots(
            rows, cols, figsize=(width * cols, 3.6 * rows), squeeze=False, layout="constrained"
        )
        styles = agent_styles(agents, agent_names)
        n_colours = 1 + max(c for c, _ in styles.values())
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        if n_colours > len(palette):  # keep colours distinct (tab20: 20 of them)
            tab20 = list(plt.get_cmap("tab20").colors)
            palette = tab20[0::2] + tab20[1::2]  # the 10 strong colours first
        colors = [palette[styles[a][0] % len(palette)] for a in agents]
        for ax, panel in zip(axes.flat, panels, strict=False):
            pdf = mdf[mdf["panel"] == panel]
            numeric = bool(pdf["x_value"].notna().all())
            as_bars = kind == "bar" or (kind == "auto" and not numeric)
            if as_bars:
                xs = list(dict.fromkeys(pdf["x"]))
                here = set(pdf["agent"])
                present = [(j, a) for j, a in enumerate(agents) if a in here]
                width = 0.8 / max(1, len(present))
                for slot, (j, agent) in enumerate(present):
                    adf = pdf[pdf["agent"] == agent].set_index("x").reindex(xs)
                    pos = np.arange(len(xs)) + (slot - (len(present) - 1) / 2) * width
                    mean = adf["mean"].to_numpy(dtype=float)
                    err = np.vstack(
                        [
                            mean - adf["ci_low"].to_numpy(dtype=float),
                            adf["ci_high"].to_numpy(dtype=float) - mean,
                        ]
                    )
                    ax.bar(
                        pos,
                        mean,
                        width,
                        # (a zero-width interval may sit an ulp off the mean)
                        yerr=np.clip(np.nan_to_num(err), 0.0, None),
                        label=agent,
                        color=colors[j],
                        hatch=_HATCHES[styles[agent][1] % len(_HATCHES)] or None,
                        edgecolor="white" if styles[agent][1] else None,
                        capsize=2,
                    )
                ax.set_xticks(np.arange(len(xs)))
                ax.set_xticklabels(xs, rotation=30 if max(map(len, xs)) > 6 else 0, ha="right")
            else:
                for j, agent in enumerate(agents):
                    adf = pdf[pdf["agent"] == agent].sort_values("x_value")
                    if adf.empty:
                        continue
                    color = colors[j]
                    ax.plot(
                        adf["x_value"],
                        adf["mean"],
                        marker="o",
                        ms=3,
                        label=agent,
                        color=color,
                        ls=_LINESTYLES[styles[agent][1] % len(_LINESTYLES)],
                    )
                    ax.fill_between(
                        adf["x_value"].to_numpy(float),
                        adf["ci_low"].to_numpy(float),
                        adf["ci_high"].to_numpy(float),
                        alpha=0.2,
                        color=color,
                        lw=0,
                    )
                if logx:
                    ax.set_xscale("log")
                    xs = sorted(set(pdf["x_value"].astype(float)))
                    if len(xs) <= 12:  # label the data's x values, not only powers of ten
                        ticks = _spaced_log_ticks(xs)
                        ax.set_xticks(ticks, [_compact(v) for v in ticks])
                        ax.xaxis.set_minor_formatter(plt.NullFormatter())
            if metric in diagonal and not as_bars:
                lims = [v for v in pdf["x_value"].astype(float) if v > 0]
                if lims:
                    grid = np.geomspace(min(lims), max(lims), 50)
                    ax.plot(grid, grid, color="black", lw=1, ls="--", label="y = x")
            if metric in logy:
                ax.set_yscale("log")
                ax.yaxis.set_minor_formatter(plt.NullFormatter())
            ax.set_title(panel or metric, fontsize=9)
            ax.set_xlabel(x_label)
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
        finish_grid(fig, axes, len(panels))
        if title:
            fig.suptitle(f"{title}: {metric} (mean, 95% CI)", fontsize=10)
        path = out / f"{metric}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


def plot_dir(root: str | os.PathLike[str], metrics: Sequence[str] | None = None) -> list[Path]:
    """Plot a results directory into ``DIR/figures/<metric>.png``."""
    from topk_bench.store import ResultStore, read_results
    from topk_bench.summary import summarize

    manifest = ResultStore(root).manifest() or {}
    df = read_results(root)
    metrics = list(metrics or manifest.get("metrics") or ["aggregate_regret"])
    plot = manifest.get("plot") or {}
    summary = summarize(
        df,
        metrics,
        [p["label"] for p in manifest.get("points", [])],
        [a["label"] for a in manifest.get("agents", [])],
        binary_ci=plot.get("binary_ci", "wilson"),
    )
    return plot_summary(
        summary,
        Path(root) / "figures",
        title=manifest.get("name", ""),
        x_label=plot.get("xlabel") or manifest.get("x_label", "x"),
        kind=plot.get("kind", "auto"),
        logx=bool(plot.get("logx", False)),
        logy=plot.get("logy", ()),
        agent_names={a["label"]: a["name"] for a in manifest.get("agents", [])},
        diagonal=plot.get("diagonal", ()),
    )
