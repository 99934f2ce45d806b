"""The Ray backend gives the same rows as the process backend (minus wall time), also
when a worker is killed in the middle of a run."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import re
from collections import Counter

import pytest
from _tiny_learned import FAMILY, TINY

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


TRAINED = {
    "name": "ray-train-test",
    "metrics": ["aggregate_regret"],
    "runs": 3,
    "env": dict(FAMILY),
    "train": [
        {
            "model": "std",
            "env_id": "TopK-v0",
            "env": dict(FAMILY),
            "timesteps": 64,
            "num_envs": 2,
            "eval_episodes": 4,
            "algo_kwargs": dict(TINY),
        }
    ],
    "agents": [{"name": "trained:std", "label": "PPO"}, {"name": "uniform"}],
    "points": [
        {"label": "one", "env": {"batch_size": 1, "repeat_limit": 1}, "agents": ["PPO", "uniform"]}
    ],
}


def _sidecar(out) -> dict:
    from topk_bench.models import model_path

    return json.loads(model_path(out, "std").with_suffix(".json").read_text())


@pytest.mark.ray
def test_ray_trains_each_model_as_a_task(tmp_path, monkeypatch):
    """``--backend ray`` (a local instance it starts) trains the model as a Ray task and
    writes it here: the same parameters, validation and rows as a local training."""
    pytest.importorskip("ray")
    pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3 import PPO

    from topk_bench.models import model_path

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    exp = load(TRAINED)
    run_experiment(exp, tmp_path / "process", jobs=1, progress=False)
    report = run_experiment(exp, tmp_path / "ray", backend="ray", jobs=2, progress=False)
    assert report.ran == 2 * 3
    assert not list(model_path(tmp_path / "ray", "std").parent.glob(".tmp-*"))
    log = model_path(tmp_path / "ray", "std").with_suffix(".log").read_text()
    where = re.search(r"trained on .* \(pid (\d+)\), files sent back", log)
    assert where and int(where.group(1)) != os.getpid()  # a Ray worker trained it
    a, b = _sidecar(tmp_path / "process"), _sidecar(tmp_path / "ray")
    assert a["bench"] == b["bench"]
    untimed = [
        [{k: v for k, v in e.items() if k != "seconds"} for e in side["training"]["evaluations"]]
        for side in (a, b)
    ]
    assert untimed[0] == untimed[1] and len(untimed[0]) == 1
    pa = PPO.load(model_path(tmp_path / "process", "std"), device="cpu").policy.state_dict()
    pb = PPO.load(model_path(tmp_path / "ray", "std"), device="cpu").policy.state_dict()
    assert all(torch.equal(pa[name], pb[name]) for name in pa)
    drop = [*TIMING_COLUMNS, "agent_name"]  # (agent_name holds the model's path)
    rows_a = read_results(tmp_path / "process").drop(columns=drop)
    rows_b = read_results(tmp_path / "ray").drop(columns=drop)
    assert rows_a.equals(rows_b)


class _InlineBackend:
    """RayBackend's interface (``session``, ``stream``) run in this process."""

    @contextlib.contextmanager
    def session(self, modules=()):
        yield {}

    def stream(self, fn, queue, options, describe, extra=()):
        while queue:
            item = queue.pop()
            yield item, fn(item, *extra)


def test_returned_models_are_written_as_they_arrive(tmp_path, monkeypatch):
    """The files of a task's training land in OUT/models, the log appended to an earlier
    attempt's, the .zip written last; the scratch directory is gone."""
    from topk_bench import models

    scratch_dirs = []

    def fake_train(spec, experiment, out, base_seed, progress, queue=None):
        path = models.model_path(out, spec.model)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch_dirs.append(path.parent)
        path.with_suffix(".log").write_text("trained 64 steps\n")
        path.with_suffix(".json").write_text("{}")
        path.write_bytes(b"model")
        return spec.model, 1.5, "trained 64 steps"

    monkeypatch.setattr(models, "_train_one", fake_train)
    written = []
    real_replace = os.replace
    monkeypatch.setattr(
        models.os, "replace", lambda a, b: (written.append(os.path.basename(b)), real_replace(a, b))
    )
    exp = load(TRAINED)
    log = models.model_path(tmp_path, "std").with_suffix(".log")
    log.parent.mkdir(parents=True)
    log.write_text("an interrupted attempt\n")
    got = models.train_missing(exp.train, exp.name, tmp_path, progress=False, ray=_InlineBackend())
    assert got == ["std"]
    assert models.model_path(tmp_path, "std").read_bytes() == b"model"
    lines = log.read_text().splitlines()
    assert lines[:2] == ["an interrupted attempt", "trained 64 steps"]
    assert lines[2].startswith("trained on ") and len(lines) == 3
    assert written == ["std.json", "std.zip"]
    assert scratch_dirs and not scratch_dirs[0].exists()
