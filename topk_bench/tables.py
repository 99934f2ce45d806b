"""Terminal tables: every figure rounded alike, tables and text wrapped to the terminal.

What ``topk-bench run``, ``summary`` and ``compare`` print (the CSV and JSON outputs keep
full precision), and the figures of ``topk-bench report``:

* real numbers to 3 significant digits (:func:`sig`): ``0.635``, trailing zeros kept so
  that a column reads at one precision (``0.500``, ``2.00``), scientific notation from
  1000 up and below 0.0001 (``1.99e+04``);
* a mean with its 95% interval as ``mean [low, high]`` (:func:`interval`) or
  ``mean ± half-width`` (:func:`plus_minus`), each figure to 3 significant digits; a mean
  too small to show at the precision of its interval's figures is ``0`` (a paired
  difference of ``9.58e-18`` beside ``[-0.00540, 0.00540]`` is a floating-point residue
  of zero, printed ``0 [-0.00540, 0.00540]``);
* p-values to 2 significant digits, scientific below 0.001 (:func:`pvalue`: ``0.042``,
  ``3.1e-05``); counts as integers;
* a table wider than the terminal (``COLUMNS``, else the terminal's width, else
  :data:`DEFAULT_WIDTH`) is printed as several narrower tables of about as many columns
  each, each repeating the key columns (:func:`text_table`), and a long title line is
  wrapped (:func:`wrap`).
"""

from __future__ import annotations

import math
import shutil
import textwrap
from collections.abc import Sequence

__all__ = [
    "DEFAULT_WIDTH",
    "DIGITS",
    "half_width",
    "interval",
    "plus_minus",
    "pvalue",
    "sig",
    "terminal_width",
    "text_table",
    "wrap",
]

#: The width used when the output is not a terminal and ``COLUMNS`` is unset.
DEFAULT_WIDTH = 100
#: Columns between two table columns.
GAP = "  "
#: Significant digits of every real number printed (means, interval ends, half-widths).
DIGITS = 3


def _missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def sig(v: float | None, digits: int = DIGITS) -> str:
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


def _last_digit(v: float, digits: int = DIGITS) -> float:
    """The value of one unit in the last digit :func:`sig` shows of ``v`` (0 for 0, NaN, inf)."""
    if _missing(v) or math.isinf(v) or v == 0:
        return 0.0
    exponent = format(abs(v), f".{digits - 1}e").partition("e")[2]
    return 10.0 ** (int(exponent) - digits + 1)


def _sig_beside(v: float, *others: float | None) -> str:
    """:func:`sig` of ``v``, or ``0`` if ``|v|`` is below half the last digit shown of
    every figure printed beside it (``others``): a residue of zero at their precision."""
    if not _missing(v) and not math.isinf(v):
        units = [_last_digit(float(o)) for o in others if not _missing(o)]  # type: ignore[arg-type]
        units = [u for u in units if u > 0]
        if units and abs(v) < 0.5 * min(units):
            return "0"
    return sig(v)


def interval(mean: float | None, low: float | None, high: float | None) -> str:
    """``mean [low, high]`` (:func:`sig` each); ``mean`` alone when the interval is NaN.

    A mean below half the last digit shown of both ends prints as ``0``
    (``0 [-0.00540, 0.00540]``, not ``9.58e-18 [-0.00540, 0.00540]``).
    """
    if _missing(mean):
        return "-"
    if _missing(low) and _missing(high):
        return sig(mean)
    return f"{_sig_beside(mean, low, high)} [{sig(low)}, {sig(high)}]"  # type: ignore[arg-type]


def half_width(mean: float, low: float | None, high: float | None) -> float:
    """The larger distance from ``mean`` to an end of ``[low, high]`` (NaN without one).

    For a Student-t interval cut to a metric's range (regret >= 0) it is the t
    half-width (the cut side is the shorter); for an asymmetric interval (Wilson's)
    ``mean ± half_width`` covers the interval.
    """
    sides = [abs(float(e) - mean) for e in (low, high) if not _missing(e)]  # type: ignore[arg-type]
    return max(sides) if sides else math.nan


def plus_minus(mean: float | None, low: float | None, high: float | None) -> str:
    """``mean ± half-width`` of the interval (:func:`half_width`; :func:`sig` each).

    ``mean`` alone when the interval is NaN (one run), ``-`` when the mean is; a mean
    below half the last digit shown of the half-width prints as ``0``.
    """
    if _missing(mean):
        return "-"
    half = half_width(float(mean), low, high)  # type: ignore[arg-type]
    if math.isnan(half):
        return sig(mean)
    return f"{_sig_beside(float(mean), half)} ± {sig(half)}"  # type: ignore[arg-type]


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

    When all columns do not fit, the columns after the first ``keys`` are split into as
    few groups as fit beside the ``keys`` columns, of about as many columns each (6
    columns that fit 4 at a time are printed 3 and 3), and one table is printed per
    group (separated by a blank line), each repeating the key columns. A group holds at
    least one column: a single column wider than the room left is printed as it is.
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
    room = width - sum(widths[i] for i in cols[:keys]) - len(GAP) * keys
    groups = _groups([widths[i] for i in cols[keys:]], room)
    return "\n\n".join(_render(header, rows, cols[:keys] + [keys + i for i in g]) for g in groups)


def _groups(widths: Sequence[int], room: int) -> list[list[int]]:
    """Indices of ``widths`` in consecutive groups that fit in ``room`` (joined by
    :data:`GAP`): as few groups as the greedy split, of sizes as even as fit."""

    def fits(group: Sequence[int]) -> bool:
        return (
            len(group) == 1 or sum(widths[i] for i in group) + len(GAP) * (len(group) - 1) <= room
        )

    greedy: list[list[int]] = [[]]
    for i in range(len(widths)):
        if greedy[-1] and not fits([*greedy[-1], i]):
            greedy.append([])
        greedy[-1].append(i)
    n, count = len(widths), len(greedy)
    size, extra = divmod(n, count)
    even, start = [], 0
    for g in range(count):
        stop = start + size + (1 if g < extra else 0)
        even.append(list(range(start, stop)))
        start = stop
    return even if all(fits(g) for g in even) else greedy


def wrap(text: str, width: int | None = None) -> str:
    """``text`` wrapped to ``width`` (default :func:`terminal_width`), line by line."""
    width = terminal_width() if width is None else width
    return "\n".join(
        textwrap.fill(line, width, break_on_hyphens=False) if len(line) > width else line
        for line in text.split("\n")
    )
