"""Terminal tables: every figure rounded alike, tables and text wrapped to the terminal.

What ``topk-bench summary`` and ``topk-bench compare`` print (the CSV and JSON outputs
keep full precision):

* real numbers to 3 significant digits (:func:`sig`): ``0.635 [0.595, 0.675]``, trailing
  zeros kept so that a column reads at one precision (``0.500``, ``2.00``), scientific
  notation from 1000 up and below 0.0001 (``1.99e+04``);
* p-values to 2 significant digits, scientific below 0.001 (:func:`pvalue`: ``0.042``,
  ``3.1e-05``); counts as integers;
* a table wider than the terminal (``COLUMNS``, else the terminal's width, else
  :data:`DEFAULT_WIDTH`) is printed as several narrower tables, each repeating the key
  columns (:func:`text_table`), and a long title line is wrapped (:func:`wrap`).
"""

from __future__ import annotations

import math
import shutil
import textwrap
from collections.abc import Sequence

__all__ = ["DEFAULT_WIDTH", "interval", "pvalue", "sig", "terminal_width", "text_table", "wrap"]

#: The width used when the output is not a terminal and ``COLUMNS`` is unset.
DEFAULT_WIDTH = 100
#: Columns between two table columns.
GAP = "  "


def _missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def sig(v: float | None, digits: int = 3) -> str:
    """``v`` to ``digits`` significant digits (``-`` for None or NaN, ``0`` for zero).

    Trailing zeros are kept (``0.500``); scientific notation when the exponent is below
    -4 or at least ``digits`` (Python's ``g`` rule: ``1.99e+04``, ``1.23e-05``).
    """
    if digits < 1:
        raise ValueError(f"digits={digits!r} must be at least 1")
    if _missing(v):
        return "-"
    v = float(v)  # type: ignore[arg-type]
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    text = format(v, f"#.{digits}g")
    mantissa, e, exponent = text.partition("e")
    return mantissa.rstrip(".") + e + exponent


def pvalue(p: float | None) -> str:
    """A p-value to 2 significant digits, in scientific notation below 0.001 (``3.1e-05``)."""
    if _missing(p):
        return "-"
    p = float(p)  # type: ignore[arg-type]
    if 0 < p < 1e-3:
        return f"{p:.1e}"
    return sig(p, 2)


def interval(mean: float | None, low: float | None, high: float | None) -> str:
    """``mean [low, high]`` (:func:`sig` each); ``mean`` alone when the interval is NaN."""
    if _missing(mean):
        return "-"
    if _missing(low) and _missing(high):
        return sig(mean)
    return f"{sig(mean)} [{sig(low)}, {sig(high)}]"


def terminal_width() -> int:
    """``COLUMNS`` if set, else the terminal's width, else :data:`DEFAULT_WIDTH`."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _render(header: Sequence[str], rows: Sequence[Sequence[str]], cols: Sequence[int]) -> str:
    widths = [max([len(header[i]), *(len(r[i]) for r in rows)]) for i in cols]
    lines = [GAP.join(header[i].ljust(w) for i, w in zip(cols, widths, strict=True))]
    lines.append(GAP.join("-" * w for w in widths))
    lines += [GAP.join(r[i].ljust(w) for i, w in zip(cols, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    keys: int = 1,
    width: int | None = None,
) -> str:
    """A left-aligned text table no wider than ``width`` (default :func:`terminal_width`).

    When all columns do not fit, the columns after the first ``keys`` are split into
    groups that fit beside the ``keys`` columns, and one table is printed per group
    (separated by a blank line), each repeating the key columns. A group holds at least
    one column: a single column wider than the room left is printed as it is.
    """
    header = [str(h) for h in header]
    rows = [[str(c) for c in r] for r in rows]
    for r in rows:
        if len(r) != len(header):
            raise ValueError(f"a row has {len(r)} cells, the header {len(header)}: {r!r}")
    if not 0 <= keys <= len(header):
        raise ValueError(f"keys={keys!r} must lie in [0, {len(header)}] (the header's length)")
    width = terminal_width() if width is None else width
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    cols = list(range(len(header)))
    if sum(widths) + len(GAP) * (len(cols) - 1) <= width or len(cols) == keys:
        return _render(header, rows, cols)
    key_cols = cols[:keys]
    used = sum(widths[i] for i in key_cols) + len(GAP) * keys
    groups: list[list[int]] = []
    current: list[int] = []
    room = width - used
    for i in cols[keys:]:
        need = widths[i] + (len(GAP) if current else 0)
        if current and need > room:
            groups.append(current)
            current, room = [], width - used
            need = widths[i]
        current.append(i)
        room -= need
    groups.append(current)
    return "\n\n".join(_render(header, rows, key_cols + g) for g in groups)


def wrap(text: str, width: int | None = None) -> str:
    """``text`` wrapped to ``width`` (default :func:`terminal_width`), line by line."""
    width = terminal_width() if width is None else width
    return "\n".join(
        textwrap.fill(line, width, break_on_hyphens=False) if len(line) > width else line
        for line in text.split("\n")
    )
