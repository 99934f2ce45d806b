"""The act/observe protocol every agent follows, and the base of the scripted agents.

Protocol (:class:`AgentProtocol`, implemented by :class:`Agent`)::

    agent.reset(problem, seed=...)        # told the rules: n_arms, k, b, r, budget, ...
    action = agent.act(observation)       # a TopK-Batch-v0 action: pulls, stop, or answer
    agent.observe(action, observation, reward, terminated, truncated, info)

:class:`ScriptedAgent` is the base of the papers' algorithms. Each algorithm is a
compiled generator (:attr:`ScriptedAgent.kernel`, see :mod:`agents.engine`) that yields
pull *requests* ("pull these arms this many more times", "one RoundRobin batch over
these arms", "pull this arm once") and finally records its answer. The base class turns
requests into batches with Jun et al.'s RoundRobin (:func:`agents.engine.round_robin`),
never exceeds the batch size, the repeat limit or the budget, keeps the pull counts and
empirical means (``self.counts``, ``self.means``), and answers with
:meth:`ScriptedAgent.current_answer` if the budget ends before the algorithm does
(anytime use of fixed-confidence agents). :func:`agents.run_episode` plays such an
agent on the compiled fast path (:func:`agents.engine.drive`); ``act``/``observe``
play the very same generator step by step through ``env.step``.

Third-party agents may still write ``_run`` as a plain Python generator yielding
:class:`Pull`, :class:`Batch` and :class:`PullOne` objects and returning the answer:
they are scheduled by the same compiled scheduler and play through the environment's
step functions (no compiled fast path). The rules of such a generator, each enforced by
a ``RuntimeError`` naming the agent, the value and the rule:

* it yields only :class:`Pull`, :class:`Batch` or :class:`PullOne` objects (a tuple
  ``(arms, reps)`` is not a request: write ``Pull(arms, reps)``);
* when it returns, it returns its answer, ``k`` distinct arm indices in
  ``[0, n_arms)``; returning ``None`` while the budget (or ``max_batches``) has pulls
  left is an error (``return self.current_answer()`` answers with the empirical top
  ``k``). A generator still waiting for pulls when the budget ends is not resumed: the
  episode's answer is then :meth:`ScriptedAgent.current_answer` (the anytime answer).

In fixed confidence an episode ends when the agent stops, or when ``max_batches``
truncates it. An agent without a stopping rule declares it
(:meth:`Agent.stops_by_itself` returns ``False``) and :meth:`Agent.reset` refuses a
fixed-confidence problem without ``max_batches`` (the episode would never end).

With ``batch_size=None`` a pull request is one step (a whole round at once). A request
of one pull of one arm is always one step with one pull, which fits every batch model.
"""

from __future__ import annotations

