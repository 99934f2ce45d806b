"""The ``learned-stopping`` experiment: a learned stop against the fixed-confidence agents.

Family: 10 Bernoulli arms whose means are drawn from Beta(1, 1) per episode, k = 1 and
k = 3, fixed confidence with one pull per step, truncated at :data:`CAP` pulls (the
empirical top k is scored then). Targets delta = 0.1 and 0.05 (why not 0.01:
docs/experiments/learned-stopping.md). At each (k, delta) the learned policies
(:class:`agents.bayesian.learned_stop.LearnedStop`, three training seeds, each fitted to
:func:`target_of`), the Bayesian yardstick ``bayes_ttts(delta)`` (same sampling rule,
constant threshold, checked before every pull; also at the learned stop's target, the
same error level) play :data:`BAYES_EPISODES` held-out episodes, so that the learned
stop's error bound and its paired differences with the yardstick are tight; the GLR
agents (T3C, EB-TC; Track-and-Stop at k = 1) and the LUCB family (LUCB, KL-LUCB, LUCB++,
lil'RandLUCB), slower per episode, play the first :data:`EPISODES` of them. Every
comparison is paired on the episodes both agents played.

The fitted boundaries ship in ``topk_bench/pretrained/learned-stopping/boundaries.json``;
:func:`experiment_config` writes the experiment from it
(``topk_bench/experiments/learned-stopping.toml`` is its output, checked by
``tests/test_learned_stopping.py``), so ``topk-bench run learned-stopping`` plays them
without refitting. ``python -m topk_bench.experiments.learned_stopping train`` fits them again
(:func:`agents.bayesian.learned_stop.train`, about 9-16 CPU-minutes per (k, seed)) and writes
the JSON; ``config`` prints the TOML.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["refit", "BOUNDARIES", "experiment_config", "target_of", "train_all"]

#: The shipped boundaries.
BOUNDARIES = (
    Path(__file__).resolve().parent.parent / "pretrained" / "learned-stopping" / "boundaries.json"
)
N_ARMS, KS, DELTAS, SEEDS = 10, (1, 3), (0.1, 0.05), (0, 1, 2)
#: Pull cap (truncation); held-out episodes per point of the frequentist agents, and of
#: the Bayesian ones (learned stops, posterior stops).
CAP, EPISODES, BAYES_EPISODES = 20_000, 2000, 20_000
#: Training episodes per (k, seed) (the boundary's shape), calibration episodes (its
#: level) and the recording floor of the posterior error.
TRAIN_EPISODES, CALIBRATION_EPISODES, FLOOR = 800, 2400, 5e-4
#: Standard errors of the held-out error estimate between a fit's target and delta.
TARGET_Z = 4.5
_FREQUENTIST = (
    ("t3c", "T3C", "GLR"),
    ("eb_tc", "EB-TC", "GLR"),
    ("track_and_stop", "Track-and-Stop", "GLR"),
    ("lucb", "LUCB", "LUCB"),
    ("kl_lucb", "KL-LUCB", "LUCB"),
    ("lucb_pp", "LUCB++", "LUCB"),
    ("lil_rand_lucb", "lil'RandLUCB", "LUCB"),
)


def target_of(delta: float, episodes: int = BAYES_EPISODES, z: float = TARGET_Z) -> float:
    """The fit's target: ``z`` standard errors of an ``episodes``-episode estimate of an
    error rate ``delta`` below ``delta``, rounded to 4 decimals.

    The held-out Clopper-Pearson 95% upper bound lies about 2 standard errors above the
    observed rate, so with ``z = 4.5`` it exceeds delta only if the observed rate exceeds
    the target by 2.5 standard errors: probability about 0.6% per boundary when the
    calibrated error equals the target (about 7% that one of the twelve does)."""
    return round(delta - z * math.sqrt(delta / episodes), 4)


def train_all(
    seeds: Sequence[int] = SEEDS,
    *,
    episodes: int = TRAIN_EPISODES,
    calibration_episodes: int = CALIBRATION_EPISODES,
    cap: int = CAP,
    records: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Fit every boundary of the experiment (:func:`agents.bayesian.learned_stop.train`);
    ``records``: a directory that keeps the records (``rec-kK-sS.npz``), read when
    present."""
    from dataclasses import asdict

    from agents.bayesian.learned_stop import train

    out = []
    for k in KS:
        for seed in seeds:
            targets = [target_of(d) for d in DELTAS]
            fitted = train(
                N_ARMS,
                k,
                targets=targets,
                seed=seed,
                cap=cap,
                floor=FLOOR,
                episodes=episodes,
                calibration_episodes=calibration_episodes,
                records=None if records is None else Path(records) / f"rec-k{k}-s{seed}.npz",
            )
            for delta, bnd in zip(DELTAS, fitted, strict=True):
                entry = asdict(bnd)
                entry["fit"]["delta"] = delta
                out.append(entry)
    return out


def _label(delta: float, name: str) -> str:
    return f"{name} (delta {delta})"


