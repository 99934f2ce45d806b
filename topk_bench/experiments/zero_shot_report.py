"""How the zero-shot agent compares with the papers' algorithms, experiment by experiment.

``python -m topk_bench.experiments.zero_shot_report DIR [DIR ...]`` reads results
directories of the paper experiments (``topk-bench run EXPERIMENT --out DIR``), in which
the agent ``zero_shot`` (labels starting with ``"zero-shot"``) plays beside the others,
and prints a Markdown report (``--out`` also writes it, ``--csv`` writes the table).

Method. Each experiment is judged on one primary metric (:data:`PRIMARY_METRIC`: regret,
failure rate, misidentification rate, false negative rate, batches or pulls). At every
point, zero-shot is compared with two agents chosen by their mean metric at that point
(:func:`~topk_bench.compare.better_sign` gives the better direction; a tie in the mean
goes to the agent listed first in the experiment; points where no zero-shot agent
played are left out):

* the best of the *paper's own* algorithms: by default every agent of the experiment
  except zero-shot; ``jiang2017-fig1`` leaves out EB-TC and T3C and
  ``garivier2016-sec5`` EB-TCI, EB-TC, T3C and TTTS (algorithms the paper did not run,
  added to the suite: :data:`PAPER_EXCLUDE`); ``modern-vs-papers`` counts only the algorithms of the
  papers it reproduces (LUCB, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB, BatchRacing,
  AT-LUCB: :data:`PAPER_INCLUDE`). Labels are matched by prefix;
* the best agent of the whole suite at the point (any agent but zero-shot).

All agents at a (point, run) play the same episode, so each comparison is the paired
test of :func:`topk_bench.compare.paired_test` on the per-run differences zero-shot minus
the other agent: Student's t (or the exact sign test when every difference is the same)
for real-valued metrics, the exact McNemar test for 0/1 metrics
(:data:`~topk_bench.episodes.BINARY_METRICS`), with a 95% interval of the difference.
The p-values are Holm-adjusted (:func:`topk_bench.compare.holm`) within an experiment,
over all its points, separately for the two comparisons. A comparison is a *win* if the
adjusted p-value is below ``alpha`` and the difference is in zero-shot's favour, a
*loss* if it is significant the other way, a *tie* otherwise. The best agent is chosen
on the same episodes it is tested on, so its mean is biased in its favour (it is the
best of several means): a win of zero-shot is conservative, a loss a little easier
to declare than at the nominal level.

Fixed-confidence experiments (primary metric pulls or batches, or zero-shot labels
carrying ``delta = X``) also report zero-shot's error rate (mean of ``misidentified``)
at each point, its target delta (from the label, else :data:`DEFAULT_DELTA`) and
whether the error count is consistent with delta: the one-sided exact binomial test of
"error rate > delta" has p >= 0.05.

Experiments on real data (:data:`REAL_DATA`) are marked "(real data)".

How many wins the episodes allow. A point can be a win only if the paper's best leaves
room to beat it significantly on the runs played; ``winnable_paper`` says whether it
does, against the same Holm family, for metrics with a best possible value
(:data:`METRIC_FLOOR`). For 0/1 metrics the bound is exact: no agent gets a smaller
McNemar p-value than an oracle with the best value on every episode (it makes every
discordant pair a pair in its favour), and Holm's adjusted p-values only grow with the
raw ones, so a point the oracle cannot win after Holm no agent can. For real-valued
metrics (regret, false negative rate) an agent can in principle win wherever the paper's
best is above the floor on at least one episode (a difference of constant sign and tiny
spread has an arbitrarily small t-test p-value), so a point is unwinnable only where the
paper's best is at the floor on every episode. Sample-cost metrics (pulls, batches) have
no such floor: ``None``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from topk_bench.compare import CompareError, better_sign, check_paired, holm, paired_test
from topk_bench.episodes import BINARY_METRICS
from topk_bench.tables import interval, sig

__all__ = [
    "COLUMNS",
    "DEFAULT_DELTA",
    "METRIC_FLOOR",
    "PAPER_EXCLUDE",
    "PAPER_INCLUDE",
    "PRIMARY_METRIC",
    "REAL_DATA",
    "ReportError",
    "experiment_key",
    "is_papers",
    "main",
    "report",
    "summary",
    "to_markdown",
]

#: Experiment -> the metric zero-shot is judged on.
PRIMARY_METRIC: dict[str, str] = {
    "zhou2014-fig1": "aggregate_regret",
    "zhou2014-rte": "aggregate_regret",
    "chen2017-fig1": "failure",
    "chen2017-fig2": "failure",
    "chen2017-fig3": "failure",
    "chen2017-fig4": "failure",
    "shahrampour2017-fig2": "misidentified",
    "shahrampour2017-captions": "misidentified",
    "jun2016-virus": "fnr",
    "jun2016-table1": "batches",
    "jiang2017-fig1": "pulls",
    "garivier2016-sec5": "pulls",
    "modern-vs-papers": "pulls",
}
#: Experiment -> label prefixes of agents that are not the paper's own algorithms.
PAPER_EXCLUDE: dict[str, tuple[str, ...]] = {
    "jiang2017-fig1": ("EB-TC", "T3C"),
    "garivier2016-sec5": ("EB-TCI", "EB-TC", "T3C", "TTTS"),
}
#: Experiment -> label prefixes of the only agents that are the papers' algorithms.
#: ``"LUCB,"`` (with the comma) matches ``"LUCB, delta = 0.1"`` but neither ``"LUCB++"``
#: nor ``"KL-LUCB"``.
PAPER_INCLUDE: dict[str, tuple[str, ...]] = {
    "modern-vs-papers": (
        "LUCB,",
        "lil'LUCB",
        "LUCB++",
        "lil'RandLUCB",
        "lil'CLUCB",
        "BatchRacing",
        "AT-LUCB",
    ),
}
#: Target delta of zero-shot where its label carries none.
DEFAULT_DELTA: dict[str, float] = {"jun2016-table1": 0.1, "jiang2017-fig1": 0.01}
#: Experiments on real data.
REAL_DATA = frozenset({"zhou2014-rte", "jun2016-virus", "shahrampour2017-captions"})
#: Metrics of fixed-confidence experiments (the sample cost; the error is the constraint).
FIXED_CONFIDENCE_METRICS = frozenset({"pulls", "batches"})
#: Metric -> its best possible value (0/1 metrics and regret-like metrics, lower better).
METRIC_FLOOR: dict[str, float] = {
    "aggregate_regret": 0.0,
    "fnr": 0.0,
    "failure": 0.0,
    "misidentified": 0.0,
}
#: Level of the binomial test of zero-shot's error rate against delta.
ERROR_ALPHA = 0.05
ZERO_SHOT_PREFIX = "zero-shot"

#: Columns of :func:`report`'s table.
COLUMNS = [
    "experiment",
    "real_data",
    "metric",
    "point",
    "panel",
    "x",
    "zero_shot",
    "n",
    "zero_shot_mean",
    "paper_best",
    "paper_best_mean",
    "diff_paper",
    "ci_low_paper",
    "ci_high_paper",
    "p_holm_paper",
    "outcome_paper",
    "winnable_paper",
    "suite_best",
    "suite_best_mean",
    "diff_suite",
    "ci_low_suite",
    "ci_high_suite",
    "p_holm_suite",
    "outcome_suite",
    "error",
    "delta",
    "error_consistent",
]
_DELTA = re.compile(r"delta\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


class ReportError(ValueError):
    """Input the report cannot use (not a results directory, no zero-shot agent, ...)."""


# ------------------------------------------------------------------- configuration


def experiment_key(name: str, known: Sequence[str] | None = None) -> str | None:
    """The known experiment ``name`` belongs to (longest known prefix), or ``None``."""
    keys = PRIMARY_METRIC if known is None else known
    matches = [k for k in keys if name.startswith(k)]
    return max(matches, key=len) if matches else None


def is_zero_shot(label: str) -> bool:
    """Whether ``label`` is a zero-shot agent's."""
    return str(label).startswith(ZERO_SHOT_PREFIX)


