"""Native vector versions of ``TopK-v0`` and ``TopK-Batch-v0``.

``gym.make_vec("TopK-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``
builds :class:`TopKVectorEnv` (``"TopK-Batch-v0"``: :class:`TopKBatchVectorEnv`): ``N``
independent episodes stepped together with whole-array NumPy operations, equal in
distribution to ``N`` single environments made with the same ``kwargs`` (same
observations, rewards, termination and truncation rules, ``info`` keys, reward laws,
random tie-breaking of the empirical answer, answer phase and ``invalid_action`` modes).

Design notes (see the class docstrings for the user-facing contract):

* **Validation is the single env's.** The constructor builds one single environment
  from the same keyword arguments (so :func:`~bandit_envs.problem.build_problem` runs
  once and every bad argument raises exactly as in ``gym.make``) and takes its
  ``problem``, ``instance`` and spaces.
* **One generator for all envs.** ``reset(seed=s)`` seeds ``self.np_random`` with
  ``gymnasium.utils.seeding.np_random(s)`` (``PCG64(SeedSequence(s))``, what a single
  env gets for ``seed=s``). Every draw (instance means, shuffles, rewards, tie-breaking)
  is one batched call on it whose row ``i`` belongs to env ``i``; rows are independent,
  so the ``N`` episodes are independent. Env ``i``'s stream is *not* a function of
  ``(s, i)`` alone: N per-env generators would need N NumPy calls per step. Same
  seed and same actions give the same trajectories.
* **Copies without page faults.** With ``copy=True`` every step returns fresh arrays,
  but an array handed out earlier is refilled instead of reallocated once nobody else
  references it (see ``_fresh_copy``).
* **Row-wise math.** The functions below are the row-wise forms of
  :func:`bandit_envs.scoring.top_k`, :func:`~bandit_envs.scoring.score`,
  :class:`bandit_envs.sampling.IndependentRewards` and
  :func:`bandit_envs.top_k_batch.project_pulls` / ``project_answer``, with identical
  results row by row (tests compare them exactly); the single-env versions could be
  their one-row case.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bandit_envs.core import ANSWER, DONE, SAMPLING, TopKBaseEnv
from bandit_envs.problem import PROJECT_HINT, episode_arms, outside_space_message
from bandit_envs.rendering import render_rgb
from bandit_envs.spaces import BatchedBatchPulls, count_masks
from bandit_envs.top_k import TopKEnv
from bandit_envs.top_k_batch import TopKBatchEnv

__all__ = [
    "TopKBatchVectorEnv",
    "TopKVectorEnv",
    "project_answer_rows",
    "project_pulls_rows",
    "reward_sums",
    "score_rows",
    "single_rewards",
    "top_k_rows",
]

_UNIFORM_PULLS_PER_ENTRY = 6  # as IndependentRewards: uniforms beat binomial below this


# ---------------------------------------------------------------------------------------------
# Row-wise math shared with the single environment
# ---------------------------------------------------------------------------------------------


def top_k_rows(values: np.ndarray, k: int, rng: np.random.Generator | None) -> np.ndarray:
    """Row-wise :func:`bandit_envs.scoring.top_k`: shape ``(m, k)``, each row sorted.

    Ties at a row's boundary are broken uniformly at random with ``rng`` (the ``need``
    tied entries with the smallest i.i.d. uniform keys), or to the lowest index with
    ``rng=None``. ``-inf`` entries are chosen only when needed.
    """
    values = np.asarray(values)
    m, n = values.shape
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must satisfy 1 <= k <= n={n}, the number of values to choose from")
    threshold = np.partition(values, n - k, axis=1)[:, n - k, None]
    chosen = values > threshold
    tied = values == threshold
    need = k - np.count_nonzero(chosen, axis=1)  # >= 1: the threshold entry is not above itself
    exact = np.count_nonzero(tied, axis=1) == need
    chosen |= tied & exact[:, None]
    rows = np.flatnonzero(~exact)
    if rows.size:
        t, need = tied[rows], need[rows, None]
        if rng is None:
            pick = t & (np.cumsum(t, axis=1) <= need)
        else:  # the `need` tied entries with the smallest uniform keys, grouped by `need`
            keys = np.where(t, rng.random(t.shape), np.inf)
            pick = np.zeros_like(t)
            for d in np.unique(need):
                g = need[:, 0] == d
                kg = keys[g]
                pick[g] = kg <= np.partition(kg, d - 1, axis=1)[:, d - 1, None]
            if np.count_nonzero(pick) != need.sum():  # equal uniform keys: probability ~2^-53
                rank = np.empty(t.shape, dtype=np.int64)
                np.put_along_axis(rank, np.argsort(keys, axis=1), np.arange(n)[None, :], axis=1)
                pick = t & (rank < need)
        chosen[rows] |= pick
    return np.nonzero(chosen)[1].reshape(m, k)


def score_rows(
    means: np.ndarray, recommendation: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise :func:`bandit_envs.scoring.score`: ``(aggregate_regret, misidentified, precision)``.

    ``means`` has shape ``(m, n)``, ``recommendation`` ``(m, k)`` (distinct arms per
    row, not checked). Exact under ties, with the same floating-point operations as the
    single-row version.
    """
    m, n = means.shape
    part = np.partition(means, n - k, axis=1)
    threshold = part[:, n - k, None]
    rec_means = np.take_along_axis(means, recommendation, axis=1)
    n_above = np.count_nonzero(means > threshold, axis=1)
    rec_above = np.count_nonzero(rec_means > threshold, axis=1)
    rec_tied = np.count_nonzero(rec_means == threshold, axis=1)
    overlap = rec_above + np.minimum(rec_tied, k - n_above)
    correct = overlap == k
    best = part[:, n - k :].sum(axis=1)
    regret = np.where(correct, 0.0, np.maximum(0.0, (best - rec_means.sum(axis=1)) / k))
    return regret, ~correct, overlap / k


