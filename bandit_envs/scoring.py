"""Top-k selection and the scores of a recommended set.

Shared by the environments (terminal reward and ``info``) and the agents (their
answers), so that both break ties and count regret in exactly one way.

* Aggregate regret of a set ``T`` with ``|T| = k`` (Zhou et al. 2014, eq. 1)::

      regret(T) = (1/k) * (sum of the k largest means - sum of the means in T)

* Ties in the true means: the top-k set may not be unique. A set counts as correct
  (``misidentified = False``, regret exactly 0) whenever it attains the best total,
  i.e. it holds every arm whose mean is above the k-th largest mean and fills the rest
  with arms whose mean equals it. ``precision`` is the largest overlap of ``T`` with
  any optimal set, divided by k (without ties: ``|T ∩ top-k| / k``).
* Ties between equal *empirical* values are broken uniformly at random with the
  caller's generator, never by lowest index (several papers' setups put the best arms
  at the lowest indices, where an index rule shifts the results markedly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Score", "top_k", "score", "true_top_k"]


def top_k(values: np.ndarray, k: int, rng: np.random.Generator | None) -> np.ndarray:
    """Indices of the ``k`` largest entries of ``values``, sorted ascending.

    Ties at the boundary are broken uniformly at random with ``rng``; with
    ``rng=None`` they go to the lowest index (deterministic, used for the true set).
    ``-inf`` entries (for example never-pulled arms) are chosen only when needed.
    Runs in O(n).
    """
    values = np.asarray(values)
    n = values.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must satisfy 1 <= k <= n={n}, the number of values to choose from")
    if k == n:
        return np.arange(n)
    threshold = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > threshold)
    tied = np.flatnonzero(values == threshold)
    need = k - above.size
    if need == tied.size:
        chosen = tied
    elif rng is None:
        chosen = tied[:need]
    else:
        chosen = rng.choice(tied, size=need, replace=False)
    return np.sort(np.concatenate((above, chosen)))


def true_top_k(means: np.ndarray, k: int) -> np.ndarray:
    """One optimal set (ties in the true means go to the lowest index)."""
    return top_k(means, k, rng=None)


@dataclass(frozen=True)
class Score:
    """How good a recommended set is, judged from the true means."""

    aggregate_regret: float
    misidentified: bool
    precision: float

    def as_dict(self) -> dict[str, float | bool]:
        """The three numbers as plain Python values."""
        return {
            "aggregate_regret": self.aggregate_regret,
            "misidentified": self.misidentified,
            "precision": self.precision,
        }


def score(means: np.ndarray, recommendation: np.ndarray, k: int) -> Score:
    """Score a set of ``k`` distinct arm indices against the true ``means``.

    Exact under ties (see the module docstring): a correct set has regret 0.0 exactly,
    not a float rounding residue.
    """
    means = np.asarray(means, dtype=np.float64)
    rec = np.asarray(recommendation)
    if rec.shape != (k,) or np.unique(rec).size != k:
        raise ValueError(f"recommendation {rec!r} must hold exactly k={k} distinct arms")
    n = means.shape[0]
    threshold = np.partition(means, n - k)[n - k]
    rec_means = means[rec]
    n_above = int(np.count_nonzero(means > threshold))
    rec_above = int(np.count_nonzero(rec_means > threshold))
    rec_tied = int(np.count_nonzero(rec_means == threshold))
    overlap = rec_above + min(rec_tied, k - n_above)
    correct = overlap == k
    if correct:
        regret = 0.0
    else:
        best = float(np.sum(np.partition(means, n - k)[n - k :]))
        regret = max(0.0, (best - float(np.sum(rec_means))) / k)
    return Score(aggregate_regret=regret, misidentified=not correct, precision=overlap / k)
