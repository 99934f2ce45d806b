"""The terminal tables of topk-bench: figures rounded alike, tables and titles fit the width."""

from __future__ import annotations

import math

import pytest

from topk_bench.tables import (
    interval,
    plus_minus,
    pvalue,
    sig,
    terminal_width,
    text_table,
    wrap,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.635, "0.635"),
        (0.5951, "0.595"),
        (0.6749, "0.675"),
        (0.5, "0.500"),  # trailing zeros kept: one precision per column
        (2.0, "2.00"),
        (100.0, "100"),  # no trailing point
        (196.0, "196"),
        (19876.0, "1.99e+04"),
        (0.9996, "1.00"),  # rounding up does not add a digit
        (-0.001234, "-0.00123"),
        (1.234e-5, "1.23e-05"),
        (0.0, "0"),
        (math.nan, "-"),
        (None, "-"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
    ],
)
def test_sig_gives_three_significant_digits(value, text):
    assert sig(value) == text


def test_sig_rejects_a_digit_count_below_one():
    with pytest.raises(ValueError, match="digits=0 must be at least 1"):
        sig(1.0, 0)


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (3.1e-05, "3.1e-05"),
        (3.14159e-05, "3.1e-05"),
        (0.00099, "9.9e-04"),
        (0.001, "0.0010"),
        (0.04231, "0.042"),
        (0.5, "0.50"),
        (1.0, "1.0"),
        (0.0, "0"),
        (math.nan, "-"),
    ],
)
def test_pvalue_is_readable(p, text):
    assert pvalue(p) == text


def test_interval_rounds_the_mean_and_both_ends_alike():
    assert interval(0.635, 0.5951, 0.6749) == "0.635 [0.595, 0.675]"
    assert interval(1.0, math.nan, math.nan) == "1.00"  # one run: no interval
    assert interval(math.nan, 0.0, 1.0) == "-"


@pytest.mark.parametrize(
    ("mean", "low", "high", "text"),
    [
        (9.58e-18, -0.0054, 0.0054, "0 [-0.00540, 0.00540]"),  # a residue of an exact zero
        (-3.47e-18, -0.00142, 0.00142, "0 [-0.00142, 0.00142]"),
        (0.0, -0.0054, 0.0054, "0 [-0.00540, 0.00540]"),
        (4e-6, -0.0054, 0.0054, "0 [-0.00540, 0.00540]"),  # below half the ends' last digit
        (6e-6, -0.0054, 0.0054, "6.00e-06 [-0.00540, 0.00540]"),
        (1e-4, -0.0054, 0.0054, "0.000100 [-0.00540, 0.00540]"),
        (2e-18, 1e-18, 3e-18, "2.00e-18 [1.00e-18, 3.00e-18]"),  # tiny, but so is the interval
    ],
)
def test_interval_prints_a_mean_below_its_resolution_as_zero(mean, low, high, text):
    assert interval(mean, low, high) == text


@pytest.mark.parametrize(
    ("mean", "low", "high", "text"),
    [
        (0.0118, 0.0098, 0.0137, "0.0118 ± 0.00200"),  # the larger side of the interval
        (1.0, 0.954, 1.0, "1.00 ± 0.0460"),  # Wilson's at 1: covers its lower side
        (0.001, 0.0, 0.003, "0.00100 ± 0.00200"),  # a t interval cut at 0: the t half-width
        (0.5, math.nan, math.nan, "0.500"),  # one run: no interval
        (1e-18, -0.001, 0.001, "0 ± 0.00100"),
        (0.25, 0.25, 0.25, "0.250 ± 0"),
        (math.nan, 0.0, 1.0, "-"),
    ],
)
def test_plus_minus_gives_the_mean_and_the_larger_half_width(mean, low, high, text):
    assert plus_minus(mean, low, high) == text


def _wide() -> tuple[list[str], list[list[str]]]:
    header = ["panel", "x", *(f"agent{i}" for i in range(8)), "n"]
    rows = [
        ["two-level", str(k), *(interval(0.1 * i + 0.01 * k, 0.05, 0.95) for i in range(8)), "5"]
        for k in (2, 3)
    ]
    return header, rows


def test_a_table_that_fits_is_one_table():
    header, rows = _wide()
    text = text_table(header, rows, keys=2, width=1000)
    lines = text.splitlines()
    assert len(lines) == 2 + len(rows)
    assert lines[0].split() == header
    assert max(map(len, lines)) > 100  # the case below needs wrapping


@pytest.mark.parametrize("width", [100, 60])
def test_a_wide_table_is_split_into_tables_that_fit(width):
    header, rows = _wide()
    text = text_table(header, rows, keys=2, width=width)
    assert max(map(len, text.splitlines())) <= width
    blocks = text.split("\n\n")
    assert len(blocks) > 1
    seen = []
    for block in blocks:
        lines = block.splitlines()
        names = lines[0].split()
        assert names[:2] == ["panel", "x"]  # the key columns repeat
        seen += names[2:]
        for row, line in zip(rows, lines[2:], strict=True):
            assert line.startswith(row[0]) and f" {row[1]} " in line
    assert seen == header[2:]  # every other column once, in order
    for row in rows:
        for cell in row[2:]:
            assert cell in text


def test_a_split_table_has_groups_of_about_as_many_columns():
    header = ["agent", *(f"setup {i}" for i in range(1, 7))]
    rows = [["AdaptiveTopK", *["0.775 ± 0.103"] * 6]]
    text = text_table(header, rows, keys=1, width=100)  # 4 columns fit beside the key
    blocks = [b.splitlines()[0].split("  ") for b in text.split("\n\n")]
    assert [len([c for c in b if c.strip()]) - 1 for b in blocks] == [3, 3]
    assert max(map(len, text.splitlines())) <= 100


def test_a_column_wider_than_the_room_stands_alone():
    text = text_table(["key", "a", "b"], [["k", "x" * 30, "y"]], keys=1, width=20)
    blocks = text.split("\n\n")
    assert [b.splitlines()[0].split() for b in blocks] == [["key", "a"], ["key", "b"]]


def test_an_empty_table_has_its_header():
    assert text_table(["agent", "wins"], [], width=100).splitlines()[0].split() == ["agent", "wins"]


def test_bad_tables_name_the_problem():
    with pytest.raises(ValueError, match="a row has 1 cells, the header 2"):
        text_table(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match=r"keys=3 must lie in \[0, 2\]"):
        text_table(["a", "b"], [["x", "y"]], keys=3)


def test_wrap_keeps_every_word_within_the_width():
    text = "title: " + " ".join(f"word{i}" for i in range(40)) + "\nshort"
    out = wrap(text, 50)
    assert max(map(len, out.splitlines())) <= 50
    assert out.split() == text.split()
    assert out.splitlines()[-1] == "short"


def test_terminal_width_follows_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "77")
    assert terminal_width() == 77