def is_papers(experiment: str, label: str) -> bool:
    """Whether agent ``label`` is one of the paper's own algorithms in ``experiment``."""
    if is_zero_shot(label):
        return False
    key = experiment_key(experiment, [*PAPER_INCLUDE, *PAPER_EXCLUDE]) or experiment
    if key in PAPER_INCLUDE:
        return any(label.startswith(p) for p in PAPER_INCLUDE[key])
    return not any(label.startswith(p) for p in PAPER_EXCLUDE.get(key, ()))


def _delta_of(label: str, key: str | None) -> float:
    m = _DELTA.search(label)
    if m:
        return float(m.group(1))
    return DEFAULT_DELTA.get(key or "", math.nan)


# -------------------------------------------------------------------------- input


def _load(name: str, source: Any) -> tuple[Any, list[str], list[str]]:
    """Rows, point order and agent order of one experiment (a DataFrame or a directory)."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source, [], []
    if not isinstance(source, (str, os.PathLike)):
        raise ReportError(
            f"{name}: results must be a DataFrame or a results directory, "
            f"got {type(source).__name__}"
        )
    from topk_bench.store import ResultStore, StoreError, read_results

    root = Path(source)
    if not root.is_dir():
        raise ReportError(f"{source}: not a results directory (no such directory)")
    manifest = ResultStore(root).manifest()
    if manifest is None:
        raise ReportError(f"{source}: not a results directory (no manifest.json)")
    try:
        df = read_results(root)
    except StoreError as err:
        raise ReportError(str(err)) from err
    points = [p["label"] for p in manifest.get("points", [])]
    agents = [a["label"] for a in manifest.get("agents", [])]
    return df, points, agents


def _ordered(values: Sequence[str], order: Sequence[str]) -> list[str]:
    rank = {v: i for i, v in enumerate(order)}
    uniq = list(dict.fromkeys(values))
    return sorted(uniq, key=lambda v: (rank.get(v, len(rank)), uniq.index(v)))


def _best(means: Mapping[str, float], candidates: Sequence[str], sign: int) -> str | None:
    """The candidate with the best mean (the first listed on a tie), or ``None``."""
    best, best_score = None, -math.inf
    for agent in candidates:
        score = sign * means[agent]
        if best is None or score > best_score:
            best, best_score = agent, score
    return best


def _outcome(p: float, diff: float, sign: int, alpha: float) -> str | None:
    if math.isnan(p):
        return None
    if p < alpha and sign * diff > 0:
        return "win"
    if p < alpha and sign * diff < 0:
        return "loss"
    return "tie"


# ------------------------------------------------------------------------- tables


def _experiment_rows(
    name: str,
    source: Any,
    alpha: float,
    metrics: Mapping[str, str],
) -> list[dict[str, Any]]:
    df, point_order, agent_order = _load(name, source)
    key = experiment_key(name, list(metrics))
    if key is None:
        raise ReportError(
            f"experiment {name!r} has no primary metric (known: {', '.join(metrics)}); "
            f"pass metrics={{{name!r}: METRIC}}"
        )
    metric = metrics[key]
    for col in ("point", "run", "agent", metric):
        if col not in df.columns:
            raise ReportError(f"{name}: the results have no column {col!r}")
    if len(df) == 0:
        raise ReportError(f"{name}: the results hold no episode")
    try:
        check_paired(df)
    except CompareError as err:
        raise ReportError(f"{name}: {err}") from err
    agents = _ordered(list(df["agent"]), agent_order)
    if not any(is_zero_shot(a) for a in agents):
        raise ReportError(
            f"{name}: no zero-shot agent (a label starting with {ZERO_SHOT_PREFIX!r}); "
            f"its agents: {', '.join(agents)}"
        )
    sign = better_sign(metric)
    binary = metric in BINARY_METRICS
    real = (experiment_key(name, list(REAL_DATA)) or name) in REAL_DATA
    zero_labels = [a for a in agents if is_zero_shot(a)]
    fixed = metric in FIXED_CONFIDENCE_METRICS or (
        "misidentified" in df.columns and any("delta = " in a for a in zero_labels)
    )
    delta_key = experiment_key(name, list(DEFAULT_DELTA))

    rows = []
    for point in _ordered(list(df["point"]), point_order):
        at = df[df["point"] == point]
        if len(at) == 0:
            continue
        wide = at.pivot_table(index="run", columns="agent", values=metric, aggfunc="first")
        present = [a for a in agents if a in wide.columns and wide[a].notna().any()]
        zeros = [a for a in present if is_zero_shot(a)]
        if not zeros:
            continue
        if len(zeros) > 1:
            raise ReportError(
                f"{name}: point {point!r} has several zero-shot agents ({', '.join(zeros)}); "
                f"a point may hold at most one"
            )
        zero = zeros[0]
        # the runs zero-shot played: every mean and test below is over the same episodes
        wide = wide[wide[zero].notna()]
        present = [a for a in present if wide[a].notna().any()]
        z = wide[zero].to_numpy(dtype=float)
        means = {a: float(np.nanmean(wide[a].to_numpy(dtype=float))) for a in present}
        others = [a for a in present if a != zero]
        first = at.iloc[0]
        row: dict[str, Any] = {
            "experiment": name,
            "real_data": real,
            "metric": metric,
            "point": point,
            "panel": str(first["panel"]) if "panel" in at.columns else "",
            "x": str(first["x"]) if "x" in at.columns else "",
            "zero_shot": zero,
            "n": int(np.sum(~np.isnan(z))),
            "zero_shot_mean": means[zero],
        }
        choices = {
            "paper": _best(means, [a for a in others if is_papers(name, a)], sign),
            "suite": _best(means, others, sign),
        }
        for which, best in choices.items():
            if best is None:
                res = {"diff": math.nan, "ci_low": math.nan, "ci_high": math.nan}
                res["p_value"] = math.nan
            else:
                res = paired_test(z, wide[best].to_numpy(dtype=float), binary)
            row[f"{which}_best"] = best
            row[f"{which}_best_mean"] = means[best] if best is not None else math.nan
            row[f"diff_{which}"] = res["diff"]
            row[f"ci_low_{which}"] = res["ci_low"]
            row[f"ci_high_{which}"] = res["ci_high"]
            row[f"_p_{which}"] = res["p_value"]
            if which == "paper":
                row["_p_oracle"] = (
                    _oracle_p(wide[best].to_numpy(dtype=float), metric)
                    if best is not None
                    else math.nan
                )
        row["error"] = row["delta"] = row["error_consistent"] = None
        if fixed:
            row.update(_error_check(at, zero, delta_key))
        rows.append(row)
    if not rows:
        raise ReportError(f"{name}: no point where a zero-shot agent has a {metric!r} value")
    for which in ("paper", "suite"):
        adjusted = holm([r.pop(f"_p_{which}") for r in rows])
        for r, p in zip(rows, adjusted, strict=True):
            r[f"p_holm_{which}"] = float(p)
            r[f"outcome_{which}"] = _outcome(float(p), r[f"diff_{which}"], sign, alpha)
    oracle = holm([r.pop("_p_oracle") for r in rows])
    for r, p in zip(rows, oracle, strict=True):
        r["winnable_paper"] = None if math.isnan(p) else bool(p < alpha)
    return rows


def _oracle_p(best: np.ndarray, metric: str) -> float:
    """The smallest raw p-value any agent can get against ``best`` (see the module doc).

    NaN where the metric has no floor (:data:`METRIC_FLOOR`), so the point leaves the
    oracle's Holm family.
    """
    floor = METRIC_FLOOR.get(metric)
    if floor is None:
        return math.nan
    best = best[~np.isnan(best)]
    if metric in BINARY_METRICS:
        return float(paired_test(np.full(best.shape, floor), best, True)["p_value"])
    return 0.0 if bool(np.any(best > floor)) else 1.0


def _error_check(at: Any, zero: str, delta_key: str | None) -> dict[str, Any]:
    """Zero-shot's error rate at a point, its delta and the binomial test against delta."""
    from scipy import stats

    out: dict[str, Any] = {"error": None, "delta": None, "error_consistent": None}
    delta = _delta_of(zero, delta_key)
    out["delta"] = None if math.isnan(delta) else delta
    if "misidentified" not in at.columns:
        return out
    errors = at.loc[at["agent"] == zero, "misidentified"].to_numpy(dtype=float)
    errors = errors[~np.isnan(errors)]
    if errors.size == 0:
        return out
    out["error"] = float(errors.mean())
    if out["delta"] is not None and 0 < delta < 1:
        test = stats.binomtest(
            int(round(errors.sum())), int(errors.size), delta, alternative="greater"
        )
        out["error_consistent"] = bool(test.pvalue >= ERROR_ALPHA)
    return out


