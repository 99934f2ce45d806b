"""Figure of the ``jun2016-table1`` experiment: BatchRacing's speedup per (b, r).

    python benchmarks/jun2016_table1_figure.py

One column per instance (Linear, Sparse). Top: the speedup mean batches(b = 1, r = 1) /
mean batches(b, r) against r, one colour per b: the paper's theory (line), the paper's
"actual" (open markers) and ours (filled markers; on Sparse also ours over 100 runs).
Bottom: every value's deviation from theory in percent, per (b, r), so that the gaps
between the paper's runs, ours and theory, too small to see on the speedups, show. The
numbers are read from the table of ``docs/experiments/jun2016-table1.md`` (the one with
the columns "b", "r", "Linear theory", ...). Writes
``docs/figures/jun2016-table1/speedup.png`` (``--out``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "experiments" / "jun2016-table1.md"
OUT = ROOT / "docs" / "figures" / "jun2016-table1" / "speedup.png"

INSTANCES = ("Linear", "Sparse")
#: Column of the page's table, after "<instance> " -> key of a row; a column missing for an
#: instance is not drawn.
SERIES = {
    "theory": "theory",
    "actual (paper)": "paper",
    "(ours)": "ours",
    "(ours, 100 runs)": "ours100",
}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_page(path: Path = PAGE) -> dict[str, list[dict[str, float]]]:
    """Instance -> rows ``{"b", "r", "theory", "paper", "ours"[, "ours100"]}`` of the table.

    The table is the first one whose header starts with ``b | r | Linear theory``; its
    columns are found by name (``<instance> <column>`` of :data:`SERIES`). Raises
    ``ValueError`` if there is no such table, a column is missing or a cell does not parse.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    heads = [
        i
        for i, line in enumerate(lines)
        if line.startswith("|") and _cells(line)[:3] == ["b", "r", "Linear theory"]
    ]
    if not heads:
        raise ValueError(f"{path}: no table with the columns 'b | r | Linear theory'")
    start = heads[0]
    header = _cells(lines[start])
    columns: dict[str, dict[str, int]] = {inst: {} for inst in INSTANCES}
    for j, name in enumerate(header):
        for inst in INSTANCES:
            if name.startswith(inst + " "):
                suffix = name[len(inst) + 1 :]
                if suffix in SERIES:
                    columns[inst][SERIES[suffix]] = j
    for inst in INSTANCES:
        missing = {"theory", "paper", "ours"} - columns[inst].keys()
        if missing:
            raise ValueError(f"{path}: no {inst} column for {sorted(missing)}")
    data: dict[str, list[dict[str, float]]] = {inst: [] for inst in INSTANCES}
    i = start + 2  # header and delimiter rows
    while i < len(lines) and lines[i].startswith("|"):
        cells = _cells(lines[i])
        try:
            b, r = int(cells[0]), int(cells[1])
            for inst in INSTANCES:
                row = {key: float(cells[j]) for key, j in columns[inst].items()}
                data[inst].append({"b": b, "r": r, **row})
        except (ValueError, IndexError) as e:
            raise ValueError(f"{path}:{i + 1}: not a row of the table: {lines[i]!r}") from e
        i += 1
    if not data["Linear"]:
        raise ValueError(f"{path}: the table of speedups is empty")
    return data


#: b -> colour
COLOURS = {1: "black", 4: "tab:blue", 16: "tab:green", 64: "tab:red"}
#: series -> (marker, filled, legend label)
MARKERS = {
    "paper": ("o", False, "paper's runs (10 runs)"),
    "ours": ("s", True, "ours (10 runs)"),
    "ours100": ("D", True, "ours (100 runs)"),
}


