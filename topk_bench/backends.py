"""Where chunks run: this process, a pool of local processes, or Ray tasks.

Every backend has one method, ``run(chunks)``, a generator that yields
``(chunk, rows)`` as chunks finish, in any order (the runner writes each chunk's rows
at once, so a finished chunk is never lost). Closing the generator (Ctrl-C, an error
in another chunk) cancels what has not started and stops the workers.

* :class:`SerialBackend` (``--jobs 1``): no pool, no pickling.
Both pools take chunks from a :class:`ChunkQueue` (costliest first, learnt online) and
keep only ``2 * jobs`` chunks in flight.

* :class:`ProcessBackend` (default): ``concurrent.futures.ProcessPoolExecutor`` on this
  machine. Workers ignore SIGINT (the parent handles Ctrl-C) and, on Linux, die with
  the parent. If a worker is killed, the pool breaks; the chunks that had not finished
  are resubmitted to a fresh pool (``retries`` times) and finished rows are kept.
* :class:`RayBackend` (``--backend ray``): one Ray task per chunk on a running cluster
  (``address``) or a local instance started (and stopped) here; Ray retries tasks of
  dead workers. Ray is optional: ``pip install 'topk-bandit-envs[ray]'``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from topk_bench.episodes import Chunk, run_chunk

__all__ = [
    "BackendError",
    "ChunkQueue",
    "ProcessBackend",
    "RayBackend",
    "SerialBackend",
    "default_jobs",
    "make_backend",
]

Rows = list[dict[str, Any]]


class BackendError(RuntimeError):
    """A backend that cannot run (missing Ray, a pool that keeps breaking)."""


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class SerialBackend:
    """Run chunks one after the other in this process."""

    jobs = 1

    def run(self, chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, Rows]]:
        for chunk in chunks:
            yield chunk, run_chunk(chunk)


class ChunkQueue:
    """Hands out chunks costliest first, learning the costs as chunks finish.

    Episode costs differ by orders of magnitude between agents (a LUCB step is far
    dearer than a uniform round) and grow with the budget, so a static order can
    leave one worker busy with a long chunk while the others idle at the end. The
    queue predicts a chunk's time as ``episodes * size * rate[agent]``, where ``size``
    is the point's budget (else its number of arms) and ``rate`` the agent's measured
    seconds per episode and size unit; it hands out first one chunk of every agent
    it has not measured yet (in plan order), then the chunk with the largest
    prediction (longest-processing-time-first). The order changes only when chunks
    run, never the rows.
    """

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._groups: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            self._groups.setdefault(chunk.agent, []).append(chunk)
        for group in self._groups.values():
            group.sort(key=lambda c: -len(c) * self.size(c))  # stable: plan order among equals
        self._time: dict[str, float] = {}
        self._units: dict[str, float] = {}
        self._started: set[str] = set()

    @staticmethod
    def size(chunk: Chunk) -> float:
        """The point's size: its budget, else its number of arms, else 1."""
        env = chunk.env_kwargs
        for key in ("budget", "n_arms"):
            value = env.get(key)
            if isinstance(value, (int, float)) and value > 0:
                return float(value)
        return 1.0

    def __len__(self) -> int:
        return sum(len(g) for g in self._groups.values())

    def pop(self) -> Chunk:
        """The next chunk to run (raises IndexError when empty)."""
        best, best_cost = None, -1.0
        for agent, group in self._groups.items():
            if not group:
                continue
            if agent not in self._units:
                if agent not in self._started:  # not measured, none running: learn it now
                    best = agent
                    break
                cost = 0.0  # running but not measured yet: wait for its first result
            else:
                cost = (
                    len(group[0])
                    * self.size(group[0])
                    * self._time[agent]
                    / max(self._units[agent], 1e-12)
                )
            if cost > best_cost:
                best, best_cost = agent, cost
        if best is None:
            raise IndexError("no chunk left")
        self._started.add(best)
        return self._groups[best].pop(0)

    def record(self, chunk: Chunk, rows: Rows) -> None:
        """Learn from a finished chunk (its episodes' wall times)."""
        seconds = sum(float(r.get("wall_time", 0.0)) for r in rows)
        self._time[chunk.agent] = self._time.get(chunk.agent, 0.0) + seconds
        self._units[chunk.agent] = self._units.get(chunk.agent, 0.0) + len(chunk) * self.size(chunk)


