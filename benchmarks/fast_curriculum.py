"""Ablation (d): a curriculum over budgets or arm counts on the fast path, against
training on the target family directly for the same CPU time.

    python benchmarks/fast_curriculum.py --preset one-pull --cpu 300 \\
        --stages budget=20:0.25 budget=50:0.25 --reward env
    python benchmarks/fast_curriculum.py --preset large --cpu 300 \\
        --stages n_arms=10,k=3,budget=200:0.3

A curriculum is a list of stages ``KEY=VALUE[,KEY=VALUE...]:SHARE``: each stage trains
``agents.learned.fast.fast_train`` on the preset's family with those kwargs changed, for
``SHARE`` of ``--cpu`` CPU-seconds, starting from the previous stage's network
(``fast_train(initial=...)``: the arm-set weights do not depend on the number of arms or
the budget); the rest of ``--cpu`` trains on the preset's own family. The direct run
trains on the preset's family for all of ``--cpu``. Both then play the same ``--episodes``
held-out episodes of the family's benchmark form with ``uniform`` and the knowledge
gradient given the prior (the seeds and the cached reference scores of
``benchmarks/fast_training.py``), and the script prints each one's held-out score and
the share of uniform's gap to KG it closes with a 95% paired-bootstrap interval.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agents.learned.evaluation import evaluate
from agents.learned.families import PRESETS
from agents.learned.fast import FastConfig, fast_train

try:  # run as a script from the repository root or from benchmarks/
    from benchmarks.fast_training import _scores, gap_closed, reference_scores
except ImportError:  # pragma: no cover
    from fast_training import _scores, gap_closed, reference_scores  # type: ignore[no-redef]


def parse_stage(text: str) -> tuple[dict[str, Any], float]:
    """``"budget=50,n_arms=6:0.25"`` -> ``({"budget": 50, "n_arms": 6}, 0.25)``."""
    spec, sep, share = text.rpartition(":")
    if not sep or not spec:
        raise ValueError(f"stage {text!r} must be KEY=VALUE[,KEY=VALUE...]:SHARE")
    changes: dict[str, Any] = {}
    for item in spec.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"stage {text!r}: {item!r} is not KEY=VALUE")
        changes[key] = json.loads(value)
    fraction = float(share)
    if not 0 < fraction < 1:
        raise ValueError(f"stage {text!r}: share {fraction} must be in (0, 1)")
    return changes, fraction


def train_curriculum(
    preset: str,
    stages: list[tuple[dict[str, Any], float]],
    cpu: float,
    seed: int,
    **config: Any,
) -> tuple[Any, list[dict[str, Any]]]:
    """Train the stages then the preset's family; the last result and each stage's record."""
    if sum(share for _, share in stages) >= 1:
        raise ValueError(f"the stages' shares {[s for _, s in stages]} must sum to less than 1")
    env_id, base = PRESETS[preset]
    result, records = None, []
    for changes, share in [*stages, ({}, 1 - sum(share for _, share in stages))]:
        result = fast_train(
            FastConfig(
                env_id,
                {**base, **changes},
                total_timesteps=10**12,
                max_cpu_seconds=cpu * share,
                eval_every=10**12,
                eval_episodes=0 if changes else 1000,
                seed=seed,
                **config,
            ),
            initial=None if result is None else result.net,
            log=None,
        )
        info = result.metadata["training"]
        records.append(
            {"changes": changes, "timesteps": info["timesteps"], "cpu": info["cpu_seconds"]}
        )
    return result, records


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="one-pull")
    parser.add_argument("--cpu", type=float, default=300.0, help="CPU-seconds per run")
    parser.add_argument("--stages", nargs="+", required=True, metavar="KEY=VALUE,...:SHARE")
    parser.add_argument("--reward", default="auto", choices=["auto", "env", "posterior"])
    parser.add_argument("--no-direct", action="store_true", help="skip the direct run")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/fast-training")
    args = parser.parse_args(argv)
    stages = [parse_stage(s) for s in args.stages]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (eid, ekw, seeds, score), refs = reference_scores(args.preset, args.episodes, out)
    u, kg = refs["uniform"], refs.get("kg (prior)")
    print(f"{args.preset}, {args.cpu:.0f} CPU-s per run, reward {args.reward}, seed {args.seed}")
    print(f"uniform {u.mean():.5f}" + (f", KG (prior) {kg.mean():.5f}" if kg is not None else ""))
    print("| run | stages (steps) | held-out score | gap to KG closed [95%] |")
    print("| --- | --- | --- | --- |")
    runs = {"curriculum": stages} if args.no_direct else {"direct": [], "curriculum": stages}
    report: dict[str, Any] = {"preset": args.preset, "cpu": args.cpu, "runs": {}}
    for name, run_stages in runs.items():
        result, records = train_curriculum(
            args.preset, run_stages, args.cpu, args.seed, reward=args.reward
        )
        mode = result.metadata["policy_agent"]["deterministic"]
        agent = result.agent(deterministic=mode)
        s = _scores(evaluate(agent, eid, ekw, seeds), score)
        closed = gap_closed(u, s, kg) if kg is not None else (float("nan"),) * 3
        steps = " -> ".join(
            f"{','.join(f'{k}={v}' for k, v in r['changes'].items()) or 'target'} "
            f"({r['timesteps'] / 1e6:.1f}M)"
            for r in records
        )
        report["runs"][name] = {"records": records, "score": float(s.mean()), "gap_closed": closed}
        print(
            f"| {name} | {steps} | {s.mean():.5f} | {closed[0]:.2f} "
            f"[{closed[1]:.2f}, {closed[2]:.2f}] |",
            flush=True,
        )
    return report


if __name__ == "__main__":
    main()
