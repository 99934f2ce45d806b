"""BatchRacing's batch path against full recomputation (fixed seeds).

* :func:`agents.engine.lowest_level.pick_lowest` and :func:`agents.engine.lowest_level.level_up`
  make the batch :func:`agents.engine.schedule` makes for a ``BATCH`` request over ``S`` (same arms,
  pulls and ``rng`` draws), over random two-level states;
* :mod:`agents.engine.level_bounds`: after each simulated batch of a sweep,
  :func:`~agents.engine.level_bounds.maybe_decided` is never ``False`` when some arm is
  accepted or rejected, and :func:`~agents.engine.level_bounds.check` on refreshed lists gives
  the thresholds of the sort of all bounds.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from agents import engine
from agents.elimination import batch_racing as br
from agents.engine import level_bounds as lb
from agents.engine import lowest_level


def _ctx(n: int, b: int | None, r: int | None, budget: int | None, seed: int) -> engine.Ctx:
    problem = SimpleNamespace(
        n_arms=n,
        k=1,
        batch_size=b,
        repeat_limit=r,
        budget=budget,
        max_batches=None,
        setting="fixed_budget",
        sigma=0.5,
    )
    return engine.make_ctx(problem, np.random.default_rng(seed), engine.RULE_STATUS)


def _bitmap(arms: np.ndarray, n: int) -> np.ndarray:
    bits = np.zeros(max(n, 2), dtype=np.int64)
    for a in arms:
        bits[a >> 6] |= np.int64(1) << np.int64(a & 63)
    return bits


@pytest.mark.parametrize("seed", range(6))
def test_agent_batches_are_the_engines(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kinds = {"lowest": 0, "level_up": 0}
    for trial in range(60):
        n = int(rng.integers(2, 200))
        m = int(rng.integers(1, n + 1))
        s = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
        c = int(rng.integers(0, 5))
        counts = np.zeros(n, dtype=np.int64)
        counts[s] = c + (rng.random(m) < rng.random())
        counts[s[rng.integers(m)]] = c  # someone at the lowest level
        b = [None, 2, 3, 8, 64][trial % 5]
        r = [None, 1, 2, 5][(trial // 5) % 4]
        if b is None and r is None:
            r = 2
        budget = None if rng.random() < 0.5 else int(rng.integers(1, 3 * m + 2)) + int(counts.sum())
        ref = _ctx(n, b, r, budget, 1000 + trial)
        mine = _ctx(n, b, r, budget, 1000 + trial)
        for ctx in (ref, mine):
            ctx.counts[:] = counts
            ctx.iv[engine.PULLS] = counts.sum()
        engine.request_batch(ref, s)
        engine.accept_request(ref, engine.BATCH)
        out = engine.schedule(ref)
        want = (
            ref.sched[engine.BATCH_ARMS, :out].copy(),
            ref.sched[engine.BATCH_REPS, :out].copy(),
        )
        total, supply, per_arm = lowest_level.batch_total(mine, m)
        assert total == int(want[1].sum())
        x = s[counts[s] == c]
        nx = x.shape[0]
        nw = (n + 63) >> 6
        xbits = _bitmap(x, n)
        virt = np.full(n, -1, dtype=np.int64)
        jpos = np.zeros(n, dtype=np.int64)
        rbits = np.zeros(nw, dtype=np.int64)
        picked = np.zeros(n, dtype=np.int64)
        if 0 < total < supply and nx > total:
            left = lowest_level.pick_lowest(xbits, nx, total, virt, jpos, rbits, mine.rng, picked)
            got = (picked[:total], np.ones(total, dtype=np.int64))
            assert left == nx - total
            assert np.array_equal(xbits, _bitmap(np.setdiff1d(x, picked[:total]), n))
            kinds["lowest"] += 1
        elif 0 < total < supply:
            arms = np.zeros(n, dtype=np.int64)
            reps = np.zeros(n, dtype=np.int64)
            cbits = np.zeros(nw, dtype=np.int64)
            nb, short = lowest_level.level_up(
                xbits,
                _bitmap(s, n),
                nw,
                nx,
                m,
                total,
                per_arm,
                virt,
                jpos,
                rbits,
                cbits,
                mine.rng,
                picked,
                arms,
                reps,
            )
            if nb < 0:
                assert total >= m  # the level rises by more than one: the engine's batch
                continue
            got = (arms[:nb], reps[:nb])
            after = counts.copy()
            after[arms[:nb]] += reps[:nb]
            assert np.array_equal(xbits, _bitmap(s[after[s] == c + 1], n))
            kinds["level_up"] += 1
        else:
            continue
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        assert np.all(virt == -1) and np.all(rbits == 0)
        assert mine.rng.random() == ref.rng.random()
    assert kinds["lowest"] > 5 and kinds["level_up"] > 5


def _exact(means, counts, s, m, table, kt):
    w = table[counts[s[:m]]]
    lo = np.sort(means[s[:m]] - w)[::-1]
    hi = np.sort(means[s[:m]] + w)[::-1]
    u_thr, l_thr = hi[kt], lo[kt - 1]
    return bool(lo[0] > u_thr or hi[-1] < l_thr), u_thr, l_thr


@pytest.mark.parametrize("seed", range(4))
def test_level_lists_against_recomputation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    decisive = 0
    for _ in range(40):
        n = int(rng.integers(3, 300))
        m = int(rng.integers(2, n + 1))
        s = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
        kt = int(rng.integers(1, m)) if rng.random() < 0.3 else int(rng.integers(1, min(m, 4)))
        c = int(rng.integers(1, 6))
        counts = np.zeros(n, dtype=np.int64)
        counts[s] = c + (rng.random(m) < 0.5)
        counts[s[0]] = c
        means = np.round(rng.normal(0.0, 1.0, n), 1)  # ties too
        if rng.random() < 0.5:  # a clear top: acceptances
            means[rng.choice(s, size=kt, replace=False)] += 3.0
        w = rng.uniform(0.3, 6.0)
        table = np.array([np.inf] + [w / np.sqrt(t) for t in range(1, 20)])
        nw = (n + 63) >> 6
        xbits = np.zeros(max(n, 2), dtype=np.int64)
        sbits = np.zeros(max(n, 2), dtype=np.int64)
        xt, yt, tmp = (np.zeros(max(n, 2), dtype=np.int64) for _ in range(3))
        xv = np.zeros(max(n, 2))
        cc, nx, nxt, nyt, xmin_v, xpad, ymin = lb.levels(
            counts, means, s, m, kt, xbits, sbits, nw, xt, xv, yt, tmp
        )
        assert cc == c and nx == int((counts[s] == c).sum())
        # two sweeps: arms of X move to Y a few at a time (new means), as BatchRacing's
        # batches do, then a batch ends the sweep (every arm of X and a few others pulled:
        # the levels move up, _after_level_up); the one-sided test never misses a
        # decision, and the exact one on refreshed lists is exact
        for _sweep in range(2):
            while True:
                args = (table[c], table[c + 1], kt)
                exact = _exact(means, counts, s, m, table, kt)
                maybe = lb.maybe_decided(
                    means, counts, c, xt, xv, nxt, nx, xmin_v, xpad, yt, nyt, ymin, *args
                )
                assert maybe or not exact[0]
                decisive += exact[0]
                fx = np.zeros(max(n, 2), dtype=np.int64)
                fxv = np.zeros(max(n, 2))
                fnxt, fxmin, _ = lb.refresh_x(means, xbits, nw, kt, fx, fxv, tmp)
                assert lb.check(means, fx, fnxt, yt, nyt, fxmin, ymin, *args) == exact
                x = lowest_level.bitmap_arms(xbits, nw, tmp)
                assert x == nx == int((counts[s] == c).sum())
                size = int(rng.integers(1, 5))
                if size >= nx:
                    break
                batch = rng.choice(tmp[:x], size=size, replace=False).astype(np.int64)
                for a in batch:
                    xbits[a >> 6] &= ~(np.int64(1) << np.int64(a & 63))
                    counts[a] += 1
                    means[a] = np.round(means[a] + rng.normal(0.0, 0.3), 1)
                nx -= size
                nyt, ymin = br._y_gained(means, batch, size, yt, nyt, kt, ymin)
            # the batch that ends the sweep: X once, plus extra pulls of arms of S
            extra = rng.choice(s, size=int(rng.integers(0, min(m, 4) + 1)), replace=False)
            if nyt > 0 and rng.random() < 0.5:  # some of Y's best: its list runs short
                extra = np.union1d(extra, rng.choice(yt[:nyt], size=min(nyt, 3), replace=False))
            reps = np.zeros(n, dtype=np.int64)
            reps[tmp[:nx]] += 1
            reps[extra] += 1
            arms = np.flatnonzero(reps).astype(np.int64)
            cut = means[yt[nyt - 1]] if nyt > 0 and m - nx > nyt else -np.inf
            ymin_v = means[ymin] if ymin >= 0 else np.inf
            counts[arms] += reps[arms]
            means[arms] = np.round(means[arms] + rng.normal(0.0, 1.5, arms.shape[0]), 1)
            nxt, nyt, xmin_v, xpad, ymin = br._after_level_up(
                counts, means, c, arms, arms.shape[0], yt, nyt, cut, ymin_v, kt, xt, xv, tmp
            )
            c += 1
            xbits[:] = _bitmap(s[counts[s] == c], n)
            nx = int((counts[s] == c).sum())
    assert decisive > 10


@pytest.mark.parametrize("seed", range(4))
def test_two_levels_against_recomputation(seed: int) -> None:
    """``two_levels``: the bitmaps of the places of S and of its lowest level, or -1 beyond
    two levels."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        m = int(rng.integers(1, n + 1))
        s = rng.choice(n, size=m, replace=False).astype(np.int64)
        counts = rng.integers(0, 100, size=n).astype(np.int64)
        spread = int(rng.integers(0, 4))
        counts[s] = int(rng.integers(0, 50)) + rng.integers(0, spread + 1, size=m)
        nw = (n + 63) >> 6
        sbits = np.full(nw, -1, dtype=np.int64)  # stale words must be cleared
        xbits = np.full(nw, -1, dtype=np.int64)
        nx = lowest_level.two_levels(counts, s, m, sbits, xbits, nw)
        c = counts[s].min()
        if counts[s].max() - c > 1:
            assert nx == -1
            continue
        places = np.flatnonzero(counts[s] == c)  # bits are places in the request s
        assert nx == places.shape[0]
        assert np.array_equal(sbits, _bitmap(np.arange(m), n)[:nw])
        assert np.array_equal(xbits, _bitmap(places, n)[:nw])


