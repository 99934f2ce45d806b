"""What the fast training path learns in a CPU budget, and what each of its choices buys.

    python benchmarks/fast_training.py                                  # one-pull, 600 CPU-s
    python benchmarks/fast_training.py --preset one-pull --cpu 600 \\
        --variants default,env-reward,no-prior,a2c --episodes 2000 --out results/fast
    python benchmarks/fast_training.py --timesteps 20000000 --cpu 1000 --seed 1 \\
        --variants default,linear-lr,raw-advantages,gamma-1 --tag probes
    python benchmarks/fast_training.py --plot FIGURE.png results/fast/curves-*.json

Each variant trains ``agents.learned.fast.fast_train`` on ``--preset`` for ``--cpu``
CPU-seconds of this process (validation excluded), then plays the saved policy
(``agents.make("ppo:PATH")``), ``uniform`` and the knowledge gradient given the family's
prior (``kg`` with ``a``, ``b``) on the same ``--episodes`` held-out episodes of the
family's benchmark form (:func:`agents.learned.evaluation.compare`'s seeds). It prints
per variant the steps trained, the steps per CPU-second, the held-out mean score and the
share of uniform's gap to KG it closes, ``(U - S) / (U - K)``, with a 95% interval from a
paired bootstrap over the episodes; and writes the learning curves
(``<out>/curves-PRESET-TAG.json``) and the figure ``<out>/learning_curves-PRESET-TAG.png``;
the reference agents' scores are kept in ``<out>`` and reused by later runs.

Variants (each the fast path's defaults but for the change named):

* ``default``: PPO, the family's Beta prior known (``post_*`` features, posterior answer),
  the posterior reward;
* ``env-reward``: the env's terminal reward instead of the posterior reward (ablation (a));
* ``no-prior``: neither the prior's features nor its reward: counts and means, the env's
  reward (ablation (b) with (a));
* ``gamma-0.9``: the posterior reward with discount 0.9 (GAE lambda 0.8);
* ``a2c``: A2C instead of PPO;
* ``recurrent``: a GRU memory across the episode's steps (``FastConfig(recurrent=True)``,
  truncated backprop through time over each rollout), the prior known as in ``default``;
* ``recurrent-no-prior``: the recurrent network without the prior (counts and means, the
  env's reward): the RL^2 setting (Duan et al. 2016), to set against ``no-prior``.

* ``linear-lr``, ``lr-3e-4-linear``: the step size decayed linearly to 0 at
  ``--timesteps`` (from 1e-3 or 3e-4);
* ``raw-advantages``: advantages in reward units, not standardised per update;
* ``gamma-0.98``, ``gamma-1``: the posterior reward with discount 0.98 or 1 (GAE lambda
  0.9).

A recurrent network is not saved (the saved models are feed-forward): the held-out
episodes play its network through :class:`agents.learned.fast.agent.NetAgent`, in the
mode and with the answer its saved model would have.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned.evaluation import TEST_SEED0, evaluate
from agents.learned.families import PRESETS, evaluation_env, family_prior, training_kwargs
from agents.learned.fast import FastConfig, fast_train
from agents.learned.fast.agent import NetAgent
from agents.registry import make

#: Each variant's changes to FastConfig (the default: the family's prior, posterior reward).
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "env-reward": {"reward": "env"},
    "no-prior": {"prior": None, "reward": "env"},
    "gamma-0.9": {"gamma": 0.9, "gae_lambda": 0.8},
    "a2c": {"algo": "a2c"},
    "recurrent": {"recurrent": True},
    "recurrent-no-prior": {"recurrent": True, "prior": None, "reward": "env"},
    "linear-lr": {"lr_schedule": "linear"},
    "lr-3e-4-linear": {"learning_rate": 3e-4, "lr_schedule": "linear"},
    "raw-advantages": {"normalize_advantage": False},
    "gamma-0.98": {"gamma": 0.98, "gae_lambda": 0.9},
    "gamma-1": {"gamma": 1.0, "gae_lambda": 0.9},
}


def _config(
    preset: str, variant: str, cpu: float, seed: int, out: Path, timesteps: int | None = None
) -> FastConfig:
    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r} must be one of {sorted(VARIANTS)}")
    changes = VARIANTS[variant]
    if changes.get("lr_schedule") == "linear" and timesteps is None:
        raise ValueError(f"variant {variant!r} decays the step size over --timesteps: give it")
    saved = not changes.get("recurrent", False)  # a recurrent network is not saved
    return FastConfig(
        preset,
        total_timesteps=10**12 if timesteps is None else timesteps,
        max_cpu_seconds=cpu,
        eval_every=2_000_000 if timesteps is None else max(timesteps // 5, 1),
        seed=seed,
        save_path=out / f"{preset}-{variant}-s{seed}" if saved else None,
        **changes,
    )


def _scores(results: list[Any], score: str) -> np.ndarray:
    return np.array(
        [
            getattr(r, "misidentified" if score == "misidentified" else "aggregate_regret")
            for r in results
        ],
        dtype=float,
    )


def gap_closed(
    u: np.ndarray, s: np.ndarray, k: np.ndarray, seed: int = 0
) -> tuple[float, float, float]:
    """``(U - S) / (U - K)`` and its 95% paired-bootstrap interval (2,000 resamples)."""
    rng = np.random.default_rng(seed)
    point = (u.mean() - s.mean()) / (u.mean() - k.mean())
    idx = rng.integers(0, len(u), (2000, len(u)))
    boot = (u[idx].mean(1) - s[idx].mean(1)) / (u[idx].mean(1) - k[idx].mean(1))
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(point), float(low), float(high)


def reference_scores(
    preset: str, episodes: int, out: Path
) -> tuple[tuple[str, dict[str, Any], range, str], dict[str, np.ndarray]]:
    """The held-out episodes of ``preset`` (env id, kwargs, seeds, score name) and the
    per-episode scores of ``uniform`` and KG with the family's prior on them, cached in
    ``out/references-PRESET-EPISODES.json`` (same seeds: reusable by later runs)."""
    env_id, kwargs = PRESETS[preset]
    kwargs = training_kwargs(env_id, kwargs)
    prior = family_prior(kwargs)
    eid, ekw = evaluation_env(env_id, kwargs)
    seeds = range(TEST_SEED0, TEST_SEED0 + episodes)
    score = "misidentified" if kwargs.get("objective") == "misidentification" else "regret"
    refs = {"uniform": make("uniform")}
    if prior is not None:
        refs["kg (prior)"] = make("kg", a=prior[0], b=prior[1])
    cache = out / f"references-{preset}-{episodes}.json"
    stored = json.loads(cache.read_text()) if cache.exists() else {}
    scores = {}
    for label, agent in refs.items():
        start = time.perf_counter()
        if label not in stored:
            stored[label] = _scores(evaluate(agent, eid, ekw, seeds), score).tolist()
            cache.write_text(json.dumps(stored))
        scores[label] = np.array(stored[label])
        print(
            f"{label}: {scores[label].mean():.5f} ({time.perf_counter() - start:.0f}s)", flush=True
        )
    return (eid, ekw, seeds, score), scores


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="one-pull")
    parser.add_argument("--cpu", type=float, default=600.0, help="CPU-seconds per variant")
    parser.add_argument("--variants", default="default,env-reward,no-prior")
    parser.add_argument("--episodes", type=int, default=2000, help="held-out episodes")
    parser.add_argument(
        "--timesteps",
        type=int,
        help="train each variant for this many steps (validated every fifth), --cpu "
        "still capping it (default: --cpu alone)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/fast-training")
    parser.add_argument("--tag", default="run", help="names the curves file and the figure")
    parser.add_argument(
        "--plot",
        nargs="+",
        metavar=("FIGURE", "CURVES"),
        help="only draw FIGURE from curves files of earlier runs (their variants together)",
    )
    args = parser.parse_args(argv)
    if args.plot:
        reports = [json.loads(Path(f).read_text()) for f in args.plot[1:]]
        merged = {**reports[0], "variants": {}}
        for report in reports:
            merged["variants"].update(report["variants"])
        _plot(merged, Path(args.plot[0]))
        return merged
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    heldout, ref_scores = reference_scores(args.preset, args.episodes, out)
    eid, ekw, seeds, score = heldout
    report: dict[str, Any] = {
        "preset": args.preset,
        "cpu": args.cpu,
        "episodes": args.episodes,
        "references": {k: float(v.mean()) for k, v in ref_scores.items()},
        "variants": {},
    }
    print("| variant | steps | steps per CPU-s | held-out score | gap to KG closed [95%] |")
    print("| --- | --- | --- | --- | --- |")
    for variant in args.variants.split(","):
        config = _config(args.preset, variant, args.cpu, args.seed, out, args.timesteps)
        result = fast_train(config, log=None)
        info = result.metadata["training"]
        agent = (
            NetAgent.from_result(result)
            if config.recurrent
            else make(f"{config.algo}:{result.path}")
        )
        s = _scores(evaluate(agent, eid, ekw, seeds), score)
        closed = (
            gap_closed(ref_scores["uniform"], s, ref_scores["kg (prior)"])
            if "kg (prior)" in ref_scores
            else (float("nan"),) * 3
        )
        report["variants"][variant] = {
            "timesteps": info["timesteps"],
            "cpu_seconds": info["cpu_seconds"],
            "score": float(s.mean()),
            "gap_closed": closed,
            "deterministic": result.metadata["policy_agent"]["deterministic"],
            "curve": info["evaluations"],
        }
        print(
            f"| {variant} | {info['timesteps']:,} | {info['timesteps'] / info['cpu_seconds']:,.0f} "
            f"| {s.mean():.5f} | {closed[0]:.2f} [{closed[1]:.2f}, {closed[2]:.2f}] |",
            flush=True,
        )
        (out / f"curves-{args.preset}-{args.tag}.json").write_text(json.dumps(report, indent=1))
    _plot(report, out / f"learning_curves-{args.preset}-{args.tag}.png")
    return report


def _plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for variant, data in report["variants"].items():
        curve = data["curve"]
        x = [e["cpu_seconds"] for e in curve]
        best = [min(e["deterministic"]["score"], e["sampled"]["score"]) for e in curve]
        ax.plot(x, best, label=variant)
    for label, value in report["references"].items():
        ax.axhline(value, ls="--", color="grey" if label == "uniform" else "black", lw=1)
        ax.annotate(label, (0, value), fontsize=8, va="bottom")
    ax.set_xlabel("training CPU-seconds")
    ax.set_ylabel("validation score (better play mode)")
    ax.set_title(f"fast path on {report['preset']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
