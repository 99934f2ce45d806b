"""KL-LUCB's shortcuts around the bisection (agents.lucb.kl_bounds) are sound.

``surely_above`` proves ``UCB > x`` (or ``LCB < -x``) from one divergence; a wrong
proof would change episodes only on rare rounds, so it is checked directly here, on
values ``x`` within a few ulps of the exact bound as well as far from it.
"""

from __future__ import annotations

import numba
import numpy as np

from agents.lucb import kl_bounds, layout, radii
from bandit_envs import divergences as dv


@numba.njit
def _proofs(prm, mus, counts, betas, offsets):
    """Per case: [wrong proofs, proofs] over x = key + offset (and its ulp neighbours)."""
    out = np.zeros(2, dtype=np.int64)
    for i in range(mus.shape[0]):
        for high in (False, True):
            exact = radii.kl_key(prm, mus[i], counts[i], betas[i], 0.0, high)
            x = exact + offsets[i]
            for _ in range(3):
                if kl_bounds.surely_above(prm, mus[i], counts[i], betas[i], x, high):
                    out[1] += 1
                    if not exact > x:
                        out[0] += 1
                x = np.nextafter(x, np.inf)
    return out


def _prm() -> np.ndarray:
    prm = np.zeros(layout.NP)
    prm[layout.P_RADIUS] = layout.RADIUS_KL
    prm[layout.P_FAMILY] = dv.BERNOULLI
    return prm


def test_surely_above_never_proves_a_false_bound() -> None:
    rng = np.random.default_rng(7)
    m = 200_000
    counts = rng.integers(1, 400, m)
    mus = rng.integers(0, 401, m) % (counts + 1) / counts  # proportions S / T
    betas = rng.uniform(1.0, 30.0, m)
    scale = 10.0 ** rng.uniform(-17, -6, m)
    offsets = scale * rng.choice([-1.0, 1.0], m)
    offsets[: m // 10] = 0.0  # x at the bound itself, then one and two ulps above
    wrong, proved = _proofs(_prm(), mus, counts, betas, offsets)
    assert wrong == 0
    assert proved > 0.3 * 6 * m  # (not vacuous: most x below the bound are proved)


def test_surely_above_proves_clear_cases() -> None:
    """x well below the bound (1e-9) is proved for nearly every case."""
    rng = np.random.default_rng(8)
    m = 20_000
    counts = rng.integers(1, 400, m)
    mus = rng.integers(0, 401, m) % (counts + 1) / counts
    betas = rng.uniform(1.0, 30.0, m)
    wrong, proved = _proofs(_prm(), mus, counts, betas, np.full(m, -1e-9))
    assert wrong == 0
    assert proved >= 0.99 * 6 * m
