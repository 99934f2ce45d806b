"""The act/observe protocol every agent follows, and the base of the scripted agents.

Protocol (:class:`AgentProtocol`, implemented by :class:`Agent`)::

    agent.reset(problem, seed=...)        # told the rules: n_arms, k, b, r, budget, ...
    action = agent.act(observation)       # a TopK-Batch-v0 action: pulls, stop, or answer
    agent.observe(action, observation, reward, terminated, truncated, info)

:class:`ScriptedAgent` is the base of the papers' algorithms. A subclass writes the
algorithm as a generator, :meth:`ScriptedAgent._run`, that yields pull *requests*
(:class:`Pull`: "pull these arms this many more times"; :class:`Batch`: "one
RoundRobin batch over these arms") and finally returns its answer. The base class
turns requests into batches with Jun et al.'s RoundRobin
(:func:`agents.scheduling.round_robin`), never exceeds the batch size, the repeat
limit or the budget, keeps the pull counts and empirical means (``self.counts``,
``self.means``), and answers with :meth:`ScriptedAgent.current_answer` if the budget
ends before the algorithm does (anytime use of fixed-confidence agents).

With ``batch_size=None`` a :class:`Pull` request is one step (a whole round at once).
"""

from __future__ import annotations

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
    "ScriptedAgent",
]

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


Request = Pull | Batch


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
    """

    name: ClassVar[str] = "agent"
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

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
        self._last: tuple[np.ndarray, np.ndarray] = (np.empty(0, np.int64), np.empty(0, np.int64))
        self._gen = self._run()

    # --------------------------------------------------------- sparse protocol
    def next_pulls(self) -> tuple[np.ndarray, np.ndarray]:
        """The next batch as ``(arms, reps)``; empty arrays mean "stop sampling"."""
        if self.pulls_left() == 0 or self.batches_left() == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        while True:
            if self._req_arms is not None:
                batch = self._schedule()
                if batch[0].size:
                    self._last = batch
                    return batch
                self._req_arms = None
            if self._finished or not self._advance():
                self._last = (np.empty(0, np.int64), np.empty(0, np.int64))
                return self._last

    def update(self, arms: np.ndarray, reps: np.ndarray, counts: np.ndarray, means: np.ndarray) -> None:
        """Record a batch: ``arms`` were pulled ``reps`` times; ``counts``/``means`` are the env's arrays."""
        if arms.size == 0:
            return
        self.counts[arms] = counts[arms]
        self.means[arms] = means[arms]
        self.total_pulls += int(reps.sum())
        self.batches += 1
        if self._req_arms is not None:
            if self._one_batch:
                self._req_arms = None
            else:
                pos = np.searchsorted(self._req_arms, arms)
                self._req_left[pos] -= reps

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
        if "pulls_made" in info:
            made = np.asarray(info["pulls_made"])
            arms = np.flatnonzero(made)
            reps = made[arms]
        else:
            arms, reps = self._last
        self.update(arms, reps, observation["counts"], observation["means"])
        self._last = (np.empty(0, np.int64), np.empty(0, np.int64))

    # -------------------------------------------------------------- internals
    def _advance(self) -> bool:
        """Run the algorithm to its next request; False once it has returned."""
        try:
            req = next(self._gen)
        except StopIteration as stop:
            self._finished = True
            if stop.value is not None:
                self._answer = np.asarray(stop.value, dtype=np.int64)
            return False
        arms = np.asarray(req.arms, dtype=np.int64)
        if isinstance(req, Batch):
            order = np.argsort(arms)
            self._req_arms = arms[order]
            self._req_left = None
            self._one_batch = True
        else:
            reps = np.asarray(req.reps, dtype=np.int64)
            keep = reps > 0
            arms, reps = arms[keep], reps[keep]
            order = np.argsort(arms)
            self._req_arms = arms[order]
            self._req_left = reps[order].copy()
            self._one_batch = False
        if self._req_arms.size and np.unique(self._req_arms).size != self._req_arms.size:
            raise RuntimeError(f"agent {self.name!r} requested repeated arms {self._req_arms.tolist()}")
        return True

    def _schedule(self) -> tuple[np.ndarray, np.ndarray]:
        """The next batch of the current request (RoundRobin within b, r and the budget)."""
        p = self.problem
        arms = self._req_arms
        r = p.repeat_limit
        if self._one_batch:
            per_arm = r if r is not None else (p.batch_size if p.batch_size is not None else 1)
            caps = np.full(arms.shape[0], per_arm, dtype=np.int64)
        else:
            caps = self._req_left if r is None else np.minimum(self._req_left, r)
        total = int(caps.sum())
        for limit in (p.batch_size, self.pulls_left()):
            if limit is not None:
                total = min(total, limit)
        if total <= 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        alloc = round_robin(self.counts[arms], caps, total, self.rng)
        nz = alloc > 0
        return arms[nz], alloc[nz]
