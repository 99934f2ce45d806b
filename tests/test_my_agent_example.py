"""The guide's example package ``examples/my_agent``, run the way a user runs it.

* ``topk-bench check``, ``run --reduced``, ``compare`` and ``report`` on
  ``examples/my_agent/bench.toml`` in subprocesses, with ``PYTHONPATH=examples/my_agent``
  and the results in a temporary directory: every command succeeds, every (point,
  agent) pair has its rows, the manifest records where the example's agents came from;
* the compiled agent takes the fast path and plays exactly the episode of its
  ``fast=False`` reference and of the Python-generator version, in both settings, on
  both ids; the plain agent plays both ids;
* built as a wheel, the package's entry points appear in ``topk-bench list``.

With numba's cache filled the module takes 30-40 s on 2 cores; the first run on a fresh clone
also compiles the example's fast path and the shipped agents of the config.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401  (registers the envs)

pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_agent"
CONFIG = EXAMPLE / "bench.toml"


def _cli(*args: str, pythonpath: str = str(EXAMPLE), cwd: Path = ROOT) -> str:
    """``python -m topk_bench.cli ARGS`` as a user runs it; its stdout (fails on an error)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([pythonpath, str(ROOT)])
    proc = subprocess.run(
        [sys.executable, "-m", "topk_bench.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"topk-bench {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    )
    return proc.stdout


@pytest.fixture(scope="module")
def my_agent():
    """The example package, imported from its directory as ``PYTHONPATH`` would."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import my_agent

        yield my_agent
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in [m for m in sys.modules if m == "my_agent" or m.startswith("my_agent.")]:
            del sys.modules[name]


def test_check_run_compare_report(tmp_path: Path) -> None:
    out = tmp_path / "my-agent"
    text = _cli("check", str(CONFIG), "--reduced")
    assert "4 points, 5 agents, 14 (point, agent) pairs" in text
    assert "agent SE: my_agent.elimination.SuccessiveElimination (import path;" in text

    _cli("run", str(CONFIG), "--reduced", "--jobs", "1", "--no-progress", "--out", str(out))
    from topk_bench.store import read_results

    rows = read_results(out)
    pairs = rows.groupby(["point", "agent"]).size()
    assert len(pairs) == 14 and set(pairs) == {2}
    fc = rows[rows["agent"].isin(["SE", "LUCB"]) & (rows["point"] == "delta = 0.1")]
    assert len(fc) == 4 and not fc["truncated"].any()  # both stopped by themselves
    manifest = json.loads((out / "manifest.json").read_text())
    sources = {a["label"]: a["source"] for a in manifest["agents"]}
    assert sources["SE"]["class"] == "my_agent.elimination.SuccessiveElimination"
    assert sources["SE"]["file"] == str(EXAMPLE / "my_agent" / "elimination.py")
    assert sources["SE (Python)"]["origin"] == "import path"

    text = _cli("compare", str(out), "--baseline", "uniform", "--resamples", "200")
    assert "SE (Python)" in text and "SAR" in text
    _cli("report", str(out), "--resamples", "200")
    html = (out / "report.html").read_text()
    assert "my_agent.elimination.SuccessiveElimination" in html


def _result(r: agents.EpisodeResult) -> dict:
    row = r.as_row()
    row.pop("wall_time")
    return row


def _envs(setting: str) -> list[gym.Env]:
    kw = dict(instance="zhou2014-two-level", n_arms=8, k=3, setting=setting, paired=True)
    if setting == "fixed_budget":
        kw["budget"] = 400
    else:
        # gaps of 0.3, not 0.1: hundreds of rounds (about 5,000 pulls) an episode instead
        # of thousands (45,000), each played three times, twice pull by pull in Python
        kw["instance_params"] = {"high": 0.65, "low": 0.35}
        kw["max_batches"] = 10**6
    return [
        gym.make("TopK-v0", **kw),
        gym.make("TopK-Batch-v0", batch_size=1, repeat_limit=1, answer="agent", **kw),
        gym.make("TopK-Batch-v0", batch_size=None, repeat_limit=2, answer="agent", **kw),
    ]


@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_compiled_agent_takes_the_fast_path_and_plays_the_reference_episode(
    my_agent, setting: str
) -> None:
    for env in _envs(setting):
        for seed in (0, 1):
            fast_agent = my_agent.SuccessiveElimination(delta=0.1)
            assert agents.fast_path_applies(env, fast_agent)
            fast = agents.run_episode(env, fast_agent, seed=seed)
            counts = env.unwrapped._counts.copy()
            ref = agents.run_episode(
                env, my_agent.SuccessiveElimination(0.1), seed=seed, fast=False
            )
            assert _result(fast) == _result(ref)
            assert np.array_equal(counts, env.unwrapped._counts)
            python_agent = my_agent.SuccessiveEliminationPy(delta=0.1)
            assert not agents.fast_path_applies(env, python_agent)
            assert _result(agents.run_episode(env, python_agent, seed=seed)) == _result(fast)
            if setting == "fixed_confidence":
                assert fast.terminated and not fast.truncated and fast.pulls < 10**6


def test_plain_agent_plays_both_ids(my_agent) -> None:
    for env in _envs("fixed_budget")[:2]:
        result = agents.run_episode(env, my_agent.RoundRobinPlain(), seed=3)
        assert result.pulls == 400 and result.terminated
        assert np.array_equal(env.unwrapped._counts, np.full(8, 50))


def test_delta_is_checked(my_agent) -> None:
    with pytest.raises(ValueError, match=r"delta=1.5 must lie in \(0, 1\)"):
        my_agent.SuccessiveElimination(delta=1.5)
    with pytest.raises(ValueError, match=r"delta=0 must lie in \(0, 1\)"):
        my_agent.SuccessiveEliminationPy(delta=0)


def test_entry_points_of_the_installed_package(tmp_path: Path) -> None:
    """``pip install`` of the example registers its agents: built as a wheel (no network,
    no build isolation) and unpacked into a directory on ``PYTHONPATH``."""
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
         "-w", str(wheels), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    (wheel,) = wheels.glob("my_agent-*.whl")
    zipfile.ZipFile(wheel).extractall(site)
    text = _cli("list", pythonpath=str(site), cwd=tmp_path)
    assert (
        "successive_elimination my_agent.elimination.SuccessiveElimination  "
        "[fixed_budget, fixed_confidence]  (entry point of my-agent 0.1.0)"
    ) in text
    assert "round_robin_plain my_agent.plain.RoundRobinPlain" in text
