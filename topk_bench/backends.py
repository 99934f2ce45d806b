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
  the parent. If a worker is killed (SIGKILL, the OOM killer), the pool breaks; the
  chunks that had not finished are resubmitted to a fresh pool, at most ``retries``
  times, then a :class:`BackendError` says so. Finished chunks are yielded once and
  never rerun, so every episode gives exactly one row.
* :class:`RayBackend` (``--backend ray``): one Ray task per chunk on a running cluster
  (``address``) or a local instance started (and stopped) here; Ray reruns the task of
  a dead worker (``retries`` times, then a :class:`BackendError`). Its ``session`` and
  ``stream`` also run an experiment's trainings as tasks (:mod:`topk_bench.models`).
  Ray is optional: ``pip install 'topk-bandit-envs[ray]'``.

Third-party agents: workers build them from their ``module:Class``
(:attr:`~topk_bench.episodes.Chunk.agent_target`), so a name given to
``agents.register`` at run time needs no registration in the workers. Process workers
see the parent's ``sys.path`` (fork: the same memory; spawn: multiprocessing passes
it). For Ray, the top-level package directory (or the ``.py`` file) of every agent
class that belongs to no installed distribution (:func:`local_agent_modules`) is
shipped as the job's ``py_modules`` when :class:`RayBackend` starts Ray (a local
instance, or ``--address`` of a cluster); in a Ray job the caller started, tasks get
their directories on ``PYTHONPATH`` (enough on one machine; on a cluster pass
``runtime_env={"py_modules": ...}`` to ``ray.init``). An agent from an installed
distribution must be installed on the cluster's nodes too.

Fault injection (tests): if the environment variable ``TOPK_BENCH_TEST_KILL`` names a
file holding a JSON object such as ``{"agent": "optmai", "run": 3}``, the worker that
starts the chunk matching it (every key given must match; ``run`` must be one of the
chunk's runs) deletes the file and kills itself with SIGKILL; with ``"always": true``
the file stays, and every attempt dies. Workers inherit the variable (Ray: set it
before the local instance starts).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from topk_bench.episodes import Chunk, run_chunk

__all__ = [
    "BackendError",
    "ChunkQueue",
    "local_agent_modules",
    "ProcessBackend",
    "RayBackend",
    "SerialBackend",
    "TaskList",
    "default_jobs",
    "make_backend",
]

Rows = list[dict[str, Any]]
KILL_ENV = "TOPK_BENCH_TEST_KILL"


class BackendError(RuntimeError):
    """A backend that cannot run (missing Ray, a pool that keeps breaking)."""


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _fault(chunk: Chunk) -> None:
    """Die here if :data:`KILL_ENV` asks for it (see the module docstring)."""
    path = os.environ.get(KILL_ENV)
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            want = json.load(fh)
    except (OSError, ValueError):
        return
    for key in ("experiment", "point", "agent"):
        if key in want and want[key] != getattr(chunk, key):
            return
    if "run" in want and want["run"] not in chunk.runs:
        return
    if not want.get("always"):
        try:
            os.remove(path)  # atomic: one worker only claims a single kill
        except FileNotFoundError:
            return
    os.kill(os.getpid(), signal.SIGKILL)


def run_task(chunk: Chunk) -> Rows:
    """What a worker runs: :func:`~topk_bench.episodes.run_chunk` (after the test hook)."""
    _fault(chunk)
    return run_chunk(chunk)


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
                        try:
                            pending[pool.submit(run_task, chunk)] = chunk
                        except BrokenProcessPool:  # a worker died since the last wait
                            retry.append(chunk)
                            broken = True
                            break
                    if broken:
                        break
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
                        f"a worker process died {breaks} times (killed, or out of memory; "
                        f"{self.retries} retries allowed); {len(queue) + len(retry)} chunks did "
                        f"not finish. Finished episodes are saved: rerun the same command to "
                        f"resume"
                    )
            finally:
                if not clean:
                    self._stop(pool)


#: top-level packages of this project (workers have them; never shipped to Ray).
_PROJECT = frozenset({"agents", "bandit_envs", "topk_bench"})