@pytest.mark.parametrize(("b", "r"), [(8, 1), (8, 2), (8, 8), (64, 64), (64, 5), (3, 2)])
def test_halving_batches_are_round_robin_over_the_survivors(b: int, r: int) -> None:
    """Halving's batches (drawn by :mod:`agents.engine.lowest_level` when they take the lowest
    level) are RoundRobin batches over ``S``: at most ``r`` pulls per arm, ``min(b, r |S|)``
    pulls, and a pull only goes to an arm of ``S`` with the fewest pulls counting the
    batch's own (water filling)."""
    import gymnasium as gym

    import agents

    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=150,
        k=5,
        budget=150 * 12,
        batch_size=b,
        repeat_limit=r,
        answer="agent",
    )
    agent = agents.make("halving")
    obs, _ = env.reset(seed=3)
    agent.reset(env.unwrapped.problem, seed=3)
    batches = 0
    while True:
        counts = env.unwrapped._counts.copy()
        action = agent.act(obs)
        surv = agent.surviving.copy()  # S of the batch's stage (a stage ends inside act)
        if int(obs.get("phase", 0)) == 0:
            batches += 1
            pulled = np.flatnonzero(action)
            assert np.isin(pulled, surv).all()
            assert action.max() <= r
            left = env.unwrapped.problem.budget - counts.sum()
            assert action.sum() == min(b, r * surv.shape[0], left)
            after = counts + action
            rest = np.setdiff1d(surv, pulled)
            for a in pulled:
                # its last pull went to an arm of S with the fewest pulls at that moment:
                # not more than any arm of S the batch left alone
                if rest.size:
                    assert after[a] - 1 <= counts[rest].min()
            assert after[surv].max() - after[surv].min() <= 1  # S stays at two levels
        obs, reward, term, trunc, info = env.step(action)
        agent.observe(action, obs, float(reward), term, trunc, info)
        if term or trunc:
            break
    assert batches > 20


