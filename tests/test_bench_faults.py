"""Runner faults: killed workers, damaged parts, unwritable or full disks, two runs at once.

Every episode must end up as exactly one row, equal to the row of an undisturbed run;
every failure must be a clear error naming the directory, raised before work is lost.
Workers are killed at a chosen chunk through the backends' test hook
(``TOPK_BENCH_TEST_KILL``), so nothing here races against the scheduler.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

import pytest

from topk_bench import backends
from topk_bench.backends import KILL_ENV, BackendError, ProcessBackend
from topk_bench.cli import main
from topk_bench.config import load
from topk_bench.episodes import TIMING_COLUMNS
from topk_bench.run import plan_chunks, run_experiment
from topk_bench.store import ResultStore, StoreError, StoreWarning, read_results

CONFIG = {
    "name": "fault-test",
    "metrics": ["aggregate_regret"],
    "runs": 6,
    "env": {"n_arms": 12, "k": 3, "budget": "=15*n"},
    "agents": [{"name": "uniform"}, {"name": "optmai"}],
    "sweeps": [
        {"panel": "random", "env": {"instance": "uniform-random"}, "vary": {"k": [2, 3]}, "x": "k"}
    ],
}
TOTAL = 2 * 2 * 6


@pytest.fixture(scope="module")
def exp():
    return load(CONFIG)


@pytest.fixture(scope="module")
def reference(exp, tmp_path_factory):
    """An undisturbed serial run: the rows every faulty run must end with."""
    out = tmp_path_factory.mktemp("ref")
    run_experiment(exp, out, jobs=1, progress=False)
    return out


def rows(path):
    return read_results(path).drop(columns=list(TIMING_COLUMNS))


def assert_same_rows(reference, out) -> None:
    a, b = rows(reference), rows(out)
    assert len(b) == TOTAL
    assert a.equals(b), a.compare(b) if a.shape == b.shape else (a.shape, b.shape)


def raw_keys(out) -> Counter:
    """(point, agent, run) of every row of every part, duplicates included."""
    import pyarrow.parquet as pq

    keys: Counter = Counter()
    for f in ResultStore(out).part_files():
        t = pq.read_table(f, columns=["point", "agent", "run"]).to_pylist()
        keys.update((r["point"], r["agent"], r["run"]) for r in t)
    return keys


class Yielded:
    """``on_chunk`` callback that counts every episode the backend hands back."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.keys: Counter = Counter()
        self.chunks = 0
        self.stop_after = stop_after

    def __call__(self, chunk) -> None:
        self.keys.update((chunk.point, chunk.agent, r) for r in chunk.runs)
        self.chunks += 1
        if self.stop_after is not None and self.chunks == self.stop_after:
            raise KeyboardInterrupt


def never(chunk) -> None:
    raise AssertionError(f"an episode ran: {chunk.point} {chunk.agent} {chunk.runs}")


def kill_at(tmp_path, monkeypatch, **want):
    """Arm the test hook: the worker that starts the chunk matching ``want`` SIGKILLs itself."""
    marker = tmp_path / "kill.json"
    marker.write_text(json.dumps(want))
    monkeypatch.setenv(KILL_ENV, str(marker))
    return marker


# ------------------------------------------------------------------- killed workers
def test_sigkilled_worker_chunk_is_rerun_rows_exactly_once(exp, reference, tmp_path, monkeypatch):
    marker = kill_at(tmp_path, monkeypatch, agent="optmai", run=2)
    seen = Yielded()
    out = tmp_path / "o"
    report = run_experiment(
        exp,
        out,
        backend=ProcessBackend(2, start_method="fork"),
        chunk_size=2,
        flush_interval=0,
        progress=False,
        on_chunk=seen,
    )
    assert not marker.exists()  # a worker did die, in the middle of the run
    assert report.ran == TOTAL
    assert sorted(seen.keys.values()) == [1] * TOTAL  # each episode handed back once
    assert sorted(raw_keys(out).values()) == [1] * TOTAL
    assert_same_rows(reference, out)


def test_worker_dying_at_every_retry_is_a_clear_error(exp, reference, tmp_path, monkeypatch):
    kill_at(tmp_path, monkeypatch, agent="optmai", run=0, always=True)
    out = tmp_path / "o"
    seen = Yielded()
    with pytest.raises(BackendError, match=r"died 2 times .*1 retries allowed.*rerun"):
        run_experiment(
            exp,
            out,
            backend=ProcessBackend(2, start_method="fork", retries=1),
            chunk_size=2,
            flush_interval=0,
            progress=False,
            on_chunk=seen,
        )
    assert not (out / ".lock").exists()
    saved = raw_keys(out)
    assert set(saved) == set(seen.keys) and max(saved.values(), default=1) == 1
    assert not any(a == "optmai" and r == 0 for _, a, r in saved)
    monkeypatch.delenv(KILL_ENV)
    again = run_experiment(exp, out, jobs=2, progress=False)
    assert again.ran == TOTAL - len(saved)
    assert_same_rows(reference, out)


