"""Readers for the CSV table formats behind the real-data instances.

These functions only parse and validate; :mod:`bandit_envs.instances` turns the result
into arms (``load_worker_table``, ``load_rating_table`` and the catalog entries
``zhou2014-rte``, ``shahrampour2017-caption`` and ``jun2016-virus`` with ``path``).

Formats (one header row, comma separated, extra columns ignored):

* worker accuracy (zhou2014 Sec. 6.2; Snow et al. 2008 RTE): one row per worker,
  ``worker_id,n_answers,n_correct[,accuracy]``.
* rating counts (shahrampour2017 Sec. IV.B; NEXT caption contest): one row per caption,
  one count column per rating level, e.g. ``n_unfunny,n_somewhat,n_funny[,n_total]``.
* means column (jun2016 Sec. 5.2): one row per arm, a column of real means.

Every problem raises ``ValueError`` naming the file, the line and the column.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["WorkerTable", "read_means_column", "read_rating_table", "read_worker_table"]

StrPath = str | os.PathLike[str]


class WorkerTable(NamedTuple):
    """Parsed worker-accuracy table."""

    worker_ids: tuple[str, ...]
    n_answers: np.ndarray  # int64, shape (n_workers,)
    n_correct: np.ndarray  # int64, shape (n_workers,)


def _read_rows(path: StrPath, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Read a CSV file; return ``(line number, row)`` pairs after checking the header."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames
        if not header:
            raise ValueError(f"{os.fspath(path)}: empty file, expected a header row")
        header = [h.strip() for h in header]
        reader.fieldnames = header
        for col in required:
            if col not in header:
                raise ValueError(
                    f"{os.fspath(path)}: missing column {col!r} "
                    f"(required: {', '.join(required)}; found: {', '.join(header)})"
                )
        rows = [(reader.line_num, row) for row in reader]
    if not rows:
        raise ValueError(f"{os.fspath(path)}: no data rows")
    return rows


def _cell(path: StrPath, line: int, row: dict[str, str], col: str) -> str:
    value = row.get(col)
    if value is None or value.strip() == "":
        raise ValueError(f"{os.fspath(path)}, line {line}: empty value in column {col!r}")
    return value.strip()


def _count(path: StrPath, line: int, row: dict[str, str], col: str) -> int:
    text = _cell(path, line, row, col)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value == int(value)):
        raise ValueError(
            f"{os.fspath(path)}, line {line}: column {col!r} must be a whole-number count, "
            f"got {text!r}"
        )
    if value < 0:
        raise ValueError(
            f"{os.fspath(path)}, line {line}: column {col!r} must be >= 0 (a count), got {text!r}"
        )
    return int(value)


def _real(path: StrPath, line: int, row: dict[str, str], col: str) -> float:
    text = _cell(path, line, row, col)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(
            f"{os.fspath(path)}, line {line}: column {col!r} must be a finite number, got {text!r}"
        )
    return value


def read_worker_table(path: StrPath) -> WorkerTable:
    """Read a worker-accuracy table (``worker_id,n_answers,n_correct[,accuracy]``).

    Args:
        path: CSV file.

    Returns:
        The worker ids and their answer counts, in file order.

    Raises:
        ValueError: Missing column, empty or non-integer or negative count,
            ``n_answers == 0``, ``n_correct > n_answers``, duplicate ``worker_id``, or an
            ``accuracy`` value that differs from ``n_correct / n_answers`` by more than 1e-9.
        FileNotFoundError: If ``path`` does not exist.
    """
    name = os.fspath(path)
    rows = _read_rows(path, ("worker_id", "n_answers", "n_correct"))
    ids: list[str] = []
    seen: set[str] = set()
    answers: list[int] = []
    correct: list[int] = []
    for line, row in rows:
        wid = _cell(path, line, row, "worker_id")
        if wid in seen:
            raise ValueError(f"{name}, line {line}: duplicate worker_id {wid!r}")
        seen.add(wid)
        n_ans = _count(path, line, row, "n_answers")
        n_cor = _count(path, line, row, "n_correct")
        if n_ans == 0:
            raise ValueError(f"{name}, line {line}: n_answers must be > 0, got 0 (worker {wid!r})")
        if n_cor > n_ans:
            raise ValueError(
                f"{name}, line {line}: n_correct ({n_cor}) must be <= n_answers ({n_ans}) "
                f"(worker {wid!r})"
            )
        if "accuracy" in row and row["accuracy"] not in (None, ""):
            acc = _real(path, line, row, "accuracy")
            if abs(acc - n_cor / n_ans) > 1e-9:
                raise ValueError(
                    f"{name}, line {line}: accuracy {acc} must equal n_correct / n_answers "
                    f"= {n_cor}/{n_ans} (worker {wid!r})"
                )
        ids.append(wid)
        answers.append(n_ans)
        correct.append(n_cor)
    return WorkerTable(
        tuple(ids), np.array(answers, dtype=np.int64), np.array(correct, dtype=np.int64)
    )


def read_rating_table(
    path: StrPath, columns: Sequence[str], total_column: str | None = "n_total"
) -> np.ndarray:
    """Read a rating-count table: one row per arm, one count column per rating level.

    Args:
        path: CSV file.
        columns: The count columns, in the order of the rating levels.
        total_column: If the file has this column, each row's value must equal the sum of
            ``columns`` (a consistency check). ``None`` skips it, e.g. to keep only some
            of the rating levels.

    Returns:
        int64 counts, shape ``(n_rows, len(columns))``.

    Raises:
        ValueError: Missing column, bad count, a row whose counts sum to 0, or an
            ``total_column`` value that differs from the sum.
        FileNotFoundError: If ``path`` does not exist.
    """
    cols = tuple(columns)
    if not cols:
        raise ValueError("columns must name at least one count column, got ()")
    name = os.fspath(path)
    counts: list[list[int]] = []
    for line, row in _read_rows(path, cols):
        values = [_count(path, line, row, c) for c in cols]
        total = sum(values)
        if total == 0:
            raise ValueError(
                f"{name}, line {line}: the counts in {', '.join(cols)} sum to 0; "
                "an arm needs at least one rating"
            )
        if total_column is not None and total_column in row:
            n_total = _count(path, line, row, total_column)
            if n_total != total:
                raise ValueError(
                    f"{name}, line {line}: {total_column} ({n_total}) must equal the sum of "
                    f"{', '.join(cols)} ({total}); pass total_column=None to use only these "
                    "levels"
                )
        counts.append(values)
    return np.array(counts, dtype=np.int64)


def read_means_column(path: StrPath, column: str) -> np.ndarray:
    """Read one column of finite real numbers (per-arm means).

    Args:
        path: CSV file.
        column: Name of the column.

    Returns:
        float64 array, one value per row, in file order.

    Raises:
        ValueError: Missing column or a value that is not a finite number.
        FileNotFoundError: If ``path`` does not exist.
    """
    rows = _read_rows(path, (column,))
    return np.array([_real(path, line, row, column) for line, row in rows], dtype=np.float64)