@pytest.mark.parametrize("seed", range(4))
def test_after_level_up_lists_bound_the_new_levels(seed: int) -> None:
    """``_after_level_up`` against the levels recomputed from the counts: the new X's list
    holds X's largest means (decreasing) and ``xpad`` bounds every unlisted arm of X (the
    unpulled arms of the old Y below the old list's cut included); ``xmin_v`` bounds X
    from below; the new Y's list is its top ``k_t + 1`` and ``ymin`` its smallest mean."""
    rng = np.random.default_rng(seed)
    for trial in range(300):
        n = int(rng.integers(3, 120))
        kt = int(rng.integers(0, 6))
        c = int(rng.integers(1, 6))
        counts = c + (rng.random(n) < rng.random()).astype(np.int64)
        counts[rng.integers(n)] = c
        means = rng.random(n)
        if trial % 3 == 0:
            means = np.round(means, 1)  # ties
        x_old = np.flatnonzero(counts == c)
        y_old = np.flatnonzero(counts == c + 1)
        yt = np.zeros(n + 2, dtype=np.int64)
        nyt = lb.top_into(means, y_old, y_old.shape[0], kt + 1, yt)
        cut = means[yt[nyt - 1]] if nyt > 0 and y_old.shape[0] > nyt else -np.inf
        ymin_v = means[y_old].min() if y_old.size else np.inf
        # the batch: one pull for every arm of X, one more for `short` arms (of Y, or of S
        # when an arm may take two pulls), then the pulled arms' means move
        two = trial % 2 == 1
        pool = np.arange(n) if two else y_old
        short = int(rng.integers(0, pool.shape[0])) if pool.size else 0
        extra = np.sort(rng.choice(pool, size=short, replace=False)) if short else pool[:0]
        reps = np.zeros(n, dtype=np.int64)
        reps[x_old] += 1
        reps[extra] += 1
        batch = np.flatnonzero(reps).astype(np.int64)
        counts = counts + reps
        means = means.copy()
        means[batch] = np.round(rng.random(batch.shape[0]), 1 if trial % 3 == 0 else 12)
        xt = np.zeros(n + 2, dtype=np.int64)
        xv = np.zeros(n + 2)
        tmp = np.zeros(2 * n + 2, dtype=np.int64)
        nxt, nyt2, xmin_v, xpad, ymin = br._after_level_up(
            counts, means, c, batch, batch.shape[0], yt, nyt, cut, ymin_v, kt, xt, xv, tmp
        )
        x_new = np.flatnonzero(counts == c + 1)
        y_new = np.flatnonzero(counts == c + 2)
        listed = xt[:nxt]
        assert np.isin(listed, x_new).all() and np.unique(listed).size == nxt
        assert (np.diff(means[listed]) <= 0).all()
        assert np.array_equal(xv[:nxt], means[listed])
        rest = np.setdiff1d(x_new, listed)
        if rest.size:
            assert means[rest].max() <= xpad, (trial, means[rest].max(), xpad)
        if x_new.size:
            assert xmin_v <= means[x_new].min()
        assert nyt2 == min(kt + 1, y_new.shape[0])
        assert np.array_equal(np.sort(means[yt[:nyt2]])[::-1], np.sort(means[y_new])[::-1][:nyt2])
        if y_new.size:
            assert means[ymin] == means[y_new].min()
        else:
            assert ymin == -1
