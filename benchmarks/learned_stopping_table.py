"""Tables of the ``learned-stopping`` experiment from a results directory.

    python benchmarks/learned_stopping_table.py results/learned-stopping

Per point (k, delta): every agent's mean pulls (95% t interval), error rate with its
exact Clopper-Pearson 95% interval, and the share of truncated episodes; then, for each
learned stop (training seed), the paired difference of pulls with every other agent
(learned minus other, 95% t interval over the same episodes) and the ratio of means.
Each agent's rows are those of the runs it plays in the results directory's config (its
``runs``). Markdown on stdout.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results")
    args = p.parse_args()
    df = played_runs(read_results(args.results), args.results)
    for point, grp in df.groupby("point", sort=False):
        delta = float(grp["x_value"].iloc[0])
        print(f"\n### {point}\n")
        print("| agent | episodes | mean pulls | error rate | Clopper-Pearson 95% | truncated |")
        print("| --- | --- | --- | --- | --- | --- |")
        by_agent = {}
        for agent, g in grp.groupby("agent", sort=False):
            g = g.sort_values("run")
            by_agent[agent] = g
            pulls = g["pulls"].to_numpy(float)
            m, h = t_interval(pulls)
            err = int(g["misidentified"].sum())
            lo, hi = clopper_pearson(err, len(g))
            flag = " (above delta)" if hi > delta else ""
            print(
                f"| {agent} | {len(g)} | {m:,.0f} +- {h:,.0f} | {err / len(g):.4f} | "
                f"[{lo:.4f}, {hi:.4f}]{flag} | {g['truncated'].mean():.3f} |"
            )
        learned = [a for a in by_agent if a.startswith("learned stop")]
        others = [a for a in by_agent if a not in learned]
        print("\nPaired: learned minus other, mean pulls (95% t interval), ratio of means.\n")
        print("| learned | " + " | ".join(others) + " |")
        print("| --- |" + " --- |" * len(others))
        for a in learned:
            la = by_agent[a]
            cells = []
            for o in others:
                ob = by_agent[o]
                common = np.intersect1d(la["run"], ob["run"])
                x = la.set_index("run").loc[common, "pulls"].to_numpy(float)
                y = ob.set_index("run").loc[common, "pulls"].to_numpy(float)
                m, h = t_interval(x - y)
                cells.append(f"{m:+,.0f} +- {h:,.0f} ({x.mean() / y.mean():.2f}x)")
            print(f"| {a} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
