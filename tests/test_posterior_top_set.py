"""The top-k-set sampler of Beta and normal posteriors (``bayes_ttts``, T3C), its tails and
truncated draws.

The bounds are concentration inequalities at a fixed failure probability ``DELTA`` (the
seeds are fixed, so each test is deterministic; a correct sampler fails one with
probability at most ``DELTA`` over the choice of seeds):

* Dvoretzky-Kiefer-Wolfowitz (Massart's constant): ``sup |F_N - F| <= sqrt(ln(2 / delta)
  / (2 N))`` for ``N`` i.i.d. draws with CDF ``F``;
* Bretagnolle-Huber-Carol: the empirical law of ``N`` draws on ``m`` outcomes is within
  ``sqrt(2 (m ln 2 + ln(1 / delta)) / N)`` of the law in L1; two samples of size ``N``
  of the same law are within twice that of each other.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import special, stats

from agents.bayesian.beta_prior import beta_between, beta_tail, log_beta
from agents.engine import beta_math
from agents.engine import posterior_top_set as pts
from agents.engine.normal_math import normal_between, normal_tail

DELTA = 1e-6


def test_beta_tail_is_scipys_betaincc() -> None:
    """Posteriors of the agents (integer counts on priors from 0.3 to 3, up to thousands
    of pulls): the smaller of the two tails to a relative error of the rounding of its
    logarithm (4 ulps per unit of its terms) plus 1e-13."""
    rng = np.random.default_rng(0)
    for trial in range(4000):
        a = float(rng.choice([0.3, 0.5, 1.0, 2.5, 3.0])) + float(rng.integers(0, 300))
        b = float(rng.choice([0.3, 0.5, 1.0, 2.5, 3.0])) + float(rng.integers(0, 300))
        if trial % 10 == 0:
            a += float(rng.integers(0, 5000))
        # thresholds spread over the body and the far tails of the distribution
        x = float(stats.beta.ppf(rng.uniform(1e-9, 1 - 1e-9), a, b))
        if trial % 3 == 0:
            x = float(rng.uniform())
        if not 0.0 < x < 1.0:
            continue
        got, want = beta_tail(a, b, log_beta(a, b), x), special.betaincc(a, b, x)
        # the rounding of the log of x^a (1 - x)^b / B(a, b): its terms' size in ulps
        size = abs(a * math.log(x)) + abs(b * math.log1p(-x))
        size += abs(math.lgamma(a)) + abs(math.lgamma(b)) + abs(math.lgamma(a + b))
        rel = 4 * 2.0**-52 * size + 1e-13
        assert abs(got - want) <= rel * max(min(want, 1 - want), 1e-300) + 1e-15, (a, b, x)
    assert beta_tail(2.0, 3.0, log_beta(2.0, 3.0), 0.0) == 1.0
    assert beta_tail(2.0, 3.0, log_beta(2.0, 3.0), 1.0) == 0.0


# (alpha, beta, lo, hi): every branch of beta_between
BETWEEN_CASES = [
    (20.0, 15.0, 0.8, 1.0),  # right tail: tangent envelope at lo
    (20.0, 15.0, 0.0, 0.3),  # left tail: tangent envelope at hi
    (12.0, 13.0, 0.7424, 0.7552),  # a thin zone far in the tail
    (1.0, 30.0, 0.1, 0.4),  # alpha = 1 (no log t term)
    (30.0, 1.0, 0.9, 0.95),  # beta = 1 (no log(1 - t) term)
    (5.0, 5.0, 0.45, 0.55),  # the mode inside: a constant envelope
    (200.0, 100.0, 0.6, 0.7),  # the mode inside, the envelope too loose: rejection
    (2.0, 2.0, 0.0, 1.0),  # the whole interval
    (1.0, 1.0, 0.2, 0.3),  # uniform
    (0.5, 0.5, 0.4, 0.6),  # not log-concave: rejection from the whole distribution
    (0.4, 3.0, 0.9, 1.0),  # not log-concave, mass 2e-4: inversion
]


@pytest.mark.parametrize("alpha, beta, lo, hi", BETWEEN_CASES)
def test_beta_between_is_the_conditional_law(alpha, beta, lo, hi) -> None:
    lb = log_beta(alpha, beta)
    mass = beta_tail(alpha, beta, lb, lo) - beta_tail(alpha, beta, lb, hi)
    rng = np.random.default_rng(7)
    draws = np.array([beta_between(alpha, beta, lb, lo, hi, mass, rng) for _ in range(20_000)])
    assert np.all((lo < draws) & (draws < hi))
    dist = stats.beta(alpha, beta)
    low, width = dist.cdf(lo), dist.cdf(hi) - dist.cdf(lo)
    ks = stats.kstest(draws, lambda t: (dist.cdf(t) - low) / width).statistic
    assert ks <= math.sqrt(math.log(2 / DELTA) / (2 * draws.size))


@numba.njit
def _envelope_draws(alpha, beta, lbeta, lo, hi, rng, out):
    """The tangent-envelope rejection of ``beta_between`` without its squeeze (every
    proposal kept or not by the density itself), ``out.size`` draws."""
    width = hi - lo
    mode = (alpha - 1.0) / (alpha + beta - 2.0)
    if mode <= lo:
        anchor, sign = lo, 1.0
        lam = (beta - 1.0) / (1.0 - lo) - ((alpha - 1.0) / lo if alpha != 1.0 else 0.0)
    elif mode >= hi:
        anchor, sign = hi, -1.0
        lam = (alpha - 1.0) / hi - ((beta - 1.0) / (1.0 - hi) if beta != 1.0 else 0.0)
    else:
        anchor, sign, lam = mode, 0.0, 0.0
    log_top = beta_math._log_density(alpha, beta, lbeta, anchor)
    flat = lam * width < 1e-9
    drop = 0.0 if flat else -math.expm1(-lam * width)
    for d in range(out.size):
        while True:
            u = rng.random()
            if flat:
                e = u * width
                t, envelope = lo + e, log_top
            else:
                e = -math.log1p(-u * drop) / lam
                t, envelope = anchor + sign * e, log_top - lam * e
            if not lo < t < hi:
                continue
            if rng.random() < math.exp(beta_math._log_density(alpha, beta, lbeta, t) - envelope):
                out[d] = t
                break


@numba.njit
def _between_draws(alpha, beta, lbeta, lo, hi, mass, rng, out):
    for d in range(out.size):
        out[d] = beta_between(alpha, beta, lbeta, lo, hi, mass, rng)


SQUEEZE_CASES = [
    *BETWEEN_CASES[:6],
    (20.0, 15.0, 0.7, 0.75),  # decreasing on the interval
    (20.0, 15.0, 0.4, 0.5),  # increasing
    (8.0, 3.0, 0.80, 0.82),  # a zone of the sampler's levels
]


@pytest.mark.parametrize("alpha, beta, lo, hi", SQUEEZE_CASES)
def test_beta_between_squeeze_keeps_the_envelope_decisions(alpha, beta, lo, hi) -> None:
    """The squeeze (chord of the log density, ``exp(x) >= 1 + x``) only skips evaluating
    the density: the draws are those of the plain envelope rejection, number for number
    (a squeeze above the density would keep a proposal the density rejects)."""
    lb = log_beta(alpha, beta)
    mass = beta_tail(alpha, beta, lb, lo) - beta_tail(alpha, beta, lb, hi)
    got, want = np.empty(5000), np.empty(5000)
    _between_draws(alpha, beta, lb, lo, hi, mass, np.random.default_rng(3), got)
    _envelope_draws(alpha, beta, lb, lo, hi, np.random.default_rng(3), want)
    np.testing.assert_array_equal(got, want)


# (mean, sd, lo, hi): every branch of normal_between
NORMAL_BETWEEN_CASES = [
    (0.0, 1.0, 0.5, math.inf),  # right tail: exponential proposal
    (0.0, 1.0, 0.0, 3.0),  # from 0, longer than the exponential's scale
    (0.0, 1.0, 6.0, math.inf),  # far in the tail
    (0.0, 1.0, 2.0, 2.1),  # a thin zone in the tail: uniform proposal
    (0.0, 1.0, -math.inf, -1.0),  # left tail: mirrored
    (0.0, 1.0, -3.0, -2.95),  # a thin zone in the left tail
    (0.0, 1.0, -1.0, 1.5),  # across 0, wide: the untruncated normal
    (0.0, 1.0, -math.inf, 0.3),  # across 0, one side infinite
    (0.0, 1.0, -0.3, 0.5),  # across 0, short: uniform proposal
    (0.55, 0.05, 0.62, 0.64),  # a posterior N(mean, sd^2)
]


@pytest.mark.parametrize("mean, sd, lo, hi", NORMAL_BETWEEN_CASES)
def test_normal_between_is_the_conditional_law(mean, sd, lo, hi) -> None:
    rng = np.random.default_rng(7)
    draws = np.array([normal_between(mean, sd, lo, hi, rng) for _ in range(20_000)])
    assert np.all((lo <= draws) & (draws <= hi))
    dist = stats.truncnorm((lo - mean) / sd, (hi - mean) / sd, loc=mean, scale=sd)
    ks = stats.kstest(draws, dist.cdf).statistic
    assert ks <= math.sqrt(math.log(2 / DELTA) / (2 * draws.size))


def test_normal_tail_is_scipys_survival_function() -> None:
    """Over the body and far into the upper tail (down to 1e-300), to the rounding of the
    standardised threshold ``t``: ``d log P / dt`` is about ``-t``, so a few ulps of ``t``
    move the tail by about ``t^2`` ulps of it."""
    t = np.linspace(-8.0, 37.0, 4501)
    x = 0.3 + 0.7 * t
    got = np.array([normal_tail(0.3, 0.7, v) for v in x])
    want = stats.norm.sf(x, 0.3, 0.7)
    assert np.all(np.abs(got - want) <= 2.0**-52 * (4 * t**2 + 16) * want)


def _state(alpha, beta, k, levels=None, band=None, normal=False):
    st = pts.new_state(alpha.size)
    if band is not None:
        pts.set_band(st, *band)
    if normal:
        pts.set_normal(st)
    pts.update(alpha, beta, k, st, np.empty(0, np.int64))
    if levels is not None:  # forced levels: x_0, the top level, the arms between
        groups = pts._posterior_groups(alpha, beta, st)
        pts._set_levels(alpha, beta, st, *levels, groups)
    return st


@numba.njit  # not cached: a cached caller would keep a stale sampler
def _sampled_sets(alpha, beta, k, st, draws, rng):
    """``draws`` sampled sets, one sorted row each."""
    members = np.empty(k, np.int64)
    out = np.empty((draws, k), np.int64)
    for d in range(draws):
        pts.sample_top_set(alpha, beta, k, st, rng, members)
        out[d] = np.sort(members)
    return out


@numba.njit  # not cached: a cached caller would keep a stale sampler
def _zone_counts(st, n, draws, rng):
    """How often each arm lands in each zone (column 0: below x_0)."""
    out = np.zeros((n, pts.LMAX + 1), np.int64)
    for _ in range(draws):
        m = pts.assign_zones(st, rng)
        for j in range(m):
            out[st[8][j], st[9][j]] += 1
    out[:, 0] = draws - out[:, 1:].sum(axis=1)
    return out


def _law(rows):
    """How often each set (a sorted row of distinct arms) occurs in ``rows``: the rows
    counted by their bit masks (one bit per arm; ``np.unique`` over rows, the same
    counts, took seconds at 400,000 rows)."""
    assert rows.min() >= 0 and rows.max() < 63
    codes = np.bitwise_or.reduce(np.left_shift(1, rows.astype(np.int64)), axis=1)
    _, first, counts = np.unique(codes, return_index=True, return_counts=True)
    return {tuple(int(i) for i in rows[j]): int(c) for j, c in zip(first, counts, strict=True)}


def _full_draw_sets(alpha, beta, k, draws, seed, normal=False):
    rng = np.random.default_rng(seed)
    if normal:
        theta = rng.normal(alpha, beta, size=(draws, alpha.size))
    else:
        theta = rng.beta(alpha, beta, size=(draws, alpha.size))
    return np.sort(np.argpartition(-theta, k - 1, axis=1)[:, :k], axis=1)


ALPHA = np.array([3.0, 5, 8, 2, 6, 1, 9, 14, 1, 4, 2, 30])
BETA = np.array([4.0, 5, 3, 6, 2, 1, 9, 3, 12, 40, 2, 31])
# mostly small tails at x = 0.45 (tiers 3-8), two arms above most of the time
TIERED = (np.array([4.0, 2, 3, 2, 4, 1, 5, 6]), np.array([4.0, 8, 8, 12, 10, 6, 20, 3]))
# levels (x_0, top level, arms between): the chosen ones, and forced ones that make the
# rare branches common: the boundary above the top level, below x_0, and thin zones
# T3C's posteriors Beta(1 + S_a, 1 + N_a - S_a) of 0/1 rewards, with ties of (mean,
# count): arms 0-2 at 3/5, arms 3-4 at 1/2 of 4, arms 5-6 at 2/2, arm 7 at 0/1
_T3C_S = np.array([3.0, 3, 3, 2, 2, 2, 2, 0])
_T3C_N = np.array([5.0, 5, 5, 4, 4, 2, 2, 1])
T3C_POST = (1.0 + _T3C_S, 1.0 + _T3C_N - _T3C_S)
# T3C's normal posteriors N(mean_a, sigma^2 / N_a) of Gaussian rewards (sigma = 1/2), with
# ties of (mean, count): arms 0-2, 3-4 and 5-6
_T3C_MEAN = np.array([0.6, 0.6, 0.6, 0.5, 0.5, 0.7, 0.7, 0.2])
T3C_NORMAL = (_T3C_MEAN, 0.5 / np.sqrt(_T3C_N))
# spread means and deviations; most arms far below the boundary (tiers) at k = 2
_rng = np.random.default_rng(11)
NORMAL = (_rng.normal(0.0, 1.0, 12), _rng.uniform(0.05, 0.8, 12))
NORMAL_TIERED = (np.array([0.0, -1.0, -0.5, -2.0, 0.3, -1.5, 1.2, 1.0]), np.full(8, 0.4))
SET_CASES = [  # (pa, pb, k, levels, normal posteriors)
    (*T3C_POST, 1, None, False),  # K = 1
    (*T3C_POST, 3, None, False),
    (*T3C_POST, 7, None, False),  # K = n - 1
    (*T3C_POST, 3, (0.999, 0.9995, 1.0), False),  # x_0 above every arm: the fallback
    (ALPHA, BETA, 1, None, False),
    (ALPHA, BETA, 3, None, False),
    (ALPHA, BETA, 3, (0.3, 0.7, 8.0), False),
    (ALPHA, BETA, 3, (0.85, 0.95, 4.0), False),  # often fewer than k above x_0
    (ALPHA, BETA, 3, (0.05, 0.2, 60.0), False),  # often more than k above the top level
    (ALPHA, BETA, 5, (0.6, 0.65, 40.0), False),  # thin zones, 15 levels
    (ALPHA, BETA, 5, None, False),
    (*TIERED, 3, (0.45, 0.7, 8.0), False),  # the tiers decide who is above x_0
    (*TIERED, 2, None, False),
    (*T3C_NORMAL, 1, None, True),
    (*T3C_NORMAL, 3, None, True),
    (*T3C_NORMAL, 7, None, True),
    (*T3C_NORMAL, 3, (2.5, 2.6, 1.0), True),  # x_0 above every arm: the fallback
    (*NORMAL, 3, None, True),
    (*NORMAL, 3, (-3.0, -2.0, 60.0), True),  # often more than k above the top level
    (*NORMAL, 5, (0.2, 0.3, 40.0), True),  # thin zones, 15 levels
    (*NORMAL_TIERED, 2, (1.3, 1.8, 8.0), True),  # the tiers decide who is above x_0
    (*NORMAL_TIERED, 2, None, True),
]


def _assert_law_of_a_full_draw(alpha, beta, k, st, draws=400_000, normal=False) -> None:
    """The sets sampled with ``st`` have the law of the top k of a full posterior draw:
    the law of the sets in L1 (Bretagnolle-Huber-Carol), and each arm's chance to be in
    (Hoeffding, a union bound over the arms), two samples of ``draws`` each."""
    got_rows = _sampled_sets(alpha, beta, k, st, draws, np.random.default_rng(1))
    want_rows = _full_draw_sets(alpha, beta, k, draws, 2, normal)
    got, want = _law(got_rows), _law(want_rows)
    outcomes = math.comb(alpha.size, k)
    bound = 2 * math.sqrt(2 * (outcomes * math.log(2) + math.log(1 / DELTA)) / draws)
    l1 = sum(abs(got.get(s, 0) - want.get(s, 0)) for s in set(got) | set(want)) / draws
    assert l1 <= bound
    inside = [np.bincount(r.ravel(), minlength=alpha.size) / draws for r in (got_rows, want_rows)]
    bound = 2 * math.sqrt(math.log(2 * alpha.size / DELTA) / (2 * draws))
    assert np.abs(inside[0] - inside[1]).max() <= bound


@pytest.mark.parametrize("alpha, beta, k, levels, normal", SET_CASES)
def test_top_set_has_the_law_of_a_full_draw(alpha, beta, k, levels, normal) -> None:
    """The sampled set's law is the top k of a full posterior draw
    (:func:`_assert_law_of_a_full_draw`)."""
    st = _state(alpha, beta, k, levels, normal=normal)
    assert len(set(_sampled_sets(alpha, beta, k, st, 100, np.random.default_rng(0))[0])) == k
    _assert_law_of_a_full_draw(alpha, beta, k, st, normal=normal)


def test_t3c_band_keeps_the_law_of_a_full_draw() -> None:
    """T3C's band (``set_band``) places ``x_0`` lower (more arms above it) and the sets
    keep the law of a full draw (:func:`_assert_law_of_a_full_draw`)."""
    rng = np.random.default_rng(5)
    pulls = rng.integers(1, 30, 40)
    wins = rng.binomial(pulls, 0.5)
    alpha, beta, k = 1.0 + wins, 1.0 + pulls - wins, 3
    st = _state(alpha, beta, k, band=pts.T3C_BAND)
    default = _state(alpha, beta, k)
    assert st[2][0] < default[2][0]
    assert st[3][pts.I_SUM_LO] > default[3][pts.I_SUM_LO]
    assert not pts._off_band(st[3], k)
    _assert_law_of_a_full_draw(alpha, beta, k, st)


@pytest.mark.parametrize("band", [(3.0, 3.0, 6.0), (3.0, 2.5, 2.0), (3.0, -1.0, 6.0)])
def test_set_band_rejects_a_band_out_of_order(band) -> None:
    with pytest.raises(ValueError, match="z_low < z_set < z_high"):
        pts.set_band(pts.new_state(3), *band)


@pytest.mark.parametrize("alpha, beta, k, levels, normal", SET_CASES)
def test_each_arm_lands_in_each_zone_with_its_probability(alpha, beta, k, levels, normal) -> None:
    """One uniform per warm arm and the jumps through the tiers put arm ``i`` in zone
    ``z`` with probability ``Q[i, z - 1] - Q[i, z]`` (Hoeffding, union over arms and
    zones)."""
    st = _state(alpha, beta, k, levels, normal=normal)
    draws = 400_000
    counts = _zone_counts(st, alpha.size, draws, np.random.default_rng(3))
    zones = int(st[3][pts.I_LEVELS]) + 1
    q = np.hstack([np.ones((alpha.size, 1)), st[1][:, : zones - 1], np.zeros((alpha.size, 1))])
    want = q[:, :-1] - q[:, 1:]  # zone 0 .. L
    bound = math.sqrt(math.log(2 * alpha.size * zones / DELTA) / (2 * draws))
    assert np.abs(counts[:, :zones] / draws - want).max() <= bound
    assert counts[:, zones:].sum() == 0
    if alpha is TIERED[0] and levels is not None:
        assert st[6][pts.FIRST_TIER :].sum() >= 6  # most arms are visited by jumps
    if alpha is NORMAL_TIERED[0] and levels is not None:
        assert st[6][pts.FIRST_TIER :].sum() >= 5


def test_tiers_and_levels_follow_the_posterior() -> None:
    """After updates the state is the one built from scratch: tails, sums and tiers."""
    rng = np.random.default_rng(3)
    n, k = 300, 20
    wins = rng.integers(0, 30, n)
    alpha, beta = 0.3 + wins, 1.7 + rng.integers(0, 30, n)  # (a prior off the integers)
    st = _state(alpha, beta, k)
    for step in range(400):
        arms = rng.choice(n, size=int(rng.integers(1, 5)), replace=False)
        alpha[arms] += rng.integers(0, 2, arms.size)
        beta[arms] += 1.0 if step % 50 else 100.0  # (over _MAX_STEPS: afresh)
        pts.update(alpha, beta, k, st, arms)
    levels = st[2][: int(st[3][pts.I_LEVELS])]
    for i in range(n):
        for j, x in enumerate(levels):
            want = beta_tail(alpha[i], beta[i], log_beta(alpha[i], beta[i]), x)
            assert abs(st[1][i, j] - want) <= 1e-12  # (recurrences: an ulp or so per pull)
        assert st[0][i] == pytest.approx(log_beta(alpha[i], beta[i]), abs=1e-12)
        assert st[7][0, i] == pts._tier(st[1][i, 0])  # the tier of its tail at x_0
        assert st[5][st[7][0, i], st[7][1, i]] == i  # listed where it says
    q0, qt = st[1][:, 0], st[1][:, levels.size - 1]
    assert st[3][pts.I_SUM_LO] == pytest.approx(q0.sum(), abs=1e-9)
    assert st[3][pts.I_VAR_LO] == pytest.approx((q0 * (1 - q0)).sum(), abs=1e-9)
    assert st[3][pts.I_SUM_HI] == pytest.approx(qt.sum(), abs=1e-9)
    assert sorted(np.concatenate([st[5][t, : st[6][t]] for t in range(st[6].size)])) == list(
        range(n)
    )


def test_chosen_levels_bracket_the_boundary() -> None:
    """x_0 leaves k arms above it by about three deviations, the top level fewer than k."""
    rng = np.random.default_rng(4)
    for n, k in ((50, 5), (1000, 10), (1000, 100)):
        pulls = rng.integers(0, 40, n)
        wins = rng.binomial(pulls, 0.5)
        alpha, beta = 1.0 + wins, 1.0 + pulls - wins
        st = _state(alpha, beta, k)
        info = st[3]
        assert not pts._off_band(info, k)
        assert info[pts.I_SUM_LO] - k >= 1.5 * math.sqrt(info[pts.I_VAR_LO]) + 0.5
        assert info[pts.I_SUM_HI] <= k


def test_posterior_groups_partition_the_arms_by_posterior() -> None:
    """Each group holds every arm of one posterior, its ``log B`` fresh; the arms in
    the order of a stable sort by ``(alpha, beta)``."""
    rng = np.random.default_rng(5)
    alpha = 1.0 + rng.integers(0, 4, 300).astype(float)
    beta = 0.5 + rng.integers(0, 3, 300).astype(float)
    st = pts.new_state(300)
    size = pts._posterior_groups(alpha, beta, st)
    order, starts, log_b = st[15][0, :300], st[15][1, : size + 1], st[16][0, :size]
    assert np.array_equal(order, np.lexsort((np.arange(300), beta, alpha)))
    assert np.array_equal(np.sort(order), np.arange(300))
    pairs = set(zip(alpha.tolist(), beta.tolist(), strict=True))
    assert log_b.size == len(pairs) == starts.size - 1
    for g in range(log_b.size):
        arms = order[starts[g] : starts[g + 1]]
        assert len(set(zip(alpha[arms].tolist(), beta[arms].tolist(), strict=True))) == 1
        assert log_b[g] == log_beta(alpha[arms[0]], beta[arms[0]])


def test_posterior_groups_keep_the_order_as_posteriors_change() -> None:
    """The order kept across calls (the changed arms sorted and merged back) is the
    order of a sort of all arms after every change: none, one arm, many, all."""
    rng = np.random.default_rng(8)
    n = 300
    alpha = 1.0 + rng.integers(0, 6, n).astype(float)
    beta = 1.0 + rng.integers(0, 6, n).astype(float)
    st = pts.new_state(n)
    for changes in [0, 1, 2, 17, 150, 0, n, 5]:
        arms = rng.choice(n, size=changes, replace=False)
        alpha[arms] += rng.integers(0, 2, changes)
        beta[arms] += rng.integers(0, 2, changes)
        size = pts._posterior_groups(alpha, beta, st)
        assert np.array_equal(st[15][0, :n], np.lexsort((np.arange(n), beta, alpha)))
        assert size == len(set(zip(alpha.tolist(), beta.tolist(), strict=True)))


def test_normal_tails_and_tiers_follow_the_posterior() -> None:
    """Normal posteriors: after updates the tails are the pulled arms' own (computed
    again), and the sums and tiers those of a state built from scratch."""
    rng = np.random.default_rng(6)
    n, k, sigma = 300, 20, 0.5
    counts = rng.integers(1, 30, n).astype(float)
    sums = rng.normal(0.5, sigma / np.sqrt(counts)) * counts
    mean, sd = sums / counts, sigma / np.sqrt(counts)
    st = _state(mean, sd, k, normal=True)
    for _ in range(400):
        arms = rng.choice(n, size=int(rng.integers(1, 5)), replace=False)
        counts[arms] += 1.0
        sums[arms] += rng.normal(0.5 + 0.1 * (arms < k), sigma)
        mean[arms], sd[arms] = sums[arms] / counts[arms], sigma / np.sqrt(counts[arms])
        pts.update(mean, sd, k, st, arms)
    levels = st[2][: int(st[3][pts.I_LEVELS])]
    fresh = [[normal_tail(mean[i], sd[i], x) for x in levels] for i in range(n)]
    assert np.array_equal(st[1][:, : levels.size], np.array(fresh))
    for i in range(n):
        assert st[7][0, i] == pts._tier(st[1][i, 0])
        assert st[5][st[7][0, i], st[7][1, i]] == i
    q0, qt = st[1][:, 0], st[1][:, levels.size - 1]
    assert st[3][pts.I_SUM_LO] == pytest.approx(q0.sum(), abs=1e-9)
    assert st[3][pts.I_SUM_HI] == pytest.approx(qt.sum(), abs=1e-9)
    assert st[3][pts.I_CHOSEN] >= 2  # the levels were chosen again on the way


def test_chosen_normal_levels_bracket_the_boundary() -> None:
    """As for Beta posteriors: x_0 with k arms above it by at least the band's lower
    edge, the top level with fewer than k; T3C's band."""
    rng = np.random.default_rng(4)
    for n, k in ((50, 5), (1000, 10), (1000, 100)):
        counts = rng.integers(1, 40, n)
        mean = rng.normal(0.5, 0.5 / np.sqrt(counts))
        sd = 0.5 / np.sqrt(counts)
        for band in (None, pts.T3C_BAND):
            st = _state(mean, sd, k, band=band, normal=True)
            info = st[3]
            assert info[pts.I_CHOSEN] == 1.0
            assert not pts._off_band(info, k)
            assert info[pts.I_SUM_HI] <= k
