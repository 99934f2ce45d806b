"""Where an agent's pull spends its time: compiled code made visible to ``perf``.

Numba's compiled functions are anonymous to a sampling profiler. This script compiles
an agent afresh (a temporary numba cache, so that the code is generated in this
process), writes ``/tmp/perf-PID.map`` (every compiled function's address, size and
name, the format ``perf`` reads for code generated at run time), then plays episodes of
``agent_speed``'s section-1 setting (two-level instance, n = 1000, budget 20n, one pull
per step) for ``--seconds`` of CPU time. Record it with ``perf``::

    python benchmarks/profile_agent.py t3c --k 10 --seconds 20 &
    sleep 60   # (compilation; the script prints "profiling PID" when it starts playing)
    perf record -F 5000 -p PID -o t3c.perf -- sleep 10
    perf report -i t3c.perf --stdio --sort sym

Functions that numba inlined are counted in their caller. The map is read from numba's
code libraries (``library._final_module``, an internal of numba 0.68). The mangled names keep the
module path (``_ZN6agents3glr6fronts12order_pulled...``: ``agents.glr.fronts.order_pulled``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

if __name__ == "__main__" and "NUMBA_CACHE_DIR" not in os.environ:
    # A fresh cache: code loaded from a cache has no per-function symbols to map.
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="profile-agent-")
    os.execv(sys.executable, [sys.executable, *sys.argv])

import gc  # noqa: E402
import time  # noqa: E402

import gymnasium as gym  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

import agents  # noqa: E402
import bandit_envs  # noqa: E402, F401  (registers the envs)


def compiled_functions() -> list[tuple[int, str]]:
    """``(address, name)`` of every function compiled in this process, by address."""
    found: dict[int, str] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in obj.overloads.values():
            library = cres.library
            for fn in library._final_module.functions:
                if fn.is_declaration:
                    continue
                address = library.get_pointer_to_function(fn.name)
                if address:
                    found[address] = fn.name
    return sorted(found.items())


def write_perf_map(functions: list[tuple[int, str]]) -> str:
    """``/tmp/perf-PID.map``: each function spans up to the next one's address."""
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as out:
        for (address, name), following in zip(functions, functions[1:] + [(0, "")], strict=True):
            size = following[0] - address if following[0] else 4096
            out.write(f"{address:x} {min(size, 1 << 20):x} {name}\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU time to play")
    args = parser.parse_args()
    n = 1000
    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=n,
        k=args.k,
        budget=20 * n,
        batch_size=1,
        repeat_limit=1,
        answer="agent",
    )
    agent = agents.make(args.agent)
    agents.run_episode(env, agent, seed=0)  # compiles the agent's kernels
    functions = compiled_functions()
    if not functions:
        raise SystemExit(
            f"no compiled function to map: NUMBA_CACHE_DIR={os.environ['NUMBA_CACHE_DIR']!r} "
            "held the kernels already (code loaded from a cache has no per-function "
            "symbols); unset it or point it to an empty directory"
        )
    path = write_perf_map(functions)
    print(f"profiling {os.getpid()} (map: {path})", flush=True)
    pulls, seed, start = 0, 1, time.process_time()
    while time.process_time() - start < args.seconds:
        pulls += agents.run_episode(env, agent, seed=seed).pulls
        seed += 1
    print(f"{args.agent}, K = {args.k}: {pulls / (time.process_time() - start):,.0f} pulls/s")


if __name__ == "__main__":
    main()