def reward_sums(
    rng: np.random.Generator,
    distribution: str,
    means: np.ndarray,
    reps: np.ndarray,
    *,
    sigma: float | None = None,
    probs: np.ndarray | None = None,
    support: np.ndarray | None = None,
) -> np.ndarray:
    """Sum of ``reps[j]`` i.i.d. rewards of an arm with mean ``means[j]``, for each ``j``.

    The laws of :class:`bandit_envs.sampling.IndependentRewards`: ``Binomial(a, mu)``
    (as one uniform per pull when pulls are few, the same law),
    ``Normal(a mu, a sigma^2)``, or ``Multinomial(a, probs[j]) . support``. Entries
    with ``reps[j] = 0`` are allowed and sum to 0.
    """
    if distribution == "bernoulli":
        size = reps.shape[0]
        if size and reps.max() <= 1:  # at most one pull per entry: one uniform each
            hits = rng.random(size) < means
            if reps.min() == 0:
                hits &= reps == 1
            return hits.astype(np.float64)
        total = int(reps.sum())
        if total > _UNIFORM_PULLS_PER_ENTRY * size:
            return rng.binomial(reps, means).astype(np.float64)
        hits = rng.random(total) < np.repeat(means, reps)
        running = np.concatenate(([0], np.cumsum(hits, dtype=np.int64)))
        ends = np.cumsum(reps)
        return (running[ends] - running[ends - reps]).astype(np.float64)
    if distribution == "gaussian":
        noise = rng.standard_normal(reps.shape[0])
        return reps * means + sigma * np.sqrt(reps) * noise
    counts = rng.multinomial(reps, probs)
    return counts @ support


