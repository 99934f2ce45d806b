"""Order statistics of confidence bounds over arms at two pull levels (compiled).

BatchRacing (Jun et al. 2016, Alg. 2) accepts ``i`` when ``L_i > max^(k_t + 1) U`` and
rejects it when ``U_i < max^(k_t) L`` over the surviving arms ``S``, with
``L_i, U_i = mean_i -/+ D(T_i)``: the width depends on the arm's pull count alone. A
RoundRobin over ``S`` (Alg. 1) keeps the counts of ``S`` within one of each other, so
``S`` splits into the arms at level ``c`` (``X``: not yet pulled in this sweep) and at
``c + 1`` (``Y``), and within a level the bounds are in the order of the means. The
four order statistics then follow from the few largest means of each level and their
smallest (:func:`check`, O(k_t)): ``max^(q) U`` is the ``q``-th of the two lists
merged, ``+D(c)`` and ``+D(c + 1)`` (``D`` is nonincreasing, so it is exact), ``max^(q)
L`` likewise, ``max L`` and ``min U`` the levels' extremes.

Between batches that sweep ``X`` (each takes arms of ``X`` to ``Y``), ``X`` only loses
arms and ``Y`` only gains them: ``Y``'s list is kept by insertion (:func:`offer`),
``X``'s holds twice the needed length and is rebuilt from ``X`` when deletions shorten
it below the need (:func:`top_into`; amortised O(1) per pull for uniformly chosen
arms), and the smallest mean of ``X`` is searched again when its arm leaves.
:func:`levels` builds everything from the counts (after any other batch).
"""

from __future__ import annotations

import numba
import numpy as np

from agents.engine import lowest_level

__all__ = ["check", "kth_merged", "levels", "maybe_decided", "offer", "refresh_x", "top_into"]


@numba.njit(cache=True, _nrt=False)
def _sift_down(heap, size, means, i):
    """Min-heap (by mean) property below ``heap[i]``."""
    a = heap[i]
    v = means[a]
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and means[heap[c + 1]] < means[heap[c]]:
            c += 1
        if means[heap[c]] >= v:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = a


@numba.njit(cache=True, _nrt=False)
def top_into(means, arms, cnt, s, out) -> int:
    """The ``min(s, cnt)`` arms of ``arms[:cnt]`` of largest mean into ``out`` (decreasing).

    A min-heap of the best ``s`` so far, then heap sort: O(cnt + s log s log(cnt / s)).
    """
    size = 0
    for j in range(cnt):
        a = arms[j]
        v = means[a]
        if size < s:
            i = size
            size += 1
            while i > 0:
                p = (i - 1) >> 1
                if means[out[p]] <= v:
                    break
                out[i] = out[p]
                i = p
            out[i] = a
        elif v > means[out[0]]:
            out[0] = a
            _sift_down(out, size, means, 0)
    for end in range(size - 1, 0, -1):
        a = out[0]
        out[0] = out[end]
        out[end] = a
        _sift_down(out, end, means, 0)
    return size


@numba.njit(cache=True, _nrt=False)
def offer(means, lst, size, s, a) -> int:
    """Insert arm ``a`` into ``lst[:size]`` (decreasing means, at most ``s`` kept); the new size."""
    v = means[a]
    if size == s:
        if s == 0 or v <= means[lst[s - 1]]:
            return size
        i = s - 1
    else:
        i = size
        size += 1
    while i > 0 and means[lst[i - 1]] < v:
        lst[i] = lst[i - 1]
        i -= 1
    lst[i] = a
    return size


@numba.njit(cache=True, _nrt=False)
def kth_merged(means, xt, nxt, dx, yt, nyt, dy, q) -> float:
    """The ``q``-th largest of ``means[xt[:nxt]] + dx``, ``means[yt[:nyt]] + dy`` (decreasing)."""
    i = 0
    j = 0
    v = 0.0
    for _ in range(q):
        if j >= nyt or (i < nxt and means[xt[i]] + dx >= means[yt[j]] + dy):
            v = means[xt[i]] + dx
            i += 1
        else:
            v = means[yt[j]] + dy
            j += 1
    return v


@numba.njit(cache=True, _nrt=False)
def check(means, xt, nxt, yt, nyt, xmin_v, ymin, wx, wy, kt) -> tuple[bool, float, float]:
    """``(decided, u_thr, l_thr)``: ``u_thr = max^(kt + 1) U``, ``l_thr = max^(kt) L`` (exact).

    ``X``'s bounds are ``mean -/+ wx``, ``Y``'s ``mean -/+ wy``; ``xt``/``yt`` hold at least
    the ``kt + 1`` largest means of each level (all of it if smaller), ``xmin_v`` the
    smallest mean of ``X`` (``inf``: empty) and ``ymin`` the arm of smallest mean of
    ``Y`` (``-1``: empty). ``decided``: some arm is accepted
    (``max L > u_thr``) or rejected (``min U < l_thr``).
    """
    u_thr = kth_merged(means, xt, nxt, wx, yt, nyt, wy, kt + 1)
    l_thr = kth_merged(means, xt, nxt, -wx, yt, nyt, -wy, kt)
    if nxt > 0 and means[xt[0]] - wx > u_thr:
        return True, u_thr, l_thr
    if nyt > 0 and means[yt[0]] - wy > u_thr:
        return True, u_thr, l_thr
    if xmin_v + wx < l_thr:
        return True, u_thr, l_thr
    if ymin >= 0 and means[ymin] + wy < l_thr:
        return True, u_thr, l_thr
    return False, u_thr, l_thr


