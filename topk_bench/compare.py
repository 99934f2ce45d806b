"""Paired comparisons to a baseline agent, per point and over the whole experiment.

Every agent at the same (point, run) plays the same episode (same environment seed,
``paired=True`` rewards: see :mod:`topk_bench.seeds`), so the natural comparison of
an agent A with a baseline B at a point is on the per-run differences ``A_r - B_r``.

Per point (:func:`paired_table`)
    * real-valued metrics: the mean difference with its Student-t 95% interval and
      the two-sided paired t-test (``scipy.stats.ttest_rel``). If every difference is
      the same value (up to rounding) the t statistic is undefined: a zero difference is a tie
      (p = 1), a constant nonzero one is judged by the exact sign test
      (``scipy.stats.binomtest``: p = 2^(1-n));
    * 0/1 metrics (:data:`~topk_bench.episodes.BINARY_METRICS`): the exact McNemar
      test, i.e. a two-sided binomial test of the b discordant pairs with A = 1, B = 0
      among the b + c discordant pairs; the interval of the difference (b - c) / n is
      the Clopper-Pearson interval of b / (b + c), conditional on b + c (the same
      conditioning as the test), mapped to ``(b + c)/n * (2 theta - 1)``;
    * p-values are Holm-adjusted over the family of all (point, agent) comparisons of
      one metric; a comparison is a *win* if the adjusted p-value is below ``alpha``
      and the difference goes in the metric's better direction
      (:data:`HIGHER_IS_BETTER`; lower is better for the others), a *loss* if it is
      significant the other way, a *tie* otherwise.

Over all points (:func:`aggregate_table`, :func:`performance_profiles`), after
rliable (Agarwal et al., "Deep RL at the edge of the statistical precipice", 2021),
with stratified bootstrap intervals: the runs of each point are resampled
independently (a point is a stratum), which is what ``scipy.stats.bootstrap`` does
with one sample per point and ``paired=False``.

    * normalized score of an episode: its value divided by the baseline's mean at its
      point (1 = the baseline's level; for lower-is-better metrics below 1 is better).
      Points where the baseline's mean is 0 cannot be normalized and are left out of
      the IQM and the profiles (their count is reported);
    * IQM: the interquartile mean (25% trimmed mean) of the normalized scores of all
      runs of all points;
    * probability of improvement: the mean over points of P(A better than B on the
      same episode) + 1/2 P(same value). rliable's version compares *independent* runs
      of A and B (a Mann-Whitney statistic); here every run of A has a paired run of B,
      so the paired version is used, and the bootstrap resamples the pairs. 0.5 = no
      better, no worse; 1 = better on every episode;
    * performance profile: the fraction of episodes whose normalized score is at
      most tau (at least tau for higher-is-better metrics), for a grid of tau.

rliable itself is not used: its dependency ``arch`` (< 8) does not import with
pandas 3; the stratified bootstrap above is ``scipy.stats.bootstrap``.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from topk_bench.episodes import BINARY_METRICS, METRICS
from topk_bench.tables import interval, pvalue, sig, text_table, wrap

__all__ = [
    "HIGHER_IS_BETTER",
    "CompareError",
    "Comparison",
    "aggregate_table",
    "compare",
    "compare_dir",
    "default_baseline",
    "format_comparison",
    "holm",
    "paired_table",
    "paired_test",
    "performance_profiles",
    "wtl_table",
]

#: Metrics where a larger value is better; lower is better for every other metric.
HIGHER_IS_BETTER = frozenset({"precision", "reward"})
#: Taus of the performance profile printed in the text output.
TEXT_TAUS = (0.5, 1.0, 2.0)

PAIRED_COLUMNS = [
    "metric",
    "panel",
    "point",
    "x",
    "agent",
    "baseline",
    "n",
    "mean",
    "baseline_mean",
    "diff",
    "ci_low",
    "ci_high",
    "test",
    "p_value",
    "p_holm",
    "outcome",
]


class CompareError(ValueError):
    """A comparison that cannot be made as asked (unknown agent, metric, unpaired rows)."""


def better_sign(metric: str) -> int:
    """+1 if larger values of ``metric`` are better, -1 if smaller ones are."""
    return 1 if metric in HIGHER_IS_BETTER else -1


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaNs stay NaN and do not count in the family)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adjusted)
    return out


def paired_test(a: Any, b: Any, binary: bool, confidence: float = 0.95) -> dict[str, Any]:
    """Paired comparison of ``a`` with ``b`` (equal-length arrays, same episodes).

    Returns ``n``, ``diff`` (mean of a - b), ``ci_low``, ``ci_high``, ``p_value`` and
    ``test`` (``"t"``, ``"sign"``, ``"mcnemar"`` or ``"none"`` when n = 0); see the
    module docstring for the methods.
    """
    from scipy import stats

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise CompareError(f"paired samples must have the same length, got {a.size} and {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = int(a.size)
    nan = math.nan
    if n == 0:
        return {"n": 0, "diff": nan, "ci_low": nan, "ci_high": nan, "p_value": nan, "test": "none"}
    d = a - b
    diff = float(d.mean())
    if binary:
        for name, arr in (("agent", a), ("baseline", b)):
            bad = arr[(arr != 0) & (arr != 1)]
            if bad.size:
                raise CompareError(f"0/1 metric: {name} has the value {bad[0]!r}, not 0 or 1")
        n_ab = int(np.sum((a == 1) & (b == 0)))
        n_ba = int(np.sum((a == 0) & (b == 1)))
        disc = n_ab + n_ba
        if disc == 0:
            return {"n": n, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0,
                    "test": "mcnemar"}  # fmt: skip
        res = stats.binomtest(n_ab, disc, 0.5)
        ci = res.proportion_ci(confidence, method="exact")
        scale = disc / n
        return {
            "n": n,
            "diff": diff,
            "ci_low": scale * (2 * ci.low - 1),
            "ci_high": scale * (2 * ci.high - 1),
            "p_value": float(res.pvalue),
            "test": "mcnemar",
        }
    tol = 1e-12 * max(float(np.abs(a).max()), float(np.abs(b).max()), 1e-300)
    if float(np.ptp(d)) <= tol:  # the same difference (up to rounding) on every episode
        if abs(diff) <= tol:
            return {"n": n, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0,
                    "test": "t"}  # fmt: skip
        p = float(stats.binomtest(n, n, 0.5).pvalue)
        return {"n": n, "diff": diff, "ci_low": diff, "ci_high": diff, "p_value": p,
                "test": "sign"}  # fmt: skip
    res = stats.ttest_rel(a, b)
    ci = res.confidence_interval(confidence)
    return {
        "n": n,
        "diff": diff,
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
        "p_value": float(res.pvalue),
        "test": "t",
    }


# ------------------------------------------------------------------------ helpers


def _check(df: Any, metric: str, baseline: str) -> None:
    if metric not in METRICS:
        raise CompareError(f"unknown metric {metric!r} (known: {', '.join(METRICS)})")
    if metric not in df.columns:
        raise CompareError(f"metric {metric!r} is not a column of the results")
    agents = list(dict.fromkeys(df["agent"]))
    if baseline not in agents:
        raise CompareError(
            f"baseline {baseline!r} is not an agent of these results (agents: {', '.join(agents)})"
        )


def _order(values: Sequence[str], order: Sequence[str]) -> list[str]:
    rank = {v: i for i, v in enumerate(order)}
    uniq = list(dict.fromkeys(values))
    return sorted(uniq, key=lambda v: (rank.get(v, len(rank)), uniq.index(v)))


def check_paired(df: Any) -> None:
    """Raise :class:`CompareError` unless all agents at a (point, run) played the same seed."""
    if "seed" not in df.columns or len(df) == 0:
        return
    counts = df.groupby(["point", "run"], sort=False)["seed"].nunique()
    bad = counts[counts > 1]
    if len(bad):
        point, run = bad.index[0]
        rows = df[(df["point"] == point) & (df["run"] == run)]
        seeds = ", ".join(f"{r.agent}: {r.seed}" for r in rows.itertuples())
        raise CompareError(
            f"point {point!r} run {run}: the agents played different environment seeds "
            f"({seeds}); comparisons need paired episodes (same experiment, same --seed)"
        )


@dataclass(frozen=True)
class _Point:
    label: str
    panel: str
    x: str
    values: Any  # DataFrame: index run, one column per agent (NaN where absent)


def _points(df: Any, metric: str, point_order: Sequence[str]) -> list[_Point]:
    """Per point, the metric as a wide table (runs x agents)."""
    sub = df[["point", "run", "agent", metric]].drop_duplicates(["point", "run", "agent"])
    wide = sub.set_index(["point", "run", "agent"])[metric].unstack("agent")
    first = df.drop_duplicates("point").set_index("point")
    groups = dict(list(wide.groupby(level="point", sort=False)))
    out = []
    for label in _order(list(groups), point_order):
        values = groups[label].droplevel("point")
        row = first.loc[label]
        out.append(_Point(label, str(row["panel"]), str(row["x"]), values))
    return out


def _column(p: _Point, agent: str) -> Any:
    if agent not in p.values.columns:
        return np.empty(0)
    return p.values[agent].to_numpy(dtype=float)


# ------------------------------------------------------------------ per point


def paired_table(
    df: Any,
    metric: str,
    baseline: str,
    *,
    alpha: float = 0.05,
    point_order: Sequence[str] = (),
    agent_order: Sequence[str] = (),
) -> Any:
    """One row per (point, agent != baseline): the paired test and its Holm-adjusted outcome."""
    import pandas as pd

    _check(df, metric, baseline)
    if not 0 < alpha < 1:
        raise CompareError(f"alpha must lie in (0, 1), got {alpha!r}")
    check_paired(df)
    binary = metric in BINARY_METRICS
    records = []
    agents = [a for a in _order(list(df["agent"]), agent_order) if a != baseline]
    for p in _points(df, metric, point_order):
        b_all = _column(p, baseline)
        if not np.any(~np.isnan(b_all)):
            continue
        for agent in agents:
            a_all = _column(p, agent)
            if not np.any(~np.isnan(a_all)):
                continue
            both = ~(np.isnan(a_all) | np.isnan(b_all))
            a, b = a_all[both], b_all[both]
            res = paired_test(a, b, binary)
            records.append(
                {
                    "metric": metric,
                    "panel": p.panel,
                    "point": p.label,
                    "x": p.x,
                    "agent": agent,
                    "baseline": baseline,
                    "mean": float(a.mean()) if a.size else math.nan,
                    "baseline_mean": float(b.mean()) if b.size else math.nan,
                    **res,
                }
            )
    out = pd.DataFrame.from_records(records, columns=PAIRED_COLUMNS[:-2])
    out = out.reindex(columns=PAIRED_COLUMNS)
    out["p_holm"] = holm(out["p_value"].to_numpy(dtype=float)) if len(out) else []
    sign = better_sign(metric)
    sig = out["p_holm"].to_numpy(dtype=float) < alpha
    good = sign * out["diff"].to_numpy(dtype=float) > 0
    bad = sign * out["diff"].to_numpy(dtype=float) < 0
    out["outcome"] = np.where(sig & good, "win", np.where(sig & bad, "loss", "tie"))
    return out


def wtl_table(paired: Any, agent_order: Sequence[str] = ()) -> Any:
    """Wins, ties and losses against the baseline per (metric, agent), over the points."""
    import pandas as pd

    records = []
    for metric, mdf in paired.groupby("metric", sort=False):
        for agent in _order(list(mdf["agent"]), agent_order):
            counts = mdf[mdf["agent"] == agent]["outcome"].value_counts()
            records.append(
                {
                    "metric": metric,
                    "agent": agent,
                    "baseline": mdf["baseline"].iloc[0],
                    "wins": int(counts.get("win", 0)),
                    "ties": int(counts.get("tie", 0)),
                    "losses": int(counts.get("loss", 0)),
                    "points": int((mdf["agent"] == agent).sum()),
                }
            )
    cols = ["metric", "agent", "baseline", "wins", "ties", "losses", "points"]
    return pd.DataFrame.from_records(records, columns=cols)


# ------------------------------------------------------------------ aggregates


def _bootstrap(
    samples: Sequence[Any], statistic: Any, n_resamples: int, seed: int, confidence: float
) -> tuple[Any, Any]:
    """Percentile intervals of ``statistic`` by stratified bootstrap (one sample per stratum).

    ``scipy.stats.bootstrap`` with ``paired=False`` resamples every sample on its own,
    with replacement and its own size: a stratified bootstrap with the samples as strata.
    """
    from scipy import stats

    samples = [np.asarray(s, dtype=float) for s in samples]
    point = statistic(*samples, axis=-1)
    if all(np.all(s == s[0]) for s in samples):
        return np.asarray(point), np.asarray(point)  # nothing varies: a degenerate interval
    size = sum(s.size for s in samples)
    batch = max(1, min(n_resamples, 4_000_000 // max(1, size)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            tuple(samples),
            statistic,
            n_resamples=n_resamples,
            batch=batch,
            vectorized=True,
            paired=False,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return np.asarray(res.confidence_interval.low), np.asarray(res.confidence_interval.high)


def _iqm(*samples: Any, axis: int = -1) -> Any:
    from scipy import stats

    return stats.trim_mean(np.concatenate(samples, axis=axis), 0.25, axis=axis)


def _mean_of_means(*samples: Any, axis: int = -1) -> Any:
    return np.mean([np.mean(s, axis=axis) for s in samples], axis=0)


@dataclass(frozen=True)
class _Strata:
    normalized: list[Any]  # per normalizable point: the agent's values / the baseline's mean
    improved: list[Any]  # per point: 1 if better than the baseline on the same episode, 1/2 tie
    points: int


def _strata(points: Sequence[_Point], metric: str, agent: str, baseline: str) -> _Strata:
    sign = better_sign(metric)
    normalized, improved, n = [], [], 0
    for p in points:
        a_all, b_all = _column(p, agent), _column(p, baseline)
        a, b = a_all[~np.isnan(a_all)], b_all[~np.isnan(b_all)]
        if a.size == 0 or b.size == 0:
            continue
        n += 1
        mean = float(b.mean())
        if mean != 0:
            normalized.append(a / mean)
        both = ~(np.isnan(a_all) | np.isnan(b_all))
        if both.any():
            d = sign * (a_all[both] - b_all[both])
            improved.append((d > 0) + 0.5 * (d == 0))
    return _Strata(normalized, improved, n)


def aggregate_table(
    df: Any,
    metric: str,
    baseline: str,
    *,
    point_order: Sequence[str] = (),
    agent_order: Sequence[str] = (),
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Any:
    """Per agent: IQM of baseline-normalized scores and probability of improvement, with CIs.

    The baseline has a row too (its IQM is the reference: the IQM of the baseline's own
    normalized scores is not 1 unless its values are symmetric); its ``poi`` is NaN.
    """
    import pandas as pd

    _check(df, metric, baseline)
    _check_resamples(n_resamples)
    check_paired(df)
    points = _points(df, metric, point_order)
    records = []
    for agent in _order(list(df["agent"]), agent_order):
        st = _strata(points, metric, agent, baseline)
        if not st.points:
            continue
        iqm = iqm_lo = iqm_hi = math.nan
        if st.normalized:
            iqm = float(_iqm(*st.normalized))
            lo, hi = _bootstrap(st.normalized, _iqm, n_resamples, seed, confidence)
            iqm_lo, iqm_hi = float(lo), float(hi)
        poi = poi_lo = poi_hi = math.nan
        if agent != baseline and st.improved:
            poi = float(_mean_of_means(*st.improved))
            lo, hi = _bootstrap(st.improved, _mean_of_means, n_resamples, seed, confidence)
            poi_lo, poi_hi = float(lo), float(hi)
        records.append(
            {
                "metric": metric,
                "agent": agent,
                "baseline": baseline,
                "points": st.points,
                "points_normalized": len(st.normalized),
                "iqm": iqm,
                "iqm_low": iqm_lo,
                "iqm_high": iqm_hi,
                "poi": poi,
                "poi_low": poi_lo,
                "poi_high": poi_hi,
            }
        )
    cols = ["metric", "agent", "baseline", "points", "points_normalized", "iqm", "iqm_low",
            "iqm_high", "poi", "poi_low", "poi_high"]  # fmt: skip
    return pd.DataFrame.from_records(records, columns=cols)


def _check_resamples(n_resamples: Any) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise CompareError(f"resamples must be an integer >= 100, got {n_resamples!r}")


def default_taus(df: Any, metric: str, baseline: str, n: int = 41) -> np.ndarray:
    """A tau grid from 0 to max(2, the 99th percentile of all normalized scores), plus TEXT_TAUS."""
    means = df[df["agent"] == baseline].groupby("point")[metric].mean()
    scale = df["point"].map(means).to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = df[metric].to_numpy(dtype=float) / scale
    scores = scores[np.isfinite(scores)]
    top = max(2.0, float(np.quantile(scores, 0.99))) if scores.size else 2.0
    return np.unique(np.concatenate([np.linspace(0.0, top, n), TEXT_TAUS]))


def _profile_statistic(normalized: Sequence[Any], tau: Any, sign: int) -> Any:
    """Fraction of all episodes at most (sign < 0) or at least (sign > 0) tau.

    The statistic is handed resampled *indices* into each point's sorted scores; a
    resample becomes counts per episode, whose cumulative sums at the tau positions
    (``searchsorted``) count the episodes below each tau: O(B n) per point, not O(B n T).
    """
    sorted_z = [np.sort(z) for z in normalized]
    side = "left" if sign > 0 else "right"  # count z < tau (then complement) or z <= tau
    cuts = [np.searchsorted(z, tau, side=side) for z in sorted_z]
    total = sum(z.size for z in sorted_z)

    def statistic(*idx: Any, axis: int = -1) -> Any:
        acc: Any = 0.0
        for z, cut, ix in zip(sorted_z, cuts, idx, strict=True):
            ix = np.atleast_2d(np.asarray(ix).astype(np.int64))
            b, n = ix.shape
            flat = (ix + z.size * np.arange(b)[:, None]).ravel()
            counts = np.bincount(flat, minlength=b * z.size).reshape(b, z.size)
            below = np.concatenate([np.zeros((b, 1)), np.cumsum(counts, axis=1)], axis=1)
            acc = acc + below[:, cut]  # (B, T): resampled episodes below each tau
        frac = np.asarray(acc) / total
        if sign > 0:
            frac = 1.0 - frac
        frac = frac.T  # (T, B): the statistic's outputs come first
        return frac[:, 0] if np.ndim(idx[0]) == 1 else frac

    return statistic


def performance_profiles(
    df: Any,
    metric: str,
    baseline: str,
    *,
    taus: Sequence[float] | None = None,
    point_order: Sequence[str] = (),
    agent_order: Sequence[str] = (),
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Any:
    """Per agent (baseline included) and tau: fraction of episodes scoring at most tau (CI)."""
    import pandas as pd

    _check(df, metric, baseline)
    _check_resamples(n_resamples)
    tau = np.asarray(default_taus(df, metric, baseline) if taus is None else taus, dtype=float)
    points = _points(df, metric, point_order)
    records = []
    for agent in _order(list(df["agent"]), agent_order):
        st = _strata(points, metric, agent, baseline)
        if not st.normalized:
            continue
        statistic = _profile_statistic(st.normalized, tau, better_sign(metric))
        indices = [np.arange(z.size, dtype=float) for z in st.normalized]  # into sorted scores
        frac = statistic(*indices)
        if all(z.size == 1 for z in st.normalized):
            lo, hi = frac, frac
        else:
            lo, hi = _bootstrap(indices, statistic, n_resamples, seed, confidence)
        for t, f, low, high in zip(tau, frac, lo, hi, strict=True):
            records.append(
                {
                    "metric": metric,
                    "agent": agent,
                    "tau": float(t),
                    "fraction": float(f),
                    "low": float(low),
                    "high": float(high),
                }
            )
    frame = pd.DataFrame.from_records(
        records, columns=["metric", "agent", "tau", "fraction", "low", "high"]
    )
    # float columns even when no agent has a profile (an empty frame would be all object)
    return frame.astype({c: float for c in ("tau", "fraction", "low", "high")})


# -------------------------------------------------------------------- together


@dataclass
class Comparison:
    """All the tables of a comparison (pandas DataFrames, long format)."""

    name: str
    baseline: str
    metrics: list[str]
    alpha: float
    episodes: int
    paired: Any
    wtl: Any
    aggregate: Any
    profiles: Any
    x_label: str = "x"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        """Everything as one JSON document (NaN as null)."""

        def records(frame: Any) -> list[dict[str, Any]]:
            return json.loads(frame.to_json(orient="records"))

        return json.dumps(
            {
                "experiment": self.name,
                "baseline": self.baseline,
                "metrics": self.metrics,
                "alpha": self.alpha,
                "episodes": self.episodes,
                "paired": records(self.paired),
                "wins_ties_losses": records(self.wtl),
                "aggregate": records(self.aggregate),
                "performance_profiles": records(self.profiles),
            },
            indent=1,
        )


def default_baseline(agents: Sequence[str]) -> str:
    """``uniform`` (or an agent labelled like it) if present, else the first agent."""
    for a in agents:
        if a.lower() in ("uniform", "uni"):
            return a
    if not agents:
        raise CompareError("the results hold no agent")
    return agents[0]


def compare(
    df: Any,
    metrics: Sequence[str],
    baseline: str | None = None,
    *,
    alpha: float = 0.05,
    point_order: Sequence[str] = (),
    agent_order: Sequence[str] = (),
    n_resamples: int = 2000,
    seed: int = 0,
    name: str = "",
    x_label: str = "x",
) -> Comparison:
    """Every table of the module for ``metrics`` against ``baseline``."""
    import pandas as pd

    if len(df) == 0:
        raise CompareError("the results hold no episode")
    agents = _order(list(df["agent"]), agent_order)
    baseline = baseline or default_baseline(agents)
    if len(agents) < 2:
        raise CompareError(f"only one agent ({agents[0]!r}) in the results: nothing to compare")
    kw = {"point_order": point_order, "agent_order": agent_order}
    boot = {"n_resamples": n_resamples, "seed": seed}
    paired = [paired_table(df, m, baseline, alpha=alpha, **kw) for m in metrics]
    paired_df = pd.concat(paired, ignore_index=True) if paired else pd.DataFrame()
    aggregate = pd.concat(
        [aggregate_table(df, m, baseline, **kw, **boot) for m in metrics], ignore_index=True
    )
    profiles = [performance_profiles(df, m, baseline, **kw, **boot) for m in metrics]
    # a metric without profiles (baseline mean 0 at every point) adds no rows and no dtype
    profiles = pd.concat([p for p in profiles if len(p)] or profiles[:1], ignore_index=True)
    notes = []
    for row in aggregate.itertuples():
        if row.points_normalized < row.points:
            notes.append(
                f"{row.metric}: {row.points - row.points_normalized} of {row.points} points have "
                f"a baseline mean of 0 and are left out of the IQMs and profiles"
            )
    return Comparison(
        name=name,
        baseline=baseline,
        metrics=list(metrics),
        alpha=alpha,
        episodes=len(df),
        paired=paired_df,
        wtl=wtl_table(paired_df, agent_order),
        aggregate=aggregate,
        profiles=profiles,
        x_label=x_label,
        notes=sorted(set(notes)),
    )


def compare_dir(
    root: str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    baseline: str | None = None,
    **kwargs: Any,
) -> Comparison:
    """:func:`compare` on a results directory (metrics default to the experiment's)."""
    from topk_bench.store import ResultStore, read_results

    manifest = ResultStore(root).manifest() or {}
    df = read_results(root)
    metrics = list(metrics or manifest.get("metrics") or ["aggregate_regret"])
    for i, metric in enumerate(metrics):
        if metric not in METRICS:
            raise CompareError(
                f"--metric {metric!r} (#{i + 1}) is not a metric (known: {', '.join(METRICS)})"
            )
    return compare(
        df,
        metrics,
        baseline,
        point_order=[p["label"] for p in manifest.get("points", [])],
        agent_order=[a["label"] for a in manifest.get("agents", [])],
        name=manifest.get("name", Path(root).name),
        x_label=manifest.get("x_label", "x"),
        **kwargs,
    )


# ---------------------------------------------------------------------- text


def format_comparison(comp: Comparison, width: int | None = None) -> str:
    """The comparison as text tables (what ``topk-bench compare`` prints).

    Figures to 3 significant digits, p-values to 2 (:mod:`topk_bench.tables`); tables
    wider than ``width`` (default: the terminal's) are split into narrower ones that
    repeat their key columns, and long titles are wrapped.
    """

    def table(header: Sequence[str], rows: Sequence[Sequence[str]], keys: int) -> str:
        return text_table(header, rows, keys=keys, width=width)

    def title(text: str) -> str:
        return wrap(text, width) + "\n"

    out = [
        wrap(
            f"{comp.name}: {comp.episodes} episodes, baseline {comp.baseline!r}; paired tests "
            f"per point (t for real metrics, exact McNemar for 0/1), Holm-adjusted over each "
            f"metric's comparisons, alpha = {comp.alpha}",
            width,
        )
    ]
    for metric in comp.metrics:
        direction = "higher" if metric in HIGHER_IS_BETTER else "lower"
        mdf = comp.paired[comp.paired["metric"] == metric]
        rows = [
            [
                str(r.panel),
                str(r.x),
                str(r.agent),
                str(r.n),
                sig(r.mean),
                sig(r.baseline_mean),
                interval(r.diff, r.ci_low, r.ci_high),
                pvalue(r.p_holm),
                r.outcome,
            ]
            for r in mdf.itertuples()
        ]
        header = ["panel", comp.x_label, "agent", "n", "mean", "baseline", "diff [95% CI]",
                  "p (Holm)", "result"]  # fmt: skip
        out.append(
            title(f"{metric} ({direction} is better): {len(mdf)} comparisons with {comp.baseline}")
            + table(header, rows, keys=3)
        )
        w = comp.wtl[comp.wtl["metric"] == metric]
        rows = [[str(r.agent), str(r.wins), str(r.ties), str(r.losses)] for r in w.itertuples()]
        out.append(
            title(f"{metric}: wins / ties / losses against {comp.baseline} over the points")
            + table(["agent", "wins", "ties", "losses"], rows, keys=1)
        )
        agg = comp.aggregate[comp.aggregate["metric"] == metric]
        prof = comp.profiles[comp.profiles["metric"] == metric]
        cmp = ">=" if metric in HIGHER_IS_BETTER else "<="
        rows = []
        for r in agg.itertuples():
            cells = [
                str(r.agent),
                f"{r.points_normalized}/{r.points}",
                interval(r.iqm, r.iqm_low, r.iqm_high),
                "(baseline)" if math.isnan(r.poi) else interval(r.poi, r.poi_low, r.poi_high),
            ]
            ap = prof[prof["agent"] == r.agent]
            for t in TEXT_TAUS:
                at = ap[np.isclose(ap["tau"], t)]
                cells.append(sig(float(at["fraction"].iloc[0])) if len(at) else "-")
            rows.append(cells)
        taus = [f"P({cmp}{t:g})" for t in TEXT_TAUS]
        out.append(
            title(
                f"{metric}: over all points (score = value / {comp.baseline}'s mean at the "
                f"point; P({cmp}tau) = fraction of episodes with score {cmp} tau; stratified "
                f"bootstrap 95% CIs)"
            )
            + table(["agent", "points", "IQM score", "P(improvement)", *taus], rows, keys=1)
        )
    out += [wrap(f"note: {n}", width) for n in comp.notes]
    return "\n\n".join(out)