def local_agent_modules(chunks: Sequence[Chunk]) -> list[str]:
    """Paths Ray workers need to import the chunks' third-party agents (``py_modules``).

    For each distinct :attr:`~topk_bench.episodes.Chunk.agent_target` whose module
    belongs to no installed distribution (:func:`agents.registry.class_source`): its
    top-level package's directory, or its ``.py`` file for a single-file module.
    Modules of this project and of installed distributions are left out.
    """
    import importlib

    from agents.registry import class_source

    paths: list[str] = []
    for target in dict.fromkeys(c.agent_target for c in chunks if c.agent_target):
        module_name, _, attr = target.partition(":")
        top = module_name.split(".")[0]
        if top in _PROJECT or top == "__main__":
            continue
        cls: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            cls = getattr(cls, part)
        if not class_source(cls).get("local"):
            continue
        root = importlib.import_module(top)
        locations = list(getattr(root, "__path__", None) or [])
        if locations:  # a package: its directory
            path = locations[0]
        elif getattr(root, "__file__", None) and str(root.__file__).endswith(".py"):
            path = root.__file__
        else:
            continue
        path = os.path.abspath(path)
        if path not in paths:
            paths.append(path)
    return paths


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
        retries: how many times Ray reruns the task of a worker that died (its
            ``max_retries``); one more death is a :class:`BackendError`.
    """

    def __init__(
        self, address: str | None = None, jobs: int | None = None, retries: int = 3
    ) -> None:
        self.ray = _import_ray()
        self.address = address
        self.jobs = jobs
        self.retries = retries

    def _lost(self) -> tuple[type[BaseException], ...]:
        """Ray's errors for a task whose worker or node died (not the task's own errors)."""
        names = ("WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "ObjectLostError")
        exc = self.ray.exceptions
        return tuple(getattr(exc, n) for n in names if hasattr(exc, n))

    @contextlib.contextmanager
    def session(self, modules: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
        """Ray for the tasks of one phase: the instance this process initialised, else
        ``address`` (or a local instance, stopped at the end). Yields the task options:
        in a job the caller started, ``modules``' directories on the workers'
        ``PYTHONPATH`` (:func:`local_agent_modules`)."""
        ray = self.ray
        started = False
        options: dict[str, Any] = {}
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"address": self.address, "include_dashboard": False}
            if self.address is None:
                # A private local instance: no token auth (Ray >= 2.5x), this many CPUs.
                os.environ.setdefault("RAY_AUTH_MODE", "disabled")
                if self.jobs:
                    kwargs["num_cpus"] = self.jobs
            if modules:  # uploaded to the cluster, on every worker's path
                kwargs["runtime_env"] = {"py_modules": list(modules)}
            ray.init(**kwargs)
            started = True
        elif modules:
            # A job the caller started: its py_modules are fixed (Ray uploads local paths
            # only in ray.init). Workers on this machine find the modules through
            # PYTHONPATH; on a cluster, pass them to ray.init(runtime_env={"py_modules":
            # local_agent_modules(chunks)}) instead.
            dirs = [os.path.dirname(path) for path in modules]
            inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            path = os.pathsep.join(dict.fromkeys([*dirs, *inherited]))
            options["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        try:
            yield options
        finally:
            if started:
                ray.shutdown()

    def stream(
        self,
        fn: Callable[..., Any],
        queue: ChunkQueue | TaskList,
        options: Mapping[str, Any],
        describe: Callable[[Any], str],
        extra: tuple[Any, ...] = (),
    ) -> Iterator[tuple[Any, Any]]:
        """``fn(item, *extra)`` for every item ``queue.pop()`` hands out, as Ray tasks (one
        CPU each, at most twice ``jobs`` or the cluster's CPUs in flight); yields ``(item,
        result)`` as they finish, after ``queue.record(item, result)``. A task whose worker
        died ``retries + 1`` times is a :class:`BackendError` naming ``describe(item)``;
        closing the generator cancels the tasks in flight."""
        ray = self.ray
        remote = ray.remote(num_cpus=1, max_retries=self.retries, **options)(fn)
        lost = self._lost()
        limit = self.jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        limit = max(limit * 2, 2)  # keep every CPU busy while results travel back
        refs: dict[Any, Any] = {}
        try:
            while queue or refs:
                while queue and len(refs) < limit:
                    item = queue.pop()
                    refs[remote.remote(item, *extra)] = item
                ready, _ = ray.wait(list(refs), num_returns=1)
                for ref in ready:
                    item = refs.pop(ref)
                    try:
                        result = ray.get(ref)
                    except lost as err:
                        raise BackendError(
                            f"the Ray worker running {describe(item)} died "
                            f"{self.retries + 1} times (killed, or out of memory; "
                            f"{self.retries} retries allowed): {type(err).__name__}. "
                            f"Finished work is saved: rerun the same command to resume"
                        ) from err
                    queue.record(item, result)
                    yield item, result
        finally:
            for ref in refs:
                with contextlib.suppress(Exception):  # best effort on shutdown
                    ray.cancel(ref, force=True)

    def run(self, chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, Rows]]:
        with self.session(local_agent_modules(chunks)) as options:
            yield from self.stream(
                run_task,
                ChunkQueue(chunks),
                options,
                lambda c: f"chunk {c.point!r}/{c.agent!r} runs {c.runs[0]}..{c.runs[-1]}",
            )


class TaskList:
    """A queue for :meth:`RayBackend.stream` that hands out ``items`` in order."""

    def __init__(self, items: Sequence[Any]) -> None:
        self._items = list(items)

    def __len__(self) -> int:
        return len(self._items)

    def pop(self) -> Any:
        return self._items.pop(0)

    def record(self, item: Any, result: Any) -> None:
        """(Nothing to learn.)"""


def make_backend(name: str, jobs: int | None = None, address: str | None = None) -> Any:
    """``"process"`` (``jobs == 1``: serial) or ``"ray"``."""
    if name == "process":
        jobs = jobs or default_jobs()
        return SerialBackend() if jobs == 1 else ProcessBackend(jobs)
    if name == "ray":
        return RayBackend(address=address, jobs=jobs)
    raise BackendError(f"unknown backend {name!r}: use 'process' or 'ray'")
