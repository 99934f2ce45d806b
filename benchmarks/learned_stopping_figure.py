"""Figure of the ``learned-stopping`` experiment: mean pulls against error rate per agent.

    python benchmarks/learned_stopping_figure.py                     # from the results page
    python benchmarks/learned_stopping_figure.py --results results/learned-stopping

One panel per point (k, delta): one marker per agent at (mean pulls, error rate), with
the 95% t interval of the mean pulls and the Clopper-Pearson 95% interval of the error
rate as bars, and the target delta as a dashed line. The numbers are those of the first
table of each point that ``benchmarks/learned_stopping_table.py`` prints: read from the
tables of ``docs/experiments/learned-stopping.md`` (default), or computed from a results
directory (``--results``). Writes ``docs/figures/learned-stopping/pulls_vs_error.png``
(``--out``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "experiments" / "learned-stopping.md"
OUT = ROOT / "docs" / "figures" / "learned-stopping" / "pulls_vs_error.png"

_POINT = re.compile(r"^#+\s*(k = (\d+), delta = ([0-9.]+))\s*$")
_HEADER = "| agent | episodes | mean pulls | error rate | Clopper-Pearson 95% | truncated |"
_NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
_ROW = re.compile(
    rf"^\|\s*(?P<agent>[^|]+?)\s*\|\s*(?P<episodes>\d+)\s*\|"
    rf"\s*(?P<pulls>{_NUMBER})\s*(?:±|\+-)\s*(?P<hw>{_NUMBER})\s*\|"
    rf"\s*(?P<error>{_NUMBER})\s*\|\s*\[(?P<lo>{_NUMBER}),\s*(?P<hi>{_NUMBER})\][^|]*\|"
    rf"\s*(?P<truncated>{_NUMBER})\s*\|\s*$"
)


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def read_page(path: Path = PAGE) -> list[tuple[str, float, dict[str, dict[str, Any]]]]:
    """(point label, delta, agent -> row) from the page's per-point tables of agents.

    A point is a heading ``k = K, delta = D``; its table is the first one after it with the
    columns of ``learned_stopping_table.py``'s first table. Raises ``ValueError`` if a
    point has no such table or a row of it does not parse.
    """
    found: list[tuple[str, float, dict[str, dict[str, Any]]]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        head = _POINT.match(lines[i].strip())
        i += 1
        if not head:
            continue
        while i < len(lines) and lines[i].strip() != _HEADER:
            if _POINT.match(lines[i].strip()):
                raise ValueError(f"{path}: no table of agents under {head.group(1)!r}")
            i += 1
        i += 2  # header and delimiter rows
        rows: dict[str, dict[str, Any]] = {}
        while i < len(lines) and lines[i].startswith("|"):
            m = _ROW.match(lines[i].strip())
            if not m:
                raise ValueError(f"{path}:{i + 1}: not a row of the table: {lines[i]!r}")
            rows[m["agent"]] = {
                "episodes": int(m["episodes"]),
                "pulls": _num(m["pulls"]),
                "pulls_hw": _num(m["hw"]),
                "error": _num(m["error"]),
                "error_lo": _num(m["lo"]),
                "error_hi": _num(m["hi"]),
                "truncated": _num(m["truncated"]),
            }
            i += 1
        if not rows:
            raise ValueError(f"{path}: the table under {head.group(1)!r} is empty")
        found.append((head.group(1), float(head.group(3)), rows))
    if not found:
        raise ValueError(f"{path}: no point heading 'k = K, delta = D'")
    return found


#: Agent family (label without its "(delta ...)" part) -> legend label, colour, marker.
STYLES: dict[str, tuple[str, str, str]] = {
    "learned stop": ("learned stop (3 training seeds)", "tab:red", "*"),
    "TTTS, posterior stop@delta": ("TTTS, posterior stop at delta", "tab:blue", "o"),
    "TTTS, posterior stop@target": (
        "TTTS, posterior stop at the learned stop's target",
        "tab:cyan",
        "o",
    ),
    "T3C": ("T3C (GLR stop)", "tab:green", "s"),
    "EB-TC": ("EB-TC (GLR stop)", "tab:olive", "D"),
    "Track-and-Stop": ("Track-and-Stop (k = 1 only)", "tab:purple", "^"),
    "LUCB": ("LUCB", "tab:brown", "v"),
    "KL-LUCB": ("KL-LUCB", "tab:orange", "<"),
    "LUCB++": ("LUCB++", "tab:pink", ">"),
    "lil'RandLUCB": ("lil'RandLUCB", "tab:gray", "P"),
}


def family(agent: str, delta: float) -> str:
    """The key of :data:`STYLES` of an agent label of the tables."""
    if agent.startswith("learned stop"):
        return "learned stop"
    name, _, rest = agent.partition(" (delta ")
    if name == "TTTS, posterior stop":
        return name + ("@delta" if float(rest.rstrip(")")) == delta else "@target")
    return name


def draw(points: list[tuple[str, float, dict[str, dict[str, Any]]]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter

    # panels by k, then by delta from the largest: a row per k when there are two deltas
    panels = sorted(points, key=lambda p: (int(re.search(r"k = (\d+)", p[0])[1]), -p[1]))
    rows_, cols = (len(panels) + 1) // 2, min(len(panels), 2)
    fig, axes = plt.subplots(
        rows_, cols, figsize=(5.5 * cols, 4.1 * rows_), squeeze=False, layout="constrained"
    )
    handles: dict[str, Any] = {}
    xs = [r["pulls"] for _, _, rows in points for r in rows.values()]
    for ax, (label, delta, rows) in zip(axes.flat, panels, strict=False):
        ax.axhline(delta, color="black", linestyle="--", linewidth=1)
        ax.annotate(
            f"delta = {delta:g}",
            (1, delta),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=9,
        )
        for agent, r in rows.items():
            name, colour, marker = STYLES[family(agent, delta)]
            h = ax.errorbar(
                r["pulls"],
                r["error"],
                xerr=r["pulls_hw"],
                yerr=[[r["error"] - r["error_lo"]], [r["error_hi"] - r["error"]]],
                fmt=marker,
                color=colour,
                markersize=12 if marker == "*" else 7,
                markeredgecolor="black" if marker == "*" else colour,
                markeredgewidth=0.6,
                elinewidth=1,
                capsize=2,
                alpha=0.9,
            )
            handles.setdefault(name, h)
        ax.set_title(label)
        ax.set_xscale("log")
        ax.set_xlim(min(xs) / 1.5, max(xs) * 1.5)
        ax.xaxis.set_major_locator(FixedLocator([300, 1000, 3000, 10000]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_ylim(0, max(delta * 1.25, *(r["error_hi"] * 1.05 for r in rows.values())))
        ax.set_xlabel("mean pulls per episode (log scale)")
        ax.set_ylabel("error rate (misidentified)")
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes.flat[len(points) :]:
        ax.set_visible(False)
    names = [v[0] for v in STYLES.values() if v[0] in handles]
    fig.legend(
        [handles[n] for n in names],
        names,
        loc="outside lower center",
        ncol=3,
        frameon=False,
    )
    fig.suptitle(
        "learned-stopping: mean pulls against error rate, 10 Bernoulli arms, means ~ Beta(1, 1)\n"
        "bars: 95% t interval of the mean pulls, Clopper-Pearson 95% interval of the error rate"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--page", type=Path, default=PAGE, help="the results page to read tables from")
    p.add_argument("--results", help="a results directory of learned-stopping instead of the page")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    if args.results:
        from learned_stopping_table import points  # (benchmarks/, the script's directory)

        data = points(args.results)
    else:
        data = read_page(args.page)
    draw(data, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
