"""Tables of the ``learned-batch`` experiment from a results directory.

    python benchmarks/learned_batch_table.py results/learned-batch

Per point: every agent's mean aggregate regret (95% t interval), misidentification rate,
pulls and pulls per batch; then, for each learned policy (training seed), the paired
difference of regret with every other agent (learned minus other, over the same
episodes) with a t interval of simultaneous 95% level over the others (Bonferroni), and
whether it lies below zero. Markdown on stdout.
"""

from __future__ import annotations

import argparse

import numpy as np
from learned_stopping_table import t_interval  # (benchmarks/, the script's directory)

from topk_bench.store import read_results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results")
    args = p.parse_args()
    df = read_results(args.results)
    for point, grp in df.groupby("point", sort=False):
        print(f"\n### {point}\n")
        print("| agent | episodes | aggregate regret | misidentified | pulls | pulls per batch |")
        print("| --- | --- | --- | --- | --- | --- |")
        by_agent = {}
        for agent, g in grp.groupby("agent", sort=False):
            g = g.sort_values("run")
            by_agent[agent] = g.set_index("run")
            m, h = t_interval(g["aggregate_regret"].to_numpy(float))
            per_batch = g["pulls"].sum() / g["batches"].sum()
            print(
                f"| {agent} | {len(g)} | {m:.5f} ± {h:.5f} | {g['misidentified'].mean():.3f} | "
                f"{g['pulls'].mean():.1f} | {per_batch:.2f} |"
            )
        learned = [a for a in by_agent if a.startswith("learned batch")]
        others = [a for a in by_agent if a not in learned]
        level = 1 - 0.05 / len(others)
        print(
            f"\nPaired: learned minus other, aggregate regret (t interval of level {level:.4f}, "
            f"Bonferroni over the {len(others)} others: simultaneous 95%).\n"
        )
        print("| other | " + " | ".join(learned) + " |")
        print("| --- |" + " --- |" * len(learned))
        for o in others:
            cells = []
            for a in learned:
                common = np.intersect1d(by_agent[a].index, by_agent[o].index)
                x = by_agent[a].loc[common, "aggregate_regret"].to_numpy(float)
                y = by_agent[o].loc[common, "aggregate_regret"].to_numpy(float)
                m, h = t_interval(x - y, level)
                mark = " (better)" if m + h < 0 else (" (worse)" if m - h > 0 else " (tied)")
                cells.append(f"{m:+.5f} ± {h:.5f}{mark}")
            print(f"| {o} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