def _init_worker() -> None:
    """Pool worker setup: leave Ctrl-C to the parent; SIGTERM kills; die with the parent (Linux)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker may inherit the CLI's handler
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:  # pragma: no cover - unusual libc
            pass
    import agents  # noqa: F401  (import once per worker, not per chunk)
    import bandit_envs  # noqa: F401


class ProcessBackend:
    """A pool of ``jobs`` local worker processes.

    Args:
        jobs: number of worker processes (default: the core count).
        start_method: ``"fork"`` (default on Linux: fast start, and agents registered
            at run time with ``agents.register`` are visible to workers), ``"spawn"``
            or ``"forkserver"``.
        retries: how many times a broken pool (a killed worker) is replaced.
    """

    def __init__(
        self, jobs: int | None = None, start_method: str | None = None, retries: int = 2
    ) -> None:
        self.jobs = jobs or default_jobs()
        if start_method is None:
            start_method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.start_method = start_method
        self.retries = retries

    def _pool(self) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context(self.start_method)
        return ProcessPoolExecutor(max_workers=self.jobs, mp_context=ctx, initializer=_init_worker)

    @staticmethod
    def _stop(pool: ProcessPoolExecutor) -> None:
        procs = (
            list(getattr(pool, "_processes", {}).values())
            if getattr(pool, "_processes", None)
            else []
        )
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:  # our own workers: stop chunks that are still running
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=5)

    def run(self, chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, Rows]]:
        queue = ChunkQueue(chunks)
        limit = 2 * self.jobs  # in flight: every worker busy, the rest reorderable
        breaks = 0
        retry: list[Chunk] = []
        while queue or retry:
            pool = self._pool()
            clean = False
            try:
                pending: dict[Future, Chunk] = {}
                broken = False
                while (queue or retry or pending) and not broken:
                    while (queue or retry) and len(pending) < limit:
                        chunk = retry.pop() if retry else queue.pop()
                        pending[pool.submit(run_chunk, chunk)] = chunk
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        chunk = pending.pop(fut)
                        try:
                            rows = fut.result()
                        except BrokenProcessPool:
                            broken = True
                            retry.append(chunk)  # resubmitted to the next pool
                            continue
                        queue.record(chunk, rows)
                        yield chunk, rows
                if not broken:
                    clean = True
                    pool.shutdown(wait=True)
                    return
                retry.extend(pending.values())  # submitted but unfinished: also resubmitted
                pending.clear()
                breaks += 1
                if breaks > self.retries:
                    raise BackendError(
                        f"a worker process died {breaks} times (killed, or out of memory); "
                        f"{len(queue) + len(retry)} chunks did not finish. Finished episodes are "
                        f"saved: rerun the same command to resume"
                    )
            finally:
                if not clean:
                    self._stop(pool)


def _import_ray() -> Any:
    try:
        import ray
    except ModuleNotFoundError as err:
        raise BackendError(
            "--backend ray needs Ray, which is not installed: pip install 'topk-bandit-envs[ray]'"
        ) from err
    return ray


class RayBackend:
    """Chunks as Ray tasks (one CPU each).

    Args:
        address: a running cluster (``"auto"``, ``"ray://host:10001"``, ...); ``None``
            uses the instance this process already initialised, else starts a local one.
        jobs: most tasks in flight (default: the cluster's CPU count).
    """

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        self.ray = _import_ray()
        self.address = address
        self.jobs = jobs

    def run(self, chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, Rows]]:
        ray = self.ray
        started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"address": self.address, "include_dashboard": False}
            if self.address is None:
                # A private local instance: no token auth (Ray >= 2.5x), this many CPUs.
                os.environ.setdefault("RAY_AUTH_MODE", "disabled")
                if self.jobs:
                    kwargs["num_cpus"] = self.jobs
            ray.init(**kwargs)
            started = True
        remote = ray.remote(num_cpus=1, max_retries=3)(run_chunk)
        limit = self.jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        limit = max(limit * 2, 2)  # keep every CPU busy while results travel back
        queue = ChunkQueue(chunks)
        refs: dict[Any, Chunk] = {}
        try:
            while queue or refs:
                while queue and len(refs) < limit:
                    chunk = queue.pop()
                    refs[remote.remote(chunk)] = chunk
                ready, _ = ray.wait(list(refs), num_returns=1)
                for ref in ready:
                    chunk = refs.pop(ref)
                    rows = ray.get(ref)
                    queue.record(chunk, rows)
                    yield chunk, rows
        finally:
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - best effort on shutdown
                    pass
            if started:
                ray.shutdown()


def make_backend(name: str, jobs: int | None = None, address: str | None = None) -> Any:
    """``"process"`` (``jobs == 1``: serial) or ``"ray"``."""
    if name == "process":
        jobs = jobs or default_jobs()
        return SerialBackend() if jobs == 1 else ProcessBackend(jobs)
    if name == "ray":
        return RayBackend(address=address, jobs=jobs)
    raise BackendError(f"unknown backend {name!r}: use 'process' or 'ray'")