import numbers
import operator
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from agents import engine
from agents.engine.dispatch import compiled_call
from agents.engine.stepping import Stepper
from bandit_envs.problem import Problem

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
#: ScriptedAgent._advance: the algorithm returned.
_DONE = -99

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
    """``values`` as a contiguous 1-D int64 array (no copy when it already is one)."""
    if (
        isinstance(values, np.ndarray)
        and values.dtype == np.int64
        and values.ndim == 1
        and values.flags.c_contiguous
    ):
        return values
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))


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
            lil'UCB, a best-arm algorithm, has ``frozenset({1})``.
        distributions: the reward distributions the agent can play (``None``: any); the
            Beta-Bernoulli agents have ``frozenset({"bernoulli"})``. The benchmark runner
            skips the points an agent cannot play (setting, k or distribution).
        stopping_hint: how to give the agent a stopping rule, added to the error of
            :meth:`reset` when it has none (e.g. ``"give it rounds=N"``).
    """

    name: ClassVar[str] = "agent"
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    k_values: ClassVar[frozenset[int] | None] = None
    distributions: ClassVar[frozenset[str] | None] = None
    stopping_hint: ClassVar[str] = ""

    def __init__(self, *, seed: int | None = None) -> None:
        self.seed = seed
        self.problem: Problem | None = None
        self.rng = np.random.default_rng(seed)

    def stops_by_itself(self, problem: Problem) -> bool:
        """Whether the agent ends a fixed-confidence episode of ``problem`` on its own.

        ``True`` (the default) for an agent with a stopping rule or a fixed sample size;
        ``False`` for one that samples until ``max_batches`` truncates the episode
        (:class:`~agents.elimination.uniform.Uniform` without ``rounds``, the Bayesian
        :class:`~agents.bayesian.top_two_thompson.TopTwoThompson`). :meth:`reset` refuses a
        fixed-confidence problem without ``max_batches`` for such an agent. Consulted
        only in fixed confidence (in fixed budget the budget ends every episode).
        """
        return True

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
        if self.distributions is not None and problem.distribution not in self.distributions:
            raise ValueError(
                f"agent {self.name!r} cannot play distribution={problem.distribution!r}: it "
                f"supports {sorted(self.distributions)}"
            )
        if (
            problem.setting == FIXED_CONFIDENCE
            and problem.max_batches is None
            and not self.stops_by_itself(problem)
        ):
            hint = f", or {self.stopping_hint}" if self.stopping_hint else ""
            raise ValueError(
                f"agent {self.name!r} has no stopping rule in fixed_confidence, so an "
                f"episode with max_batches=None would never end: set max_batches to "
                f"truncate it{hint}"
            )
        self.problem = problem
        self.rng = np.random.default_rng(self.seed if seed is None else seed)

    @abstractmethod
    def act(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The next action: a pull-count vector, all zeros to stop, or the answer."""

    def observe(  # noqa: B027 (a default that does nothing, not an abstract method)
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

    A subclass sets :attr:`kernel` (its compiled generator ``run(ctx, prm)``; the
    fast-path loop :attr:`episode_kernel` is then built for it by
    :func:`agents.engine.fast_path`, unless the subclass sets its own: a loop that plays
    the same steps without the generator, serving its requests with
    :func:`agents.engine.serve_request` / :func:`~agents.engine.serve_arm`, as the LUCB
    family's does),
    :attr:`answer_rule` (the anytime answer, :func:`agents.engine.current_answer`) and
    :meth:`params` (its float64 parameter vector). A third-party subclass may instead
    implement :meth:`_run` as a Python generator of :class:`Pull` / :class:`Batch` /
    :class:`PullOne` requests that returns its answer. Either kind may override
    :meth:`current_answer` (the answer when the algorithm has not given its own, e.g.
    the posterior top k of the Bayesian agents).

    State available to them: ``self.problem``, ``self.rng``, ``self.counts`` (int64
    pulls per arm), ``self.means`` (empirical means, 0 before the first pull),
    ``self.total_pulls``, ``self.batches``, and :meth:`pulls_left` / :meth:`batches_left`.
    """

    #: the algorithm, a numba generator ``run(ctx, prm)`` (``None``: Python ``_run``).
    kernel: ClassVar[Any] = None
    #: the compiled episode loop (:func:`agents.engine.drive` on ``kernel``, built by
    #: :func:`agents.engine.fast_path`, or the same steps without the generator).
    episode_kernel: ClassVar[Any] = None
    #: the anytime answer rule (``agents.engine.RULE_*``).
    answer_rule: ClassVar[int] = engine.RULE_EMPIRICAL

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that sets ``kernel`` gets its loop (:func:`agents.engine.fast_path`)."""
        super().__init_subclass__(**kwargs)
        if (
            "kernel" in cls.__dict__
            and cls.kernel is not None
            and "episode_kernel" not in cls.__dict__
        ):
            cls.episode_kernel = staticmethod(engine.fast_path(cls.kernel))

    #: ``iv`` registers :meth:`_sampling_spent` reads.
    _SPENT = np.array([engine.BUDGET, engine.PULLS, engine.MAX_BATCHES, engine.BATCHES])

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self._gen: Any = None

    # ----------------------------------------------------------- subclass API
    def params(self) -> np.ndarray:
        """The float64 parameter vector the kernel reads (``prm``)."""
        return np.zeros(1)

    def _run(self) -> Generator[Request, None, Any]:
        """A Python algorithm: yield requests, return the recommended arms (k indices)."""
        raise NotImplementedError(
            f"{type(self).__name__} has neither a kernel nor a _run generator"
        )

    def current_answer(self) -> np.ndarray:
        """The best set now, by the agent's anytime rule (sorted; ties at random)."""
        return compiled_call(engine.current_answer, self.ctx)

    def pulls_left(self) -> int | None:
        """Pulls the budget has left (``None`` without a pull budget)."""
        b = self.problem.budget
        return None if b is None else b - self.total_pulls

    def batches_left(self) -> int | None:
        """Batches left before ``max_batches`` (``None`` without one)."""
        m = self.problem.max_batches
        return None if m is None else m - self.batches

    @property
    def total_pulls(self) -> int:
        """Pulls made this episode."""
        return int(self._iv[engine.PULLS])

    @property
    def batches(self) -> int:
        """Batches (sampling steps) made this episode."""
        return int(self._iv[engine.BATCHES])

    @property
    def accepted(self) -> np.ndarray:
        """Arms the algorithm marked accepted (``ctx.status``), increasing."""
        return np.flatnonzero(self.ctx.status == engine.ACCEPTED)

    @property
    def rejected(self) -> np.ndarray:
        """Arms the algorithm marked rejected (``ctx.status``), increasing."""
        return np.flatnonzero(self.ctx.status == engine.REJECTED)

    @property
    def undecided(self) -> np.ndarray:
        """Arms neither accepted nor rejected (``ctx.status``), increasing."""
        return np.flatnonzero(self.ctx.status == engine.UNDECIDED)

    @property
    def compiled(self) -> bool:
        """Whether the agent runs a compiled kernel (and can take the fast path)."""
        return self.kernel is not None

    # ------------------------------------------------------------------ reset
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start a new episode: zero the statistics and restart the algorithm.

        ``TopK-PullByPull-v0``'s problem (``action_format="pull"``) is refused: its
        actions are one pull at a time, for masked policies.
        """
        if getattr(problem, "action_format", "pulls") == "pull":
            raise ValueError(
                f"agent {self.name!r} cannot play TopK-PullByPull-v0: that env is for masked "
                "policies (one pull per step); play scripted agents on TopK-Batch-v0 (the "
                "same problem: same kwargs, same episodes)"
            )
        super().reset(problem, seed=seed)
        self.ctx = ctx = engine.make_ctx(problem, self.rng, self.answer_rule)
        self.counts = ctx.counts
        self.means = ctx.means
        self._iv = ctx.iv
        self._answer: np.ndarray | None = None
        self._last: tuple[np.ndarray, np.ndarray] = (_EMPTY, _EMPTY)
        self._step: int | tuple[np.ndarray, np.ndarray] | None = None
        self._n_arms = problem.n_arms
        # Created on first use: the fast path plays the kernel without them (and a
        # compiled generator's Python entry point costs a compile per process).
        self._gen = None
        self._stepper: Stepper | None = None

    # --------------------------------------------------------- sparse protocol
    def next_step(self) -> int | tuple[np.ndarray, np.ndarray]:
        """The next batch: an ``int`` ``i`` for one pull of arm ``i``, else ``(arms, reps)``.

        An ``int`` answers a one-pull request: record its result with
        :meth:`update_one`. Otherwise the batch is the one :meth:`next_pulls` gives
        (empty arrays: stop sampling), recorded with :meth:`update`. Nothing is asked
        for once the pull budget or ``max_batches`` is spent. (The compiled fast path,
        :func:`agents.engine.drive`, makes the same decisions.)
        """
        iv = self._iv
        if self._sampling_spent():
            return _EMPTY, _EMPTY
        while True:
            if iv[engine.REQ_OPEN]:
                stepper = self._steps()
                m = stepper.schedule()
                if m > 0:
                    sched = self.ctx.sched
                    self._last = (
                        sched[engine.BATCH_ARMS, :m].copy(),
                        sched[engine.BATCH_REPS, :m].copy(),
                    )
                    return self._last
                stepper.close_request()
            if iv[engine.FINISHED]:
                self._last = (_EMPTY, _EMPTY)
                return self._last
            code = self._advance()
            if code >= 0:
                return code
            if code == _DONE:
                iv[engine.FINISHED] = 1
                self._last = (_EMPTY, _EMPTY)
                return self._last
            self._steps().accept_request(code)

    def _steps(self) -> Stepper:
        """The scheduler's calls for this episode (:class:`agents.engine.stepping.Stepper`)."""
        if self._stepper is None:
            self._stepper = Stepper(self.ctx)
        return self._stepper

    def _sampling_spent(self) -> bool:
        """Whether the budget or ``max_batches`` is spent (:func:`agents.engine.sampling_spent`)."""
        budget, pulls, most, batches = self._iv[self._SPENT].tolist()
        return (budget >= 0 and pulls >= budget) or (most >= 0 and batches >= most)

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
        self._iv[engine.PULLS] += 1
        self._iv[engine.BATCHES] += 1

    def update(
        self, arms: np.ndarray, reps: np.ndarray, counts: np.ndarray, means: np.ndarray
    ) -> None:
        """Record a batch: ``arms`` were pulled ``reps`` times.

        ``counts``/``means`` are the env's arrays (only the entries of ``arms`` are read).
        """
        if arms.shape[0] == 0:
            return
        self.counts[arms] = counts[arms]
        self.means[arms] = means[arms]
        self._steps().record_batch(_as_index_array(arms), _as_index_array(reps))

    def recommend(self) -> np.ndarray:
        """The answer: the algorithm's own if it finished, else :meth:`current_answer`."""
        if self._answer is not None:
            answer = self._answer
        elif (self.kernel is not None and self._iv[engine.HAS_ANSWER]) or type(
            self
        ).current_answer is ScriptedAgent.current_answer:
            answer = compiled_call(engine.current_answer, self.ctx)  # (no re-typing of ctx)
        else:
            answer = self.current_answer()
        answer = np.sort(np.asarray(answer, dtype=np.int64))
        if answer.shape != (self.problem.k,) or np.unique(answer).size != self.problem.k:
            raise RuntimeError(
                f"agent {self.name!r} answered {answer.tolist()}, not k={self.problem.k} "
                f"distinct arms"
            )
        return answer

    # ---------------------------------------------------------- dense protocol
    def act(self, observation: Mapping[str, Any]) -> int | np.ndarray:
        """The next action, in the env's format (``problem.action_format``).

        ``TopK-v0`` (``"arm"``): the arm to pull, ``n_arms`` to stop. ``TopK-Batch-v0``:
        the pull-count vector (all zeros: stop), the answer vector in the answer phase.
        """
        problem = self.problem
        if problem.action_format == "arm":
            step = self._step = self.next_step()
            if type(step) is int:
                return step
            arms = step[0]  # (b = r = 1: a batch is one pull, none to stop)
            return int(arms[0]) if arms.shape[0] else problem.n_arms
        action = np.zeros(problem.n_arms, dtype=np.int64)
        if observation.get("phase", 0) == 1:
            self._step = None
            action[self.recommend()] = 1
            return action
        step = self._step = self.next_step()
        if type(step) is int:
            action[step] = 1
        else:
            action[step[0]] = step[1]
        return action

    def observe(
        self,
        action: int | np.ndarray,
        observation: Mapping[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
    ) -> None:
        """Record the pulls of the last :meth:`act` (the env's counts and means at those arms).

        With ``invalid_action="project"`` the env reports the pulls it made
        (``info["pulls_made"]``); those are recorded if they differ from the request.
        """
        step, self._step = self._step, None
        if step is None:
            return
        counts, means = observation["counts"], observation["means"]
        if type(step) is int:  # one pull fits every batch model: never projected
            self.update_one(step, counts, means)
            return
        arms, reps = step
        made = info.get("pulls_made")
        if made is not None:  # the env's pulls: ours unless it projected the action
            made = np.asarray(made)
            if np.count_nonzero(made) != arms.shape[0] or not np.array_equal(made[arms], reps):
                arms = np.flatnonzero(made)
                reps = made[arms]
        self.update(arms, reps, counts, means)

    # -------------------------------------------------------------- internals
    def _advance(self) -> int:
        """Resume the algorithm to its next request.

        Returns an arm (one pull), a request code, or ``_DONE``.
        """
        if self._gen is None:
            self._gen = (
                self.kernel(self.ctx, self.params()) if self.kernel is not None else self._run()
            )
        try:
            req = next(self._gen)
        except StopIteration as stop:
            if self.kernel is None:
                self._returned(stop.value)
            return _DONE
        if self.kernel is not None:
            return int(req)
        return self._translate(req)

    def _returned(self, value: Any) -> None:
        """Record what a Python ``_run`` returned (see the module docstring's rules)."""
        p = self.problem
        if value is None:
            if engine.sampling_spent(self.ctx):  # (not reached: never resumed then)
                return
            if p.budget is not None:
                where = f" with {self.pulls_left()} pulls left"
            elif p.max_batches is not None:
                where = f" with {self.batches_left()} of max_batches={p.max_batches} left"
            else:
                where = " in fixed confidence"
            raise RuntimeError(
                f"agent {self.name!r} stopped sampling{where} but returned None: a _run that "
                f"stops must return its answer (k={p.k} distinct arms in [0, {p.n_arms})); "
                f"to answer with the empirical top k, return self.current_answer()"
            )
        try:
            answer = np.asarray(value)
            ok = (
                answer.shape == (p.k,)
                and answer.dtype.kind in "iu"
                and np.unique(answer).size == p.k
                and 0 <= int(answer.min()) <= int(answer.max()) < p.n_arms
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            shown = value.tolist() if isinstance(value, np.ndarray) else value
            raise RuntimeError(
                f"agent {self.name!r} returned {reprlib.repr(shown)}: a _run must return "
                f"its answer, k={p.k} distinct arms in [0, {p.n_arms}) (integers)"
            )
        self._answer = answer.astype(np.int64)

    def _translate(self, req: Request) -> int:
        """A Python request object as the engine's request (buffers filled)."""
        ctx = self.ctx
        if isinstance(req, PullOne):
            return self._check_arm(req.arm)
        if not isinstance(req, (Pull, Batch)):
            raise RuntimeError(
                f"agent {self.name!r} yielded {reprlib.repr(req)} ({type(req).__name__}): "
                f"a _run must yield Pull, Batch or PullOne requests, e.g. Pull(arms, reps), "
                f"Pull.each(arms, times), Batch(arms) or PullOne(arm)"
            )
        arms = _as_index_array(req.arms)
        m = arms.shape[0]
        if m > self._n_arms:
            raise RuntimeError(f"agent {self.name!r} requested repeated arms {arms.tolist()}")
        if isinstance(req, Batch):
            ctx.sched[engine.REQ_ARMS, :m] = arms
            ctx.sched[engine.REQ_REPS, :m] = 0
            self._iv[engine.REQ_LEN] = m
            code = engine.BATCH
        else:
            reps = _as_index_array(req.reps)
            if reps.shape != arms.shape:
                raise RuntimeError(
                    f"agent {self.name!r} requested arms {arms.shape} with reps {reps.shape}"
                )
            if m == 1 and reps[0] == 1:
                return self._check_arm(arms[0])
            ctx.sched[engine.REQ_ARMS, :m] = arms
            ctx.sched[engine.REQ_REPS, :m] = reps
            self._iv[engine.REQ_LEN] = m
            code = engine.PULL
        if m and (arms.min() < 0 or arms.max() >= self._n_arms):
            raise RuntimeError(f"agent {self.name!r} requested arms outside [0, {self._n_arms})")
        if np.unique(arms).shape[0] != m:
            raise RuntimeError(f"agent {self.name!r} requested repeated arms {arms.tolist()}")
        return code

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

    def _each_once(self, arms: Iterable[int] | np.ndarray) -> Generator[Request, None, None]:
        """Pull every arm of ``arms`` once: ``yield from self._each_once(arms)``."""
        yield Pull.each(arms, 1)
