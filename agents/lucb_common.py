"""The skeleton shared by the LUCB family: LUCB1, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB.

Every member (Kalyanakrishnan et al. 2012; Jamieson & Nowak 2014; Simchowitz et al.
2017; Jiang, Li, Qiao 2017 Alg. 1 and 2):

1. pulls every arm once;
2. splits the arms into ``High`` (the ``k`` largest empirical means) and ``Low``;
3. finds ``h = argmin_{High} LCB`` and ``l = argmax_{Low} UCB``, with
   ``LCB_i = mean_i - scale * a(T_i)`` and ``UCB_i = mean_i + scale * b(T_i)``, where the
   radius coefficients ``a`` and ``b`` depend only on the arm's own pull count ``T_i``
   and ``scale`` is 1 (lil' bounds) or grows with time (LUCB1);
4. stops and answers ``High`` when ``LCB_h >= UCB_l`` (:meth:`LUCBFamily._stop`), else
   pulls the arms its sampling rule picks (:attr:`LUCBFamily.choice`: ``h`` and ``l``;
   one of them at random; or, via :meth:`LUCBFamily._choose`, another arm) and goes
   back to 2.

The members differ only in ``a``, ``b``, ``scale``, the stop rule's tolerance and the
sampling rule; each is a small module on top of :class:`LUCBFamily` (or
:class:`LilFamily`, which adds the faithful/heuristic parameters of Jiang et al. Sec. 5).

Incremental state, so that a round costs O(log n) instead of a scan of the arms:

* after a round only the pulled arms' means and counts change, so only their bounds do
  (the radius depends on the arm's own count);
* four heaps with lazy invalidation hold ``High`` by mean (weakest on top), ``Low`` by
  mean (strongest on top), ``High`` by LCB and ``Low`` by UCB. An entry carries the
  arm's version; updating an arm or moving it between ``High`` and ``Low`` bumps the
  version and pushes fresh entries, stale ones are dropped when they reach the top,
  and a heap is filtered when its stale entries outnumber its live ones (+64);
* after the pulled arms are updated, ``High``/``Low`` are repaired by swapping the
  weakest ``High`` arm with the strongest ``Low`` arm while they are out of order (at
  most one swap per changed arm);
* LUCB1's radius grows with the round ``t`` for every arm (``scale``). Bound heaps
  are keyed at a reference scale ``c_ref``; at ``c >= c_ref`` an arm's bound moves by
  at most ``(c - c_ref) * coef_max`` (``coef_max`` = the coefficient at the smallest
  count of any arm), so the exact extreme is found by popping the few entries within
  that slack of the top; the heaps are re-keyed at the current scale when that set
  grows past :attr:`LUCBFamily.rebuild_pops` entries.

Requests: a round of one arm is a :class:`~agents.base.PullOne` (one instance per
arm, cached), the fast path of :func:`agents.run_episode`. A round of two arms is one
:class:`~agents.base.Pull` (one batch when the batch model allows it); with
``batch_size=1`` it is yielded as two ``PullOne`` s instead, fewest pulls first and
ties at random: the same schedule (and the same batches) RoundRobin makes, without
its cost. The first round is :meth:`~agents.base.ScriptedAgent._each_once` (also
``PullOne`` s, in RoundRobin's order, at ``batch_size=1``).

Ties (equal means, equal bounds) are broken uniformly at random, as paper-notes
require, by a random key per arm (``tb``, i.i.d. uniform, redrawn whenever the arm's
statistics change) that orders otherwise equal entries; the initial ``High`` is the
top ``k`` by (mean, key). All randomness comes from ``self.rng``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Generator

import numpy as np

from agents import confidence
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    Pull,
    PullOne,
    Request,
    ScriptedAgent,
    check_probability,
)

__all__ = ["VARIANTS", "CountTable", "LUCBFamily", "LilFamily"]

VARIANTS = ("faithful", "heuristic")

_push = heapq.heappush
_pop = heapq.heappop


class CountTable:
    """``f(t)`` for integer pull counts ``t >= 1``, cached in a list (computed in numpy blocks).

    ``values[t]`` is ``f(t)`` for ``t < len(values)`` (``values[0] = inf``); call the table
    for larger ``t``. Counts beyond ``2**20`` are computed on demand, not cached.
    """

    __slots__ = ("_fn", "values")
    _CAP = 1 << 20

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray]) -> None:
        self._fn = fn
        self.values: list[float] = [math.inf]

    def __call__(self, t: int) -> float:
        values = self.values
        if t < len(values):
            return values[t]
        if t >= self._CAP:
            return float(np.asarray(self._fn(np.array([float(t)])))[0])
        n = len(values)
        stop = min(max(2 * n, t + 1, 1024), self._CAP)
        values.extend(np.asarray(self._fn(np.arange(n, stop, dtype=np.float64))).tolist())
        return values[t]


class LUCBFamily(ScriptedAgent):
    """Base of the LUCB-style agents (see the module docstring); not registered itself.

    Subclasses set up the radius coefficients in :meth:`_setup` (``self._a`` and
    ``self._b``, :class:`CountTable` s) and pick a sampling rule (:attr:`choice`, or
    ``choice = None`` and :meth:`_choose`); LUCB1 also overrides :meth:`_scale` (and
    sets ``_time_varying``) and :meth:`_stop`. Works in fixed confidence (stops by its
    rule) and in fixed budget (anytime: :meth:`current_answer` is the current ``High``).
    """

    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    #: re-key the bound heaps when one query of a time-varying radius pops more entries.
    rebuild_pops = 12
    #: True when :meth:`_scale` varies (LUCB1): track the smallest count for the slack.
    _time_varying = False
    _BUFFER = 4096

    # ------------------------------------------------------------------ hooks
    def _setup(self) -> None:
        """Called at the start of an episode: set ``self._a`` and ``self._b`` (CountTables)."""
        raise NotImplementedError

    def _scale(self) -> float:
        """Multiplier of both radii this round; must not decrease within an episode."""
        return 1.0

    def _stop(self, lcb_h: float, ucb_l: float) -> bool:
        """Stopping rule of fixed confidence (Jiang et al. Alg. 1: ``LCB_h >= UCB_l``)."""
        return lcb_h >= ucb_l

    #: the sampling rule: ``"both"`` pulls ``h`` and ``l`` (LUCB); ``"random"`` pulls ``h``
    #: with probability ``T_l / (T_h + T_l)``, else ``l`` (lil'RandLUCB); ``None`` calls
    #: :meth:`_choose`.
    choice: str | None = "both"

    def _choose(self, h: int, l: int) -> tuple[int, ...]:  # noqa: E741
        """The arms to pull this round (distinct), given ``h`` and ``l`` (``choice=None``)."""
        raise NotImplementedError

    # -------------------------------------------------------------- algorithm
    def _run(self) -> Generator[Request, None, np.ndarray]:
        n = self.problem.n_arms
        self._built = False
        self._pending: tuple[int, ...] = ()
        self._ubuf: list[float] = []
        self._single: list[PullOne | None] = [None] * n
        self._rounds = 0  # LUCB rounds (counted for time-varying radii only)
        # With batch_size=1 a multi-arm request is served one pull per step anyway;
        # yielding the arms one by one as PullOne (fewest pulls first, ties at random:
        # what RoundRobin does) is the same schedule and skips the base's RoundRobin.
        self._serial = self.problem.batch_size == 1
        self._setup()
        yield from self._each_once(np.arange(n))
        self._build()
        # The loop below is the hot path: state is bound to locals (the containers are
        # only ever modified in place) and _extremes/_sync/_update are inlined for the
        # constant-scale (lil') radii.
        hm, lm, hl, lu = self._hm, self._lm, self._hl, self._lu
        ver, side, t, m, tbs = self._ver, self._side, self._t, self._m, self._tb
        la, ub = self._la, self._ub
        a_fn, b_fn = self._a, self._b
        a_tab, b_tab = a_fn.values, b_fn.values
        buf, fill = self._ubuf, self._fill
        counts, means = self.counts, self.means
        request, stop, choice = self._request, self._stop, self.choice
        single = self._single
        varying, serial = self._time_varying, self._serial
        plain_stop = type(self)._stop is LUCBFamily._stop  # LCB_h >= UCB_l, inlined
        limit_high = 4 * self.problem.k + 128  # see _compact
        limit_low = 4 * (n - self.problem.k) + 128
        while True:
            if varying:
                self._rounds += 1
                h, lcb_h, l, ucb_l = self._extremes()  # noqa: E741
            else:
                e = hl[0]
                while e[3] != ver[e[2]]:
                    _pop(hl)
                    e = hl[0]
                h, lcb_h = e[2], e[0]
                e = lu[0]
                while e[3] != ver[e[2]]:
                    _pop(lu)
                    e = lu[0]
                l, ucb_l = e[2], -e[0]  # noqa: E741
            if (lcb_h >= ucb_l) if plain_stop else stop(lcb_h, ucb_l):
                return self._high()
            if choice == "random":
                if not buf:
                    fill()
                th, tl = t[h], t[l]
                arms = (h,) if buf.pop() * (th + tl) < tl else (l,)
            elif choice == "both":
                arms = (h, l)
            else:
                arms = self._choose(h, l)
            # (_pending stays set after the pulls: _sync skips arms already folded in)
            self._pending = arms
            if len(arms) == 1:
                i = arms[0]
                yield single[i] or request(arms)
            elif not serial:
                yield request(arms)
            else:
                for i in self._serial_order(arms):
                    yield single[i] or request((i,))
            # inline of _sync/_update for the pulled arms
            c_ref = self._c_ref
            changed = False
            for i in arms:
                c = counts.item(i)
                if c == t[i]:
                    continue
                changed = True
                if varying:
                    self._count_moved(t[i], c)
                t[i] = c
                m[i] = mu = means.item(i)
                if not buf:
                    fill()
                tbs[i] = tb = buf.pop()
                ver[i] = v = ver[i] + 1
                if side[i]:
                    la[i] = x = a_tab[c] if c < len(a_tab) else a_fn(c)
                    _push(hm, (mu, tb, i, v))
                    _push(hl, (mu - c_ref * x, tb, i, v))
                else:
                    ub[i] = x = b_tab[c] if c < len(b_tab) else b_fn(c)
                    _push(lm, (-mu, -tb, i, v))
                    _push(lu, (-(mu + c_ref * x), tb, i, v))
            if changed:
                # High/Low repair: usually the order holds and two peeks suffice
                e = hm[0]
                while e[3] != ver[e[2]]:
                    _pop(hm)
                    e = hm[0]
                f = lm[0]
                while f[3] != ver[f[2]]:
                    _pop(lm)
                    f = lm[0]
                if e[0] < -f[0] or (e[0] == -f[0] and e[1] < -f[1]):
                    self._rebalance()
                if len(hm) + len(hl) > limit_high or len(lm) + len(lu) > limit_low:
                    self._compact()

    def current_answer(self) -> np.ndarray:
        """The current ``High`` (top ``k`` empirical means), updated with the last pulls."""
        if not getattr(self, "_built", False):
            return super().current_answer()
        self._sync()
        return self._high()

    # ------------------------------------------------------------- internals
    def _fill(self) -> None:
        """Refill the buffer of uniforms (drawn from ``self.rng`` in blocks)."""
        self._ubuf.extend(self.rng.random(self._BUFFER).tolist())

    def _uniform(self) -> float:
        buf = self._ubuf
        if not buf:
            self._fill()
        return buf.pop()

    def _request(self, arms: tuple[int, ...]) -> Pull | PullOne:
        """The request for ``arms``: one pull each (one-arm requests are cached per arm)."""
        if len(arms) == 1:
            i = arms[0]
            req = self._single[i]
            if req is None:
                req = self._single[i] = PullOne(int(i))
            return req
        return Pull(np.array(arms, dtype=np.int64), np.ones(len(arms), dtype=np.int64))

    def _serial_order(self, arms: tuple[int, ...]) -> list[int]:
        """``arms`` in RoundRobin's order: fewest pulls first, ties in random order."""
        t = self._t
        return sorted(arms, key=lambda i: (t[i], self._uniform()))

    def _build(self) -> None:
        """Initial state from ``self.counts``/``self.means`` (every arm pulled once)."""
        n, k = self.problem.n_arms, self.problem.k
        self._m = self.means.tolist()
        self._t = self.counts.tolist()
        self._ver = [0] * n
        self._tb = self.rng.random(n).tolist()
        order = np.lexsort((np.asarray(self._tb), self.means))  # ascending (mean, key)
        self._side = [False] * n
        for i in order[n - k :].tolist():
            self._side[i] = True
        self._hist: dict[int, int] = {}
        for c in self._t:
            self._hist[c] = self._hist.get(c, 0) + 1
        self._tmin = min(self._t)
        self._la: list[float] = []
        self._ub: list[float] = []
        self._hm: list[tuple] = []
        self._lm: list[tuple] = []
        self._hl: list[tuple] = []
        self._lu: list[tuple] = []
        self._built = True
        self._rebuild(self._scale())

    def _rebuild(self, c_ref: float) -> None:
        """Rebuild the four heaps from the live state, bound keys at scale ``c_ref``.

        Containers are refilled in place (the main loop holds references to them).
        """
        a, b = self._a, self._b
        m, t, tb, ver, side = self._m, self._t, self._tb, self._ver, self._side
        self._c_ref = c_ref
        la, ub = self._la, self._ub
        top = max(t)
        a(top), b(top)  # extend the tables once; then plain lookups
        ta, tb_ = a.values, b.values
        if top < len(ta) and top < len(tb_):
            la[:] = [ta[x] for x in t]
            ub[:] = la if b is a else [tb_[x] for x in t]
        else:  # counts beyond the tables' cap
            la[:] = [a(x) for x in t]
            ub[:] = [b(x) for x in t]
        high = [i for i in range(len(m)) if side[i]]
        low = [i for i in range(len(m)) if not side[i]]
        self._hm[:] = [(m[i], tb[i], i, ver[i]) for i in high]
        self._lm[:] = [(-m[i], -tb[i], i, ver[i]) for i in low]
        self._hl[:] = [(m[i] - c_ref * la[i], tb[i], i, ver[i]) for i in high]
        self._lu[:] = [(-(m[i] + c_ref * ub[i]), tb[i], i, ver[i]) for i in low]
        for heap in (self._hm, self._lm, self._hl, self._lu):
            heapq.heapify(heap)

    def _compact(self) -> None:
        """Drop the stale entries of any heap that holds over twice its live ones (+64).

        High holds ``k`` live arms and Low ``n - k``; filtering costs O(len), paid for by
        the ``>= live + 64`` pushes that made the heap that long.
        """
        k = self.problem.k
        rest = self.problem.n_arms - k
        ver = self._ver
        for heap, live in ((self._hm, k), (self._hl, k), (self._lm, rest), (self._lu, rest)):
            if len(heap) > 2 * live + 64:
                heap[:] = [e for e in heap if e[3] == ver[e[2]]]
                heapq.heapify(heap)

    def _top(self, heap: list[tuple]) -> tuple:
        """The valid top entry of ``heap`` (stale entries dropped)."""
        ver = self._ver
        while True:
            e = heap[0]
            if e[3] == ver[e[2]]:
                return e
            _pop(heap)

    def _sync(self) -> None:
        """Fold the pending pulls into the state and repair High/Low."""
        arms = self._pending
        if not arms:
            return
        self._pending = ()
        counts, means, t = self.counts, self.means, self._t
        changed = False
        for i in arms:
            c = counts.item(i)
            if c != t[i]:
                self._update(i, c, means.item(i))
                changed = True
        if changed:
            self._rebalance()
            self._compact()

    def _update(self, i: int, count: int, mean: float) -> None:
        """Arm ``i`` now has ``count`` pulls and empirical mean ``mean``."""
        if self._time_varying:
            self._count_moved(self._t[i], count)
        self._t[i] = count
        self._m[i] = mean
        self._tb[i] = tb = self._uniform()
        self._ver[i] = v = self._ver[i] + 1
        # Only the coefficient of the arm's side is refreshed here; _move refreshes the
        # other one when the arm changes sides.
        if self._side[i]:
            table = self._a.values
            a = table[count] if count < len(table) else self._a(count)
            self._la[i] = a
            _push(self._hm, (mean, tb, i, v))
            _push(self._hl, (mean - self._c_ref * a, tb, i, v))
        else:
            table = self._b.values
            b = table[count] if count < len(table) else self._b(count)
            self._ub[i] = b
            _push(self._lm, (-mean, -tb, i, v))
            _push(self._lu, (-(mean + self._c_ref * b), tb, i, v))

    def _count_moved(self, old: int, new: int) -> None:
        """An arm went from ``old`` to ``new`` pulls: keep the smallest count ``_tmin``."""
        hist = self._hist
        hist[old] -= 1
        hist[new] = hist.get(new, 0) + 1
        if old == self._tmin:
            while hist.get(self._tmin, 0) == 0:
                self._tmin += 1

    def _move(self, i: int, to_high: bool) -> None:
        self._ver[i] = v = self._ver[i] + 1
        self._side[i] = to_high
        mean, tb, c, count = self._m[i], self._tb[i], self._c_ref, self._t[i]
        if to_high:
            self._la[i] = a = self._a(count)
            _push(self._hm, (mean, tb, i, v))
            _push(self._hl, (mean - c * a, tb, i, v))
        else:
            self._ub[i] = b = self._b(count)
            _push(self._lm, (-mean, -tb, i, v))
            _push(self._lu, (-(mean + c * b), tb, i, v))

    def _rebalance(self) -> None:
        """Swap the weakest High arm and the strongest Low arm while out of (mean, key) order."""
        hm, lm, ver = self._hm, self._lm, self._ver
        while True:
            eh = hm[0]
            while eh[3] != ver[eh[2]]:
                _pop(hm)
                eh = hm[0]
            el = lm[0]
            while el[3] != ver[el[2]]:
                _pop(lm)
                el = lm[0]
            if eh[0] > -el[0] or (eh[0] == -el[0] and eh[1] >= -el[1]):
                return
            self._move(eh[2], False)
            self._move(el[2], True)

    def _extremes(self) -> tuple[int, float, int, float]:
        """``(h, LCB_h, l, UCB_l)`` at this round's scale."""
        c = self._scale()
        dlt = c - self._c_ref
        if dlt == 0.0:
            hl, lu, ver = self._hl, self._lu, self._ver
            eh = hl[0]
            while eh[3] != ver[eh[2]]:
                _pop(hl)
                eh = hl[0]
            el = lu[0]
            while el[3] != ver[el[2]]:
                _pop(lu)
                el = lu[0]
            return eh[2], eh[0], el[2], -el[0]
        coef_a = self._a(self._tmin)
        coef_b = self._b(self._tmin)
        h, lcb, pops_h = self._slack_min(self._hl, self._la, coef_a, dlt)
        l, neg_ucb, pops_l = self._slack_min(self._lu, self._ub, coef_b, dlt)  # noqa: E741
        if max(pops_h, pops_l) > self.rebuild_pops:
            self._rebuild(c)
        return h, lcb, l, -neg_ucb

    def _slack_min(
        self, heap: list[tuple], coef: list[float], coef_max: float, dlt: float
    ) -> tuple[int, float, int]:
        """Exact ``argmin (key - dlt * coef)`` over the valid entries of ``heap``.

        Entries are ``(key, tb, arm, version)`` keyed at ``c_ref``; the value at scale
        ``c_ref + dlt`` is ``key - dlt * coef[arm] >= key - dlt * coef_max``, so entries
        are popped in key order until that lower bound exceeds the best value found,
        then pushed back. Returns ``(arm, value, number popped)``.
        """
        ver = self._ver
        popped = []
        best = None
        best_val = math.inf
        while heap:
            e = heap[0]
            i = e[2]
            if e[3] != ver[i]:
                _pop(heap)
                continue
            if e[0] - dlt * coef_max > best_val:
                break
            popped.append(_pop(heap))
            val = e[0] - dlt * coef[i]
            if val < best_val or (val == best_val and e[1] < best[1]):
                best, best_val = e, val
        for e in popped:
            _push(heap, e)
        return best[2], best_val, len(popped)

    def _high(self) -> np.ndarray:
        side = self._side
        return np.array([i for i in range(len(side)) if side[i]], dtype=np.int64)


