"""Runner: seeds, determinism across --jobs, resume, interruption, killed workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.elimination.uniform import Uniform
from topk_bench import seeds
from topk_bench.backends import ProcessBackend
from topk_bench.config import ConfigError, load
from topk_bench.episodes import TIMING_COLUMNS
from topk_bench.run import plan_chunks, run_experiment
from topk_bench.store import ResultStore, StoreError, read_results

CONFIG = {
    "name": "bench-test",
    "metrics": ["aggregate_regret", "misidentified"],
    "runs": 6,
    "env": {"n_arms": 12, "k": 3, "budget": "=15*n"},
    "agents": [{"name": "uniform"}, {"name": "optmai", "params": {"beta": 0.8}}, {"name": "sar"}],
    "sweeps": [
        {
            "panel": "two-level",
            "env": {"instance": "zhou2014-two-level"},
            "vary": {"k": [2, 3]},
            "x": "k",
        },
        {"panel": "random", "env": {"instance": "uniform-random"}, "vary": {"k": [2]}, "x": "k"},
    ],
}


def experiment(**changes):
    cfg = {**CONFIG, **changes}
    wanted = [a for a in cfg["agents"] if a["name"] in agents.available()]
    return load({**cfg, "agents": wanted})


def rows(path) -> object:
    return read_results(path).drop(columns=list(TIMING_COLUMNS))


def assert_same_rows(a, b) -> None:
    da, db = rows(a), rows(b)
    assert len(da) == len(db)
    assert da.equals(db), da.compare(db) if da.shape == db.shape else (da.shape, db.shape)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted serial run: the rows every other run must reproduce."""
    out = tmp_path_factory.mktemp("ref")
    exp = experiment()
    report = run_experiment(exp, out, jobs=1, progress=False)
    assert report.ran == len(exp.pairs()) * exp.runs
    return out


def test_seeds_are_stable_and_paired():
    a = seeds.env_seed("e", "p", 3)
    assert a == seeds.env_seed("e", "p", 3) and 0 <= a < 2**63
    assert len({seeds.env_seed("e", "p", r) for r in range(100)}) == 100
    assert seeds.env_seed("e", "p", 3, base_seed=1) != a
    assert seeds.env_seed("e", "q", 3) != a and seeds.env_seed("f", "p", 3) != a
    assert seeds.agent_seed("e", "p", 3, "x") != seeds.agent_seed("e", "p", 3, "y")
    assert seeds.agent_seed("e", "p", 3, "x") != a
    # pinned values: a change here silently changes every stored result
    import hashlib

    assert seeds.name_hash("topk") == int.from_bytes(hashlib.sha256(b"topk").digest()[:8], "little")
    assert seeds.env_seed("e", "p", 0) == 4741852054594765524
    assert seeds.agent_seed("e", "p", 0, "a") == 928198505642569136


def test_rows_are_paired_and_complete(reference):
    df = read_results(reference)
    exp = experiment()
    assert len(df) == len(exp.pairs()) * exp.runs
    assert df.groupby(["point", "run"])["seed"].nunique().max() == 1  # one episode per (point, run)
    assert df.groupby(["point", "run"])["agent_seed"].nunique().min() == df["agent"].nunique()
    for r in df.itertuples():
        assert r.seed == seeds.env_seed("bench-test", r.point, r.run)
    assert set(df.columns) >= {
        "experiment",
        "point",
        "agent",
        "params",
        "run",
        "seed",
        "aggregate_regret",
        "misidentified",
        "precision",
        "pulls",
        "batches",
        "wall_time",
    }
    assert (df["pulls"] <= 15 * 12).all() and (df["pulls"] > 0).all()


def test_jobs_and_chunking_do_not_change_rows(reference, tmp_path):
    exp = experiment()
    run_experiment(exp, tmp_path / "j2", jobs=2, chunk_size=1, progress=False)
    assert_same_rows(reference, tmp_path / "j2")
    run_experiment(
        exp, tmp_path / "j2b", backend=ProcessBackend(2, start_method="spawn"), progress=False
    )
    assert_same_rows(reference, tmp_path / "j2b")


