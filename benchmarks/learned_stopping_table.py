"""Tables of the ``learned-stopping`` experiment from a results directory.

    python benchmarks/learned_stopping_table.py results/learned-stopping

Per point (k, delta): every agent's mean pulls (95% t interval), error rate with its
exact Clopper-Pearson 95% interval, and the share of truncated episodes; then, for each
learned stop (training seed), the paired difference of pulls with every other agent
(learned minus other, 95% t interval over the same episodes) and the ratio of means.
Each agent's rows are those of the runs it plays in the results directory's config (its
``runs``). Markdown on stdout. ``benchmarks/learned_stopping_figure.py`` draws the
first table of each point.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from topk_bench.store import read_results


def clopper_pearson(errors: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = stats.binomtest(errors, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def t_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the ``level`` t interval."""
    q = stats.t.ppf(0.5 + level / 2, x.size - 1)
    return float(x.mean()), float(q * x.std(ddof=1) / math.sqrt(x.size))


def played_runs(df: Any, results: str) -> Any:
    """The rows of the runs each agent plays in the manifest's config (its own ``runs``,
    at most the experiment's): rows of a larger earlier config are left out."""
    manifest = json.loads((Path(results) / "manifest.json").read_text())
    limit = {
        a["label"]: min(a.get("runs", manifest["runs"]), manifest["runs"])
        for a in manifest["agents"]
    }
    return df[df["run"] < df["agent"].map(limit)]


def agent_rows(grp: Any) -> dict[str, dict[str, Any]]:
    """Agent label -> its row of one point's table: ``episodes``, ``pulls`` (mean) and
    ``pulls_hw`` (95% t half-width), ``error`` (rate), ``error_lo``/``error_hi``
    (Clopper-Pearson 95%), ``truncated`` (share), and ``runs`` (its rows, by run)."""
    rows = {}
    for agent, g in grp.groupby("agent", sort=False):
        g = g.sort_values("run")
        m, h = t_interval(g["pulls"].to_numpy(float))
        err = int(g["misidentified"].sum())
        lo, hi = clopper_pearson(err, len(g))
        rows[agent] = {
            "episodes": len(g),
            "pulls": m,
            "pulls_hw": h,
            "error": err / len(g),
            "error_lo": lo,
            "error_hi": hi,
            "truncated": float(g["truncated"].mean()),
            "runs": g,
        }
    return rows


def points(results: str) -> list[tuple[str, float, dict[str, dict[str, Any]]]]:
    """(point label, delta, :func:`agent_rows`) per point of a results directory."""
    df = played_runs(read_results(results), results)
    return [
        (str(point), float(grp["x_value"].iloc[0]), agent_rows(grp))
        for point, grp in df.groupby("point", sort=False)
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results")
    args = p.parse_args()
    for point, delta, by_agent in points(args.results):
        print(f"\n### {point}\n")
        print("| agent | episodes | mean pulls | error rate | Clopper-Pearson 95% | truncated |")
        print("| --- | --- | --- | --- | --- | --- |")
        for agent, r in by_agent.items():
            flag = " (above delta)" if r["error_hi"] > delta else ""
            print(
                f"| {agent} | {r['episodes']} | {r['pulls']:,.0f} ± {r['pulls_hw']:,.0f} | "
                f"{r['error']:.4f} | [{r['error_lo']:.4f}, {r['error_hi']:.4f}]{flag} | "
                f"{r['truncated']:.3f} |"
            )
        learned = [a for a in by_agent if a.startswith("learned stop")]
        others = [a for a in by_agent if a not in learned]
        print("\nPaired: learned minus other, mean pulls (95% t interval), ratio of means.\n")
        print("| learned | " + " | ".join(others) + " |")
        print("| --- |" + " --- |" * len(others))
        for a in learned:
            la = by_agent[a]["runs"]
            cells = []
            for o in others:
                ob = by_agent[o]["runs"]
                common = np.intersect1d(la["run"], ob["run"])
                x = la.set_index("run").loc[common, "pulls"].to_numpy(float)
                y = ob.set_index("run").loc[common, "pulls"].to_numpy(float)
                m, h = t_interval(x - y)
                cells.append(f"{m:+,.0f} ± {h:,.0f} ({x.mean() / y.mean():.2f}x)")
            print(f"| {a} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
