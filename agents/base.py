"""The act/observe protocol every agent follows, and the base of the scripted agents.

Protocol (:class:`AgentProtocol`, implemented by :class:`Agent`)::

    agent.reset(problem, seed=...)        # told the rules: n_arms, k, b, r, budget, ...
    action = agent.act(observation)       # a TopK-Batch-v0 action: pulls, stop, or answer
    agent.observe(action, observation, reward, terminated, truncated, info)

:class:`ScriptedAgent` is the base of the papers' algorithms. A subclass writes the
algorithm as a generator, :meth:`ScriptedAgent._run`, that yields pull *requests*
(:class:`Pull`: "pull these arms this many more times"; :class:`Batch`: "one
RoundRobin batch over these arms"; :class:`PullOne`: "pull this arm once") and finally
returns its answer. The base class turns requests into batches with Jun et al.'s
RoundRobin (:func:`agents.scheduling.round_robin`), never exceeds the batch size, the
repeat limit or the budget, keeps the pull counts and empirical means
(``self.counts``, ``self.means``), and answers with
:meth:`ScriptedAgent.current_answer` if the budget ends before the algorithm does
(anytime use of fixed-confidence agents).

With ``batch_size=None`` a :class:`Pull` request is one step (a whole round at once).
A :class:`PullOne` request (or a ``Pull`` of one arm once) is always one step with one
pull, which fits every batch model; it is served without RoundRobin or count vectors
(:meth:`ScriptedAgent.next_step`), and :func:`agents.run_episode` plays it with the
environment's one-pull step
(:meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_one`): the fast path of sequential
algorithms (the LUCB family, lil'UCB, CLUCB-PAC).
"""

from __future__ import annotations

import numbers
import operator
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from agents.scheduling import round_robin
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = [
    "Agent",
    "AgentProtocol",
    "Batch",
    "FIXED_BUDGET",
    "FIXED_CONFIDENCE",
    "Pull",
    "PullOne",
    "ScriptedAgent",
    "check_probability",
]

_EMPTY = np.empty(0, dtype=np.int64)
_EMPTY.flags.writeable = False
_ONE = np.ones(1, dtype=np.int64)
_ONE.flags.writeable = False
#: ScriptedAgent._advance: the request was stored for scheduling / the algorithm returned.
_QUEUED, _DONE = -1, -2

FIXED_BUDGET = "fixed_budget"
FIXED_CONFIDENCE = "fixed_confidence"


@dataclass(frozen=True)
class Pull:
    """Request: pull ``arms[j]`` ``reps[j]`` more times (spread over batches as needed)."""

    arms: np.ndarray
    reps: np.ndarray

    @classmethod
    def each(cls, arms: Iterable[int] | np.ndarray, times: int) -> Pull:
        """Pull every arm of ``arms`` ``times`` more times."""
        arms = np.asarray(arms, dtype=np.int64)
        return cls(arms, np.full(arms.shape[0], int(times), dtype=np.int64))


@dataclass(frozen=True)
class Batch:
    """Request: exactly one batch of RoundRobin over ``arms`` (Jun et al. Alg. 1).

    With ``batch_size=None`` the batch pulls every arm of ``arms`` once (``r`` times if
    a repeat limit is set).
    """

    arms: np.ndarray


@dataclass(frozen=True, slots=True)
class PullOne:
    """Request: pull ``arm`` once, as one batch of one pull (the sequential fast path).

    The same request as ``Pull([arm], [1])`` (which the base also recognises), served
    without RoundRobin scheduling or count vectors: :meth:`ScriptedAgent.next_step`
    returns the arm as an ``int`` and :func:`agents.run_episode` plays it with
    :meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_one`. One pull fits every batch
    model (any ``batch_size >= 1``, ``repeat_limit >= 1``), so the request always takes
    exactly one batch; budgets are checked before it is asked for, as for any request.
    Agents that pull the same arms again and again should keep one instance per arm.
    """

    arm: int

    @property
    def arms(self) -> np.ndarray:
        """``[arm]`` (the :class:`Pull` view of this request)."""
        return np.array([self.arm], dtype=np.int64)

    @property
    def reps(self) -> np.ndarray:
        """``[1]`` (the :class:`Pull` view of this request)."""
        return np.ones(1, dtype=np.int64)


