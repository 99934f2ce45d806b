"""The ``learned-batch`` experiment: a learned batch policy where the number of batches binds.

Family: Bernoulli arms whose means are drawn from Beta(5, 5) per episode (shuffled), the
(b, r)-batch model of Jun et al. (2016) with a fixed number of batches and a pull budget
of ``b x batches`` (both bind), aggregate regret of the answer. Two points (:data:`POINTS`):
10 arms, k = 3, b = 10, r = 5, 8 batches; 50 arms, k = 5, b = 50, r = 10, 10 batches. At
each point the learned policies (:class:`agents.bayesian.learned_batch.LearnedBatch`, three
training seeds) play :data:`EPISODES` held-out episodes against the batch yardstick
``kg_batch`` and top-two Thompson sampling (both given the prior), uniform allocation,
BatchSAR, Halving, BatchRacing and the LUCB family in batched rounds, and the learned
policy's score with every weight zero (KG* alone: what the fit adds), paired: the same
episodes.

The fitted weights ship in ``topk_bench/pretrained/learned-batch/weights.json``;
:func:`experiment_config` writes the experiment from it
(``topk_bench/experiments/learned-batch.toml`` is its output, checked by
``tests/test_learned_batch.py``), so ``topk-bench run learned-batch`` plays them without
refitting. ``python -m topk_bench.experiments.learned_batch train`` fits them again
(:func:`agents.bayesian.learned_batch.train`) and writes the JSON; ``config`` prints the
TOML.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agents.bayesian.learned_batch import Family

__all__ = ["refit", "POINTS", "WEIGHTS", "experiment_config", "train_all"]

#: The shipped weights.
WEIGHTS = Path(__file__).resolve().parent.parent / "pretrained" / "learned-batch" / "weights.json"
#: The experiment's points, by label.
POINTS: dict[str, Family] = {
    "10 arms": Family(n=10, k=3, batch_size=10, repeat_limit=5, batches=8),
    "50 arms": Family(n=50, k=5, batch_size=50, repeat_limit=10, batches=10),
}
SEEDS = (0, 1, 2)
#: Held-out episodes per (point, agent): enough to resolve a paired regret difference of
#: about 0.001 at 10 arms.
EPISODES = 20_000
#: Training and validation episodes per (point, seed).
TRAIN_EPISODES = {"10 arms": 10_000, "50 arms": 2000}
VALIDATION = {"10 arms": 20_000, "50 arms": 5000}
_PRIOR = {"a": 5.0, "b": 5.0}
#: The fields of a learned agent's ``family`` parameter (its prior is the agent's ``a``, ``b``).
_FAMILY_KEYS = ("n", "k", "batch_size", "repeat_limit", "batches")
#: The scripted agents and yardsticks: (registry name, label, params).
_OTHERS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("kg_batch", "KG batch fill (Beta(5, 5) prior)", _PRIOR),
    # the ablation: the learned policy's score with every weight zero (KG* alone)
    ("learned_batch", "KG* score, weights 0", {"weights": [0.0] * 8, **_PRIOR}),
    ("bayes_ttts", "TTTS (Beta(5, 5) prior)", _PRIOR),
    ("uniform", "uniform", {}),
    ("batch_sar", "BatchSAR", {}),
    ("halving", "Halving", {}),
    ("batch_racing", "BatchRacing", {}),
    ("lucb", "LUCB", {}),
    ("kl_lucb", "KL-LUCB", {}),
    ("lil_lucb", "lil'LUCB", {}),
    ("lucb_pp", "LUCB++", {}),
    ("lil_rand_lucb", "lil'RandLUCB", {}),
)


def train_all(
    seeds: Sequence[int] = SEEDS,
    *,
    points: Sequence[str] = tuple(POINTS),
    scale: float = 1.0,
    verbose: bool = False,
) -> list[dict[str, Any]]:
    """Fit the weights of every (point, seed) (:func:`agents.bayesian.learned_batch.train`);
    ``scale`` multiplies the training and validation episodes."""
    from agents.bayesian.learned_batch import train

    out = []
    for label in points:
        for seed in seeds:
            fit = train(
                POINTS[label],
                seed=seed,
                episodes=max(1, int(TRAIN_EPISODES[label] * scale)),
                validation=max(2, int(VALIDATION[label] * scale)),
                verbose=verbose,
            )
            entry = asdict(fit)
            entry["point"] = label
            entry["weights"] = list(fit.weights)
            out.append(entry)
    return out


def _learned_label(point: str, seed: int) -> str:
    return f"learned batch, {point} (seed {seed})"


def experiment_config(fits: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The experiment's config from the fitted weights (the JSON's entries)."""
    agents: list[dict[str, Any]] = []
    for name, label, params in _OTHERS:
        agents.append({"name": name, "label": label, **({"params": params} if params else {})})
    learned: dict[str, list[str]] = {label: [] for label in POINTS}
    for fit in fits:
        point, seed = fit["point"], fit["fit"]["seed"]
        label = _learned_label(point, seed)
        fam = fit.get("family") or asdict(POINTS[point])
        agents.append(
            {
                "name": "learned_batch",
                "label": label,
                "params": {
                    "weights": list(fit["weights"]),
                    **_PRIOR,
                    # the family the weights were fitted to: the agent warns off it
                    "family": {key: fam[key] for key in _FAMILY_KEYS},
                },
            }
        )
        learned[point].append(label)
    points = []
    for label, fam in POINTS.items():
        points.append(
            {
                "label": label,
                "x": label,
                "env": {
                    "n_arms": fam.n,
                    "k": fam.k,
                    "batch_size": fam.batch_size,
                    "repeat_limit": fam.repeat_limit,
                    "max_batches": fam.batches,
                    "budget": fam.batch_size * fam.batches,
                },
                "agents": learned[label] + [other[1] for other in _OTHERS],
            }
        )
    return {
        "name": "learned-batch",
        "fitted_by": "topk_bench.experiments.learned_batch",
        "description": (
            "Batches that matter: Bernoulli arms whose means are drawn from Beta(5, 5) per "
            "episode (shuffled), the (b, r)-batch model with a binding number of batches and a "
            "pull budget of b x batches, aggregate regret of the answer. 10 arms, k = 3, b = 10, "
            "r = 5, 8 batches; 50 arms, k = 5, b = 50, r = 10, 10 batches. A learned batch "
            "policy (each batch filled pull by pull on a fantasy posterior by a score over KG* "
            "and posterior features whose 8 weights are fitted to the prior by the "
            "cross-entropy method on simulated episodes, three training seeds) against the "
            "batch yardstick (KG* batch fill), top-two Thompson sampling, uniform allocation, "
            "BatchSAR, Halving, BatchRacing and the LUCB family in batched rounds, and the "
            "same score with every weight zero (KG* alone), on the same held-out episodes."
        ),
        "reference": (
            "Jun, Jamieson, Nowak, Zhu, 'Top arm identification in multi-armed bandits with "
            "batch arm pulls', AISTATS 2016 (the (b, r)-batch model, BatchSAR, BatchRacing, "
            "Halving); Frazier & Powell, Decision Analysis 7(4), 2010 (KG*); Ginsbourger, Le "
            "Riche, Carraro 2010 (kriging believer batch fill); Rubinstein & Kroese, The "
            "Cross-Entropy Method, Springer 2004; Russo, Operations Research 2020 (TTTS); "
            "Kalyanakrishnan et al., ICML 2012 (LUCB); Kaufmann & Kalyanakrishnan, COLT 2013 "
            "(KL-LUCB); Jamieson et al., COLT 2014 (lil'LUCB); Simchowitz, Jamieson, Recht, "
            "COLT 2017 (LUCB++); Jiang, Li, Qiao, arXiv:1705.06894 (lil'RandLUCB). Regret: "
            "aggregate regret of Zhou et al. 2014, eq. 1."
        ),
        "metrics": ["aggregate_regret", "misidentified", "pulls", "batches"],
        "runs": EPISODES,
        "x": "family",
        "env": {"instance": "beta-random", "instance_params": dict(_PRIOR), "shuffle": True},
        "agents": agents,
        "points": points,
        "plot": {"kind": "bar"},
        "reduced": {"runs": 20},
    }


