"""The training episodes of ``zero_shot``: a generator of problems that is not the catalog.

Each problem (:class:`Spec`) is drawn independently by :func:`draw_specs`:

* **size**: ``n`` log-uniform on [4, 400] (whole numbers); ``k = max(1, round(n u))``,
  ``u`` uniform on [0.02, 0.5], then ``min(k, n - 1)``;
* **means** (``shape``), each with probability 1/3:

  - ``beta``: i.i.d. ``Beta(a, b)``, ``a`` and ``b`` log-uniform on [0.2, 5];
  - ``clusters``: 2 to 4 levels uniform on [0.05, 0.95], each arm at a level chosen with
    random (Dirichlet(1)) proportions, plus a normal jitter of standard deviation
    uniform on [0, 0.03], clipped to [0, 1];
  - ``power``: ``hi - (hi - lo) (i / (n - 1))^p`` for ``i = 0..n-1``, ``p`` log-uniform on
    [0.25, 4], ``lo < hi`` two uniform draws on [0, 1] sorted;

* **rewards**: Bernoulli (probability 0.75) or Gaussian (0.25) with ``sigma`` log-uniform on
  [0.1, 1] (the means as drawn);
* **budget**: ``n x`` a log-uniform factor on [3, 60] pulls (at least ``n + 1``; the fit
  of the misidentification objective draws the factor on [3, 600]);
* **batch model**: one pull per batch (probability 1/2); ``b`` log-uniform on [2, 64] with
  ``r`` uniform on 1..b and no limit on batches (1/4); or the same ``b``, ``r`` with
  ``max_batches = ceil(budget / b)`` and no pull budget (1/4).

Every episode of a problem shuffles its arms and, for ``beta`` and ``clusters``, draws new
means (the env's seed); the same seeds give the same episodes (``paired`` rewards), so
all candidate parameters of a fit play the same episodes (common random numbers).

The catalog's instances are the test: none of their definitions is a member here (the
``power`` shape with ``p = 1`` would be linear means, but ``p`` is continuous and the
endpoints are random).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Spec", "draw_specs", "make_env"]


@dataclass(frozen=True)
class Spec:
    """One training problem: the env's keyword arguments and how its means are drawn."""

    n: int
    k: int
    shape: str
    shape_params: dict[str, float] = field(default_factory=dict)
    distribution: str = "bernoulli"
    sigma: float | None = None
    budget: int | None = None
    batch_size: int | None = None
    repeat_limit: int | None = None
    max_batches: int | None = None

    def means(self, rng: np.random.Generator) -> np.ndarray:
        """One draw of the arms' means (before the env's shuffle)."""
        n, p = self.n, self.shape_params
        if self.shape == "beta":
            return rng.beta(p["a"], p["b"], size=n)
        if self.shape == "clusters":
            levels = np.array([p[f"level{j}"] for j in range(int(p["levels"]))])
            weights = rng.dirichlet(np.ones(len(levels)))
            which = rng.choice(len(levels), size=n, p=weights)
            return np.clip(levels[which] + rng.normal(0.0, p["jitter"], size=n), 0.0, 1.0)
        if self.shape == "power":
            x = np.arange(n) / max(n - 1, 1)
            return p["hi"] - (p["hi"] - p["lo"]) * x ** p["p"]
        raise ValueError(f"unknown shape {self.shape!r}")


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw_specs(
    count: int, seed: int, budget_per_arm: tuple[float, float] = (3.0, 60.0)
) -> list[Spec]:
    """``count`` problems of the generator (module docstring), reproducibly from ``seed``;
    ``budget_per_arm``: the range of the log-uniform budget factor (the same draws
    otherwise)."""
    lo_budget, hi_budget = budget_per_arm
    if not 1.0 <= lo_budget <= hi_budget:
        raise ValueError(f"budget_per_arm={budget_per_arm!r} must be (lo, hi) with 1 <= lo <= hi")
    rng = np.random.default_rng([seed, 0x2E50])
    specs = []
    for _ in range(count):
        n = int(round(_log_uniform(rng, 4, 400)))
        k = min(max(1, round(n * rng.uniform(0.02, 0.5))), n - 1)
        u = rng.random()
        if u < 1 / 3:
            shape, sp = "beta", {"a": _log_uniform(rng, 0.2, 5), "b": _log_uniform(rng, 0.2, 5)}
        elif u < 2 / 3:
            m = int(rng.integers(2, 5))
            sp = {"levels": float(m), "jitter": float(rng.uniform(0, 0.03))}
            sp.update({f"level{j}": float(rng.uniform(0.05, 0.95)) for j in range(m)})
            shape = "clusters"
        else:
            lo, hi = sorted(rng.random(2))
            shape, sp = "power", {"p": _log_uniform(rng, 0.25, 4), "lo": lo, "hi": hi}
        gauss = rng.random() < 0.25
        budget = max(n + 1, int(n * _log_uniform(rng, lo_budget, hi_budget)))
        v = rng.random()
        b = r = batches = None
        if v >= 0.5:
            b = int(round(_log_uniform(rng, 2, 64)))
            r = int(rng.integers(1, b + 1))
            if v >= 0.75:
                batches = -(-budget // b)
                budget = None
        specs.append(
            Spec(
                n=n,
                k=int(k),
                shape=shape,
                shape_params={key: float(val) for key, val in sp.items()},
                distribution="gaussian" if gauss else "bernoulli",
                sigma=_log_uniform(rng, 0.1, 1.0) if gauss else None,
                budget=budget,
                batch_size=b,
                repeat_limit=r,
                max_batches=batches,
            )
        )
    return specs


def make_env(spec: Spec, means: np.ndarray, **kwargs: Any) -> Any:
    """``TopK-Batch-v0`` playing ``spec`` on ``means`` (agent's answer, paired rewards)."""
    from bandit_envs.top_k_batch import TopKBatchEnv

    return TopKBatchEnv(
        k=spec.k,
        instance=np.asarray(means, dtype=float),
        distribution=spec.distribution,
        sigma=spec.sigma,
        budget=spec.budget,
        max_batches=spec.max_batches,
        batch_size=spec.batch_size,
        repeat_limit=spec.repeat_limit,
        answer="agent",
        paired=True,
        invalid_action="raise",
        **kwargs,
    )