def report(
    results: Mapping[str, Any],
    alpha: float = 0.05,
    metrics: Mapping[str, str] | None = None,
) -> Any:
    """One row per (experiment, point): zero-shot against the paper's best and the suite's.

    ``results`` maps an experiment name to its rows (a DataFrame in the store's shape) or
    to its results directory; ``metrics`` adds to or overrides :data:`PRIMARY_METRIC`.
    """
    import pandas as pd

    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ReportError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not results:
        raise ReportError("no results given")
    table = {**PRIMARY_METRIC, **(metrics or {})}
    rows = []
    for name, source in results.items():
        rows += _experiment_rows(str(name), source, float(alpha), table)
    frame = pd.DataFrame.from_records(rows, columns=COLUMNS)
    return frame.astype({"real_data": bool, "n": int})


def summary(table: Any) -> Any:
    """Per experiment: points, wins / ties / losses against the paper's best and the suite's.

    ``share_win_paper`` is the share of points where zero-shot beats the paper's best,
    ``winnable_paper`` the number of points where the episodes allow any agent a win over
    it (``None`` for metrics without a floor),
    ``share_win_or_tie_suite`` where it at least ties the suite's best (among the points
    with that comparison); ``error_consistent`` counts the points whose error rate is
    consistent with delta (fixed confidence only, else ``None``).
    """
    import pandas as pd

    records = []
    for name, rows in table.groupby("experiment", sort=False):
        rec: dict[str, Any] = {
            "experiment": name,
            "real_data": bool(rows["real_data"].iloc[0]),
            "metric": rows["metric"].iloc[0],
            "points": len(rows),
        }
        for which in ("paper", "suite"):
            outcomes = rows[f"outcome_{which}"]
            for o, plural in (("win", "wins"), ("tie", "ties"), ("loss", "losses")):
                rec[f"{plural}_{which}"] = int((outcomes == o).sum())
        compared = {w: int(rows[f"outcome_{w}"].notna().sum()) for w in ("paper", "suite")}
        rec["share_win_paper"] = (
            rec["wins_paper"] / compared["paper"] if compared["paper"] else math.nan
        )
        rec["share_win_or_tie_suite"] = (
            (rec["wins_suite"] + rec["ties_suite"]) / compared["suite"]
            if compared["suite"]
            else math.nan
        )
        bounded = rows["winnable_paper"].dropna()
        rec["winnable_paper"] = int(bounded.astype(bool).sum()) if len(bounded) else None
        checked = rows["error_consistent"].dropna()
        rec["error_checked"] = len(checked) if len(checked) else None
        rec["error_consistent"] = int(checked.astype(bool).sum()) if len(checked) else None
        records.append(rec)
    cols = ["experiment", "real_data", "metric", "points", "wins_paper", "ties_paper",
            "losses_paper", "wins_suite", "ties_suite", "losses_suite", "share_win_paper",
            "share_win_or_tie_suite", "winnable_paper", "error_checked",
            "error_consistent"]  # fmt: skip
    return pd.DataFrame.from_records(records, columns=cols)


