"""Driver for ``benchmarks/best_arm_side_by_side.py``: episodes of the ``best-arm`` package.

Run with the Python of a separate virtual environment holding ``best-arm`` 0.1.1 (it
pins old numpy/scipy, so it never goes into the project's environment; see
``best_arm_side_by_side.py --best-arm-python``)::

    VENV/bin/python benchmarks/_best_arm_driver.py '{"algo": "eb_tc",
        "means": [0.5, 0.45, 0.43, 0.4], "delta": 0.1, "seeds": [1, 2], "cap": 60}'

Prints one JSON object: ``{"algo", "version", "episodes": [{"seed", "pulls", "cpu",
"answer", "capped"}]}``; ``cpu`` is ``time.process_time`` seconds for the episode
(building the algorithm and running it). An episode whose CPU time passes ``cap``
seconds is stopped at its next pull (``capped: true``, ``answer: null``); its pulls and
CPU time still give the cost per pull. Seeds go to ``np.random.seed`` (the package
draws everything from numpy's global generator).

The algorithms (``ALGOS``), as built from the package's classes (one fresh algorithm,
tracker and stopping rule per episode: ``Bandit.run_n`` shares the tracker, and
C-tracking keeps state in it):

* ``track_and_stop_D`` / ``track_and_stop_C``: ``TrackAndStop`` with ``DTracking`` /
  ``CTracking`` and ``ChernoffStoppingCondition("practice")``, threshold
  ``log((log t + 1) / delta)``;
* ``eb_tc``, ``eb_tci``, ``t3c``, ``ttts``: ``TopTwoBAI`` with ``beta = 1/2`` (a coin),
  leader ``EB``/``EB``/``TS``/``TS``, challenger ``TC``/``TCI``/``TC``/``RS``
  (resampling), the same Chernoff stopping rule;
* ``lucb``: ``LUCB1`` with ``LUCBStoppingCondition(epsilon=0)`` (LUCB1's radius, ``k1 = 5/4``);
* ``lil_ucb``: ``LilUCB(mode="heuristic")`` (eps = 0, beta = 1/2, lambda = 1 + 10/K,
  delta = nu/5) with its own stopping rule ``T_i >= 1 + lambda sum_{j != i} T_j``;
* ``lil_ucb_faithful``: ``LilUCB(mode="theory")`` (eps = 0.01, beta = 1, lambda = 9);
* ``exp_gap``: ``ExpGapElimination`` without stopping condition (Karnin et al. 2013);
* ``frank_wolfe``: ``FWS`` (Frank-Wolfe sampling, Wang, Tzeng, Proutiere 2021; its
  default ``r_exponent = 0.9``, ratio tracking) with the Chernoff stopping rule above;
* ``game_explorer``: ``AdaHedgeBestResponse`` (AdaHedge vs best response, Degenne,
  Koolen, Menard 2019; its default ``f(t) = log(t + 1)``) with the same stopping rule.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

ALGOS = (
    "track_and_stop_D",
    "track_and_stop_C",
    "eb_tc",
    "eb_tci",
    "t3c",
    "ttts",
    "lucb",
    "lil_ucb",
    "lil_ucb_faithful",
    "exp_gap",
    "frank_wolfe",
    "game_explorer",
)


class _Capped(Exception):
    pass


def _env(means, cap):
    from best_arm.environment import BernoulliEnvironment

    class CountingBernoulli(BernoulliEnvironment):
        """The package's Bernoulli environment (same ``sample``), counting pulls."""

        def __init__(self, probs, deadline):
            self.probs = list(probs)
            self.num_arms = len(self.probs)
            self.pulls = 0
            self.deadline = deadline

        def sample(self, arm):
            self.pulls += 1
            if not self.pulls & 7 and time.process_time() > self.deadline:
                raise _Capped
            return float(np.random.rand() < self.probs[arm])

    return CountingBernoulli(means, time.process_time() + cap)


def _algorithm(name, env, delta):
    from best_arm.algorithms.adahedge import AdaHedgeBestResponse
    from best_arm.algorithms.exp_gap_elim import ExpGapElimination
    from best_arm.algorithms.frank_wolfe import FWS
    from best_arm.algorithms.lil_ucb import LilUCB
    from best_arm.algorithms.lucb1 import LUCB1
    from best_arm.algorithms.top_two import TopTwoBAI
    from best_arm.algorithms.track_and_stop import CTracking, DTracking, TrackAndStop
    from best_arm.stopping_conditions import ChernoffStoppingCondition, LUCBStoppingCondition

    k = env.num_arms
    if name.startswith("track_and_stop_"):
        tracker = DTracking(k) if name.endswith("D") else CTracking(k)
        return TrackAndStop(env, delta, tracker, ChernoffStoppingCondition(mode="practice"))
    top_two = {
        "eb_tc": ("EB", "TC"),
        "eb_tci": ("EB", "TCI"),
        "t3c": ("TS", "TC"),
        "ttts": ("TS", "RS"),
    }
    if name in top_two:
        leader, challenger = top_two[name]
        return TopTwoBAI(
            env,
            delta,
            stopping_condition=ChernoffStoppingCondition(mode="practice"),
            beta=0.5,
            leader_type=leader,
            challenger_type=challenger,
        )
    if name == "lucb":
        return LUCB1(env, delta, stopping_condition=LUCBStoppingCondition(epsilon=0.0))
    if name == "lil_ucb":
        return LilUCB(env, delta, mode="heuristic")
    if name == "lil_ucb_faithful":
        return LilUCB(env, delta, mode="theory")
    if name == "exp_gap":
        return ExpGapElimination(env, delta)
    if name == "frank_wolfe":
        return FWS(env, delta, ChernoffStoppingCondition(mode="practice"))
    if name == "game_explorer":
        return AdaHedgeBestResponse(env, delta, ChernoffStoppingCondition(mode="practice"))
    raise ValueError(f"algo={name!r} must be one of {ALGOS}")


def run(spec: dict) -> dict:
    import best_arm

    episodes = []
    for seed in spec["seeds"]:
        np.random.seed(seed)
        start = time.process_time()
        env = _env(spec["means"], float(spec.get("cap", 1e9)))
        try:
            best, counts, _, _ = _algorithm(spec["algo"], env, float(spec["delta"])).run()
            answer, capped, pulls = int(best), False, int(np.sum(counts))
        except _Capped:
            answer, capped, pulls = None, True, env.pulls
        cpu = time.process_time() - start
        episodes.append(
            {"seed": seed, "pulls": pulls, "cpu": cpu, "answer": answer, "capped": capped}
        )
    return {"algo": spec["algo"], "version": best_arm.__version__, "episodes": episodes}


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
