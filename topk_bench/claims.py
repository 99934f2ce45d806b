"""The papers' claims as data, and their verdicts from a results directory.

An experiment config may list ``[[claims]]``; each is one machine-checkable statement::

    [[claims]]
    text = "the uniform sampling performs the worst"     # the paper's words
    source = "zhou2014 Sec. 6.1"
    metric = "aggregate_regret"
    agents = ["uniform"]              # these agents' metric is ...
    relation = "higher"               # ... "lower" or "higher" ...
    than = ["OptMAI(beta=0.8)", "SAR"]  # ... than each of these agents' (labels)
    panels = ["two-level, Q = 20n"]   # optional: only these panels,
    points = ["..."]                  # optional: only these point labels,
    x = [300, 400, 500]               # optional: only points with these x values
    fraction = 0.5                    # optional (default 1): "in most scenarios"
    alpha = 0.05                      # optional (default 0.05)

The selectors that are given must all match (panels and x: the points of those panels
at those x). Every (point, agent, other) with data is one comparison: the paired test
of :mod:`topk_bench.compare` (paired t, exact McNemar for 0/1 metrics), its p-values
Holm-adjusted over the claim's comparisons. A comparison *supports* the claim if it is
significant at ``alpha`` in the claimed direction, *contradicts* it if it is
significant the other way. With N comparisons, S supporting and C contradicting:

* **holds** if S >= fraction * N;
* **does not hold** if C > (1 - fraction) * N (the claim fails however the
  undecided comparisons would turn out);
* **inconclusive** otherwise (too few runs to tell); **not judged** if N = 0 (an agent
  or a selected point is missing from the results, e.g. in reduced mode).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from topk_bench.compare import holm, paired_test
from topk_bench.episodes import BINARY_METRICS, METRICS
from topk_bench.schema import ConfigError

__all__ = ["ClaimResult", "check_claims", "judge_claim", "judge_claims"]

RELATIONS = ("lower", "higher")


def _text(value: Any) -> str:
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def check_claims(
    raw: Sequence[Mapping[str, Any]],
    agent_labels: Iterable[str],
    point_labels: Iterable[str],
    panels: Iterable[str],
    x_values: Iterable[str],
) -> tuple[dict[str, Any], ...]:
    """Validate the config's ``claims`` (schema already checked); return them normalized.

    The labels, panels and x values are those of the experiment in any mode (full and
    reduced), so that a claim about points that only the full mode has stays valid.
    """
    agent_labels, point_labels = set(agent_labels), set(point_labels)
    panels, x_values = set(panels), set(x_values)
    out = []
    for i, claim in enumerate(raw):
        where = f"claims[{i}]"
        metric = claim["metric"]
        if metric not in METRICS:
            raise ConfigError(
                f"{where}.metric: unknown metric {metric!r} (known: {', '.join(METRICS)})"
            )
        if claim["relation"] not in RELATIONS:
            raise ConfigError(
                f"{where}.relation: must be 'lower' or 'higher', got {claim['relation']!r}"
            )
        for key in ("agents", "than"):
            if not claim[key]:
                raise ConfigError(f"{where}.{key}: must name at least one agent label")
            for label in claim[key]:
                if label not in agent_labels:
                    raise ConfigError(
                        f"{where}.{key}: {label!r} is not an agent label "
                        f"(labels: {', '.join(sorted(agent_labels))})"
                    )
        both = set(claim["agents"]) & set(claim["than"])
        if both:
            raise ConfigError(f"{where}.than: {sorted(both)[0]!r} is also in agents")
        for key, known in (("panels", panels), ("points", point_labels)):
            for value in claim.get(key, []):
                if value not in known:
                    raise ConfigError(
                        f"{where}.{key}: {value!r} is not a {key[:-1]} of this experiment "
                        f"(known: {', '.join(sorted(known))})"
                    )
        xs = [_text(v) for v in claim.get("x", [])]
        for value in xs:
            if value not in x_values:
                raise ConfigError(
                    f"{where}.x: {value!r} is not an x value of this experiment "
                    f"(known: {', '.join(sorted(x_values))})"
                )
        fraction = claim.get("fraction", 1.0)
        if not 0 < fraction <= 1:
            raise ConfigError(f"{where}.fraction: must lie in (0, 1], got {fraction!r}")
        alpha = claim.get("alpha", 0.05)
        if not 0 < alpha < 1:
            raise ConfigError(f"{where}.alpha: must lie in (0, 1), got {alpha!r}")
        out.append(
            {
                "text": claim["text"],
                "source": claim.get("source", ""),
                "metric": metric,
                "agents": list(claim["agents"]),
                "relation": claim["relation"],
                "than": list(claim["than"]),
                "panels": list(claim.get("panels", [])),
                "points": list(claim.get("points", [])),
                "x": xs,
                "fraction": float(fraction),
                "alpha": float(alpha),
            }
        )
    return tuple(out)


@dataclass
class ClaimResult:
    """The verdict on one claim, with its comparisons (a DataFrame)."""

    claim: Mapping[str, Any]
    verdict: str  # "holds", "does not hold", "inconclusive", "not judged"
    supporting: int
    contradicting: int
    comparisons: Any
    missing: list[str] = field(default_factory=list)

    @property
    def detail(self) -> str:
        """One sentence: how many comparisons support or contradict the claim."""
        n = len(self.comparisons)
        c = self.claim
        text = (
            f"{self.supporting} of {n} comparisons significantly {c['relation']} as claimed, "
            f"{self.contradicting} significantly the other way (paired tests, Holm over "
            f"{n}, alpha = {c['alpha']}; needed: {c['fraction']:.0%})"
        )
        if self.missing:
            text += "; missing from the results: " + ", ".join(self.missing)
        return text


def _selected(df: Any, claim: Mapping[str, Any]) -> Any:
    keep = np.ones(len(df), dtype=bool)
    if claim["panels"]:
        keep &= df["panel"].isin(claim["panels"]).to_numpy()
    if claim["points"]:
        keep &= df["point"].isin(claim["points"]).to_numpy()
    if claim["x"]:
        keep &= df["x"].astype(str).isin(claim["x"]).to_numpy()
    return df[keep]


def judge_claim(df: Any, claim: Mapping[str, Any], point_order: Sequence[str] = ()) -> ClaimResult:
    """Judge one normalized claim (:func:`check_claims`) on the rows ``df``."""
    import pandas as pd

    metric = claim["metric"]
    sign = -1 if claim["relation"] == "lower" else 1
    sub = _selected(df, claim)
    present = set(df["agent"])
    missing = [a for a in [*claim["agents"], *claim["than"]] if a not in present]
    rank = {p: i for i, p in enumerate(point_order)}
    points = sorted(dict.fromkeys(sub["point"]), key=lambda p: rank.get(p, len(rank)))
    records = []
    for point in points:
        pdf = sub[sub["point"] == point]
        wide = pdf.pivot_table(index="run", columns="agent", values=metric, aggfunc="first")
        for agent in claim["agents"]:
            for other in claim["than"]:
                if agent not in wide.columns or other not in wide.columns:
                    continue
                a = wide[agent].to_numpy(dtype=float)
                b = wide[other].to_numpy(dtype=float)
                res = paired_test(a, b, metric in BINARY_METRICS)
                if res["n"] == 0:
                    continue
                records.append(
                    {
                        "point": point,
                        "x": str(pdf["x"].iloc[0]),
                        "agent": agent,
                        "than": other,
                        "mean": float(np.nanmean(a)),
                        "than_mean": float(np.nanmean(b)),
                        **res,
                    }
                )
    cols = ["point", "x", "agent", "than", "mean", "than_mean", "n", "diff", "ci_low",
            "ci_high", "p_value", "test"]  # fmt: skip
    comp = pd.DataFrame.from_records(records, columns=cols)
    comp["p_holm"] = holm(comp["p_value"].to_numpy(dtype=float)) if len(comp) else []
    sig = comp["p_holm"].to_numpy(dtype=float) < claim["alpha"]
    direction = sign * comp["diff"].to_numpy(dtype=float)
    comp["verdict"] = np.where(
        sig & (direction > 0), "supports", np.where(sig & (direction < 0), "contradicts", "-")
    )
    n = len(comp)
    s = int((comp["verdict"] == "supports").sum())
    c = int((comp["verdict"] == "contradicts").sum())
    f = claim["fraction"]
    eps = 1e-9
    if n == 0:
        verdict = "not judged"
    elif s >= math.ceil(f * n - eps):
        verdict = "holds"
    elif c > (1 - f) * n + eps:
        verdict = "does not hold"
    else:
        verdict = "inconclusive"
    if not points:
        missing.append("every selected point")
    return ClaimResult(claim, verdict, s, c, comp, missing)


def judge_claims(
    df: Any, claims: Sequence[Mapping[str, Any]], point_order: Sequence[str] = ()
) -> list[ClaimResult]:
    """:func:`judge_claim` for each claim."""
    return [judge_claim(df, c, point_order) for c in claims]