# ----------------------------------------------------------------------- markdown


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _title(name: str, real: bool) -> str:
    return f"{name} (real data)" if real else name


def _share(v: float) -> str:
    return "-" if v is None or math.isnan(v) else f"{100 * v:.0f}%"


def _winnable(count: Any, points: int) -> str:
    if count is None or (isinstance(count, float) and math.isnan(count)):
        return "-"
    return f"{int(count)} ({100 * int(count) / points:.0f}%)"


def _text(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def to_markdown(table: Any, summary: Any) -> str:
    """The report as Markdown: the summary table, then one table per experiment."""
    out = [
        "# Zero-shot agent against the papers' algorithms",
        "Per point, zero-shot's mean of the experiment's metric against the best (by mean) "
        "of the paper's own algorithms and the best agent of the whole suite. Differences "
        "are zero-shot minus the other agent, with 95% intervals, from paired tests on the "
        "same episodes (t or sign test, exact McNemar for 0/1 metrics); outcomes use "
        "Holm-adjusted p-values within each experiment. Fixed-confidence experiments also "
        "give zero-shot's error rate, its target delta and whether the errors are "
        'consistent with delta (one-sided exact binomial test, p >= 0.05). "Winnable" '
        "counts the points where the episodes allow any agent a significant win over the "
        "paper's best (an agent at the metric's floor on every episode, same Holm family; "
        "exact for 0/1 metrics).",
        "## Summary",
    ]
    rows = []
    for r in summary.itertuples():
        consistent = "-"
        if r.error_checked is not None and not (
            isinstance(r.error_checked, float) and math.isnan(r.error_checked)
        ):
            consistent = f"{int(r.error_consistent)}/{int(r.error_checked)}"
        rows.append(
            [
                _title(r.experiment, r.real_data),
                r.metric,
                r.points,
                f"{r.wins_paper}/{r.ties_paper}/{r.losses_paper}",
                _share(r.share_win_paper),
                _winnable(r.winnable_paper, r.points),
                f"{r.wins_suite}/{r.ties_suite}/{r.losses_suite}",
                _share(r.share_win_or_tie_suite),
                consistent,
            ]
        )
    header = ["experiment", "metric", "points", "W/T/L vs paper", "wins vs paper",
              "winnable vs paper", "W/T/L vs suite", "win or tie vs suite",
              "error consistent with delta"]  # fmt: skip
    out.append(_md_table(header, rows))
    for name, rows_df in table.groupby("experiment", sort=False):
        real = bool(rows_df["real_data"].iloc[0])
        metric = rows_df["metric"].iloc[0]
        direction = "higher" if better_sign(metric) > 0 else "lower"
        fixed = rows_df["delta"].notna().any() or rows_df["error"].notna().any()
        header = ["point", "zero-shot", "best paper algorithm", "its mean",
                  "diff [95% CI]", "outcome", "best of suite", "its mean", "diff [95% CI]",
                  "outcome"]  # fmt: skip
        if fixed:
            header += ["error", "delta", "consistent"]
        body = []
        for r in rows_df.itertuples():
            cells = [
                r.point,
                sig(r.zero_shot_mean),
                _text(r.paper_best),
                sig(r.paper_best_mean),
                interval(r.diff_paper, r.ci_low_paper, r.ci_high_paper),
                _text(r.outcome_paper),
                _text(r.suite_best),
                sig(r.suite_best_mean),
                interval(r.diff_suite, r.ci_low_suite, r.ci_high_suite),
                _text(r.outcome_suite),
            ]
            if fixed:
                consistent = r.error_consistent
                cells += [
                    sig(r.error),
                    "-" if r.delta is None or math.isnan(r.delta) else f"{r.delta:g}",
                    "-" if consistent is None else ("yes" if consistent else "no"),
                ]
            body.append(cells)
        out.append(f"## {_title(str(name), real)}")
        out.append(f"Metric: {metric} ({direction} is better).")
        out.append(_md_table(header, body))
    return "\n\n".join(out) + "\n"


# ---------------------------------------------------------------------------- CLI


def _collect(dirs: Sequence[str]) -> dict[str, str]:
    """Experiment name (from each directory's manifest) -> directory."""
    from topk_bench.store import ResultStore

    found: dict[str, str] = {}
    for d in dirs:
        if not Path(d).is_dir():
            raise ReportError(f"{d}: not a results directory (no such directory)")
        manifest = ResultStore(d).manifest()
        if manifest is None:
            raise ReportError(f"{d}: not a results directory (no manifest.json)")
        name = str(manifest.get("name") or Path(d).name)
        if name in found:
            raise ReportError(f"{found[name]} and {d} both hold experiment {name!r}")
        found[name] = d
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(
        prog="python -m topk_bench.experiments.zero_shot_report",
        description="Zero-shot against the papers' algorithms, per experiment and point.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="results directories")
    p.add_argument("--out", type=Path, help="also write the Markdown here")
    p.add_argument("--csv", type=Path, help="write the per-point table here")
    p.add_argument("--alpha", type=float, default=0.05, help="level after Holm (default 0.05)")
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="EXPERIMENT=METRIC",
        help="override an experiment's primary metric (repeatable)",
    )
    args = p.parse_args(argv)
    overrides = {}
    for item in args.metric:
        exp, eq, metric = item.partition("=")
        if not eq or not exp or not metric:
            raise ReportError(f"--metric {item!r} is not EXPERIMENT=METRIC")
        overrides[exp] = metric
    table = report(_collect(args.dirs), alpha=args.alpha, metrics=overrides)
    text = to_markdown(table, summary(table))
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":  # pragma: no cover
    try:
        raise SystemExit(main())
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from err
