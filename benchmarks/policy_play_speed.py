"""Playing a learned policy: torch's threads per ``act``, and what switching them costs.

A ``PolicyAgent`` runs its network on one observation per step, where torch's thread
pool only adds synchronisation. The script plays the same episodes of the tutorial's
family (``TopK-v0``, 10 Beta(5, 5) arms, k = 3, 200 pulls) with a PPO model three ways:

1. ``torch_threads=None`` in a process at torch's default thread count (the agent
   leaves torch's setting as it is);
2. ``torch_threads=1`` (the default) in the same process: each ``act`` switches torch to
   one thread and back;
3. ``torch_threads=None`` after ``torch.set_num_threads(1)`` for the whole process (no
   switch: the floor).

It prints wall-clock and CPU seconds per case, microseconds per ``act`` and the ratio
of 1 to 2; then the CPU time per ``act`` of 2 and 3 on the same recorded observations
in alternating rounds (the switch's cost per ``act``), and the switch timed alone.
Torch's threads cost most when the cores are busy: ``--busy N`` runs N spinning
processes meanwhile, as on a shared machine. Without ``--model`` it first trains a
small PPO model (the ``standard`` preset, ``--timesteps`` steps) in a temporary
directory::

    python benchmarks/policy_play_speed.py
    python benchmarks/policy_play_speed.py --model models/ppo_standard-best.zip --busy 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import torch

import agents
import bandit_envs  # noqa: F401  (registers the envs)

ENV_KWARGS = {
    "instance": "beta-random",
    "instance_params": {"a": 5.0, "b": 5.0},
    "n_arms": 10,
    "k": 3,
    "budget": 200,
}


def _train(directory: Path, timesteps: int) -> Path:
    from agents.learned.training import TrainConfig, train

    config = TrainConfig(
        "standard",
        total_timesteps=timesteps,
        eval_episodes=0,
        save_path=str(directory / "ppo_standard"),
    )
    return Path(train(config, log=None).path or directory / "ppo_standard.zip")


def _play(
    model: str, episodes: int, threads: int | None, sampled: bool
) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds, act calls)`` of ``episodes`` episodes."""
    env = gym.make("TopK-v0", **ENV_KWARGS)
    agent = agents.make(f"ppo:{model}", torch_threads=threads, deterministic=not sampled)
    agents.run_episode(env, agent, seed=10_000)  # warm-up
    acts = agent.total_decisions
    wall, cpu = time.perf_counter(), time.process_time()
    for seed in range(episodes):
        agents.run_episode(env, agent, seed=seed)
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        agent.total_decisions - acts,
    )


def _switch_cost(model: str, default: int, rounds: int = 12) -> tuple[float, float]:
    """Median CPU microseconds per ``act`` with the switch and without (the floor).

    The same 150 recorded observations, played by the same agent in alternating rounds:
    ``torch_threads=1`` at ``default`` threads, ``torch_threads=None`` at one thread.
    """
    env = gym.make("TopK-v0", **ENV_KWARGS)
    agent = agents.make(f"ppo:{model}", deterministic=True)
    obs, _ = env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=0)
    observations = []
    for _ in range(150):
        obs, *_ = env.step(agent.act(obs))
        observations.append(obs)
    times: dict[int | None, list[float]] = {1: [], None: []}
    for _ in range(rounds):
        for threads in times:
            torch.set_num_threads(default if threads else 1)
            agent.torch_threads = threads
            agent.reset(env.unwrapped.problem, seed=0)
            start = time.process_time()
            for o in observations:
                agent.act(o)
            times[threads].append((time.process_time() - start) / len(observations) * 1e6)
    return statistics.median(times[1]), statistics.median(times[None])


def _bare_switch(default: int, calls: int = 20_000) -> float:
    """Microseconds of ``get_num_threads`` and two ``set_num_threads`` (to 1 and back)."""
    torch.set_num_threads(default)
    start = time.perf_counter()
    for _ in range(calls):
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        torch.set_num_threads(before)
    return (time.perf_counter() - start) / calls * 1e6


def _spin() -> None:  # pragma: no cover - a busy process
    while True:
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a saved PPO model (default: train one)")
    parser.add_argument(
        "--timesteps", type=int, default=2048, help="training steps without --model"
    )
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2, help="best of this many runs per case")
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        help="busy processes (a Python loop each) running meanwhile, as on a shared machine",
    )
    args = parser.parse_args(argv)
    default = torch.get_num_threads()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(_train(Path(tmp), args.timesteps))
        torch.set_num_threads(default)
        for spinner in spinners:
            spinner.start()
        try:
            _report(model, args, default)
        finally:
            for spinner in spinners:
                spinner.terminate()
            torch.set_num_threads(default)


def _report(model: str, args: argparse.Namespace, default: int) -> None:
    print(
        f"{args.episodes} episodes of TopK-v0 (10 arms, k = 3, 200 pulls), best of "
        f"{args.repeat}; torch's default: {default} threads; {args.busy} busy processes"
    )
    print("| play | case | wall s | CPU s | us per act (wall) |")
    print("| --- | --- | --- | --- | --- |")
    for sampled in (False, True):
        mode = "sampled" if sampled else "deterministic"
        cases = {
            f"torch_threads=None, {default} threads": (default, None),
            "torch_threads=1 (default)": (default, 1),
            "torch.set_num_threads(1), torch_threads=None": (1, None),
        }
        best: dict[str, tuple[float, float, int]] = {}
        for _ in range(args.repeat):
            for label, (process, agent_threads) in cases.items():
                torch.set_num_threads(process)
                got = _play(model, args.episodes, agent_threads, sampled)
                if label not in best or got[0] < best[label][0]:
                    best[label] = got
        for label, (wall, cpu, acts) in best.items():
            print(f"| {mode} | {label} | {wall:.2f} | {cpu:.2f} | {wall / acts * 1e6:.0f} |")
        (slow, _, _), (ours, _, _), _ = best.values()
        print(f"{mode}: wall time with {default} threads / torch_threads=1: {slow / ours:.1f}x")
    switch, floor = _switch_cost(model, default)
    print(
        f"CPU per act, median of alternating rounds: {switch:.0f} us with the switch "
        f"({default} -> 1 -> {default}), {floor:.0f} us at one thread without it"
    )
    print(f"get + 2 x set_num_threads alone: {_bare_switch(default):.2f} us")


if __name__ == "__main__":
    main()
