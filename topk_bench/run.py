"""Run an experiment: plan the missing episodes, chunk them, run them, store every row.

:func:`run_experiment` is the whole pipeline behind ``topk-bench run``:

1. take the results directory (exclusive lock, writability check, unreadable parts
   moved aside, manifest check: see :mod:`topk_bench.store`), and train the learned
   policies the experiment declares that it does not hold yet (``[[train]]``,
   :mod:`topk_bench.models`);
2. list the episodes ``(point, agent, run)`` with ``run < runs`` that have no row yet
   (a rerun of the same command therefore only does what is missing);
3. cut them into :class:`~topk_bench.episodes.Chunk` s of one (point, agent) each, so
   that a task carries many small episodes (scheduling overhead stays small);
4. run the chunks on a backend (:mod:`topk_bench.backends`) and write the rows of
   finished chunks as Parquet parts, with a tqdm progress bar (episodes, rate, ETA);
5. when everything is done, merge the parts into one file.

Compilation: a compiled agent's first episode in a worker process compiles its code, or
loads it from numba's on-disk cache. When some agent of the plan has no cached code for
the current sources (:func:`uncompiled_agents`: a first run, or one after an update),
the progress bar is preceded by the line ``compiling N agents (first run only: ...)``
and shows ``compiling`` instead of an ETA until every such agent has finished a chunk;
its ETA then comes from the rate measured since (the compile time would otherwise make
it minutes too long).

Rows of finished chunks are written at most ``flush_interval`` seconds after they
arrive (one part per flush: fewer, larger files than one per chunk), and always
before :func:`run_experiment` returns or raises: Ctrl-C, a failed episode or a killed
worker lose no finished row. Only a runner killed without warning (SIGKILL, power
loss) can lose the rows of its last ``flush_interval`` seconds (``0``: write every
chunk at once); a rerun recomputes them, with the same seeds.

If a part cannot be written (disk full, directory gone read-only), the run stops at
once (no more episodes are computed only to be lost) with a :class:`StoreError`
that names the directory, the OS error and how many episodes are saved; every part
written before stays, and a rerun resumes from them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topk_bench import seeds
from topk_bench.backends import RayBackend, make_backend
from topk_bench.config import ConfigError, Experiment
from topk_bench.episodes import Chunk
from topk_bench.models import model_path, resolve_agent, train_missing, trained_model
from topk_bench.store import ResultStore, StoreError
from topk_bench.tables import wrap

__all__ = [
    "FITTED",
    "RunReport",
    "default_chunk_size",
    "plan_chunks",
    "refit_config",
    "run_experiment",
    "uncompiled_agents",
]

MAX_CHUNK = 100


@dataclass(frozen=True)
class RunReport:
    """What a call of :func:`run_experiment` did.

    ``wall_time`` is the whole call; ``run_time`` the part spent running episodes
    (from the first chunk submitted to the last row written: excludes loading the
    results directory and the final merge of the parts).
    """

    out: Path
    planned: int
    already_done: int
    ran: int
    chunks: int
    wall_time: float
    run_time: float = 0.0

    @property
    def episodes_per_second(self) -> float:
        """Episodes run per second of wall time (0 if nothing ran)."""
        return self.ran / self.wall_time if self.ran and self.wall_time > 0 else 0.0


def default_chunk_size(episodes: int, jobs: int) -> int:
    """About 8 chunks per worker (load balance), at most :data:`MAX_CHUNK` episodes each."""
    return max(1, min(MAX_CHUNK, math.ceil(episodes / (8 * max(1, jobs)))))


def plan_chunks(
    exp: Experiment,
    *,
    base_seed: int = 0,
    done: set[tuple[str, str, int]] | None = None,
    chunk_size: int | None = None,
    jobs: int = 1,
) -> list[Chunk]:
    """The chunks of the episodes of ``exp`` that are not in ``done``.

    Chunks are interleaved across (point, agent) pairs (first chunk of every pair,
    then the second, ...), so that partial results cover every pair early.
    """
    done = done or set()
    todo: list[tuple[Any, Any, list[int]]] = []
    for point, agent in exp.pairs():
        runs = [r for r in range(exp.runs_of(agent)) if (point.label, agent.label, r) not in done]
        if runs:
            todo.append((point, agent, runs))
    total = sum(len(r) for _, _, r in todo)
    size = chunk_size or default_chunk_size(total, jobs)
    per_pair = []
    for point, agent, runs in todo:
        chunks = []
        for start in range(0, len(runs), size):
            part = tuple(runs[start : start + size])
            chunks.append(
                Chunk(
                    experiment=exp.name,
                    point=point.label,
                    panel=point.panel,
                    x=point.x,
                    x_value=point.x_value,
                    env_id=point.env_id,
                    env_kwargs=dict(point.env_kwargs),
                    agent=agent.label,
                    agent_name=agent.name,
                    agent_params={**agent.params, **point.agent_params},
                    agent_target=agent.target,
                    runs=part,
                    env_seeds=tuple(
                        seeds.env_seed(exp.name, point.seed_name, r, base_seed) for r in part
                    ),
                    agent_seeds=tuple(
                        seeds.agent_seed(exp.name, point.seed_name, r, agent.label, base_seed)
                        for r in part
                    ),
                )
            )
        per_pair.append(chunks)
    out = []
    for i in range(max((len(c) for c in per_pair), default=0)):
        out.extend(c[i] for c in per_pair if i < len(c))
    return out


def run_experiment(
    exp: Experiment,
    out: str | Path,
    *,
    jobs: int | None = None,
    backend: str | Any = "process",
    address: str | None = None,
    base_seed: int = 0,
    chunk_size: int | None = None,
    progress: bool = True,
    flush_interval: float = 1.0,
    on_chunk: Callable[[Chunk], None] | None = None,
    retrain: bool = False,
) -> RunReport:
    """Run the episodes of ``exp`` that ``out`` does not hold yet.

    Args:
        exp: a loaded experiment (:func:`topk_bench.config.load`).
        out: the results directory (created if needed).
        jobs: worker processes, or most Ray tasks in flight (default: all cores).
        backend: ``"process"``, ``"ray"``, or a backend object with ``run(chunks)``.
        address: Ray cluster address (``--address``).
        base_seed: mixed into every seed (``--seed``).
        chunk_size: episodes per task (default: :func:`default_chunk_size`).
        progress: show a tqdm progress bar.
        flush_interval: longest time (s) finished rows wait before being written.
        on_chunk: called after each chunk finishes (tests, monitoring).
        retrain: train the experiment's models even when shipped ones match
            (:func:`topk_bench.models.train_missing`).

    Results do not depend on ``jobs``, ``backend`` or ``chunk_size``.
    """
    store = ResultStore(out)
    store.lock()
    start = time.perf_counter()
    try:
        store.quarantine()
        store.merge_manifest(exp.describe(), base_seed)
        done = store.done()
        runner = (
            make_backend(backend, jobs=jobs, address=address)
            if isinstance(backend, str)
            else backend
        )
        n_jobs = getattr(runner, "jobs", None) or jobs or 1
        if exp.train:
            exp = _with_models(
                exp,
                out,
                done,
                jobs or os.cpu_count() or 1,
                base_seed,
                progress,
                retrain,
                ray=runner if isinstance(runner, RayBackend) else None,
            )
        chunks = plan_chunks(
            exp, base_seed=base_seed, done=done, chunk_size=chunk_size, jobs=n_jobs
        )
        planned = sum(len(c) for c in chunks)
        total = exp.episodes()
        already = total - planned
        ran = written = 0
        compiling = set(uncompiled_agents(chunks)) if chunks and progress else set()
        if compiling:
            print(_compiling_line(compiling, chunks), file=sys.stderr, flush=True)
        bar = _progress(total, already, exp.name, progress, compiling) if chunks else None
        buffer: list[dict[str, Any]] = []
        write_error: StoreError | None = None

        def flush() -> None:
            nonlocal buffer, written, write_error
            if buffer and write_error is None:
                try:
                    store.write(buffer)
                except StoreError as err:
                    write_error = err
                    raise
                written += len(buffer)
                buffer = []

        last_flush = run_start = time.monotonic()
        try:
            gen = runner.run(chunks)
            try:
                for chunk, rows in gen:
                    buffer.extend(rows)
                    ran += len(rows)
                    if time.monotonic() - last_flush >= flush_interval:
                        flush()  # a failed write stops the run here: the workers stop below
                        last_flush = time.monotonic()
                    if bar is not None:
                        bar.update(len(rows))
                        bar.finished(chunk.agent)
                    if on_chunk is not None:
                        on_chunk(chunk)
            finally:
                gen.close()
        except StoreError as err:
            if err is not write_error:
                raise
        finally:
            with contextlib.suppress(StoreError):  # reported below
                flush()  # also on Ctrl-C and errors: finished rows are kept
            run_time = time.monotonic() - run_start
            if bar is not None:
                bar.close()
            if write_error is not None:  # also replaces a Ctrl-C: its message would be wrong
                raise StoreError(
                    f"{write_error}. The run stopped: {already + written} of {total} episodes "
                    f"are saved in {out} ({ran - written} finished episodes could not be "
                    f"written); free some space (or fix the directory) and rerun the same "
                    f"command to resume"
                ) from write_error
        if ran == planned:
            store.compact()
        return RunReport(
            Path(out), planned, already, ran, len(chunks), time.perf_counter() - start, run_time
        )
    finally:
        store.unlock()


def _with_models(
    exp: Experiment,
    out: str | Path,
    done: set[tuple[str, str, int]],
    jobs: int,
    base_seed: int,
    progress: bool,
    retrain: bool = False,
    ray: RayBackend | None = None,
) -> Experiment:
    """Train (or copy shipped) models ``exp`` declares that ``out`` lacks and some point
    plays (a reduced run plays a subset); point agents at them."""
    playing = {agent.name for _, agent in exp.pairs()}
    plays = {name: trained_model(name, exp.train) for name in playing}
    needed = [s for s in exp.train if any(f and f[0] is s for f in plays.values())]
    for spec in needed:
        if model_path(out, spec.model).exists():
            continue
        users = {
            a.label
            for a in exp.agents
            if (found := trained_model(a.name, exp.train)) and found[0] is spec
        }
        if any(agent in users for _, agent, _ in done):
            raise StoreError(
                f"{out}: episodes of {sorted(users)} were played by model {spec.model!r}, "
                f"whose file {model_path(out, spec.model)} is gone: a new model would mix "
                f"with the old one's rows; restore the file or use another --out"
            )
    train_missing(
        needed,
        exp.name,
        out,
        jobs=jobs,
        base_seed=base_seed,
        progress=progress,
        retrain=retrain,
        ray=ray,
    )
    agents = tuple(
        dataclasses.replace(a, name=resolve_agent(a.name, exp.train, out)) for a in exp.agents
    )
    return dataclasses.replace(exp, agents=agents)


def _compiled_dispatcher_cached(dispatcher: Any) -> bool | None:
    """Whether numba has this dispatcher's code: compiled in this process (forked workers
    inherit it) or in its on-disk cache for the current sources; None if unknown."""
    if getattr(dispatcher, "overloads", None):
        return True
    try:
        # numba's cache index, {} when absent or stale (a source stamp of other sources)
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # not a caching dispatcher, or numba's internals changed
        return None


def uncompiled_agents(chunks: Sequence[Chunk]) -> list[str]:
    """Labels of the chunks' agents whose compiled episode loop numba has neither compiled
    in this process nor cached on disk for the current sources (their first episode in a
    worker compiles it), in plan order. Agents without compiled code (Python agents,
    learned policies) and agents whose state cannot be told are left out."""
    import agents

    cold: list[str] = []
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.agent in seen:
            continue
        seen.add(chunk.agent)
        try:
            cls = agents.agent_class(chunk.agent_target or chunk.agent_name)
        except Exception:  # a saved policy (ppo:PATH), or a name only workers resolve
            continue
        dispatcher = getattr(cls, "episode_kernel", None)
        if dispatcher is not None and _compiled_dispatcher_cached(dispatcher) is False:
            cold.append(chunk.agent)
    return cold


def _compiling_line(compiling: set[str], chunks: Sequence[Chunk]) -> str:
    """``compiling 6 agents (first run only: ...)...``, naming them when not all are."""
    every = list(dict.fromkeys(c.agent for c in chunks))
    which = f"{len(compiling)} agent{'s' if len(compiling) > 1 else ''}"
    if len(compiling) < len(every):
        names = ", ".join(a for a in every if a in compiling)
        which = f"{len(compiling)} of {len(every)} agents, {names},"
    return wrap(
        f"compiling {which} (first run only: numba caches the compiled code for later runs)..."
    )


def _progress(
    total: int, initial: int, name: str, enabled: bool, compiling: set[str] = frozenset()
) -> Any:
    """A tqdm bar of episodes; while the agents in ``compiling`` have not all finished a
    chunk it shows ``compiling`` instead of an ETA, and its ETA then uses the rate since."""
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:  # pragma: no cover - depends on the install
        return None

    class _Bar(tqdm):  # no monitor thread: worker processes may be forked after this
        monitor_interval = 0

        def __init__(self, *args: Any, compiling: set[str], **kwargs: Any) -> None:
            self.compiling = set(compiling)
            self.warm_from: tuple[float, int] | None = None  # (elapsed, n) when warm
            super().__init__(*args, **kwargs)

        def finished(self, agent: str) -> None:
            """A chunk of ``agent`` finished (after its :meth:`update`)."""
            if agent in self.compiling:
                self.compiling.discard(agent)
                if not self.compiling:
                    self.warm_from = (self._time() - self.start_t, self.n)
                    self.refresh()

        @property
        def format_dict(self) -> dict[str, Any]:
            d = super().format_dict
            if self.compiling:
                d["bar_format"] = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, compiling]"
            elif self.warm_from is not None:
                seconds, n = d["elapsed"] - self.warm_from[0], d["n"] - self.warm_from[1]
                if seconds > 0 and n > 0:
                    d["rate"] = n / seconds
                else:  # no chunk since the compilation ended: no rate yet
                    d["bar_format"] = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<?]"
            return d

    return _Bar(
        total=total,
        initial=initial,
        desc=name,
        unit="ep",
        disable=not enabled,
        smoothing=0.1,
        compiling=compiling if enabled else set(),
    )


#: The file of a results directory that holds an experiment's refitted parameters.
FITTED = "fitted.json"


def refit_config(exp: Experiment, out: str | Path) -> dict[str, Any]:
    """The config of ``exp`` with its parameters fitted anew (``topk-bench run --retrain``).

    ``exp.fitted_by`` names the module that generates the experiment's config from fitted
    parameters (e.g. :mod:`topk_bench.experiments.learned_batch`); its ``refit(path, quick=...)``
    fits them into ``OUT/fitted.json`` (or reads that file when an earlier run wrote it:
    a resumed run does not fit again) and returns the config. ``quick`` (``--reduced``)
    fits on a small share of the training episodes, for smoke tests.

    Raises:
        ConfigError: ``exp`` has no ``fitted_by``, or its module has no ``refit``.
    """
    import importlib

    if not exp.fitted_by:
        raise ConfigError(f"{exp.name}: no fitted_by: nothing to refit")
    try:
        module = importlib.import_module(exp.fitted_by)
    except ImportError as err:
        raise ConfigError(f"fitted_by: cannot import {exp.fitted_by!r}: {err}") from None
    refit = getattr(module, "refit", None)
    if not callable(refit):
        raise ConfigError(f"fitted_by: {exp.fitted_by!r} has no refit(path, quick=...)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return refit(out / FITTED, quick=exp.reduced)
