"""Fit ``zero_shot``'s parameters on the episodes of :mod:`agents.zero_shot.generator`.

``python -m agents.zero_shot.fit --retrain`` refits both settings and writes
``agents/zero_shot/fitted.toml`` (the shipped parameters); ``--seed S --out FILE`` fits
with another seed elsewhere (the extra training seeds of the learned-zero-shot page);
``--retrain --confidence-only`` refits fixed confidence alone and keeps the fixed-budget
section (and the top-level numbers of its fit) of ``--params``, ``--retrain
--misidentification-only`` likewise the misidentification threshold; without ``--retrain``
the parameters of ``--params`` (default: the shipped ones) are evaluated on held-out
problems of the generator.

Fixed budget: the cross-entropy method (Rubinstein & Kroese, *The Cross-Entropy Method*,
Springer 2004) over the score's weights, starting at zero (Gaussian KG* on the
empirical-Bayes posterior), each candidate scored on the same episodes (common random
numbers) by the mean over problems of ``mean regret / uniform's mean regret`` (aggregate
regret, Zhou et al. 2014 eq. (1); uniform's regret on the same episodes, floored at
1e-4, makes problems of different scales comparable). The distribution's mean of every
generation (the first is zero) is scored on the same episodes, and the best of them is
kept: on the shipped fit that is a small step from zero (``fitted.toml``'s ``history``:
the score's loss changes by under 1%, within the noise of 384 episodes), so the
structure of the score, not its weights, carries the agent.

Fixed confidence: a grid over the Top-Two leader rule (empirical best or Thompson
sample), the leader probability ``beta`` in {0.4, 0.5, 0.6}, how it is realised
(tracking or a coin) and forced exploration (on or off): 24 candidates, each scored by
the mean over problems of ``log(mean samples / EB-TC's mean samples)`` on
fixed-confidence problems of the generator (n in 3..30, a gap of at least 0.05 at the
top-k boundary, delta 0.01 or 0.1, one pull per batch, the GLR stop with the ``"log"``
threshold; 40 problems, 10 runs each); the stop is the same for every candidate, so the
fit chooses only what to sample.

Fixed budget on the misidentification objective: the index rule and the fitted Top-Two
rule (without its stop) play the same episodes of 200 problems of the generator with
budgets of 3 to 600 pulls per arm, each on one draw of its means with a gap of at least
0.02 at the top-k boundary (20 episodes each, the env's objective
``"misidentification"``); ``top_two_from``, the pulls per arm from which the Top-Two rule
plays, is the value of :data:`TOP_TWO_FROM` whose choice of rule per problem has the
least mean misidentification rate (ties to the larger value: the index rule unless the
Top-Two rule does better). ``--retrain --misidentification-only`` refits it alone.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.zero_shot import generator, index
from agents.zero_shot.agent import FITTED_PATH, ZeroShot, load_fitted, pulls_per_arm

__all__ = [
    "Episode",
    "episodes",
    "fit_budget",
    "fit_confidence",
    "fit_misidentification",
    "main",
    "regrets",
]

#: the fixed-confidence grid: leader rule x beta x tracking x forced exploration.
LEADERS = ("eb", "ts")
BETAS = (0.4, 0.5, 0.6)
TRACKING = (True, False)
FORCED = (True, False)
#: the candidate thresholds of the misidentification fit, in pulls per arm.
TOP_TWO_FROM = (0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, math.inf)
#: the least gap at the top-k boundary of the misidentification fit's problems.
MISID_GAP = 0.02


@dataclass(frozen=True)
class Episode:
    """One training episode: its problem, means and env seed."""

    spec: generator.Spec
    means: np.ndarray
    seed: int


def episodes(specs: Sequence[generator.Spec], per_spec: int, seed: int) -> list[Episode]:
    """``per_spec`` episodes of every problem (means drawn from the problem's shape)."""
    out = []
    for p, spec in enumerate(specs):
        rng = np.random.default_rng([seed, p, 0xE915])
        for _ in range(per_spec):
            out.append(Episode(spec, spec.means(rng), int(rng.integers(2**31))))
    return out


def _play(agent: Any, eps: Sequence[Episode], metric: str) -> np.ndarray:
    from agents.runner import run_episode

    values = np.empty(len(eps))
    for j, e in enumerate(eps):
        res = run_episode(generator.make_env(e.spec, e.means), agent, seed=e.seed)
        values[j] = getattr(res, metric)
    return values


def regrets(weights: Sequence[float] | None, eps: Sequence[Episode]) -> np.ndarray:
    """Aggregate regret per episode of ``zero_shot`` with ``weights`` (``None``: uniform)."""
    if weights is None:
        from agents.elimination.uniform import Uniform

        agent: Any = Uniform(seed=0)
    else:
        agent = ZeroShot(weights=list(weights), seed=0)
    return _play(agent, eps, "aggregate_regret")


def _by_problem(values: np.ndarray, per_spec: int) -> np.ndarray:
    return values.reshape(-1, per_spec).mean(axis=1)


def _budget_loss(args: tuple[Sequence[float], Sequence[Episode], np.ndarray, int]) -> float:
    weights, eps, scale, per_spec = args
    return float(np.mean(_by_problem(regrets(weights, eps), per_spec) / scale))


def fit_budget(
    seed: int = 0,
    problems: int = 48,
    per_problem: int = 6,
    iterations: int = 4,
    population: int = 16,
    elite: int = 4,
    jobs: int = 2,
    log: Any = print,
) -> dict[str, Any]:
    """The cross-entropy fit of the fixed-budget weights (module docstring)."""
    specs = generator.draw_specs(problems, seed)
    eps = episodes(specs, per_problem, seed)
    scale = np.maximum(_by_problem(regrets(None, eps), per_problem), 1e-4)
    rng = np.random.default_rng([seed, 0xCE])
    mean = np.zeros(index.N_WEIGHTS)
    std = np.full(index.N_WEIGHTS, 0.5)
    ctx = multiprocessing.get_context("fork")
    means, losses_of_means = [], []
    with ctx.Pool(jobs) as pool:
        for it in range(iterations):
            cands = [mean.copy()] + [
                mean + std * rng.standard_normal(mean.size) for _ in range(population - 1)
            ]
            losses = np.array(pool.map(_budget_loss, [(c, eps, scale, per_problem) for c in cands]))
            means.append(mean.copy())
            losses_of_means.append(float(losses[0]))
            order = np.argsort(losses)
            best = np.array([cands[j] for j in order[:elite]])
            mean = best.mean(axis=0)
            std = np.maximum(best.std(axis=0), 0.05)
            log(
                f"iteration {it + 1}: mean's loss {losses[0]:.4f}, best {losses[order[0]]:.4f}, "
                f"new mean {np.round(mean, 4).tolist()}"
            )
        means.append(mean.copy())
        losses_of_means.append(pool.map(_budget_loss, [(mean, eps, scale, per_problem)])[0])
    pick = int(np.argmin(losses_of_means))
    log(f"means' losses {np.round(losses_of_means, 4).tolist()}: keeping mean {pick}")
    return {
        "weights": [round(float(w), 4) for w in means[pick]],
        "loss": round(losses_of_means[pick], 4),
        "loss_at_zero": round(losses_of_means[0], 4),
        "history": [round(h, 4) for h in losses_of_means],
    }


def _confidence_specs(count: int, seed: int) -> list[tuple[generator.Spec, np.ndarray, float]]:
    """Fixed-confidence problems: generator draws with n in 3..30 and a boundary gap >= 0.05."""
    rng = np.random.default_rng([seed, 0xFC])
    out = []
    j = 0
    while len(out) < count:
        j += 1
        (spec,) = generator.draw_specs(1, seed * 100_003 + j)
        n = int(rng.integers(3, 31))
        spec = replace(
            spec,
            n=n,
            k=min(spec.k, n - 1),
            budget=None,
            max_batches=2_000_000,
            batch_size=1,
            repeat_limit=1,
        )
        means = spec.means(rng)
        top = np.sort(means)[::-1]
        if top[spec.k - 1] - top[spec.k] < 0.05:
            continue
        out.append((spec, means, 0.01 if rng.random() < 0.5 else 0.1))
    return out


#: a fixed-confidence candidate: (leader, beta, tracking, forced); leader "eb_tc": EB-TC.
Candidate = tuple[str, float, bool, bool]


def _samples(args: tuple[Candidate, Sequence[tuple[Any, np.ndarray, float]], int]) -> np.ndarray:
    from agents.glr.top_two import EBTC
    from agents.runner import run_episode

    (leader, beta, tracking, forced), probs, runs = args
    out = np.empty((len(probs), runs, 2))
    for p, (spec, means, delta) in enumerate(probs):
        for run in range(runs):
            agent: Any = (
                EBTC(delta=delta, seed=run)
                if leader == "eb_tc"
                else ZeroShot(
                    delta=delta,
                    leader=leader,
                    beta=beta,
                    tracking=tracking,
                    forced=forced,
                    seed=run,
                )
            )
            env = generator.make_env(spec, means, setting="fixed_confidence")
            res = run_episode(env, agent, seed=1000 * p + run)
            out[p, run] = res.pulls, res.misidentified
    return out


def fit_confidence(
    seed: int = 0, problems: int = 40, runs: int = 10, jobs: int = 2, log: Any = print
) -> dict[str, Any]:
    """The grid fit of fixed confidence's sampling rule (module docstring): the leader
    rule, ``beta``, tracking and forced exploration of least loss, with its loss, its
    error rate over the episodes and the fit's CPU time (process and workers)."""
    start = _cpu_seconds()
    probs = _confidence_specs(problems, seed)
    grid: list[Candidate] = [("eb_tc", 0.5, True, True)] + [
        (lead, b, tr, fo) for lead in LEADERS for b in BETAS for tr in TRACKING for fo in FORCED
    ]
    pool = multiprocessing.get_context("fork").Pool(jobs)
    try:
        results = pool.map(_samples, [(cand, probs, runs) for cand in grid])
    finally:
        pool.close()
        pool.join()  # (the workers' CPU time counts once they are waited for)
    ref = results[0][:, :, 0].mean(axis=1)
    table = []
    for (lead, b, tr, fo), res in zip(grid[1:], results[1:], strict=True):
        loss = float(np.mean(np.log(res[:, :, 0].mean(axis=1) / ref)))
        error = float(res[:, :, 1].mean())
        table.append((loss, lead, b, tr, fo, error))
        log(
            f"leader {lead}, beta {b}, tracking {tr}, forced {fo}: "
            f"log samples / EB-TC's {loss:+.4f}, error {error:.4f}"
        )
    loss, lead, b, tr, fo, error = min(table)
    ref_error = results[0][:, :, 1].mean()
    log(
        f"fitted: leader {lead}, beta {b}, tracking {tr}, forced {fo} ({loss:+.4f}; "
        f"EB-TC's error {ref_error:.4f})"
    )
    return {
        "leader": lead,
        "beta": b,
        "tracking": tr,
        "forced": fo,
        "loss": round(loss, 4),
        "error": round(error, 4),
        "cpu_seconds": round(_cpu_seconds() - start, 1),
    }


def _misidentified(args: tuple[float, Sequence[Episode], Sequence[float]]) -> np.ndarray:
    """Misidentification per episode with ``top_two_from`` (the fitted sampling rules)."""
    from agents.runner import run_episode

    top_two_from, eps, _ = args
    agent = ZeroShot(top_two_from=top_two_from, seed=0)
    values = np.empty(len(eps))
    for j, e in enumerate(eps):
        env = generator.make_env(e.spec, e.means, objective="misidentification")
        values[j] = run_episode(env, agent, seed=e.seed).misidentified
    return values


def fit_misidentification(
    seed: int = 0, problems: int = 200, per_problem: int = 20, jobs: int = 2, log: Any = print
) -> dict[str, Any]:
    """The threshold of fixed budget on the misidentification objective (module
    docstring): ``top_two_from``, its loss, the losses of every candidate (index rule
    alone: ``math.inf``; Top-Two alone: ``0``) and the fit's CPU time."""
    start = _cpu_seconds()
    eps = _misidentification_episodes(problems, per_problem, seed)
    specs = [e.spec for e in eps[::per_problem]]
    chunks = [list(range(j, len(eps), jobs)) for j in range(jobs)]
    tasks = [(rule, [eps[i] for i in c], c) for rule in (math.inf, 0.0) for c in chunks]
    if jobs == 1:
        results = [_misidentified(task) for task in tasks]
    else:
        pool = multiprocessing.get_context("fork").Pool(jobs)
        try:
            results = pool.map(_misidentified, tasks)
        finally:
            pool.close()
            pool.join()  # (the workers' CPU time counts once they are waited for)
    by_rule = {math.inf: np.empty(len(eps)), 0.0: np.empty(len(eps))}
    for (rule, _, c), values in zip(tasks, results, strict=True):
        by_rule[rule][c] = values
    index_rate = _by_problem(by_rule[math.inf], per_problem)
    top_two_rate = _by_problem(by_rule[0.0], per_problem)
    per_arm = np.array([pulls_per_arm(_SpecProblem(s)) for s in specs], dtype=float)
    losses = [
        float(np.mean(np.where(per_arm >= c, top_two_rate, index_rate))) for c in TOP_TWO_FROM
    ]
    pick = min(range(len(losses)), key=lambda j: (losses[j], -j))
    for c, loss in zip(TOP_TWO_FROM, losses, strict=True):
        log(f"top_two_from {c:g}: misidentification {loss:.4f}")
    log(f"fitted: top_two_from {TOP_TWO_FROM[pick]:g} ({losses[pick]:.4f})")
    return {
        "top_two_from": TOP_TWO_FROM[pick],
        "loss": round(losses[pick], 4),
        "candidates": list(TOP_TWO_FROM),
        "losses": [round(v, 4) for v in losses],
        "cpu_seconds": round(_cpu_seconds() - start, 1),
    }


def _misidentification_episodes(problems: int, per_problem: int, seed: int) -> list[Episode]:
    """Problems of the generator with budgets of 3 to 600 pulls per arm, each on one draw
    of its means with a gap of at least :data:`MISID_GAP` at the top-k boundary (else the
    exact set is a coin toss at any budget), ``per_problem`` episodes each."""
    rng = np.random.default_rng([seed, 0x315D])
    out: list[Episode] = []
    j = 0
    while len(out) < problems * per_problem:
        j += 1
        (spec,) = generator.draw_specs(1, 20_000 + seed * 100_003 + j, budget_per_arm=(3.0, 600.0))
        means = spec.means(rng)
        top = np.sort(means)[::-1]
        if top[spec.k - 1] - top[spec.k] < MISID_GAP:
            continue
        out += [Episode(spec, means, int(rng.integers(2**31))) for _ in range(per_problem)]
    return out


@dataclass(frozen=True)
class _SpecProblem:
    """A generator problem seen as an env's problem (for :func:`pulls_per_arm`)."""

    spec: generator.Spec

    def __getattr__(self, name: str) -> Any:
        return self.spec.n if name == "n_arms" else getattr(self.spec, name)


def _cpu_seconds() -> float:
    """CPU time of this process and its finished workers."""
    own, workers = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def write(
    path: Path,
    budget: dict[str, Any],
    confidence: dict[str, Any],
    meta: dict[str, Any],
    misidentification: dict[str, Any],
) -> None:
    """Write a ``fitted.toml`` (``meta``: top-level numbers, e.g. the seed and the cost)."""

    def value(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, float) and math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return json.dumps(v)  # numbers, strings, lists of numbers: valid TOML as JSON

    lines = ["# zero_shot's parameters, written by python -m agents.zero_shot.fit (see there)."]
    lines += [f"{key} = {value(v)}" for key, v in meta.items()]
    lines += ["", "[fixed_budget]"]
    lines += [
        f"{key} = {value(budget[key])}" for key in ("weights", "loss", "loss_at_zero", "history")
    ]
    lines += ["", "[fixed_confidence]"]
    keys = ("leader", "beta", "tracking", "forced", "loss", "error", "cpu_seconds")
    lines += [f"{key} = {value(confidence[key])}" for key in keys if key in confidence]
    lines += ["", "[misidentification]"]
    keys = ("top_two_from", "loss", "candidates", "losses", "cpu_seconds")
    lines += [
        f"{key} = {value(misidentification[key])}" for key in keys if key in misidentification
    ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.zero_shot.fit", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--retrain", action="store_true", help="fit and write --out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=FITTED_PATH)
    parser.add_argument("--params", type=Path, default=FITTED_PATH, help="evaluate these")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--problems", type=int, default=48)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument(
        "--confidence-only",
        action="store_true",
        help="with --retrain: refit fixed confidence only; keep --params' fixed budget",
    )
    parser.add_argument("--confidence-problems", type=int, default=40)
    parser.add_argument("--confidence-runs", type=int, default=10)
    parser.add_argument(
        "--misidentification-only",
        action="store_true",
        help="with --retrain: refit the misidentification threshold only; keep the rest "
        "of --params",
    )
    parser.add_argument("--misidentification-problems", type=int, default=200)
    parser.add_argument("--misidentification-runs", type=int, default=20)
    args = parser.parse_args(argv)
    for flag, on in (
        ("--confidence-only", args.confidence_only),
        ("--misidentification-only", args.misidentification_only),
    ):
        if on and not args.retrain:
            parser.error(f"{flag} needs --retrain")
    if args.confidence_only and args.misidentification_only:
        parser.error("--confidence-only and --misidentification-only: pick one (or neither)")

    def misidentification() -> dict[str, Any]:
        return fit_misidentification(
            seed=args.seed,
            problems=args.misidentification_problems,
            per_problem=args.misidentification_runs,
            jobs=args.jobs,
        )

    def confidence() -> dict[str, Any]:
        return fit_confidence(
            seed=args.seed,
            problems=args.confidence_problems,
            runs=args.confidence_runs,
            jobs=args.jobs,
        )

    if args.confidence_only or args.misidentification_only:
        fitted = load_fitted(args.params)
        if fitted.get("seed", args.seed) != args.seed:
            parser.error(
                f"--seed {args.seed}: the fixed budget of {args.params} was fitted with "
                f"seed {fitted['seed']}; pass --seed {fitted['seed']}"
            )
        conf = confidence() if args.confidence_only else fitted["fixed_confidence"]
        misid = misidentification() if args.misidentification_only else fitted["misidentification"]
        meta = {key: v for key, v in fitted.items() if not isinstance(v, dict)}
        write(args.out, fitted["fixed_budget"], conf, meta, misid)
        part = conf if args.confidence_only else misid
        name = "fixed confidence" if args.confidence_only else "misidentification"
        print(f"wrote {args.out} ({name}: {part['cpu_seconds']} CPU s)")
        return 0
    if not args.retrain:
        fitted = load_fitted(args.params)
        specs = generator.draw_specs(args.problems, 10_000 + args.seed)
        eps = episodes(specs, 6, 10_000 + args.seed)
        scale = np.maximum(_by_problem(regrets(None, eps), 6), 1e-4)
        for name, w in (
            ("zero", [0.0] * index.N_WEIGHTS),
            ("fitted", fitted["fixed_budget"]["weights"]),
        ):
            print(f"{name}: held-out loss {_budget_loss((w, eps, scale, 6)):.4f} (uniform = 1)")
        return 0
    wall = time.time()
    budget = fit_budget(
        seed=args.seed, problems=args.problems, iterations=args.iterations, jobs=args.jobs
    )
    print(f"fixed budget: {budget}", flush=True)
    conf = confidence()
    misid = misidentification()
    cpu = _cpu_seconds()
    meta = {
        "seed": args.seed,
        "problems": args.problems,
        "iterations": args.iterations,
        "cpu_seconds": round(cpu, 1),
        "wall_seconds": round(time.time() - wall, 1),
    }
    write(args.out, budget, conf, meta, misid)
    print(f"wrote {args.out} ({meta['cpu_seconds']} CPU s, {meta['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
