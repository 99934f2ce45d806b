"""Our agents against the ``best-arm`` package (0.1.1), side by side: CPU time per pull.

Each algorithm present in both libraries plays the same instances with the same
``delta = 0.1`` and, where both offer it, the same stopping threshold; the table gives
pulls and CPU time per episode (``time.process_time``) for both, and the speed ratio
``(their CPU per pull) / (our CPU per pull)`` against the target of 20x.

Instances (Bernoulli, ``k = 1``, fixed confidence):

* ``mu1``: Garivier & Kaufmann (2016)'s mu1 = (0.5, 0.45, 0.43, 0.4) (our catalog
  ``garivier2016-mu1``);
* ``n1000``: 1,000 arms, ``mu_1 = 0.9`` and 999 arms at 0.1 (an easy instance, so that
  the Python package finishes an episode of the GLR algorithms in reasonable time).

Ours: ``agents.run_episode(gym.make("TopK-Batch-v0", instance=..., k=1,
setting="fixed_confidence", batch_size=1, repeat_limit=1, max_batches=...),
agents.make(name, delta=0.1, ...), seed=s)``, seeds 1..N, after one warm-up episode
(seed 0: numba loads or compiles the kernels). Theirs: ``benchmarks/_best_arm_driver.py``
run by ``--best-arm-python`` (a separate venv: ``best-arm`` pins an older numpy and
scipy), seeds 1..N to ``np.random.seed``; an episode of theirs past ``--cap`` CPU
seconds is stopped and its cost per pull taken over the pulls it made (marked ``*``;
ours are truncated at ``MAX_PULLS`` pulls, also marked ``*``).

The pairs (ours <-> theirs, see the driver's docstring for theirs):

* ``track_and_stop`` D / C tracking <-> ``TrackAndStop`` + ``DTracking`` / ``CTracking``;
  threshold ``log((log t + 1)/delta)`` on both sides (ours ``threshold="log"``, theirs
  ``ChernoffStoppingCondition("practice")``);
* ``eb_tc``, ``eb_tci``, ``t3c`` (TS leader, TC challenger), ``ttts`` (TS leader,
  resampled challenger) <-> ``TopTwoBAI`` with ``beta = 1/2``, leader EB/EB/TS/TS and
  challenger TC/TCI/TC/RS, the same ``log`` threshold; ours are set to match theirs:
  a coin for ``beta`` (``tracking=False``) and no forced exploration (``forced=False``;
  our ``eb_tc`` defaults to tracking with forced exploration); our ``ttts`` caps the
  resampling at 1,000 draws (theirs does not);
* ``lucb`` <-> ``LUCB1`` + ``LUCBStoppingCondition(epsilon=0)``: LUCB1's radius
  ``sqrt(log(5/4 n t^4/delta)/(2u))`` and stop ``UCB_l < LCB_h`` on both;
* ``lil_ucb`` (``variant="heuristic"``) <-> ``LilUCB(mode="heuristic")`` and
  ``lil_ucb`` (``variant="faithful"``) <-> ``LilUCB(mode="theory")``: the same
  ``eps``, ``beta``, ``lambda`` and stop rule; the widths differ slightly (ours
  ``log(log((1 + eps) t + 2)/delta')``, theirs ``log(log((1 + eps) t)/delta')`` or
  ``log(log(1 + t)/delta')``);
* ``exp_gap`` <-> ``ExpGapElimination`` without stopping condition (Karnin et al. 2013);
* ``frank_wolfe`` (ratio tracking, ``r_t = t^-0.9 / K``) <-> ``FWS`` (Frank-Wolfe
  sampling, Wang, Tzeng, Proutiere 2021; ratio tracking, ``r_exponent = 0.9``), the same
  ``log`` threshold;
* ``game_explorer`` <-> ``AdaHedgeBestResponse`` (AdaHedge vs best response, Degenne,
  Koolen, Menard 2019), the same ``log`` threshold; the learners differ in details (ours
  one AdaHedge per candidate answer from ``Delta_0 = 0`` and ``f(t) = log t``; theirs one
  AdaHedge from 0.01 and ``f(t) = log(t + 1)``).

Usage::

    python benchmarks/best_arm_side_by_side.py --episodes 10 --big-episodes 1 --cap 60
    python benchmarks/best_arm_side_by_side.py --best-arm-python /missing  # ours only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

DEFAULT_PYTHON = "/work/venv-bestarm/bin/python"
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_best_arm_driver.py")
DELTA = 0.1
RULE = 20.0
#: our episodes stop (truncated, marked ``*``) after this many one-pull batches.
MAX_PULLS = 10**9
MU1 = (0.5, 0.45, 0.43, 0.4)
INSTANCES = ("mu1", "n1000")


@dataclass(frozen=True)
class Pair:
    label: str
    ours: str
    ours_kwargs: dict[str, Any] = field(default_factory=dict)
    theirs: str = ""
    big: bool = True  # also on the 1,000-arm instance


PAIRS = (
    Pair(
        "track_and_stop D",
        "track_and_stop",
        {"tracking": "D", "threshold": "log"},
        "track_and_stop_D",
    ),
    Pair(
        "track_and_stop C",
        "track_and_stop",
        {"tracking": "C", "threshold": "log"},
        "track_and_stop_C",
    ),
    Pair("eb_tc", "eb_tc", {"tracking": False, "forced": False, "threshold": "log"}, "eb_tc"),
    Pair("eb_tci", "eb_tci", {"tracking": False, "forced": False, "threshold": "log"}, "eb_tci"),
    Pair("t3c (TS-TC)", "t3c", {"tracking": False, "forced": False, "threshold": "log"}, "t3c"),
    Pair("ttts (TS-RS)", "ttts", {"tracking": False, "forced": False, "threshold": "log"}, "ttts"),
    Pair("lucb", "lucb", {"epsilon": 0.0}, "lucb"),
    Pair("lil_ucb heuristic", "lil_ucb", {"variant": "heuristic"}, "lil_ucb"),
    Pair("lil_ucb faithful", "lil_ucb", {"variant": "faithful"}, "lil_ucb_faithful", big=False),
    Pair("exp_gap", "exp_gap", {}, "exp_gap"),
    Pair("frank_wolfe", "frank_wolfe", {"tracking": "ratio", "threshold": "log"}, "frank_wolfe"),
    Pair("game_explorer", "game_explorer", {"threshold": "log"}, "game_explorer"),
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--best-arm-python",
        default=DEFAULT_PYTHON,
        help="Python of a venv with best-arm installed (default %(default)s)",
    )
    parser.add_argument("--episodes", type=int, default=10, help="episodes per algorithm on mu1")
    parser.add_argument(
        "--big-episodes",
        type=int,
        default=1,
        help="episodes per algorithm on the 1,000-arm instance",
    )
    parser.add_argument(
        "--cap",
        type=float,
        default=60.0,
        help="CPU seconds after which an episode of theirs is stopped",
    )
    parser.add_argument("--instances", nargs="*", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument(
        "--algorithms",
        nargs="*",
        default=None,
        help="labels' first words to keep (e.g. eb_tc lucb)",
    )
    parser.add_argument("--list", action="store_true", help="print the pairs and exit")
    args = parser.parse_args(argv)
    for name in ("episodes", "big_episodes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}={getattr(args, name)} must be >= 1")
    if args.cap <= 0:
        parser.error(f"--cap={args.cap} must be > 0")
    return args


def theirs_available(path: str) -> str | None:
    """``None`` if ``path`` can run the driver, else why not (the skip message)."""
    if not os.path.exists(path):
        return (
            f"best-arm side skipped: {path} does not exist (make it with "
            "`python -m venv /work/venv-bestarm && "
            "/work/venv-bestarm/bin/pip install best-arm`)"
        )
    if not os.access(path, os.X_OK):
        return f"best-arm side skipped: {path} is not executable"
    return None


def means_of(instance: str) -> list[float]:
    if instance == "mu1":
        return list(MU1)
    return [0.9] + [0.1] * 999


def run_ours(pair: Pair, instance: str, episodes: int) -> dict[str, Any]:
    import gymnasium as gym

    import agents
    import bandit_envs

    if instance == "mu1":
        inst = "garivier2016-mu1"
    else:
        inst = bandit_envs.instances.from_means(means_of(instance), k=1)
    env = gym.make(
        "TopK-Batch-v0",
        instance=inst,
        k=1,
        setting="fixed_confidence",
        batch_size=1,
        repeat_limit=1,
        max_batches=MAX_PULLS,
    )
    agent = agents.make(pair.ours, delta=DELTA, **pair.ours_kwargs)
    agents.run_episode(env, agent, seed=0)  # warm-up: numba loads (or compiles) the kernels
    pulls, cpu, errors, capped = [], [], 0, 0
    for seed in range(1, episodes + 1):
        start = time.process_time()
        res = agents.run_episode(env, agent, seed=seed)
        cpu.append(time.process_time() - start)
        pulls.append(res.pulls)
        errors += bool(res.misidentified)
        capped += bool(res.truncated)
    return {"pulls": pulls, "cpu": cpu, "errors": errors, "capped": capped}


def run_theirs(python: str, pair: Pair, instance: str, episodes: int, cap: float) -> dict[str, Any]:
    spec = {
        "algo": pair.theirs,
        "means": means_of(instance),
        "delta": DELTA,
        "seeds": list(range(1, episodes + 1)),
        "cap": cap,
    }
    out = subprocess.run(
        [python, DRIVER, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=episodes * (cap + 60) + 120,
    )
    if out.returncode != 0:
        raise RuntimeError(f"driver failed for {pair.theirs}: {out.stderr.strip()[-500:]}")
    eps = json.loads(out.stdout.strip().splitlines()[-1])["episodes"]
    best = 0  # the best arm is arm 0 on both instances
    return {
        "pulls": [e["pulls"] for e in eps],
        "cpu": [e["cpu"] for e in eps],
        "errors": sum(e["answer"] is not None and e["answer"] != best for e in eps),
        "capped": sum(e["capped"] for e in eps),
    }


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _per_pull(r: dict[str, Any]) -> float:
    return sum(r["cpu"]) / max(sum(r["pulls"]), 1)


def _fmt_side(r: dict[str, Any] | None) -> str:
    if r is None:
        return f"{'-':>10s} {'-':>10s} {'-':>9s}"
    star = "*" if r["capped"] else " "
    return f"{_mean(r['pulls']):10.0f}{star}{_mean(r['cpu']):10.4f} {_per_pull(r) * 1e6:9.2f}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pairs = [
        p
        for p in PAIRS
        if args.algorithms is None
        or p.label.split()[0] in args.algorithms
        or p.label in args.algorithms
    ]
    skip = theirs_available(args.best_arm_python)
    if args.list:
        for p in pairs:
            print(f"{p.label:20s} ours {p.ours}({p.ours_kwargs})  theirs {p.theirs}")
        if skip:
            print(skip)
        return 0
    if skip:
        print(skip)
    print(
        f"delta = {DELTA}, k = 1, Bernoulli; mu1 = {MU1}; n1000 = 0.9 + 999 x 0.1; "
        f"CPU time (process_time); ours after one warm-up episode; * = some episodes "
        f"stopped early (theirs at {args.cap:g} CPU s, ours at {MAX_PULLS:.0e} pulls; "
        f"cost per pull over the pulls made)"
    )
    header = (
        f"{'algorithm':20s} {'inst':5s} {'eps':>3s} | {'our pulls':>10s} {'our s/ep':>10s} "
        f"{'us/pull':>9s} {'err':>3s} | {'their pulls':>10s} {'their s/ep':>10s} "
        f"{'us/pull':>9s} {'err':>3s} | {'ratio':>8s} {'>=20x':>5s}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for instance in args.instances:
        episodes = args.episodes if instance == "mu1" else args.big_episodes
        for pair in pairs:
            if instance != "mu1" and not pair.big:
                continue
            ours = run_ours(pair, instance, episodes)
            theirs = None
            if not skip:
                try:
                    theirs = run_theirs(args.best_arm_python, pair, instance, episodes, args.cap)
                except (RuntimeError, subprocess.TimeoutExpired) as err:
                    print(f"{pair.label}: {err}")
            ratio = _per_pull(theirs) / _per_pull(ours) if theirs else None
            ok = "-" if ratio is None else ("yes" if ratio >= RULE else "NO")
            ratio_s = "-" if ratio is None else f"{ratio:.0f}"
            their_err = "-" if theirs is None else str(theirs["errors"])
            print(
                f"{pair.label:20s} {instance:5s} {episodes:3d} | "
                f"{_fmt_side(ours)} {ours['errors']:3d} | "
                f"{_fmt_side(theirs)} {their_err:>3s} | {ratio_s:>8s} {ok:>5s}",
                flush=True,
            )
            rows.append((pair.label, instance, ours, theirs, ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
