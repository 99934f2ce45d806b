"""AdaptiveTopK: accept/reject rounds for epsilon-top-k arms (Chen, Chen, Zhang, Zhou 2017)."""

from __future__ import annotations

import math
import numbers

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent, check_probability

__all__ = ["AdaptiveTopK"]

_ROUND_PULLS = ("notes", "paper")
#: ``ctx.fv`` register holding the current round ``r`` (an algorithm register).
_ROUND = engine.ALG_F


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


@numba.njit(cache=True)
def round_pulls(r, n, sigma, delta, paper):
    """``m_r`` of round ``r >= 1`` (``paper``: the printed rule, else the one of the proofs)."""
    scale = (2.0 * sigma) ** 2
    if paper:
        m = 2.0 ** (2 * r) * math.log(2.0 * n * r * r / delta)
    else:
        m = 2.0 ** (2 * r - 1) * math.log(4.0 * n * r * r / delta)
    return max(1, math.ceil(scale * m))


@numba.njit(cache=True)
def accept_reject_masks(mu, kp, threshold):
    """The inner while loop at once (see :meth:`AdaptiveTopK.accept_reject`)."""
    size = mu.shape[0]
    srt = np.sort(mu)
    a, b = srt[size - kp - 1], srt[size - kp]
    acc = np.zeros(size, dtype=np.bool_)
    removed = np.zeros(size, dtype=np.bool_)
    for j in range(size):
        gap = max(mu[j] - a, b - mu[j])
        if gap > threshold:
            removed[j] = True
            acc[j] = mu[j] > a
    return acc, removed


@numba.njit(cache=True)
def _round_end(status, means, s, size, kp, threshold, acc, na):
    """Apply the round's decisions to ``S = s[:size]`` and ``A = acc[:na]``; ``(size, na)``."""
    mu = np.empty(size)
    for j in range(size):
        mu[j] = means[s[j]]
    take, removed = accept_reject_masks(mu, kp, threshold)
    keep = 0
    for j in range(size):
        a = s[j]
        if take[j]:
            status[a] = engine.ACCEPTED
            acc[na] = a
            na += 1
        elif removed[j]:
            status[a] = engine.REJECTED
        else:
            s[keep] = a
            keep += 1
    return keep, na


@numba.njit
def run(ctx, prm):
    """AdaptiveTopK (the compiled algorithm; ``prm = [epsilon, delta, paper rule?]``)."""
    n = ctx.iv[engine.N]
    k = ctx.iv[engine.K]
    sigma = ctx.fv[engine.SIGMA]
    epsilon, delta, paper = prm[0], prm[1], prm[2] > 0.0
    fixed_confidence = ctx.iv[engine.SETTING] == engine.FIXED_CONFIDENCE
    s = np.arange(n)  # the undecided arms S are s[:size]
    size = n
    acc = np.empty(k, dtype=np.int64)  # A
    na = 0
    r = 0
    ctx.fv[_ROUND] = 0.0
    while True:
        kp = k - na
        if fixed_confidence and 2.0 * 2.0**-r * kp <= epsilon * k:
            break
        r += 1
        ctx.fv[_ROUND] = r
        yield engine.request_each(ctx, s[:size], round_pulls(r, n, sigma, delta, paper))
        size, na = _round_end(ctx.status, ctx.means, s, size, kp, 2.0 * 2.0**-r, acc, na)
        if na == k:
            engine.finish(ctx, acc)
            return
        if size == k - na:
            for j in range(size):
                ctx.status[s[j]] = engine.ACCEPTED
                acc[na + j] = s[j]
            engine.finish(ctx, acc)
            return
    engine.finish(ctx, engine.current_answer(ctx))