@numba.njit(cache=True, _nrt=False)
def maybe_decided(
    means, counts, c, xt, xv, nxt, nx, xmin_v, xpad, yt, nyt, ymin, wx, wy, kt
) -> bool:
    """Whether some arm may be decided, from ``X``'s list as it was built (cheap, one-sided).

    ``X`` (the arms at count ``c``, ``nx`` of them) only lost arms since its list
    ``xt[:nxt]`` (values ``xv``, decreasing) and its smallest mean ``xmin_v`` were taken:
    the listed arms still at count ``c`` are its largest now, in order, the others of
    ``X`` lie in ``[xmin_v, xpad]`` (``xpad = -inf``: the list held all of ``X``), and the
    old values bound the order statistics of ``X`` from above. So ``max L`` and
    ``max^(kt) L`` are bounded from above, ``min U`` and ``max^(kt + 1) U`` from below;
    ``False`` means no arm is accepted or rejected (:func:`check` is exact). Y's list
    ``yt[:nyt]`` and ``ymin`` are exact.
    """
    # accept: max L > max^(kt + 1) U ?
    top_l = -np.inf
    if nx > 0:
        top_l = (xv[0] if nxt > 0 else xpad) - wx
    if nyt > 0 and means[yt[0]] - wy > top_l:
        top_l = means[yt[0]] - wy
    i = 0
    j = 0
    left = nx
    v = np.inf
    for _ in range(kt + 1):
        while i < nxt and counts[xt[i]] != c:
            i += 1
        if i < nxt:
            vx = means[xt[i]] + wx
        elif left > 0:
            vx = xmin_v + wx
        else:
            vx = -np.inf
        vy = means[yt[j]] + wy if j < nyt else -np.inf
        if vx >= vy:
            v = vx
            i += 1
            left -= 1
        else:
            v = vy
            j += 1
    if top_l > v:
        return True
    # reject: min U < max^(kt) L ?
    low_u = np.inf
    if nx > 0:
        low_u = xmin_v + wx
    if ymin >= 0 and means[ymin] + wy < low_u:
        low_u = means[ymin] + wy
    i = 0
    j = 0
    v = -np.inf
    for _ in range(kt):
        vx = (xv[i] if i < nxt else xpad) - wx
        vy = means[yt[j]] - wy if j < nyt else -np.inf
        if vx >= vy:
            v = vx
            i += 1
        else:
            v = vy
            j += 1
    return low_u < v


@numba.njit(cache=True, _nrt=False)
def refresh_x(means, xbits, nw, kt, xt, xv, tmp) -> tuple[int, float, float]:
    """X's list (``2 (kt + 1)`` largest means, values ``xv``), least mean, pad, from the bitmap."""
    nx = lowest_level.bitmap_arms(xbits, nw, tmp)
    nxt = top_into(means, tmp, nx, 2 * (kt + 1), xt)
    for j in range(nxt):
        xv[j] = means[xt[j]]
    xmin_v = np.inf
    for j in range(nx):
        if means[tmp[j]] < xmin_v:
            xmin_v = means[tmp[j]]
    return nxt, xmin_v, xv[nxt - 1] if nx > nxt else -np.inf


@numba.njit(cache=True)
def levels(counts, means, s, m, kt, xbits, sbits, nw, xt, xv, yt, tmp):
    """Split ``S = s[:m]`` by pull count: ``(c, nx, nxt, nyt, xmin_v, xpad, ymin)``.

    ``X`` (bitmap ``xbits[:nw]``, ``nx`` arms): the arms at the lowest count ``c``;
    ``xt[:nxt]`` the ``2 (kt + 1)`` of them with the largest means (values in ``xv``),
    ``xmin_v`` their smallest mean, ``xpad`` the largest outside the list (``-inf``:
    none); ``yt[:nyt]`` the ``kt + 1`` best at ``c + 1`` and
    ``ymin`` the one of smallest mean (``-1``: none); ``sbits`` the bitmap of ``S``.
    Raises if some count exceeds
    ``c + 1`` (RoundRobin over ``S`` never does that).
    """
    c = counts[s[0]]
    for j in range(1, m):
        if counts[s[j]] < c:
            c = counts[s[j]]
    for w in range(nw):
        xbits[w] = 0
        sbits[w] = 0
    nx = 0
    ny = 0
    xmin_v = np.inf
    ymin = -1
    for j in range(m):
        a = s[j]
        t = counts[a]
        sbits[a >> 6] |= np.int64(1) << (a & 63)
        if t == c:
            tmp[nx] = a
            nx += 1
            xbits[a >> 6] |= np.int64(1) << (a & 63)
            if means[a] < xmin_v:
                xmin_v = means[a]
        elif t == c + 1:
            ny += 1
            tmp[m - ny] = a
            if ymin < 0 or means[a] < means[ymin]:
                ymin = a
        else:
            raise RuntimeError("BatchRacing: the survivors' pull counts differ by more than one")
    nxt = top_into(means, tmp, nx, 2 * (kt + 1), xt)
    for j in range(nxt):
        xv[j] = means[xt[j]]
    nyt = top_into(means, tmp[m - ny :], ny, kt + 1, yt)
    xpad = xv[nxt - 1] if nx > nxt else -np.inf
    return c, nx, nxt, nyt, xmin_v, xpad, ymin
