"""The count buckets of CLUCB-PAC and AT-LUCB (:mod:`agents.engine.count_buckets`) stay consistent.

Random pulls (one arm per round, or one arm of each side as in AT-LUCB; means with many
ties) against the definition: every bucket holds exactly the arms of its count, its top
part and its other part are sorted by (mean, tie key), the top parts together are the
``k`` largest (mean, key), and no bucket is empty; including when every arm has its own
count (``n`` buckets).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import engine
from agents.engine import count_buckets as cb
from agents.engine.count_buckets import BCNT, BND, ORD, R_D, REG, SIDE, TB, WHR


def _ctx(n: int, k: int, rng: np.random.Generator) -> engine.Ctx:
    return engine.Ctx(
        counts=np.ones(n, dtype=np.int64),
        means=rng.random(n).round(1),
        status=np.zeros(n, dtype=np.int8),
        answer=np.zeros(k, dtype=np.int64),
        sched=np.zeros((engine.SCHED_ROWS, n), dtype=np.int64),
        iv=np.zeros(engine.NI, dtype=np.int64),
        fv=np.zeros(engine.NF),
        rng=np.random.default_rng(5),
    )


def _check(S: np.ndarray, F: np.ndarray, ctx: engine.Ctx, k: int) -> None:
    n = ctx.counts.shape[0]
    nd, order, bnd = S[REG, R_D], S[ORD], S[BND]
    assert sorted(order[:n].tolist()) == list(range(n))
    assert all(order[S[WHR, i]] == i for i in range(n))
    assert bnd[0] == 0 and bnd[2 * nd] == n
    assert list(S[BCNT, :nd]) == sorted(set(ctx.counts.tolist()))
    for d in range(nd):
        assert bnd[2 * d] < bnd[2 * d + 2]
        for part in (0, 1):
            seg = order[bnd[2 * d + part] : bnd[2 * d + part + 1]]
            assert all(ctx.counts[a] == S[BCNT, d] and S[SIDE, a] == part for a in seg)
            keys = [(ctx.means[a], F[TB, a]) for a in seg]
            assert keys == sorted(keys)
    ranked = sorted(range(n), key=lambda a: (ctx.means[a], F[TB, a]))
    assert sorted(ranked[n - k :]) == np.flatnonzero(S[SIDE, :n] == 0).tolist()


@pytest.mark.parametrize("n,k,per_round", [(12, 3, 2), (7, 1, 1), (30, 10, 2), (5, 4, 1)])
def test_buckets_follow_random_pulls(n: int, k: int, per_round: int) -> None:
    rng = np.random.default_rng(n)
    ctx = _ctx(n, k, rng)
    S, F = cb.build(ctx, k)
    _check(S, F, ctx, k)
    for _ in range(400):
        if per_round == 1:
            arms = rng.choice(n, size=1)
        else:  # AT-LUCB's round: one arm of each side
            side = S[SIDE, :n]
            arms = [rng.choice(np.flatnonzero(side == 0)), rng.choice(np.flatnonzero(side == 1))]
        for a in arms:
            ctx.counts[a] += 1
            ctx.means[a] = round(rng.random(), 1)
        for a in arms:
            cb.pulled(S, F, ctx, a)
        cb.repair_top(S, F, ctx.means)
        _check(S, F, ctx, k)