class AdaptiveTopK(ScriptedAgent):
    """Accept/reject rounds with confidence ``2^-r`` in round ``r`` (fixed confidence or budget).

    Paper:
        Jiecao Chen, Xi Chen, Qin Zhang, Yuan Zhou. "Adaptive multiple-arm
        identification". ICML 2017 (PMLR 70). Algorithm 1 (AdaptiveTopK), Claim 1,
        eqs. (7), (8), (13), Theorem 4; the fixed-budget conversion of Section 3.

    The extracted text of Algorithm 1 lost its symbols; this is the version restored
    from the paper's proofs (Claim 1, eq. 8, eq. 13, Lemmas 3-5)::

        r = 0; S = [n]; A = {} (accepted)
        while 2 * 2^-r * (k - |A|) > eps * k:            # exit condition, eq. (13)
            r = r + 1
            pull each arm of S m_r more times
            a = the (k'+1)-th, b = the k'-th largest empirical mean in S, k' = k - |A|
            gap_i = max(mean_i - a, b - mean_i)            # eq. (7)
            while S not empty and max_i gap_i > 2 * 2^-r:  # eq. (8)
                x = argmax gap; accept x if mean_x > a, else reject it; S = S - {x}
        return A + the k - |A| arms of S with the largest empirical means

    ``m_r`` (``round_pulls``):

    * ``"notes"`` (default, restored from Claim 1): ``m_r = ceil(2^(2r-1) ln(4 n r^2 / delta))``,
      so that Hoeffding gives ``P(|mean - theta| >= 2^-r) <= delta / (2 n r^2)``;
      summed over arms and rounds the error stays below ``delta``.
    * ``"paper"``: ``m_r = ceil(2^(2r) ln(2 n r^2 / delta))``, what the extracted text
      of line 5 ("2 ln 2nr2 delta") and the proof of Claim 1
      ("<= 2 (delta / 2nr^2)^2 <= delta / 2nr^2") print. It is about twice as many
      pulls; both satisfy Claim 1.

    Both are for rewards in [0, 1] (sigma = 1/2) and are scaled by ``(2 sigma)^2`` for
    sigma-sub-Gaussian rewards (``problem.sigma``), which keeps Claim 1 true.

    Settings (the problem's setting picks the variant):

    * fixed confidence: Algorithm 1 as above. Returns an answer with aggregate regret
      at most ``epsilon`` with probability at least ``1 - delta`` (Theorem 4). The
      episode's ``max_batches`` may truncate it; then the answer is
      :meth:`current_answer` (:data:`agents.engine.RULE_STATUS`: ``A`` accepted,
      ``S`` undecided).
    * fixed budget: the conversion of chen2017 Section 3: "we remove the outer while
      loop ... keep track of the total number of pulls, and stop pulling the arms once
      the budget is exhausted". Rounds ``r = 1, 2, ...`` run as above with no exit
      condition; when the budget ends (usually inside a round, whose pulls RoundRobin
      then spreads evenly) the answer is the last line: ``A`` plus the ``k - |A|``
      arms of ``S`` with the largest empirical means (:meth:`current_answer`). The run
      ends early, leaving budget unused, only when the answer is already determined
      (``|A| = k`` or ``|S| = k - |A|``). ``epsilon`` plays no role here.

    Args:
        epsilon: aggregate-regret tolerance (fixed confidence), > 0. Default 0.01
            (chen2017 Sec. 3).
        delta: failure probability, in (0, 1). Default 0.01 (chen2017 Sec. 3).
        round_pulls: ``"notes"`` or ``"paper"``, see above.
        seed: seed of the tie-breaking generator.

    Departures from the paper, and why:

    * Empirical means use every sample of the arm so far (the rounds' pulls add up),
      not only the ``m_r`` pulls of round ``r``: the count is at least ``m_r``, so
      Claim 1 still holds, and estimates are better (the same choice as zhou2014
      Sec. 6 for OptMAI).
    * The inner while loop is done in one vectorized step. The values ``a`` and ``b``
      stay those of the same two arms while arms are removed (accepting the top arm
      lowers ``k'`` by one and removes one arm above both; rejecting removes one arm
      below both), so the gaps do not change and the loop removes exactly the arms
      with ``gap_i > 2 * 2^-r``, accepting those with ``mean_i > a``. At most ``k'``
      arms have ``mean_i > a``, and a removed arm with ``mean_i <= a`` ranks below the
      top ``k'`` (a top-``k'`` arm with ``mean_i = a`` forces ``b = a`` and gap 0), so
      the step never accepts too many or leaves fewer than ``k - |A|`` arms
      (``tests/test_agents_zhou_chen.py`` checks it against the literal loop). The paper's
      loop would stop as soon as ``|A| = k``; the arms it would leave in ``S`` are
      never in the answer, so the answer is the same.
    * Stopping: once ``|A| = k`` or ``|S| = k - |A|`` the answer is determined and the
      agent returns at once (the paper's outer loop would exit at its next check when
      ``k - |A| = 0``; with ``|S| = k - |A|`` the (k'+1)-th mean is undefined and the
      last line picks all of ``S``). More pulls could not change the answer, so the
      fixed-budget conversion stops too.
    * Ties between equal empirical means in the last line are broken uniformly at
      random (the paper does not say); ``a`` and ``b`` are values, so ties there do not matter.
    """

    name = "adaptive_topk"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(
        self,
        epsilon: float = 0.01,
        delta: float = 0.01,
        round_pulls: str = "notes",
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if not _is_real(epsilon) or not (0.0 < float(epsilon) < math.inf):
            raise ValueError(f"epsilon={epsilon!r} must be a finite number > 0")
        check_probability("delta", delta)
        if round_pulls not in _ROUND_PULLS:
            raise ValueError(f"round_pulls={round_pulls!r} must be one of {list(_ROUND_PULLS)}")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.round_pulls = round_pulls

    def pulls_in_round(self, r: int) -> int:
        """``m_r``: pulls of every undecided arm in round ``r >= 1`` (see the class docstring)."""
        p = self.problem
        return int(round_pulls(r, p.n_arms, p.sigma, self.delta, self.round_pulls == "paper"))

    @staticmethod
    def accept_reject(mu: np.ndarray, kp: int, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """The inner while loop of Algorithm 1 at once: masks ``(accepted, removed)`` over ``S``.

        ``mu`` are the empirical means of ``S`` (``|S| > kp >= 1``), ``threshold`` is
        ``2 * 2^-r``. With ``a``/``b`` the (kp+1)-th/kp-th largest of ``mu`` and
        ``gap = max(mu - a, b - mu)`` (eq. 7), the loop removes exactly the arms with
        ``gap > threshold`` (eq. 8), accepting those with ``mu > a`` (see the class
        docstring for why the one-at-a-time loop gives the same sets).
        """
        return accept_reject_masks(np.asarray(mu, dtype=np.float64), int(kp), float(threshold))

    def params(self) -> np.ndarray:
        """``prm = [epsilon, delta, 1.0 if round_pulls == "paper" else 0.0]``."""
        return np.array([self.epsilon, self.delta, 1.0 if self.round_pulls == "paper" else 0.0])

    # ----------------------------------------------------------------- state
    @property
    def round(self) -> int:
        """The current round ``r`` (0 before the first)."""
        return int(self.ctx.fv[_ROUND])