Request = Pull | Batch | PullOne


def check_probability(name: str, value: Any) -> float:
    """``value`` as a float in (0, 1), else a ``ValueError`` naming ``name`` and the rule.

    Any real number but a bool is accepted (Python or numpy ints and floats, fractions);
    NaN is not in (0, 1).
    """
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not real or not 0.0 < value < 1.0:
        raise ValueError(f"{name}={value!r} must lie in (0, 1)")
    return float(value)


def _as_index_array(values: Any) -> np.ndarray:
    """``values`` as a 1-D int64 array (no copy when it already is one)."""
    if isinstance(values, np.ndarray) and values.dtype == np.int64 and values.ndim == 1:
        return values
    return np.asarray(values, dtype=np.int64).reshape(-1)


@runtime_checkable
class AgentProtocol(Protocol):
    """What the runner needs of an agent (duck-typed third-party agents fit too)."""

    def reset(self, problem: Problem, *, seed: int | None = None) -> None: ...

    def act(self, observation: Mapping[str, Any]) -> np.ndarray: ...

    def observe(
        self,
        action: np.ndarray,
        observation: Mapping[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
    ) -> None: ...


class Agent(ABC):
    """Base of all agents: the act/observe protocol for ``TopK-Batch-v0``.

    Attributes:
        name: registry name.
        settings: the settings the agent can play.
        k_values: the numbers of top arms ``k`` the agent can identify (``None``: any);
            lil'UCB, a best-arm algorithm, has ``frozenset({1})``. The benchmark runner
            skips the points an agent cannot play.
    """

    name: ClassVar[str] = "agent"
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    k_values: ClassVar[frozenset[int] | None] = None

    def __init__(self, *, seed: int | None = None) -> None:
        self.seed = seed
        self.problem: Problem | None = None
        self.rng = np.random.default_rng(seed)

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode of ``problem``; ``seed`` (else the constructor's) seeds ``self.rng``."""
        if problem.setting not in self.settings:
            raise ValueError(
                f"agent {self.name!r} cannot play setting={problem.setting!r}: it supports "
                f"{sorted(self.settings)}"
            )
        if self.k_values is not None and problem.k not in self.k_values:
            raise ValueError(
                f"agent {self.name!r} cannot identify k={problem.k} top arms: it supports "
                f"k in {sorted(self.k_values)}"
            )
        self.problem = problem
        self.rng = np.random.default_rng(self.seed if seed is None else seed)

    @abstractmethod
    def act(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The next action: a pull-count vector, all zeros to stop, or the answer."""

    def observe(
        self,
        action: np.ndarray,
        observation: Mapping[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
    ) -> None:
        """Feedback of the step ``action`` caused (default: ignored)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"


class ScriptedAgent(Agent):
    """Base of the papers' algorithms (see the module docstring).

    Subclasses implement :meth:`_run` and may override :meth:`current_answer`. State
    available to them: ``self.problem``, ``self.rng``, ``self.counts`` (int64 pulls per
    arm), ``self.means`` (empirical means, 0 before the first pull), ``self.total_pulls``,
    ``self.batches``, and the helpers :meth:`pulls_left` and :meth:`batches_left`.
    """

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self._gen: Generator[Request, None, Any] | None = None

    # ----------------------------------------------------------- subclass API
    @abstractmethod
    def _run(self) -> Generator[Request, None, Any]:
        """The algorithm: yield requests, return the recommended arms (k indices)."""

    def current_answer(self) -> np.ndarray:
        """The best set now: the k highest empirical means (never-pulled arms last)."""
        values = np.where(self.counts > 0, self.means, -np.inf)
        return top_k(values, self.problem.k, self.rng)

    def _each_once(self, arms: Iterable[int] | np.ndarray) -> Generator[Request, None, None]:
        """Pull every arm of ``arms`` once: ``yield from self._each_once(arms)``.

        The same batches, pulls and draws as ``yield Pull.each(arms, 1)``. With
        ``batch_size=1`` and equal counts on ``arms`` (e.g. the first round of an
        episode), RoundRobin's one-pull batches take, one at a time, a uniformly random
        arm of those left (``rng.integers`` over them in request order; the last one
        without a draw); this yields those arms as :class:`PullOne` requests, O(1) per
        pull instead of RoundRobin's O(len(arms)). Otherwise it yields the ``Pull``.
        """
        arms = _as_index_array(arms)
        m = arms.shape[0]
        if (
            self.problem.batch_size != 1
            or m < 2
            or arms.min() < 0
            or arms.max() >= self._n_arms
            or np.unique(arms).shape[0] != m
            or (self.counts[arms] != self.counts[arms[0]]).any()
        ):
            yield Pull.each(arms, 1)  # (bad arms raise there)
            return
        left = arms.tolist()
        integers = self.rng.integers
        while len(left) > 1:
            yield PullOne(left.pop(int(integers(len(left)))))
        yield PullOne(left[0])

    def pulls_left(self) -> int | None:
        """Pulls the budget has left (``None`` without a pull budget)."""
        b = self.problem.budget
        return None if b is None else b - self.total_pulls

    def batches_left(self) -> int | None:
        """Batches left before ``max_batches`` (``None`` without one)."""
        m = self.problem.max_batches
        return None if m is None else m - self.batches

    # ------------------------------------------------------------------ reset
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start a new episode: zero the statistics and restart the algorithm."""
        super().reset(problem, seed=seed)
        n = problem.n_arms
        self.counts = np.zeros(n, dtype=np.int64)
        self.means = np.zeros(n, dtype=np.float64)
        self.total_pulls = 0
        self.batches = 0
        self._answer: np.ndarray | None = None
        self._finished = False
        self._req_arms: np.ndarray | None = None
        self._req_left: np.ndarray | None = None
        self._one_batch = False
        self._served_all = False
        self._last_pos = _EMPTY
        self._last: tuple[np.ndarray, np.ndarray] = (_EMPTY, _EMPTY)
        self._n_arms = n
        self._pull_cap = problem.budget
        self._batch_cap = problem.max_batches
        self._gen = self._run()

    # --------------------------------------------------------- sparse protocol
    def next_step(self) -> int | tuple[np.ndarray, np.ndarray]:
        """The next batch: an ``int`` ``i`` for one pull of arm ``i``, else ``(arms, reps)``.

        An ``int`` answers a :class:`PullOne` request (or a ``Pull`` of one arm once):
        record its result with :meth:`update_one`. Otherwise the batch is the one
        :meth:`next_pulls` gives (empty arrays: stop sampling), recorded with
        :meth:`update`. Nothing is asked for once the pull budget or ``max_batches`` is
        spent.
        """
        cap = self._pull_cap
        if cap is not None and self.total_pulls >= cap:
            return _EMPTY, _EMPTY
        cap = self._batch_cap
        if cap is not None and self.batches >= cap:
            return _EMPTY, _EMPTY
        if self._req_arms is None and not self._finished:
            # Hot path of sequential agents: the last request is served; resume the
            # algorithm, and a PullOne needs nothing more than a range check.
            try:
                req = self._gen.send(None)
            except StopIteration as stop:
                self._stopped(stop.value)
                self._last = (_EMPTY, _EMPTY)
                return self._last
            if type(req) is PullOne:
                arm = req.arm
                if type(arm) is not int or not 0 <= arm < self._n_arms:
                    arm = self._check_arm(arm)
                return arm
            arm = self._accept(req)
            if arm >= 0:
                return arm
        while True:
            if self._req_arms is not None:
                batch = self._schedule()
                if batch is not None:
                    self._last = batch
                    return batch
                self._req_arms = None
            if self._finished:
                self._last = (_EMPTY, _EMPTY)
                return self._last
            arm = self._advance()
            if arm >= 0:
                return arm

    def next_pulls(self) -> tuple[np.ndarray, np.ndarray]:
        """The next batch as ``(arms, reps)``; empty arrays mean "stop sampling"."""
        step = self.next_step()
        if type(step) is int:
            self._last = (np.array([step], dtype=np.int64), _ONE)
            return self._last
        return step

    def update_one(self, arm: int, counts: np.ndarray, means: np.ndarray) -> None:
        """Record the one pull of ``arm`` that :meth:`next_step` asked for (as an ``int``).

        ``counts``/``means`` are the env's arrays (only entry ``arm`` is read).
        """
        self.counts[arm] = counts[arm]
        self.means[arm] = means[arm]
        self.total_pulls += 1
        self.batches += 1

    def update(self, arms: np.ndarray, reps: np.ndarray, counts: np.ndarray, means: np.ndarray) -> None:
        """Record a batch: ``arms`` were pulled ``reps`` times; ``counts``/``means`` are the env's arrays."""
        m = arms.shape[0]
        if m == 0:
            return
        if m == 1:
            i = int(arms[0])
            self.counts[i] = counts[i]
            self.means[i] = means[i]
            self.total_pulls += int(reps[0])
        else:
            self.counts[arms] = counts[arms]
            self.means[arms] = means[arms]
            self.total_pulls += int(reps.sum())
        self.batches += 1
        if self._req_arms is None:
            return
        if self._one_batch or (self._served_all and arms is self._last[0]):
            self._req_arms = None
        elif arms is self._last[0]:
            self._req_left[self._last_pos] -= reps
        else:  # the env reported other pulls than scheduled (e.g. a projected action)
            pos = {int(a): j for j, a in enumerate(self._req_arms.tolist())}
            for a, c in zip(arms.tolist(), reps.tolist()):
                if a in pos:
                    self._req_left[pos[a]] -= c
            if not (self._req_left > 0).any():
                self._req_arms = None

    def recommend(self) -> np.ndarray:
        """The answer: the algorithm's own if it finished, else :meth:`current_answer`."""
        answer = self._answer if self._answer is not None else self.current_answer()
        answer = np.sort(np.asarray(answer, dtype=np.int64))
        if answer.shape != (self.problem.k,) or np.unique(answer).size != self.problem.k:
            raise RuntimeError(f"agent {self.name!r} answered {answer.tolist()}, not k={self.problem.k} distinct arms")
        return answer

    # ---------------------------------------------------------- dense protocol
    def act(self, observation: Mapping[str, Any]) -> np.ndarray:
        """Dense ``TopK-Batch-v0`` action (answer vector in the answer phase)."""
        n = self.problem.n_arms
        action = np.zeros(n, dtype=np.int64)
        if int(observation.get("phase", 0)) == 1:
            action[self.recommend()] = 1
            return action
        arms, reps = self.next_pulls()
        action[arms] = reps
        return action

    def observe(
        self,
        action: np.ndarray,
        observation: Mapping[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
    ) -> None:
        """Update from a dense step (the env's counts and means at the pulled arms)."""
        arms, reps = self._last
        if "pulls_made" in info:
            made = np.asarray(info["pulls_made"])
            if not np.array_equal(made[arms], reps) or int(made.sum()) != int(reps.sum()):
                arms = np.flatnonzero(made)
                reps = made[arms]
        self.update(arms, reps, observation["counts"], observation["means"])
        self._last = (_EMPTY, _EMPTY)

    # -------------------------------------------------------------- internals
    def _advance(self) -> int:
        """Run the algorithm to its next request.

        Returns the arm of a one-pull request (served as is), :data:`_QUEUED` when the
        request was stored for :meth:`_schedule`, :data:`_DONE` once ``_run`` returned.
        """
        try:
            req = next(self._gen)
        except StopIteration as stop:
            self._stopped(stop.value)
            return _DONE
        return self._accept(req)

    def _stopped(self, value: Any) -> None:
        """The algorithm returned ``value`` (its answer, or ``None``)."""
        self._finished = True
        if value is not None:
            self._answer = np.asarray(value, dtype=np.int64)

    def _check_arm(self, arm: Any) -> int:
        """``arm`` of a one-pull request as an ``int`` in ``[0, n_arms)``, else ``RuntimeError``."""
        try:
            if isinstance(arm, (bool, np.bool_)):
                raise TypeError
            i = operator.index(arm)
        except TypeError:
            raise RuntimeError(
                f"agent {self.name!r} requested arm {arm!r}, not an integer"
            ) from None
        if not 0 <= i < self._n_arms:
            raise RuntimeError(f"agent {self.name!r} requested arms outside [0, {self._n_arms})")
        return i

    def _accept(self, req: Request) -> int:
        """Take request ``req``: see :meth:`_advance` for the return value."""
        if isinstance(req, PullOne):
            return self._check_arm(req.arm)
        arms = _as_index_array(req.arms)
        if isinstance(req, Batch):
            self._req_left = None
            self._one_batch = True
        else:
            reps = _as_index_array(req.reps)
            if reps.shape != arms.shape:
                raise RuntimeError(f"agent {self.name!r} requested arms {arms.shape} with reps {reps.shape}")
            if arms.shape[0] == 1:
                if reps[0] <= 0:
                    arms, reps = _EMPTY, _EMPTY
                elif reps[0] == 1:  # one pull of one arm: a PullOne
                    return self._check_arm(arms[0])
            elif (reps <= 0).any():
                keep = reps > 0
                arms, reps = arms[keep], reps[keep]
            self._req_left = reps.copy()
            self._one_batch = False
        m = arms.shape[0]
        if m == 2 and arms[0] == arms[1] or m > 2 and np.unique(arms).shape[0] != m:
            raise RuntimeError(f"agent {self.name!r} requested repeated arms {arms.tolist()}")
        n = self._n_arms
        if m == 1 and not 0 <= int(arms[0]) < n or m > 1 and (arms.min() < 0 or arms.max() >= n):
            raise RuntimeError(f"agent {self.name!r} requested arms outside [0, {n})")
        self._req_arms = arms
        return _QUEUED

    def _schedule(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The next batch of the current request (RoundRobin within b, r and the budget).

        Returns ``None`` when the request is served (or nothing more fits).
        """
        p = self.problem
        arms = self._req_arms
        if arms.shape[0] == 0:
            return None
        r = p.repeat_limit
        room = p.batch_size
        left = self.pulls_left()
        if left is not None:
            room = left if room is None else min(room, left)
        if self._one_batch:
            per_arm = r if r is not None else (p.batch_size if p.batch_size is not None else 1)
            caps = np.full(arms.shape[0], per_arm, dtype=np.int64)
        else:
            want = self._req_left
            if arms.shape[0] == 1:
                need = int(want[0])
                if need <= 0:
                    return None
                if (r is None or need <= r) and (room is None or need <= room):
                    self._served_all = True
                    return arms, want
            else:
                top = int(want.max())
                if top <= 0:
                    return None
                if (r is None or top <= r) and (room is None or int(want.sum()) <= room):
                    self._served_all = True
                    if (want <= 0).any():
                        keep = want > 0
                        return arms[keep], want[keep]
                    return arms, want
            caps = want if r is None else np.minimum(want, r)
            caps = np.maximum(caps, 0)
        total = int(caps.sum()) if room is None else min(int(caps.sum()), room)
        if total <= 0:
            return None
        alloc = round_robin(self.counts[arms], caps, total, self.rng)
        pos = np.flatnonzero(alloc)
        self._served_all = False
        self._last_pos = pos
        return arms[pos], alloc[pos]