def test_rerun_adds_nothing_and_more_runs_extend(reference, tmp_path):
    exp = experiment()
    out = tmp_path / "r"
    run_experiment(exp, out, jobs=1, progress=False)
    files = ResultStore(out).part_files()
    assert len(files) == 1  # compacted
    again = run_experiment(exp, out, jobs=2, progress=False)
    assert again.ran == 0 and again.already_done == len(exp.pairs()) * exp.runs
    assert ResultStore(out).part_files() == files
    more = run_experiment(experiment(runs=8), out, jobs=2, progress=False)
    assert more.ran == len(exp.pairs()) * 2
    df = read_results(out)
    first = df[df["run"] < 6].reset_index(drop=True).drop(columns=list(TIMING_COLUMNS))
    assert first.equals(rows(reference))


def test_interrupted_run_resumes_to_identical_rows(reference, tmp_path):
    exp = experiment()
    out = tmp_path / "i"
    seen = []

    def stop_after_three(chunk):
        seen.append(chunk)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, out, jobs=1, chunk_size=2, progress=False, on_chunk=stop_after_three)
    store = ResultStore(out)
    assert len(store.done()) == 6  # the three finished chunks were written
    assert not list(store.parts.glob("*.tmp")) and not (out / ".lock").exists()
    report = run_experiment(exp, out, jobs=2, progress=False)
    assert report.ran == len(exp.pairs()) * exp.runs - 6
    assert_same_rows(reference, out)


def test_corrupt_tmp_files_are_ignored_and_manifest_guards_mixing(reference, tmp_path):
    exp = experiment()
    out = tmp_path / "m"
    run_experiment(exp, out, jobs=1, progress=False)
    (out / "parts" / ".part-123.parquet.tmp").write_bytes(b"half a file")
    assert len(read_results(out)) == len(exp.pairs()) * exp.runs
    with pytest.raises(StoreError, match="seed"):
        run_experiment(exp, out, base_seed=1, progress=False)
    changed = experiment(env={"n_arms": 13, "k": 3, "budget": "=15*n"})
    with pytest.raises(StoreError, match="other env settings"):
        run_experiment(changed, out, progress=False)
    (out / ".lock").write_text(str(os.getpid() + 10**6))  # a stale lock of a dead run
    assert run_experiment(exp, out, progress=False).ran == 0


class CrashOnce(Uniform):
    """Uniform, but the worker that first resets it dies (as if killed)."""

    name = "crash_once"
    marker: str = ""
    parent: int = 0

    def reset(self, problem, *, seed=None):
        if os.getpid() != CrashOnce.parent and os.path.exists(CrashOnce.marker):
            os.remove(CrashOnce.marker)
            os._exit(1)
        super().reset(problem, seed=seed)


def test_killed_worker_loses_nothing(reference, tmp_path, monkeypatch):
    import agents.registry

    monkeypatch.setitem(agents.registry._REGISTRY, "crash_once", f"{__name__}:CrashOnce")
    marker = tmp_path / "crash"
    marker.write_text("1")
    monkeypatch.setattr(CrashOnce, "marker", str(marker))
    monkeypatch.setattr(CrashOnce, "parent", os.getpid())
    cfg = {**CONFIG, "agents": [{"name": "uniform"}, {"name": "crash_once", "label": "crashy"}]}
    out = tmp_path / "k"
    report = run_experiment(
        load(cfg), out, backend=ProcessBackend(2, start_method="fork"), chunk_size=2, progress=False
    )
    assert not marker.exists()  # a worker did die
    df = read_results(out)
    assert report.ran == len(df) == 3 * 2 * 6
    uniform = df[df["agent"] == "uniform"].drop(columns=list(TIMING_COLUMNS)).reset_index(drop=True)
    ref = rows(reference)
    assert uniform.equals(ref[ref["agent"] == "uniform"].reset_index(drop=True))
    crashy = df[df["agent"] == "crashy"].reset_index(drop=True)
    assert np.array_equal(crashy["seed"], uniform["seed"])


