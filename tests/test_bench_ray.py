"""The Ray backend gives the same rows as the process backend (minus wall time)."""

from __future__ import annotations

import builtins
import os

import pytest

from topk_bench.backends import BackendError, RayBackend
from topk_bench.config import load
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
    a = read_results(tmp_path / "process").drop(columns=["wall_time"])
    b = read_results(tmp_path / "ray").drop(columns=["wall_time"])
    assert a.equals(b)
