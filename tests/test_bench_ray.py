"""The Ray backend gives the same rows as the process backend (minus wall time), also
when a worker is killed in the middle of a run."""

from __future__ import annotations

import builtins
import json
import os
from collections import Counter

import pytest

from topk_bench.backends import KILL_ENV, BackendError, RayBackend
from topk_bench.config import load
from topk_bench.episodes import TIMING_COLUMNS
from topk_bench.run import run_experiment
from topk_bench.store import read_results

CONFIG = {
    "name": "ray-test",
    "metrics": ["aggregate_regret"],
    "runs": 6,
    "env": {"n_arms": 12, "k": 3, "budget": "=15*n"},
    "agents": [{"name": "uniform"}, {"name": "optmai", "label": "optmai"}],
    "sweeps": [
        {"panel": "random", "env": {"instance": "uniform-random"}, "vary": {"k": [2, 3]}, "x": "k"},
        {
            "panel": "setup 6",
            "env": {"instance": "shahrampour2017-setup6"},
            "vary": {"k": [2]},
            "x": "k",
        },
    ],
}


def test_missing_ray_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(BackendError, match=r"pip install 'topk-bandit-envs\[ray\]'"):
        RayBackend()


@pytest.mark.ray
def test_ray_backend_equals_process_backend(tmp_path):
    ray = pytest.importorskip("ray")
    exp = load(CONFIG)
    run_experiment(exp, tmp_path / "process", jobs=2, progress=False)
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        report = run_experiment(exp, tmp_path / "ray", backend="ray", chunk_size=3, progress=False)
    finally:
        ray.shutdown()
    assert report.ran == len(exp.pairs()) * exp.runs
    a = read_results(tmp_path / "process").drop(columns=list(TIMING_COLUMNS))
    b = read_results(tmp_path / "ray").drop(columns=list(TIMING_COLUMNS))
    assert a.equals(b)


@pytest.mark.ray
def test_ray_killed_worker_is_retried_rows_exactly_once(tmp_path, monkeypatch):
    """SIGKILL a Ray worker at a chosen chunk: with no retries left the run stops with a
    clear error, keeping what finished; with retries, the task reruns and every episode
    gives exactly one row, equal to the process backend's."""
    ray = pytest.importorskip("ray")
    exp = load(CONFIG)
    total = len(exp.pairs()) * exp.runs
    run_experiment(exp, tmp_path / "process", jobs=1, progress=False)
    marker = tmp_path / "kill.json"
    marker.write_text(json.dumps({"agent": "optmai", "run": 3, "always": True}))
    monkeypatch.setenv(KILL_ENV, str(marker))  # before ray.init: workers inherit it
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    seen: Counter = Counter()

    def count(chunk):
        seen.update((chunk.point, chunk.agent, r) for r in chunk.runs)

    out = tmp_path / "ray"
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        with pytest.raises(BackendError, match=r"died 1 times .*0 retries allowed.*rerun"):
            run_experiment(
                exp, out, backend=RayBackend(retries=0), chunk_size=3, flush_interval=0,
                progress=False, on_chunk=count,
            )  # fmt: skip
        assert marker.exists() and not (out / ".lock").exists()
        first = sum(seen.values())
        assert first < total
        marker.write_text(json.dumps({"agent": "optmai", "run": 3}))  # kill once
        report = run_experiment(
            exp, out, backend=RayBackend(retries=1), chunk_size=3, progress=False,
            on_chunk=count,
        )  # fmt: skip
    finally:
        ray.shutdown()
    assert not marker.exists()  # the worker did die, and its chunk was rerun
    assert report.ran == total - first
    assert sorted(seen.values()) == [1] * total
    a = read_results(tmp_path / "process").drop(columns=list(TIMING_COLUMNS))
    b = read_results(out).drop(columns=list(TIMING_COLUMNS))
    assert a.equals(b)