class _FakePool:
    """Runs tasks inline; after ``ok`` submissions it is broken (a worker died)."""

    def __init__(self, ok: int | None) -> None:
        self.ok = ok

    def submit(self, fn, *args):
        if self.ok is not None:
            if self.ok == 0:
                raise BrokenProcessPool("a child process terminated abruptly")
            self.ok -= 1
        fut: Future = Future()
        fut.set_result(fn(*args))
        return fut

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def test_pool_broken_between_wait_and_submit_resubmits(exp, monkeypatch):
    """A worker may die after ``wait`` returns: ``submit`` then raises BrokenProcessPool."""
    pools = iter([_FakePool(ok=3), _FakePool(ok=None)])
    monkeypatch.setattr(ProcessBackend, "_pool", lambda self: next(pools))
    chunks = plan_chunks(exp, chunk_size=2)
    got = Counter()
    for chunk, chunk_rows in ProcessBackend(2).run(chunks):
        assert [r["run"] for r in chunk_rows] == list(chunk.runs)
        got.update((chunk.point, chunk.agent, r) for r in chunk.runs)
    assert sorted(got.values()) == [1] * TOTAL


def test_kill_hook_matches_only_its_chunk(exp, tmp_path, monkeypatch):
    marker = kill_at(tmp_path, monkeypatch, agent="optmai", run=4)
    for chunk in plan_chunks(exp, chunk_size=2):
        if not (chunk.agent == "optmai" and 4 in chunk.runs):
            backends._fault(chunk)  # would kill this test process if it matched
    assert marker.exists()

    def fake_kill(pid, sig):
        raise SystemExit(f"killed {pid} with {sig}")

    monkeypatch.setattr(backends.os, "kill", fake_kill)
    target = next(c for c in plan_chunks(exp, chunk_size=2) if c.agent == "optmai")
    target = type(target)(**{**target.__dict__, "runs": (4, 5)})
    with pytest.raises(SystemExit):
        backends._fault(target)
    assert not marker.exists()


# ------------------------------------------------------------------- damaged parts
def _interrupted_run(exp, out, chunks: int) -> list:
    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            exp,
            out,
            jobs=1,
            chunk_size=2,
            flush_interval=0,
            progress=False,
            on_chunk=Yielded(stop_after=chunks),
        )
    parts = ResultStore(out).part_files()
    assert len(parts) == chunks
    return parts


def test_corrupt_parts_are_reported_moved_aside_and_rerun(exp, reference, tmp_path):
    out = tmp_path / "o"
    truncated, flipped, wrong, intact = _interrupted_run(exp, out, 4)
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])  # a torn write (no rename, no fsync)
    data = bytearray(flipped.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 4] = b"\xff\x00\xfe\x01"  # bit rot
    flipped.write_bytes(bytes(data))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"point": ["p"], "agent": ["a"]}), wrong)  # not a part of ours

    with pytest.warns(StoreWarning) as caught:  # readers skip, never read them as data
        df = read_results(out)
    assert len(df) == 2 and set(df["run"]) <= {0, 1, 2, 3, 4, 5}
    assert {str(p) for p in (truncated, flipped, wrong)} <= {
        str(w.message).split(": ")[0] for w in caught
    }
    assert all(p.exists() for p in (truncated, flipped, wrong))  # reading moves nothing

    seen = Yielded()
    with pytest.warns(StoreWarning, match="moved to .*corrupt") as caught:
        report = run_experiment(exp, out, jobs=1, progress=False, on_chunk=seen)
    named = {str(w.message).split(": ")[0] for w in caught}
    assert named == {str(truncated), str(flipped), str(wrong)}
    for p in (truncated, flipped, wrong):
        assert not p.exists()
        assert p.with_name(p.name + ".corrupt").exists()  # kept for a post-mortem
    assert report.ran == TOTAL - 2  # only the intact part's two episodes were kept
    assert sorted(seen.keys.values()) == [1] * (TOTAL - 2)
    assert sorted(raw_keys(out).values()) == [1] * TOTAL
    assert_same_rows(reference, out)
    assert intact not in ResultStore(out).part_files()  # compacted into one part