def draw(data: dict[str, list[dict[str, float]]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fig, axes = plt.subplots(
        2,
        len(INSTANCES),
        figsize=(5.6 * len(INSTANCES), 8.2),
        squeeze=False,
        height_ratios=[1.35, 1],
        layout="constrained",
    )
    bs = sorted({row["b"] for rows in data.values() for row in rows})
    rs = sorted({row["r"] for rows in data.values() for row in rows})
    shown: set[str] = set()
    for col, inst in enumerate(INSTANCES):
        rows = data[inst]
        top, bottom = axes[0, col], axes[1, col]
        # speedup against r, one colour per b
        for b in bs:
            sel = sorted((row for row in rows if row["b"] == b), key=lambda row: row["r"])
            colour = COLOURS.get(b, "tab:gray")
            x = [row["r"] for row in sel]
            top.plot(x, [row["theory"] for row in sel], "-", color=colour, linewidth=1.2)
            for key, (marker, filled, _) in MARKERS.items():
                if key not in sel[0]:
                    continue
                shown.add(key)
                top.plot(
                    x,
                    [row[key] for row in sel],
                    marker,
                    color=colour,
                    markerfacecolor=colour if filled else "none",
                    markersize=4.5 if key == "ours100" else 7,
                    markeredgewidth=1,
                    linestyle="none",
                    alpha=0.9,
                )
            top.annotate(
                f"b = {b}",
                (x[-1], sel[-1]["theory"]),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=9,
                color=colour,
            )
        top.set_xscale("log", base=2)
        top.set_yscale("log", base=2)
        top.set_xlim(min(rs) / 1.4, max(rs) * 2.6)
        top.set_ylim(0.8, max(bs) * 1.5)
        top.xaxis.set_major_locator(FixedLocator(rs))
        top.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        top.xaxis.set_minor_locator(NullLocator())
        top.yaxis.set_major_locator(FixedLocator([1, 2, 4, 8, 16, 32, 64]))
        top.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        top.yaxis.set_minor_locator(NullLocator())
        top.set_xlabel("r: most pulls of one arm in a batch (log scale)")
        top.set_ylabel("speedup in batches over b = r = 1 (log scale)")
        top.set_title(f"{inst}: speedup per (b, r)")
        top.grid(True, alpha=0.3)
        # deviation from theory per (b, r), (1, 1) left out (1 by definition)
        cells = [row for row in rows if (row["b"], row["r"]) != (1, 1)]
        pos = list(range(len(cells)))
        bottom.axhline(0, color="black", linewidth=1)
        offsets = {"paper": -0.2, "ours": 0.0, "ours100": 0.2}
        for key, (marker, filled, _) in MARKERS.items():
            if key not in cells[0]:
                continue
            for p, row in zip(pos, cells, strict=True):
                colour = COLOURS.get(row["b"], "tab:gray")
                bottom.plot(
                    p + offsets[key],
                    100 * (row[key] / row["theory"] - 1),
                    marker,
                    color=colour,
                    markerfacecolor=colour if filled else "none",
                    markersize=4.5 if key == "ours100" else 6,
                    markeredgewidth=1,
                    alpha=0.9,
                )
        for p, (a, c) in enumerate(zip(cells, cells[1:], strict=False)):
            if a["b"] != c["b"]:
                bottom.axvline(p + 0.5, color="gray", linewidth=0.6, alpha=0.5)
        bottom.set_xticks(pos, [f"{row['b']:g}, {row['r']:g}" for row in cells], rotation=60)
        bottom.set_xlim(-0.6, len(cells) - 0.4)
        bottom.set_xlabel("(b, r)")
        bottom.set_ylabel("deviation from theory (%)")
        bottom.set_title(f"{inst}: the runs against theory")
        bottom.grid(True, axis="y", alpha=0.3)
    handles = [Line2D([], [], color="gray", linewidth=1.2, label="theory (the paper's)")]
    for key, (marker, filled, label) in MARKERS.items():
        if key in shown:
            handles.append(
                Line2D(
                    [],
                    [],
                    marker=marker,
                    linestyle="none",
                    color="gray",
                    markerfacecolor="gray" if filled else "none",
                    markersize=4.5 if key == "ours100" else 7,
                    label=label.replace(")", ", Sparse only)") if key == "ours100" else label,
                )
            )
    handles += [
        Line2D([], [], color=COLOURS.get(b, "tab:gray"), linewidth=4, label=f"b = {b}") for b in bs
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)
    fig.suptitle(
        "jun2016-table1: BatchRacing (delta = 0.1), n = 100, k = 10: speedup = "
        "mean batches(b = 1, r = 1) / mean batches(b, r)\n"
        "Jun et al. (2016), Table 1 (theory and the paper's runs) against ours"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--page", type=Path, default=PAGE, help="the results page to read the table from"
    )
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    draw(read_page(args.page), args.out)
    print(args.out)


if __name__ == "__main__":
    main()
