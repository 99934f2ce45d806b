"""The topk-bench command line: --help everywhere, list, check, run, summary, plot."""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from topk_bench.cli import main
from topk_bench.store import read_results
from topk_bench.summary import format_tables, summarize, t_quantile, wilson
from topk_bench.tables import plus_minus

CONFIG = """
name = "cli-test"
metrics = ["aggregate_regret", "misidentified"]
runs = 5
x = "k"
env = { n_arms = 10, budget = 200, instance = "zhou2014-two-level" }
[[agents]]
name = "uniform"
[[sweeps]]
panel = "two-level"
vary = { k = [2, 3] }
x = "k"
[[sweeps]]
panel = "setups"
zip = { instance = ["shahrampour2017-setup1", "shahrampour2017-setup6"], _s = ["one", "six"] }
env = { k = 2 }
x = "_s"
"""


@pytest.mark.parametrize("argv", [[], ["list"], ["check"], ["run"], ["summary"], ["plot"]])
def test_help_everywhere(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: topk-bench" in out
    if argv == ["run"]:
        for option in (
            "--runs",
            "--jobs",
            "--backend",
            "--address",
            "--out",
            "--seed",
            "--data",
            "--reduced",
        ):
            assert option in out


def test_console_script_help():
    exe = shutil.which("topk-bench")
    if exe is None:
        pytest.skip("topk-bench is not on PATH")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "run" in out.stdout


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert (
        "uniform" in out and "jun2016-linear" in out and "zhou2014-fig1" in out and "quick" in out
    )


def test_bad_config_exit_code_names_key(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace("runs = 5", "runs = 5\nrunz = 3"))
    assert main(["check", str(bad)]) == 2
    assert "runz" in capsys.readouterr().err
    assert main(["run", str(bad), "--out", str(tmp_path / "never")]) == 2
    assert not (tmp_path / "never").exists()  # nothing started


@pytest.fixture(scope="module")
def result_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    (root / "c.toml").write_text(CONFIG)
    out = root / "out"
    assert (
        main(["run", str(root / "c.toml"), "--out", str(out), "--jobs", "1", "--no-progress"]) == 0
    )
    return out


def test_run_writes_table_and_figures(result_dir):
    assert (result_dir / "summary.csv").exists()
    for metric in ("aggregate_regret", "misidentified"):
        png = result_dir / "figures" / f"{metric}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_writes_png(result_dir, capsys):
    for png in (result_dir / "figures").glob("*.png"):
        png.unlink()
    assert main(["plot", str(result_dir), "--metrics", "pulls"]) == 0
    png = result_dir / "figures" / "pulls.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert str(png) in capsys.readouterr().out


def test_summary_prints_means_with_95_ci(result_dir, capsys):
    assert main(["summary", str(result_dir)]) == 0
    out = capsys.readouterr().out
    assert "aggregate_regret (lower is better): mean ± 95% CI, 5 runs per cell" in out
    assert "misidentified (lower is better): mean ± 95% CI, 5 runs per cell" in out
    df = read_results(result_dir)
    group = df[(df["panel"] == "two-level") & (df["x"] == "2")]["aggregate_regret"].to_numpy()
    mean, half = (
        group.mean(),
        t_quantile(len(group) - 1) * group.std(ddof=1) / math.sqrt(len(group)),
    )
    low = max(0.0, mean - half)  # regret is >= 0: the interval is cut there ...
    assert plus_minus(mean, low, mean + half) in out  # ... and ± is the t half-width
    # one agent: the points are the rows, labelled without their panel's name
    assert "\ninstance=shahrampour2017-setup1, s=one  " in out and "setups: " not in out


MANY_AGENTS = """
name = "width-test"
metrics = ["aggregate_regret", "misidentified", "pulls"]
runs = 6
x = "k"
env = { n_arms = 10, budget = 200, instance = "zhou2014-two-level" }
agents = [{ name = "uniform" }, { name = "sar" }, { name = "nsar" }, { name = "halving" },
          { name = "optmai" }]
[[sweeps]]
panel = "two-level"
vary = { k = [2, 3] }
x = "k"
"""


@pytest.fixture(scope="module")
def wide_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("wide")
    (root / "c.toml").write_text(MANY_AGENTS)
    out = root / "out"
    argv = ["run", str(root / "c.toml"), "--out", str(out), "--jobs", "1", "--no-progress",
            "--no-report"]  # fmt: skip
    assert main(argv) == 0
    return out


@pytest.mark.parametrize("width", [60, 45])
def test_summary_fits_the_terminal_and_the_csv_keeps_full_precision(
    wide_dir, width, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["summary", str(wide_dir)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    summary = pd.read_csv(wide_dir / "summary.csv", keep_default_na=False, na_values=[""])
    unwrapped = format_tables(summary, "k", width=10**6)
    assert max(len(line) for line in unwrapped.splitlines()) > width  # the layout was narrowed
    for r in summary.itertuples():
        assert plus_minus(r.mean, r.ci_low, r.ci_high) in out
    df = read_results(wide_dir)
    for r in summary[summary["metric"] == "aggregate_regret"].itertuples():
        values = df[(df["point"] == r.point) & (df["agent"] == r.agent)]["aggregate_regret"]
        assert r.mean == pytest.approx(values.mean(), rel=1e-12, abs=1e-15)


def test_summary_intervals():
    assert t_quantile(4) == pytest.approx(2.776, abs=1e-3)
    assert t_quantile(40) == pytest.approx(2.0211, abs=1e-3)
    assert t_quantile(120) == pytest.approx(1.9799, abs=1e-3)
    assert t_quantile(10**6) == pytest.approx(1.95996, abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-3), pytest.approx(0.7634, abs=1e-3))
    import pandas as pd

    df = pd.DataFrame(
        {
            "point": ["p"] * 4,
            "agent": ["a"] * 4,
            "panel": [""] * 4,
            "x": ["1"] * 4,
            "x_value": [1.0] * 4,
            "pulls": [1, 2, 3, 4],
            "misidentified": [0.0, 1, 1, 1],
        }
    )
    s = summarize(df, ["pulls", "misidentified"]).set_index("metric")
    assert s.loc["pulls", "mean"] == 2.5 and s.loc["pulls", "n"] == 4
    assert s.loc["pulls", "ci_high"] - 2.5 == pytest.approx(
        3.182 * np.std([1, 2, 3, 4], ddof=1) / 2, abs=1e-3
    )
    assert (s.loc["misidentified", "ci_low"], s.loc["misidentified", "ci_high"]) == wilson(3, 4)


def test_train_subcommand_help(capsys) -> None:
    pytest.importorskip("stable_baselines3")
    from topk_bench.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    assert exit_info.value.code == 0
    assert "--timesteps" in capsys.readouterr().out


def test_closed_stdout_exits_quietly() -> None:
    """`topk-bench list | head -1`: a reader that leaves early gives no traceback."""
    import os
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from topk_bench.cli import main; sys.exit(main())",
                "list",
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr


SUBSET = CONFIG.replace(
    '[[agents]]\nname = "uniform"', '[[agents]]\nname = "uniform"\n[[agents]]\nname = "sar"'
)
SUBSET = SUBSET.replace('panel = "setups"', 'panel = "setups"\nagents = ["uniform"]')


@pytest.mark.parametrize(
    ("config", "line"),
    [
        (CONFIG, "cli-test: 4 points x 1 agents x 5 runs = 20 episodes -> "),
        (
            SUBSET,  # sar plays 2 of the 4 points: 4 x 2 x 5 would say 40
            "cli-test: 30 episodes (4 points, 2 agents, 5 runs; some points play a subset "
            "of the agents) -> ",
        ),
        (
            SUBSET.replace('name = "sar"', 'name = "sar"\nruns = 2'),
            "cli-test: 24 episodes (4 points, 2 agents, 5 runs; some points play a subset "
            "of the agents; fewer runs for sar: 2) -> ",
        ),
    ],
)
def test_run_states_the_true_episode_count(config, line, tmp_path, capsys, monkeypatch):
    import topk_bench.run

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(topk_bench.run, "run_experiment", stop)  # no episode runs
    (tmp_path / "c.toml").write_text(config)
    assert main(["run", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 130
    err = capsys.readouterr().err
    assert err.startswith(line), err