class LilFamily(LUCBFamily):
    """LUCB-style agents on the lil' radius ``U(t, w)`` of Jiang et al. (2017) Sec. 5.

    ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t log(log((1 + eps) t + 2) / w))``
    (:func:`agents.confidence.lil_bound`; ``sigma`` is the problem's sub-Gaussian scale).

    Parameters (Jiang et al. Sec. 5; paper-notes):

    * ``variant="faithful"``: ``eps`` (default 0.01) and the lil' ``delta`` are chosen so
      that the algorithm's proven error bound (:attr:`guarantee`, see
      :func:`agents.confidence.lil_faithful_delta`) equals the target ``delta`` (the
      paper's ``nu``). Jiang et al. do not state the ``eps`` they used; 0.01 is the
      value of Jamieson et al. (2014)'s experiments and nearly minimises the radius at
      the paper's sizes (``eps`` in 0.005..0.02 changes ``U^2`` by under 2% at N = 1000).
    * ``variant="heuristic"``: ``eps = 0`` and lil' ``delta = nu`` (no guarantee).

    Subclasses set :attr:`guarantee` and implement :meth:`_widths` (the ``w`` of the
    LCB and of the UCB as functions of ``n``, ``k`` and the lil' ``delta``).
    """

    #: which proven error bound the faithful variant inverts (confidence.LIL_GUARANTEES).
    guarantee = "theorem_3_1"

    def __init__(
        self,
        delta: float = 0.01,
        variant: str = "faithful",
        eps: float | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_probability("delta", delta)  # the target error probability nu
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r} must be one of {list(VARIANTS)}")
        if eps is not None:
            if not isinstance(eps, (int, float)) or math.isnan(eps):
                raise ValueError(f"eps={eps!r} must be a number")
            if variant == "faithful" and not 0.0 < eps < 1.0:
                raise ValueError(f"eps={eps} must lie in (0, 1) for variant='faithful' (Lemma 2.1)")
            if variant == "heuristic" and not 0.0 <= eps < 1.0:
                raise ValueError(f"eps={eps} must lie in [0, 1) for variant='heuristic'")
        self.delta = float(delta)
        self.variant = variant
        self.eps = eps

    def lil_params(self, n_arms: int) -> tuple[float, float]:
        """``(eps, lil delta)`` this agent uses on ``n_arms`` arms."""
        if self.variant == "heuristic":
            return (0.0 if self.eps is None else float(self.eps)), self.delta
        eps = 0.01 if self.eps is None else float(self.eps)
        return eps, confidence.lil_faithful_delta(self.delta, eps, self.guarantee, n_arms)

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        """``(w of the LCB radius, w of the UCB radius)``."""
        raise NotImplementedError

    def _setup(self) -> None:
        p = self.problem
        eps, lil_delta = self.lil_params(p.n_arms)
        w_low, w_up = self._widths(p.n_arms, p.k, lil_delta)
        if self.variant == "faithful":
            limit = math.log1p(eps) / math.e
            for w in (w_low, w_up):
                if not w < limit:
                    raise ValueError(
                        f"faithful {self.name}: w={w:.3g} must be < log(1+eps)/e={limit:.3g} "
                        f"(Lemma 2.1); lower delta or raise eps"
                    )
        sigma = p.sigma
        self._a = CountTable(lambda t: confidence.lil_bound(t, w_low, eps, sigma))
        self._b = (
            self._a
            if w_up == w_low
            else CountTable(lambda t: confidence.lil_bound(t, w_up, eps, sigma))
        )