def refit(path: str | Path, *, quick: bool = False) -> dict[str, Any]:
    """The experiment's config from parameters fitted anew into ``path`` (JSON), or read
    from it when it exists (a resumed ``topk-bench run --retrain``); ``quick``: a few
    training episodes (``--reduced``: tests the pipeline, not the fit)."""
    from topk_bench.generated import fitted_json

    fits = fitted_json(path, lambda: train_all(scale=0.002 if quick else 1.0))
    return experiment_config(fits)


def to_toml(cfg: Mapping[str, Any]) -> str:
    """The config as TOML (the shipped file's text)."""
    from topk_bench.generated import generated_toml

    return generated_toml(
        dict(cfg),
        "topk_bench.experiments.learned_batch",
        "topk_bench/pretrained/learned-batch/weights.json",
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m topk_bench.experiments.learned_batch")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("config", help="print the experiment's TOML (from the shipped weights)")
    tr = sub.add_parser("train", help="fit the weights of every point and seed, write the JSON")
    tr.add_argument("--out", type=Path, default=WEIGHTS)
    tr.add_argument("--point", choices=tuple(POINTS), action="append", help="(default: all)")
    tr.add_argument("--seed", type=int, action="append", help="(default: 0 1 2)")
    tr.add_argument(
        "--scale", type=float, default=1.0, help="multiplies the training episodes (smoke tests)"
    )
    tr.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    if args.cmd == "config":
        print(to_toml(experiment_config(json.loads(WEIGHTS.read_text()))), end="")
        return 0
    if args.scale <= 0:
        p.error(f"--scale {args.scale} must be positive")
    fits = train_all(
        args.seed or SEEDS,
        points=args.point or tuple(POINTS),
        scale=args.scale,
        verbose=args.verbose,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fits, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