def experiment_config(boundaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The experiment's config from the fitted ``boundaries`` (the JSON's entries)."""
    agents: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    for delta in DELTAS:
        for level in (delta, target_of(delta)):  # the yardstick at delta and at the target
            agents.append(
                {
                    "name": "bayes_ttts",
                    "label": _label(level, "TTTS, posterior stop"),
                    "params": {"delta": level},
                }
            )
        for name, label, _ in _FREQUENTIST:
            agents.append(
                {
                    "name": name,
                    "label": _label(delta, label),
                    "params": {"delta": delta},
                    "runs": EPISODES,
                }
            )
    for bnd in boundaries:
        fit = bnd["fit"]
        agents.append(
            {
                "name": "learned_stop",
                "label": f"learned stop k={fit['k']} (delta {fit['delta']}, seed {fit['seed']})",
                "params": {
                    "knots": list(bnd["knots"]),
                    "deltas": [round(d, 6) for d in bnd["deltas"]],
                    # the family the boundary was fitted to: the agent warns off it
                    "family": {"n": fit["n"], "k": fit["k"], "delta": fit["delta"]},
                },
            }
        )
    for k in KS:
        for delta in DELTAS:
            names = [
                _label(delta, "TTTS, posterior stop"),
                _label(target_of(delta), "TTTS, posterior stop"),
            ]
            names += [
                _label(delta, label)
                for name, label, _ in _FREQUENTIST
                if not (name == "track_and_stop" and k > 1)
            ]
            names += [
                a["label"]
                for a in agents
                if a["label"].startswith(f"learned stop k={k} (delta {delta},")
            ]
            points.append(
                {
                    "label": f"k = {k}, delta = {delta}",
                    "panel": f"k = {k}",
                    "env": {"k": k},
                    "x": delta,
                    "agents": names,
                }
            )
    return {
        "name": "learned-stopping",
        "fitted_by": "topk_bench.experiments.learned_stopping",
        "description": (
            "Fixed confidence on a prior family: 10 Bernoulli arms whose means are drawn from "
            "Beta(1, 1) per episode, k = 1 and 3, one pull per step, truncated at 20,000 pulls, "
            "targets delta = 0.1 and 0.05. A learned stop (top-two Thompson sampling stopped on a "
            "boundary delta_t fitted to the prior on simulated episodes, three training seeds) "
            "against the Bayesian yardstick (the same sampling rule stopped when the posterior "
            "probability of its answer reaches 1 - delta), the GLR agents and the LUCB family, on "
            "the same held-out episodes. The learned stop and the yardstick guarantee an error "
            "averaged over the prior; the frequentist agents guarantee it on every instance."
        ),
        "reference": (
            "Russo, 'Simple Bayesian algorithms for best-arm identification', Operations Research "
            "2020 (TTTS); Zhang, Jain & Jamieson, 'Learning to Actively Learn: A Robust Approach', "
            "arXiv:2010.15382 (learned prior-aware policies); Garivier & Kaufmann, COLT 2016 "
            "(Track-and-Stop, GLR stopping); Jourdan, Degenne, Kaufmann, NeurIPS 2022 (T3C, "
            "EB-TC); Kalyanakrishnan et al., ICML 2012 (LUCB); Kaufmann & Kalyanakrishnan, COLT "
            "2013 (KL-LUCB); Simchowitz, Jamieson, Recht, COLT 2017 (LUCB++); Jiang, Li, Qiao, "
            "arXiv:1705.06894 (lil'RandLUCB)."
        ),
        "metrics": ["pulls", "misidentified", "truncated"],
        "runs": BAYES_EPISODES,
        "x": "delta",
        "env": {
            "setting": "fixed_confidence",
            "batch_size": 1,
            "repeat_limit": 1,
            "max_batches": CAP,
            "instance": "uniform-random",
            "n_arms": N_ARMS,
        },
        "agents": agents,
        "points": points,
        "plot": {"logy": ["pulls"], "binary_ci": "clopper-pearson"},
        "reduced": {"runs": 4, "env": {"max_batches": 2000}},
    }


def refit(path: str | Path, *, quick: bool = False) -> dict[str, Any]:
    """The experiment's config from parameters fitted anew into ``path`` (JSON), or read
    from it when it exists (a resumed ``topk-bench run --retrain``); ``quick``: a few
    training episodes (``--reduced``: tests the pipeline, not the fit)."""
    from topk_bench.generated import fitted_json

    fits = fitted_json(
        path,
        lambda: train_all(episodes=8, calibration_episodes=8, cap=2000) if quick else train_all(),
    )
    return experiment_config(fits)


def to_toml(cfg: Mapping[str, Any]) -> str:
    """The config as TOML (the shipped file's text)."""
    from topk_bench.generated import generated_toml

    return generated_toml(
        dict(cfg),
        "topk_bench.experiments.learned_stopping",
        "topk_bench/pretrained/learned-stopping/boundaries.json",
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m topk_bench.experiments.learned_stopping")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("config", help="print the experiment's TOML (from the shipped boundaries)")
    tr = sub.add_parser("train", help="fit every boundary and write the JSON")
    tr.add_argument("--out", type=Path, default=BOUNDARIES)
    tr.add_argument("--episodes", type=int, default=TRAIN_EPISODES)
    tr.add_argument("--calibration-episodes", type=int, default=CALIBRATION_EPISODES)
    tr.add_argument("--records", type=Path, help="a directory that keeps the records")
    args = p.parse_args(argv)
    if args.cmd == "config":
        print(to_toml(experiment_config(json.loads(BOUNDARIES.read_text()))), end="")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                train_all(
                    episodes=args.episodes,
                    calibration_episodes=args.calibration_episodes,
                    records=args.records,
                ),
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
