"""The README's main job from cold and warm: ``topk-bench run quick``, timed.

Runs ``topk-bench run EXPERIMENT --out DIR`` twice in fresh processes, sharing one new,
empty numba cache directory (``NUMBA_CACHE_DIR``): the first run compiles every kernel
it plays (a newcomer's first run), the second loads them from that cache. Prints the
wall time of both, and the CPU time of the run and its worker processes.

Usage::

    python benchmarks/first_run.py                      # quick, --jobs as the CLI's default
    python benchmarks/first_run.py --experiment quick --jobs 2
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def timed_run(experiment: str, out: str, cache: str, jobs: int | None) -> tuple[float, float]:
    """Wall and CPU seconds (this child and its workers) of one ``topk-bench run``."""
    argv = [sys.executable, "-m", "topk_bench.cli", "run", experiment, "--out", out]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="quick")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    root = tempfile.mkdtemp(prefix="first-run-")
    try:
        cache = os.path.join(root, "numba-cache")
        os.makedirs(cache)
        print(f"topk-bench run {args.experiment}, NUMBA_CACHE_DIR={cache} (empty)")
        for label in ("cold", "warm"):
            out = os.path.join(root, label)
            wall, cpu = timed_run(args.experiment, out, cache, args.jobs)
            print(f"{label:>5}: {wall:6.1f} s wall, {cpu:6.1f} CPU-s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