def test_killed_runner_resumes_to_identical_rows(tmp_path):
    """SIGKILL the CLI mid-run: no corrupt file, and the rerun completes with the same rows."""
    config = tmp_path / "c.toml"
    config.write_text(
        'name = "killme"\nmetrics = ["aggregate_regret"]\nruns = 100\n'
        'env = { n_arms = 20, k = 4, budget = 400, instance = "uniform-random" }\n'
        '[[agents]]\nname = "uniform"\n[[agents]]\nname = "optmai"\n'
        '[[sweeps]]\nvary = { k = [2, 4] }\nx = "k"\n'
    )
    out = tmp_path / "o"
    cmd = [
        sys.executable,
        "-m",
        "topk_bench.cli",
        "run",
        str(config),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--no-progress",
        "--no-report",
        "--chunk-size",
        "4",
        "--flush-interval",
        "0",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(list(out.glob("parts/part-*.parquet"))) < 2:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    partial = len(ResultStore(out).done())
    assert 0 < partial < 2 * 2 * 100
    assert (out / ".lock").exists()  # left behind by the killed run: stale, taken over below
    subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120
    )
    assert len(ResultStore(out).done()) == 2 * 2 * 100
    ref = tmp_path / "ref"
    run_experiment(load(config), ref, jobs=1, progress=False)
    assert_same_rows(ref, out)


def test_plan_chunks_covers_missing_episodes_once():
    exp = experiment()
    done = {(exp.points[0].label, "uniform", 0), (exp.points[0].label, "uniform", 5)}
    chunks = plan_chunks(exp, done=done, chunk_size=4)
    keys = [(c.point, c.agent, r) for c in chunks for r in c.runs]
    assert len(keys) == len(set(keys)) == len(exp.pairs()) * exp.runs - 2
    assert not set(keys) & done
    assert all(len(c) <= 4 for c in chunks)


def test_failing_episode_names_it(tmp_path):
    exp = load({**CONFIG, "agents": [{"name": "uniform"}]})
    chunk = plan_chunks(exp, chunk_size=1)[0]
    bad = type(chunk)(**{**chunk.__dict__, "agent_params": {"rounds": -1}})
    from topk_bench.episodes import run_chunk

    with pytest.raises(ValueError):
        run_chunk(bad)
    assert Path(tmp_path).exists()


def test_an_agent_with_fewer_runs_plays_the_first_ones(reference, tmp_path):
    """``[[agents]] runs = N``: that agent plays runs 0..N-1 of each point, the same
    episodes (seeds, rows) as in a run where it plays them all; the others play all."""
    few = [dict(a, runs=2) if a["name"] == "sar" else a for a in CONFIG["agents"]]
    exp = experiment(agents=few)
    sar = next(a for a in exp.agents if a.name == "sar")
    assert exp.runs_of(sar) == 2 and sar.runs == 2
    per_point = sum(exp.runs_of(a) for a in exp.agents)
    assert exp.episodes() == len(exp.points) * per_point
    keys = [(c.agent, r) for c in plan_chunks(exp) for r in c.runs]
    assert sorted({r for a, r in keys if a == "sar"}) == [0, 1]
    assert sorted({r for a, r in keys if a == "uniform"}) == list(range(6))
    report = run_experiment(exp, tmp_path / "few", jobs=1, progress=False)
    assert report.ran == exp.episodes()
    df = rows(tmp_path / "few")
    ref = rows(reference)
    ref = ref[(ref["agent"] != "sar") | (ref["run"] < 2)].reset_index(drop=True)
    key = ["point", "agent", "run"]
    assert (
        df.sort_values(key)
        .reset_index(drop=True)
        .equals(ref.sort_values(key).reset_index(drop=True))
    )
    # the config's own run count (e.g. --runs, reduced mode) still caps it
    assert experiment(agents=few, runs=1).episodes() == len(experiment().pairs())


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_agent_runs_are_refused(bad):
    few = [dict(CONFIG["agents"][0], runs=bad)] + CONFIG["agents"][1:]
    with pytest.raises(ConfigError, match=r"agents\[0\]\.runs"):
        experiment(agents=few)