# ------------------------------------------------------------- unwritable or full disk
def test_unwritable_out_fails_before_any_work(exp, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out = blocker / "results"
    with pytest.raises(StoreError, match=re.escape(str(out)) + ".*another --out"):
        run_experiment(exp, out, jobs=1, progress=False, on_chunk=never)

    config = tmp_path / "c.yaml"  # JSON is YAML
    config.write_text(json.dumps(CONFIG))
    code = main(["run", str(config), "--out", str(out), "--no-progress", "--no-report"])
    err = capsys.readouterr().err
    assert code == 1 and str(out) in err and "Traceback" not in err


def test_read_only_directory_fails_before_any_work(exp, tmp_path, monkeypatch):
    out = tmp_path / "o"
    real_open = open

    def read_only(path, *args, **kwargs):
        if ".probe-" in str(path):
            raise PermissionError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", read_only)
    with pytest.raises(StoreError, match=re.escape(f"{out} is not writable") + ".*Read-only"):
        run_experiment(exp, out, jobs=1, progress=False, on_chunk=never)
    assert not (out / ".lock").exists()
    assert not list((out / "parts").iterdir())


def test_full_disk_before_the_run_fails_at_once(exp, tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10, 10, 0))
    with pytest.raises(StoreError, match="only 0 bytes free"):
        run_experiment(exp, tmp_path / "o", jobs=1, progress=False, on_chunk=never)


def test_disk_full_during_run_stops_keeps_parts_and_resumes(exp, reference, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    real_write = pq.write_table
    calls = []

    def fills_up(table, where, **kwargs):
        calls.append(table.num_rows)
        if len(calls) > 2:  # the third part hits a full disk, half written
            where.write(b"PAR1 half a part")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(table, where, **kwargs)

    monkeypatch.setattr(pq, "write_table", fills_up)
    out = tmp_path / "o"
    seen = Yielded()
    with pytest.raises(StoreError) as info:
        run_experiment(
            exp, out, jobs=1, chunk_size=2, flush_interval=0, progress=False, on_chunk=seen
        )
    msg = str(info.value)
    assert "No space left on device" in msg and str(out / "parts") in msg
    assert f"4 of {TOTAL} episodes are saved" in msg and "rerun the same command" in msg
    assert seen.chunks == 2 and len(calls) == 3  # stopped at the failed write, not later
    parts = ResultStore(out).part_files()
    assert len(parts) == 2 and not list((out / "parts").glob("*.tmp"))
    assert len(read_results(out)) == 4
    assert not (out / ".lock").exists()

    config = tmp_path / "c.yaml"  # JSON is YAML  # the CLI says the same, without a traceback
    config.write_text(json.dumps(CONFIG))
    calls.clear()
    r = main(["run", str(config), "--out", str(out), "--jobs", "1", "--no-progress",
              "--no-report", "--chunk-size", "2", "--flush-interval", "0"])  # fmt: skip
    assert r == 1 and len(read_results(out)) == 8

    monkeypatch.setattr(pq, "write_table", real_write)
    report = run_experiment(exp, out, jobs=1, progress=False)
    assert report.ran == TOTAL - 8
    assert_same_rows(reference, out)


# --------------------------------------------------------------------- two runs at once
def test_second_run_on_the_same_directory_is_refused(exp, reference, tmp_path):
    out = tmp_path / "o"
    holder = ResultStore(out)
    holder.lock()  # a run in progress (this process, another file descriptor)
    try:
        busy = re.escape(f"{out} is in use") + f".*pid {os.getpid()}"
        with pytest.raises(StoreError, match=busy):
            run_experiment(exp, out, jobs=1, progress=False)
        config = tmp_path / "c.yaml"  # JSON is YAML
        config.write_text(json.dumps(CONFIG))
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "topk_bench.cli",
                "run",
                str(config),
                "--out",
                str(out),
                "--jobs",
                "1",
                "--no-progress",
                "--no-report",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1, proc.stderr
        assert f"{out} is in use" in proc.stderr and f"pid {os.getpid()}" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert not ResultStore(out).part_files()  # nobody wrote a row
    finally:
        holder.unlock()
    assert run_experiment(exp, out, jobs=1, progress=False).ran == TOTAL
    assert_same_rows(reference, out)


def test_lock_file_of_a_dead_run_is_not_a_lock(exp, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    # a run killed with SIGKILL leaves its .lock; its pid may belong to a live process now
    (out / ".lock").write_text(f"{os.getppid()}\n")
    assert run_experiment(exp, out, jobs=1, progress=False).ran == TOTAL
    assert not (out / ".lock").exists()