def single_rewards(
    rng: np.random.Generator,
    distribution: str,
    means: np.ndarray,
    *,
    sigma: float | None = None,
    cdf: np.ndarray | None = None,
    support: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """One reward per entry (the laws of ``IndependentRewards.one``), float64.

    Bernoulli: ``u < mu`` for one uniform; Gaussian: ``mu + sigma z``; categorical:
    ``support[#{cdf <= u}]`` for the entry's cumulative probabilities ``cdf[j]``.
    ``out`` (float64, same length, not ``means``) is filled and returned when given.
    """
    if out is None:
        out = np.empty(means.shape[0], dtype=np.float64)
    if distribution == "bernoulli":
        rng.random(out=out)
        np.less(out, means, out=out)
    elif distribution == "gaussian":
        rng.standard_normal(out=out)
        out *= sigma
        out += means
    else:
        rng.random(out=out)
        idx = np.count_nonzero(cdf <= out[:, None], axis=1)
        np.take(support, idx, out=out)
    return out


def project_pulls_rows(a: np.ndarray, repeat_limit: int, cap: np.ndarray | None) -> np.ndarray:
    """Row-wise :func:`bandit_envs.top_k_batch.project_pulls` (``cap[i]`` per row, or ``None``)."""
    return _project_rows(a, repeat_limit, cap)[0]


def _project_rows(
    a: np.ndarray, repeat_limit: int, cap: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`project_pulls_rows` and its row sums (a projected row sums to its cap)."""
    out = np.clip(a, 0, repeat_limit)
    total = _row_sums(out)
    if cap is None:
        return out, total
    rows = np.flatnonzero(total > cap)
    if rows.size == 0:
        return out, total
    clipped = out[rows]
    c, t = cap[rows], total[rows]
    scaled = clipped * (c / t)[:, None]
    fixed = np.floor(scaled).astype(np.int64)
    short = c - fixed.sum(axis=1)
    n = a.shape[1]
    index = np.broadcast_to(np.arange(n), scaled.shape)
    order = np.lexsort((index, -(scaled - fixed)), axis=-1)
    bonus = (np.arange(n)[None, :] < short[:, None]).astype(np.int64)
    np.put_along_axis(fixed, order, np.take_along_axis(fixed, order, axis=1) + bonus, axis=1)
    out[rows] = fixed
    total[rows] = c
    return out, total


def project_answer_rows(a: np.ndarray, k: int, empirical_means: np.ndarray) -> np.ndarray:
    """Row-wise :func:`bandit_envs.top_k_batch.project_answer`: shape ``(m, k)``, sorted rows."""
    index = np.broadcast_to(np.arange(a.shape[1]), a.shape)
    order = np.lexsort((index, -empirical_means, -a), axis=-1)
    return np.sort(order[:, :k], axis=1)


# ---------------------------------------------------------------------------------------------
# The vector environments
# ---------------------------------------------------------------------------------------------


def _references(holder: dict[str, np.ndarray], key: str) -> int:
    """Reference count of ``holder[key]``, as seen from this function."""
    value = holder[key]
    return sys.getrefcount(value)


# What _references reports for an array that only its holder dict references: measured,
# not assumed, so that it stays right whatever the interpreter's counting details.
_UNSHARED = _references({"probe": np.empty(1)}, "probe")


def _row_sums(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=1)`` for an int64 ``(m, n)`` array (einsum is ~3x faster on short rows)."""
    return np.einsum("ij->i", a)


def _autoreset_mode(value: Any) -> AutoresetMode:
    try:
        mode = value if isinstance(value, AutoresetMode) else AutoresetMode(value)
    except ValueError:
        mode = None
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(
            f"autoreset_mode={value!r} must be AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP"
        )
    return mode


def _positive_int(name: str, value: Any, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name}={value!r} must be an integer >= 1")
    return int(value)


class _TopKVectorEnvBase(VectorEnv):
    """Episode state, autoreset, termination, scoring and ``info`` of both vector envs.

    Leaves implement :meth:`_validate` (check the actions of the acting rows, all of
    them or the index array ``act``, without changing any state) and :meth:`_apply`
    (pull with :meth:`_pull_one`/:meth:`_pull_batch`, stop with
    :meth:`_end_sampling`, answer with :meth:`_end`).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    _single_env_cls: type[TopKBaseEnv]

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        max_episode_steps: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        n_envs = _positive_int("num_envs", num_envs)
        mode = _autoreset_mode(autoreset_mode)
        self._max_steps = _positive_int("max_episode_steps", max_episode_steps, allow_none=True)
        if not isinstance(copy, (bool, np.bool_)):
            raise ValueError(f"copy={copy!r} must be a bool")
        single = self._single_env_cls(**env_kwargs)  # all argument validation happens here
        if single.paired:
            raise ValueError(
                "paired=True (common random numbers) is not supported by the native vector env; "
                "use gym.make_vec(..., vectorization_mode='sync') for paired episodes"
            )
        self.num_envs = n_envs
        self.autoreset_mode = mode
        self.copy = bool(copy)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.problem = single.problem
        self.instance = single.instance
        self.shuffle = single.shuffle
        self.render_mode = single.render_mode
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(self.single_observation_space, n_envs)
        self.action_space = batch_space(self.single_action_space, n_envs)
        self._single = single

        p = self.problem
        n = p.n_arms
        # The arms: fixed means (permuted per episode), or drawn per episode.
        arms = None if self.instance.is_random else episode_arms(self.instance, p, None)
        probe = (
            arms if arms is not None else episode_arms(self.instance, p, np.random.default_rng(0))
        )
        self._dist = probe.distribution
        self._sigma = probe.sigma
        self._fixed_means = None if arms is None else np.asarray(arms.means, dtype=np.float64)
        self._probs = self._support = self._cdf = self._perm = None
        if self._dist == "categorical":
            self._probs = np.asarray(arms.probs)
            self._support = np.asarray(arms.support)
            self._cdf = np.cumsum(self._probs, axis=1)
            self._cdf[:, -1] = 1.0
            self._perm = np.tile(np.arange(n), (n_envs, 1))
        self._answer_agent = p.answer == "agent"

        # State: one row per env; the *_flat names are views for flat fancy indexing.
        self._counts = np.zeros((n_envs, n), dtype=np.int64)
        self._sums = np.zeros((n_envs, n), dtype=np.float64)
        self._emp = np.zeros((n_envs, n), dtype=np.float64)
        self._means = np.zeros((n_envs, n), dtype=np.float64)
        self._counts_flat = self._counts.reshape(-1)
        self._sums_flat = self._sums.reshape(-1)
        self._emp_flat = self._emp.reshape(-1)
        self._means_flat = self._means.reshape(-1)
        self._pulls = np.zeros(n_envs, dtype=np.int64)
        self._batches = np.zeros(n_envs, dtype=np.int64)
        self._elapsed = np.zeros(n_envs, dtype=np.int64)
        self._phase = np.full(n_envs, DONE, dtype=np.int8)
        self._remaining = np.ones((n_envs, 1), dtype=np.float64)
        self._autoreset = np.zeros(n_envs, dtype=np.bool_)
        self._n_autoreset = 0
        self._started = False
        # Per-step scratch.
        self._rows = np.arange(n_envs)
        self._offsets = self._rows * n
        self._flat = np.empty(n_envs, dtype=np.int64)
        self._mu = np.empty(n_envs, dtype=np.float64)
        self._draw = np.empty(n_envs, dtype=np.float64)
        self._int_scratch = np.empty(n_envs, dtype=np.int64)
        self._rewards = np.zeros(n_envs)
        self._terminated = np.zeros(n_envs, dtype=np.bool_)
        self._truncated = np.zeros(n_envs, dtype=np.bool_)
        self._ends: list[tuple[np.ndarray, np.ndarray | None, bool]] = []
        self._info: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._returned: dict[str, np.ndarray] = {}  # arrays handed out, see _fresh_copy

    # ---------------------------------------------------------------------- reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start new episodes in every env (or in ``options["reset_mask"]``'s envs).

        ``seed`` seeds the generator all envs share (see the module docstring).
        ``options={"reset_mask": mask}`` (a bool array of shape ``(num_envs,)``, as for
        Gymnasium's vector envs) restarts only the masked envs; it needs a full reset
        first.
        """
        super().reset(seed=seed)
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            rows = None
            self._autoreset[:] = False
            self._n_autoreset = 0
        else:
            if (
                not isinstance(mask, np.ndarray)
                or mask.dtype != np.bool_
                or mask.shape != (self.num_envs,)
            ):
                raise ValueError(
                    f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                    f"got {mask!r}"
                )
            if not self._started:
                raise RuntimeError("reset(options={'reset_mask': ...}) needs a full reset() first")
            rows = np.flatnonzero(mask)
            self._autoreset[rows] = False
            self._n_autoreset = int(np.count_nonzero(self._autoreset))
        self._start(rows)
        self._started = True
        self._sync_action_space()
        return self._observation(), {}

    def _start(self, rows: np.ndarray | None) -> None:
        """New episodes in ``rows`` (``None``: all): the single env's ``reset`` per row."""
        rng = self.np_random
        p = self.problem
        n = p.n_arms
        m = self.num_envs if rows is None else rows.shape[0]
        if m == 0:
            return
        perm = np.argsort(rng.random((m, n)), axis=1) if self.shuffle else None
        if self._fixed_means is not None:
            means = (
                np.broadcast_to(self._fixed_means, (m, n))
                if perm is None
                else self._fixed_means[perm]
            )
        else:
            # One vectorized draw for i.i.d. random instances (equal in law to m
            # calls of ``instance.arms(rng)``, which cost ~30 us each).
            means = self.instance.means_batch(rng, m)
            if perm is not None:
                means = np.take_along_axis(means, perm, axis=1)
        sel = slice(None) if rows is None else rows
        self._means[sel] = means
        if self._perm is not None and perm is not None:
            self._perm[sel] = perm
        self._counts[sel] = 0
        self._sums[sel] = 0.0
        self._emp[sel] = 0.0
        self._pulls[sel] = 0
        self._batches[sel] = 0
        self._elapsed[sel] = 0
        self._phase[sel] = SAMPLING
        self._remaining[sel] = 1.0

    # ----------------------------------------------------------------------- step
    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; envs that ended are reset per ``autoreset_mode``."""
        if not self._started:
            raise RuntimeError("step() called before reset(); call reset() first")
        n_envs = self.num_envs
        self._rewards = np.zeros(n_envs)
        self._terminated = np.zeros(n_envs, dtype=np.bool_)
        self._truncated = np.zeros(n_envs, dtype=np.bool_)
        self._ends = []
        self._info = {}
        act = np.flatnonzero(~self._autoreset) if self._n_autoreset else None
        # Validate before anything moves: a bad action leaves every env as it was.
        plan = self._validate(actions, act) if act is None or act.size else None
        if self._n_autoreset:  # NEXT_STEP: envs that ended last step restart, ignoring their action
            self._start(np.flatnonzero(self._autoreset))
            self._autoreset[:] = False
            self._n_autoreset = 0
        if plan is not None:
            self._apply(plan)
            self._finish_ended()
            if self._max_steps is not None:
                if act is None:
                    self._elapsed += 1
                else:
                    self._elapsed[act] += 1
                self._truncated |= self._elapsed >= self._max_steps
        self._update_remaining()
        done = self._terminated | self._truncated
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            info = self._flat_info()
            np.copyto(self._autoreset, done)
            self._n_autoreset = int(np.count_nonzero(done))
        elif done.any():
            info = self._same_step_info(done)
            self._start(np.flatnonzero(done))
        else:
            info = self._flat_info()
        self._sync_action_space()
        return self._observation(), self._rewards, self._terminated, self._truncated, info

    def _sync_action_space(self) -> None:
        """Hook: update what the action space samples from (after every reset and step)."""

    def action_masks(self) -> np.ndarray:
        """The valid actions of every env, one row each, in sb3-contrib's layout (see leaves)."""
        raise NotImplementedError

    def _validate(self, actions: Any, act: np.ndarray | None) -> Any:
        """Check the actions of the acting rows (``None``: all); raise like the single env."""
        raise NotImplementedError

    def _apply(self, plan: Any) -> None:
        """Pull, stop or answer as :meth:`_validate` planned."""
        raise NotImplementedError

    # ------------------------------------------------------------ the mechanics
    def _pull_one(self, rows: np.ndarray | None, arms: np.ndarray) -> None:
        """Row ``rows[j]`` pulls arm ``arms[j]`` once (``rows=None``: every row, in order)."""
        n = self.problem.n_arms
        if rows is None:  # the hot path: preallocated buffers, no per-step allocation
            flat = np.add(self._offsets, arms, out=self._flat)
            means = np.take(self._means_flat, flat, out=self._mu)
            out = self._draw
        else:
            flat = rows * n + arms
            means = self._means_flat[flat]
            out = None
        cdf = None if self._cdf is None else self._cdf[self._perm.reshape(-1)[flat]]
        x = single_rewards(
            self.np_random,
            self._dist,
            means,
            sigma=self._sigma,
            cdf=cdf,
            support=self._support,
            out=out,
        )
        self._add_pulls(flat, 1, x)
        if rows is None:
            self._pulls += 1
            self._batches += 1
        else:
            self._pulls[rows] += 1
            self._batches[rows] += 1
        self._after_batch(rows)

    def _pull_batch(self, rows: np.ndarray, pulls: np.ndarray, totals: np.ndarray) -> None:
        """Row ``rows[j]`` pulls each arm ``i`` ``pulls[j, i]`` times (every row pulls).

        Dense batches (at least 1 entry in 8 nonzero, as in the single env) update whole
        arrays, every entry drawing ``reps = 0`` or more rewards; sparse ones update
        their nonzero entries by flat fancy indexing.
        """
        n_envs, n = self.num_envs, self.problem.n_arms
        every = rows.shape[0] == n_envs  # rows are sorted env indices: all of them
        if 8 * np.count_nonzero(pulls) >= pulls.size:
            if every:
                full = pulls
            else:
                full = np.zeros((n_envs, n), dtype=np.int64)
                full[rows] = pulls
            reps = full.reshape(-1)
            probs = None if self._probs is None else self._probs[self._perm.reshape(-1)]
            x = reward_sums(
                self.np_random,
                self._dist,
                self._means_flat,
                reps,
                sigma=self._sigma,
                probs=probs,
                support=self._support,
            )
            self._counts += full
            self._sums_flat += x
            np.divide(self._sums, self._counts, out=self._emp, where=self._counts > 0)
        else:
            nz = np.flatnonzero(pulls)
            if every:
                flat = nz
            else:
                r, c = np.divmod(nz, n)
                flat = rows[r] * n + c
            reps = pulls.reshape(-1)[nz]
            probs = None if self._probs is None else self._probs[self._perm.reshape(-1)[flat]]
            x = reward_sums(
                self.np_random,
                self._dist,
                self._means_flat[flat],
                reps,
                sigma=self._sigma,
                probs=probs,
                support=self._support,
            )
            self._add_pulls(flat, reps, x)
        self._pulls[rows] += totals
        self._batches[rows] += 1
        self._after_batch(rows)

    def _add_pulls(self, flat: np.ndarray, reps: Any, x: np.ndarray) -> None:
        """Counts, sums and empirical means of the (distinct) entries ``flat`` (``x`` is reused)."""
        c = self._counts_flat[flat]
        c += reps
        self._counts_flat[flat] = c
        s = np.add(self._sums_flat[flat], x, out=x)
        self._sums_flat[flat] = s
        self._emp_flat[flat] = np.divide(s, c, out=s)

    def _after_batch(self, rows: np.ndarray | None) -> None:
        """The single env's ``_after_batch`` for rows that just pulled."""
        p = self.problem
        pulls = self._pulls if rows is None else self._pulls[rows]
        batches = self._batches if rows is None else self._batches[rows]
        if p.setting == "fixed_budget":
            over = pulls >= p.budget
            if p.max_batches is not None:
                over |= batches >= p.max_batches
            if over.any():
                self._end_sampling(np.flatnonzero(over) if rows is None else rows[over])
            return
        if rows is None:
            self._rewards[:] = -p.cost_per_batch
        else:
            self._rewards[rows] = -p.cost_per_batch
        if p.max_batches is not None:
            cut = batches >= p.max_batches
            if cut.any():
                self._end(
                    np.flatnonzero(cut) if rows is None else rows[cut], None, terminated=False
                )

    def _end_sampling(self, rows: np.ndarray) -> None:
        """Sampling ends (budget spent or the agent stopped): answer step, or score now."""
        if self._answer_agent:
            self._phase[rows] = ANSWER
        else:
            self._end(rows, None, terminated=True)

    def _end(
        self, rows: np.ndarray, recommendation: np.ndarray | None, *, terminated: bool
    ) -> None:
        """Rows end this step with ``recommendation`` (``None``: the empirical answer)."""
        self._ends.append((rows, recommendation, terminated))

    def _finish_ended(self) -> None:
        """Score every row that ended this step at once: the single env's ``_finish``."""
        if not self._ends:
            return
        p = self.problem
        k = p.k
        empirical = [rows for rows, rec, _ in self._ends if rec is None]
        if empirical:
            er = np.concatenate(empirical)
            values = np.where(self._counts[er] > 0, self._emp[er], -np.inf)
            emp_recs = iter(
                np.split(
                    top_k_rows(values, k, self.np_random),
                    np.cumsum([len(r) for r in empirical])[:-1],
                )
            )
        rows = np.concatenate([r for r, _, _ in self._ends])
        recs = np.concatenate([next(emp_recs) if rec is None else rec for _, rec, _ in self._ends])
        term = np.concatenate([np.full(len(r), t) for r, _, t in self._ends])
        means = self._means[rows]
        regret, misidentified, precision = score_rows(means, recs, k)
        self._add_info("recommendation", rows, recs)
        self._add_info("top_k", rows, top_k_rows(means, k, None))
        self._add_info("means", rows, means)
        self._add_info("aggregate_regret", rows, regret)
        self._add_info("misidentified", rows, misidentified)
        self._add_info("precision", rows, precision)
        self._add_info("pulls", rows, self._pulls[rows])
        self._add_info("batches", rows, self._batches[rows])
        if p.epsilon is not None:
            self._add_info("epsilon_correct", rows, regret <= p.epsilon)
        loss = regret if p.objective == "aggregate_regret" else misidentified.astype(np.float64)
        self._rewards[rows[term]] -= loss[term]
        self._terminated[rows[term]] = True
        self._truncated[rows[~term]] = True
        self._phase[rows] = DONE

    # ------------------------------------------------------------------- output
    def _update_remaining(self) -> None:
        p = self.problem
        rem = self._remaining[:, 0]
        if p.budget is not None:
            np.subtract(p.budget, self._pulls, out=self._int_scratch)
            np.divide(self._int_scratch, p.budget, out=rem)
        if p.max_batches is not None:
            by_batches = (p.max_batches - self._batches) / p.max_batches
            if p.budget is not None:
                np.minimum(rem, by_batches, out=rem)
            else:
                rem[:] = by_batches

    def _observation(self) -> dict[str, np.ndarray]:
        obs = {"counts": self._counts, "means": self._emp, "remaining": self._remaining}
        if self.copy:
            obs = {key: self._fresh_copy(key, value) for key, value in obs.items()}
        if self._answer_agent:
            obs["phase"] = (self._phase == ANSWER).astype(np.int64)
        return obs

    def _fresh_copy(self, key: str, state: np.ndarray) -> np.ndarray:
        """A copy of ``state`` that nobody else holds (``key`` names what it is).

        The array returned for ``key`` last time is reused when no one but this env
        references it any more (so nobody can see it change); otherwise a new array is
        allocated. Reuse saves the page faults of allocating ~N*n*8 bytes every step.
        """
        if key in self._returned and _references(self._returned, key) == _UNSHARED:
            out = self._returned[key]
            if out.shape != state.shape or out.dtype != state.dtype:
                out = self._returned[key] = np.empty_like(state)
        else:
            out = self._returned[key] = np.empty_like(state)
        np.copyto(out, state)
        return out

    def _add_info(self, key: str, rows: np.ndarray, values: np.ndarray) -> None:
        """Gymnasium's vector ``info``: a full ``(num_envs, ...)`` array and a ``_key`` mask."""
        values = np.asarray(values)
        if rows is self._rows:  # every env, in order
            self._info[key] = (
                self._fresh_copy("info/" + key, values),
                np.ones(self.num_envs, dtype=np.bool_),
            )
            return
        array = np.zeros((self.num_envs, *values.shape[1:]), dtype=values.dtype)
        array[rows] = values
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[rows] = True
        self._info[key] = (array, mask)

    def _flat_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {}
        for key, (array, mask) in self._info.items():
            info[key] = array
            info["_" + key] = mask
        return info

    def _same_step_info(self, done: np.ndarray) -> dict[str, Any]:
        """SAME_STEP: ended envs' info goes to ``final_info``, their last obs to ``final_obs``.

        The layout of :class:`gymnasium.vector.SyncVectorEnv` (the caller restarts them).
        """
        if not done.any():
            return self._flat_info()
        info: dict[str, Any] = {}
        final: dict[str, Any] = {}
        for key, (array, mask) in self._info.items():
            for target, keep in ((info, mask & ~done), (final, mask & done)):
                if keep.any():
                    part = array
                    if not np.array_equal(keep, mask):
                        part = array.copy()
                        part[~keep] = 0
                    target[key] = part
                    target["_" + key] = keep
        rows = np.flatnonzero(done)
        final_obs = np.full(self.num_envs, None, dtype=object)
        counts, means, remaining = self._counts[rows], self._emp[rows], self._remaining[rows]
        phase = (self._phase[rows] == ANSWER).astype(np.int64) if self._answer_agent else None
        for j, i in enumerate(rows.tolist()):
            obs = {"counts": counts[j], "means": means[j], "remaining": remaining[j]}
            if phase is not None:
                obs["phase"] = phase[j]
            final_obs[i] = obs
        info["final_obs"] = final_obs
        info["_final_obs"] = done
        info["final_info"] = final
        info["_final_info"] = done.copy()
        return info

    def _env_index(self, position: int, act: np.ndarray | None) -> int:
        return int(position if act is None else act[position])

    def render(self) -> tuple[str, ...] | tuple[np.ndarray, ...] | None:
        """``"ansi"``: one text table of pulls and empirical means per env;
        ``"rgb_array"``: one single-env frame per env."""
        if self.render_mode == "rgb_array":
            p = self.problem
            return tuple(
                render_rgb(
                    self._counts[i],
                    self._emp[i],
                    float(self._remaining[i, 0]),
                    p.k,
                    p.reward_low,
                    p.reward_high,
                )
                for i in range(self.num_envs)
            )
        if self.render_mode != "ansi":
            return None
        frames = []
        for i in range(self.num_envs):
            lines = [f"pulls={self._pulls[i]} batches={self._batches[i]} phase={self._phase[i]}"]
            for a, (c, m) in enumerate(
                zip(self._counts[i].tolist(), self._emp[i].tolist(), strict=True)
            ):
                lines.append(f"arm {a:4d}: pulls={c:6d} mean={m: .4f}")
            frames.append("\n".join(lines))
        return tuple(frames)


class TopKVectorEnv(_TopKVectorEnvBase):
    """``num_envs`` copies of ``TopK-v0`` (one pull per step), stepped as arrays.

    ## Description
    The vector form of :class:`~bandit_envs.top_k.TopKEnv`: env ``i`` follows exactly
    the single env's rules, and its episodes have the single env's law (they are not
    the single env's exact random stream). Build it with ``gym.make_vec("TopK-v0",
    num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``; ``kwargs`` are
    the single env's (see its docstring), plus the vector arguments below.

    ## Action Space
    ``MultiDiscrete([n_arms + 1] * N)`` (``n_arms``: the stop action), the batch of the
    single ``Discrete`` space: an integer array of shape
    ``(N,)`` (``(N, 1)`` is accepted). Every element is a legal action (as in the single
    env, every arm and the stop action are valid while an env samples; an env that
    restarts ignores its action). Entries outside ``[0, n_arms]`` raise
    ``ValueError("env i: ...")`` with the single env's message, before any env moves.

    ## Action Masks
    :meth:`action_masks` returns ``bool (N, n_actions)``, row ``i`` the single env's
    mask of env ``i``; a row whose env restarts at the next step (``NEXT_STEP``) allows
    every action (it is ignored); before the first reset nothing is allowed.
    sb3-contrib's ``MaskablePPO`` reads them through :class:`bandit_envs.sb3.SB3VecEnv`.

    ## Observation Space
    The single env's ``Dict`` batched: ``counts`` ``(N, n)`` int64, ``means`` ``(N, n)``
    float64, ``remaining`` ``(N, 1)`` float64.

    ## Starting State
    As the single env, per env and per episode: random instances draw each env's means
    from the vector env's generator, ``shuffle`` permutes each env's arms.

    ## Rewards
    As the single env, per env: an array of shape ``(N,)``.

    ## Episode End
    As the single env, per env. Ended envs restart by Gymnasium's autoreset rules:
    ``NEXT_STEP`` (default): the step after ``terminated | truncated`` returns the new
    episode's first observation, reward 0 and ``False`` flags, ignoring that env's
    action; ``SAME_STEP``: the ending step already returns the new observation, the
    last one is in ``info["final_obs"]`` and the ending info in ``info["final_info"]``.
    ``max_episode_steps`` truncates like ``gym.make(..., max_episode_steps=...)``.

    ## Information
    Gymnasium's vector convention: ``info[key]`` is an ``(N, ...)`` array and
    ``info["_" + key]`` the mask of envs that report it. Keys: the single env's terminal
    keys, ``recommendation`` ``(N, k)``, ``top_k`` ``(N, k)``, ``means`` ``(N, n)``,
    ``aggregate_regret``, ``misidentified``, ``precision``, ``pulls``, ``batches`` and,
    with ``epsilon``, ``epsilon_correct`` (under ``SAME_STEP`` inside ``final_info``).
    ``reset`` returns ``{}``.

    ## Arguments
    | Parameter | Type | Default | Description |
    | --- | --- | --- | --- |
    | ``num_envs`` | int | (required) | number of envs ``N`` |
    | ``autoreset_mode`` | AutoresetMode | ``NEXT_STEP`` | or ``SAME_STEP`` |
    | ``copy`` | bool | ``True`` | ``False``: observations are views, valid until the next step |
    | ``max_episode_steps`` | int | ``None`` | truncate episodes after this many steps |
    | ``**env_kwargs`` | | | the single env's arguments; ``paired=True`` raises |

    ## Seeding
    ``reset(seed=s)`` seeds the one generator of the vector env with
    ``gymnasium.utils.seeding.np_random(s)``; every draw is batched on it, row ``i`` for
    env ``i``. Same seed and same actions give the same trajectories; env ``i``'s draws
    also depend on what the other envs do (how many restart, stop or tie), so a vector
    env of ``N = 1`` does not replay ``gym.make(...).reset(seed=s)``. ``paired=True`` is
    not supported (use ``vectorization_mode="sync"``).

    ## Version History
    * v0: initial release.

    Example:
        >>> import gymnasium as gym, bandit_envs, numpy as np
        >>> envs = gym.make_vec("TopK-v0", num_envs=3, vectorization_mode="vector_entry_point",
        ...                     n_arms=4, k=2, instance=[0.9, 0.8, 0.5, 0.1], budget=8)
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (3, 4)
        >>> for t in range(8):
        ...     obs, reward, terminated, truncated, info = envs.step(np.full(3, t % 4))
        >>> terminated.tolist(), info["recommendation"].shape, info["_recommendation"].tolist()
        ([True, True, True], (3, 2), [True, True, True])
    """

    _single_env_cls = TopKEnv

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        max_episode_steps: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(
            num_envs,
            autoreset_mode=autoreset_mode,
            copy=copy,
            max_episode_steps=max_episode_steps,
            **env_kwargs,
        )
        n = self.problem.n_arms
        self._stop_action = n
        self._n_actions = n + 1

    def _validate(
        self, actions: Any, act: np.ndarray | None
    ) -> tuple[np.ndarray | None, np.ndarray]:
        a = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        n_envs = self.num_envs
        if a.shape != (n_envs,):
            if a.shape != (n_envs, 1):
                raise ValueError(
                    f"actions shape {a.shape} must be ({n_envs},): one arm index per env"
                )
            a = a.reshape(n_envs)
        if a.dtype.kind not in "iu":
            i = self._env_index(0, act)
            raise ValueError(f"env {i}: action={a[i].item()!r} must be an integer arm index")
        av = a if act is None else a[act]
        if av.min() < 0 or av.max() >= self._n_actions:
            bad = int(np.flatnonzero((av < 0) | (av >= self._n_actions))[0])
            raise ValueError(
                f"env {self._env_index(bad, act)}: action={int(av[bad])} is not an arm: "
                f"it must lie in [0, {self._n_actions})"
            )
        return act, av

    def _apply(self, plan: tuple[np.ndarray | None, np.ndarray]) -> None:
        act, av = plan
        if self._stop_action is not None:
            stop = av == self._stop_action
            if stop.any():
                rows = self._rows if act is None else act
                self._end_sampling(rows[stop])
                act, av = rows[~stop], av[~stop]
                if act.size == 0:
                    return
        self._pull_one(act, av)

    def action_masks(self) -> np.ndarray:
        """Valid actions, bool ``(num_envs, n_actions)``: the single env's mask per row.

        Every arm (and the stop action, in fixed confidence) while an env samples;
        nothing before the first reset; every action for an env whose next step only
        restarts it (``NEXT_STEP`` autoreset ignores its action).
        """
        valid = (self._phase == SAMPLING) | self._autoreset
        return np.repeat(valid[:, None], self._n_actions, axis=1)


class TopKBatchVectorEnv(_TopKVectorEnvBase):
    """``num_envs`` copies of ``TopK-Batch-v0`` (the (b, r)-batch model), stepped as arrays.

    ## Description
    The vector form of :class:`~bandit_envs.top_k_batch.TopKBatchEnv`, built with
    ``gym.make_vec("TopK-Batch-v0", num_envs=N, vectorization_mode="vector_entry_point",
    **kwargs)``. Env ``i`` follows the single env's rules (answer step with
    ``answer="agent"``, ``invalid_action="raise"``/``"project"``), with the single env's
    laws of rewards and answers.

    ## Action Space
    The batch of :class:`~bandit_envs.spaces.BatchPulls`: an integer array of shape
    ``(N, n_arms)``, row ``i`` being env ``i``'s pull-count vector (its answer vector in
    the answer phase). ``action_space`` is a
    :class:`~bandit_envs.spaces.BatchedBatchPulls`, a ``Box(0, r, (N, n), int64)`` whose
    ``contains`` checks each row's sum against ``b`` and whose ``sample()`` follows
    every env's state (the pulls its budget has left, its answer step), so sampled
    actions are valid even in raise mode. Every element of the ``Box`` is a legal action
    by the single env's default ``invalid_action="project"`` (each row projected as the
    single env projects it; ``info["pulls_made"]`` reports the pulls made). With
    ``invalid_action="raise"`` a bad row raises ``ValueError("env i: ...")`` with the
    single env's message before any env moves. A wrong shape or non-integer entries
    always raise.

    ## Action Masks
    :meth:`action_masks` returns ``bool (N, n_arms * (r + 1))``, row ``i`` the single
    env's per-dimension mask of env ``i`` (counts up to ``min(r, b, pulls left)``; 0
    and 1 at the answer step); a row whose env restarts at the next step (``NEXT_STEP``)
    allows every count. Like the single env's, they cannot hold the sum rule.

    ## Observation Space
    The single env's ``Dict`` batched: ``counts``, ``means`` ``(N, n)``, ``remaining``
    ``(N, 1)`` and, with ``answer="agent"``, ``phase`` ``(N,)`` int64.

    ## Starting State, Rewards, Episode End, Seeding
    As :class:`TopKVectorEnv`.

    ## Information
    As :class:`TopKVectorEnv`, plus the single env's ``pulls_made`` ``(N, n)`` for envs
    that made a sampling step (not for answer steps).

    ## Arguments
    ``num_envs``, ``autoreset_mode``, ``copy``, ``max_episode_steps`` as
    :class:`TopKVectorEnv`; the rest are the single env's, ``invalid_action`` included
    (``"project"`` by default, ``"raise"``: strict).

    ## Version History
    * v0: initial release.

    Example:
        >>> import gymnasium as gym, bandit_envs, numpy as np
        >>> envs = gym.make_vec("TopK-Batch-v0", num_envs=2,
        ...                     vectorization_mode="vector_entry_point",
        ...                     n_arms=4, k=1, instance=[0.9, 0.5, 0.4, 0.1], batch_size=4,
        ...                     max_batches=2, answer="agent")
        >>> obs, _ = envs.reset(seed=1)
        >>> for _ in range(2):
        ...     obs, r, term, trunc, info = envs.step(np.ones((2, 4), dtype=int))
        >>> obs["phase"].tolist(), term.tolist()
        ([1, 1], [False, False])
        >>> obs, r, term, trunc, info = envs.step(np.eye(4, dtype=int)[[0, 1]])
        >>> term.tolist(), info["recommendation"].tolist(), info["pulls"].tolist()
        ([True, True], [[0], [1]], [8, 8])
    """

    _single_env_cls = TopKBatchEnv

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        max_episode_steps: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(
            num_envs,
            autoreset_mode=autoreset_mode,
            copy=copy,
            max_episode_steps=max_episode_steps,
            **env_kwargs,
        )
        p = self.problem
        self.invalid_action = self._single.invalid_action
        # Per-arm cap of the action space: r, else (b = None, no r) the whole budget.
        self._r = p.repeat_limit if p.repeat_limit is not None else p.budget
        # What the batched action space samples from: arrays updated in place.
        space = self.action_space
        self._left = None if p.budget is None else np.full(self.num_envs, p.budget, np.int64)
        self._answering = np.zeros(self.num_envs, dtype=np.bool_) if self._answer_agent else None
        if isinstance(space, BatchedBatchPulls):
            space.sample_limit = self._left
            space.answer_rows = self._answering
            space.answer_k = p.k if self._answer_agent else None

    def _sync_action_space(self) -> None:
        if self._left is not None:
            np.subtract(self.problem.budget, self._pulls, out=self._left)
        if self._answering is not None:
            np.equal(self._phase, ANSWER, out=self._answering)

    def action_masks(self) -> np.ndarray:
        """Per-dimension valid counts, bool ``(num_envs, n_arms * (r + 1))`` (sb3-contrib's layout).

        Row ``i`` is the single env's :meth:`~bandit_envs.top_k_batch.TopKBatchEnv.action_masks`
        for env ``i`` (:func:`~bandit_envs.spaces.count_masks`): counts up to
        ``min(r, b, pulls left)`` while sampling, 0 and 1 at the answer step, nothing
        before the first reset, every count for an env whose next step only restarts it.
        """
        p = self.problem
        caps = np.full(
            self.num_envs, self._r if p.batch_size is None else min(self._r, p.batch_size)
        )
        if p.budget is not None:
            np.minimum(caps, p.budget - self._pulls, out=caps)
        caps[self._phase != SAMPLING] = -1
        caps[self._autoreset] = self._r
        answering = (self._phase == ANSWER) & ~self._autoreset
        return count_masks(p.n_arms, self._r, caps, answering)

    # ------------------------------------------------------------ validation
    def _as_counts(self, actions: Any, act: np.ndarray | None) -> np.ndarray:
        """The acting rows as int64 pull counts (the single env's ``_as_counts``)."""
        a = np.asarray(actions)
        n_envs, n = self.num_envs, self.problem.n_arms
        if a.shape != (n_envs, n):
            raise ValueError(
                f"actions shape {a.shape} must be ({n_envs}, {n}): one pull-count vector per env"
            )
        av = a if act is None else a[act]
        kind = av.dtype.kind
        if kind in "iu":
            return av.astype(np.int64, copy=False)
        if kind == "b":
            return av.astype(np.int64)
        if kind == "f":
            for bad, what in ((~np.isfinite(av), "a finite"), (av != np.floor(av), "an integer")):
                if bad.any():
                    i, j = np.argwhere(bad)[0]
                    raise ValueError(
                        f"env {self._env_index(i, act)}: action[{j}]={av[i, j]} is not {what} "
                        "pull count"
                    )
            return av.astype(np.int64)
        raise ValueError(f"action dtype {a.dtype} must be integer")

    def _check_in_space(self, rows: np.ndarray, a: np.ndarray) -> None:
        """The single env's ``_check_in_space`` per row: every entry in ``0..r``, every mode."""
        r = self._r
        if a.size == 0 or (a.min() >= 0 and a.max() <= r):
            return
        i, j = np.argwhere((a < 0) | (a > r))[0]
        raise ValueError(
            f"env {rows[i]}: " + outside_space_message(int(j), int(a[i, j]), r, a.shape[1])
        )

    def _check_pulls(self, rows: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The single env's ``_check_pulls`` per row (raise, or project): pulls and their totals."""
        p = self.problem
        r = self._r
        left = None if p.budget is None else p.budget - self._pulls[rows]
        self._check_in_space(rows, a)
        if self.invalid_action == "project":
            if left is None:
                cap = None if p.batch_size is None else np.full(rows.shape[0], p.batch_size)
            else:
                cap = left if p.batch_size is None else np.minimum(left, p.batch_size)
            return _project_rows(a, r, cap)
        if a.size == 0:
            return a, np.zeros(0, dtype=np.int64)
        totals = _row_sums(a)
        if p.batch_size is not None and totals.max() > p.batch_size:
            i = int(np.flatnonzero(totals > p.batch_size)[0])
            raise ValueError(
                f"env {rows[i]}: action asks for {totals[i]} pulls, over batch_size={p.batch_size} "
                f"{PROJECT_HINT}"
            )
        if left is not None and (totals > left).any():
            i = int(np.flatnonzero(totals > left)[0])
            raise ValueError(
                f"env {rows[i]}: action asks for {totals[i]} pulls but the budget has "
                f"{left[i]} left {PROJECT_HINT}"
            )
        return a, totals

    def _check_answers(self, rows: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The answer step's recommendation per row (the single env's rules)."""
        k = self.problem.k
        self._check_in_space(rows, a)
        if self.invalid_action == "project":
            return project_answer_rows(a, k, self._emp[rows])
        marked = np.count_nonzero(a, axis=1)
        if (marked != k).any():
            i = int(np.flatnonzero(marked != k)[0])
            raise ValueError(
                f"env {rows[i]}: the answer must mark exactly k={k} arms with nonzero entries; "
                f"it marks {marked[i]} {PROJECT_HINT}"
            )
        return np.nonzero(a)[1].reshape(-1, k)

    # ------------------------------------------------------------------ step
    def _validate(self, actions: Any, act: np.ndarray | None) -> tuple[Any, ...]:
        a = self._as_counts(actions, act)
        rows = self._rows if act is None else act
        answering = None
        if self._answer_agent:
            in_answer = self._phase[rows] == ANSWER
            if in_answer.any():
                answer_rows = rows[in_answer]
                answering = (answer_rows, self._check_answers(answer_rows, a[in_answer]))
                rows, a = rows[~in_answer], a[~in_answer]
        pulls, totals = self._check_pulls(rows, a)
        return rows, pulls, totals, answering

    def _apply(self, plan: tuple[Any, ...]) -> None:
        rows, pulls, totals, answering = plan
        if rows.size:
            self._add_info("pulls_made", rows, pulls)
            stop = totals == 0
            if stop.any():
                self._end_sampling(rows[stop])
                rows, pulls, totals = rows[~stop], pulls[~stop], totals[~stop]
            if rows.size:
                self._pull_batch(rows, pulls, totals)
        if answering is not None:
            self._end(answering[0], answering[1], terminated=True)
