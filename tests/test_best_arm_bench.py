"""benchmarks/best_arm_side_by_side.py without best-arm: argument parsing and the skip path.

No episode is played (CI lacks best-arm, and ours would compile); well under a second.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "best_arm_side_by_side", ROOT / "benchmarks" / "best_arm_side_by_side.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_defaults_and_bad_arguments(bench):
    args = bench.parse_args([])
    assert args.best_arm_python == bench.DEFAULT_PYTHON
    assert (args.episodes, args.big_episodes) == (10, 1)
    args = bench.parse_args(["--best-arm-python", "/x/python", "--episodes", "3"])
    assert (args.best_arm_python, args.episodes) == ("/x/python", 3)
    for bad in (["--episodes", "0"], ["--cap", "0"], ["--instances", "mu9"]):
        with pytest.raises(SystemExit):
            bench.parse_args(bad)


def test_missing_python_is_skipped_with_a_message(bench, tmp_path, capsys):
    missing = str(tmp_path / "no-venv" / "python")
    assert "does not exist" in bench.theirs_available(missing)
    assert bench.main(["--best-arm-python", missing, "--list"]) == 0
    out = capsys.readouterr().out
    assert "best-arm side skipped" in out and "track_and_stop" in out


def test_pairs_name_driver_algorithms(bench):
    path = ROOT / "benchmarks" / "_best_arm_driver.py"
    spec = importlib.util.spec_from_file_location("_best_arm_driver", path)
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    assert {p.theirs for p in bench.PAIRS} <= set(driver.ALGOS)
    assert bench.means_of("mu1") == [0.5, 0.45, 0.43, 0.4]
    assert len(bench.means_of("n1000")) == 1000
