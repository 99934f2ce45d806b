"""``PolicyAgent``: a learned policy (any callable or a stable-baselines3 model) as an agent.

The adapter lets a policy trained on ``TopK-v0`` or ``TopK-Batch-v0`` play through the
same act/observe protocol as the scripted agents, on any environment of the suite,
so the benchmark runner gives it the same seeds and the same episodes:

* the observation is passed through ``obs_transform`` (e.g. the normalisation the
  policy was trained with) and reduced to the keys of the policy's observation space
  (a ``phase`` the play env does not have is 0: it never reaches an answer step);
* the raw action becomes a pull vector: a scalar action (a ``TopK-v0`` policy) is a
  one-pull vector, ``n_arms`` (the stop action) the all-zero stop vector;
* the pull vector is mapped into the *play* env's action set with the env's own rule,
  :func:`bandit_envs.top_k_batch.project_pulls` (what ``invalid_action="project"``
  does): on ``TopK-Batch-v0`` with the play env's ``repeat_limit`` and the cap
  ``min(batch_size, pulls left)`` (the pulls left come from the problem's budget and
  the observed counts); on ``TopK-v0`` (``problem.action_format == "arm"``) with
  ``b = r = 1``, and the one pulled arm is the action (none: the stop action
  ``n_arms``);
* at the answer step a policy that was not trained to answer (``answer="empirical"``,
  the default for scalar policies) answers with the ``k`` highest empirical means, and
  a policy's own answer vector is mapped to ``k`` arms by
  :func:`bandit_envs.top_k_batch.project_answer`; a policy trained for a family with a
  known Beta prior (``answer="posterior"``, ``prior=(a, b)``) answers with the ``k``
  largest posterior means, the Bayes-optimal answer for aggregate regret
  (:mod:`agents.bayesian.beta_prior`);
* a policy that cannot see the answer phase (its observation space has no ``phase``
  key, or its ``obs_transform`` drops it: trained on ``answer="empirical"``) never
  learned to answer. On an env with an answer step, ``answer="auto"`` then answers with
  the empirical top k and warns once (``UserWarning``); ``answer="policy"`` is refused
  (``ValueError`` at ``reset``).

Policies of sb3-contrib play the same way:

* a recurrent policy (``RecurrentPPO``) carries its LSTM state from one step to the
  next and starts every episode from the zero state (``reset``);
* a masked policy (``MaskablePPO``) gets the play env's action masks with each
  observation: those its training env would give (``TopK-v0``: every action;
  ``TopK-Batch-v0``: the per-arm counts of :func:`bandit_envs.spaces.count_masks`);
* a policy trained on ``TopK-PullByPull-v0`` (its observation has a ``batch`` entry)
  composes each batch of the play env pull by pull, as that env does: it is asked one
  sub-step at a time (one more pull of an arm, with the arms that have ``r`` pulls in
  the batch masked, or end the batch) until it ends the batch or the batch is full
  (``min(b, pulls left, n r)`` pulls); an empty batch is the stop. At the answer step
  it picks the ``k`` arms one at a time. A masked policy never makes an invalid
  sub-step; an unmasked one's invalid sub-step ends the batch (that env's projection).

A policy loaded with its metadata (``agents.make("ppo:PATH")``,
:func:`agents.learned.saving.load_policy`) knows the family it was trained on (its
sidecar's ``env_id`` and ``env_kwargs``): on an env off that family ``reset`` warns once
per agent and distinct mismatch (``UserWarning``) naming the family and
the agents tuned to no family (:data:`agents.bayesian.learned_batch.ZERO_SHOT`)
(:class:`PolicyAgent`'s ``family``).

Every action that had to be changed to be valid is counted: ``agent.projections`` of
``agent.decisions`` actions this episode (:attr:`PolicyAgent.projection_rate`), and
``agent.total_projections`` / ``agent.total_decisions`` since the agent was built.

The policy runs on one observation at a time, where torch's thread pool only adds
synchronisation: each ``act`` runs on ``torch_threads`` threads (default 1) and gives
torch its previous setting back when it returns. Switching there and back costs about
0.3 us per ``act``, well under 1% of a PPO step, which on torch's default two threads of
a 2-core machine costs twice the CPU time and, when other work shares the cores, 3.5-45x
the wall-clock time (``benchmarks/policy_play_speed.py``). ``torch_threads=None``
leaves torch's setting as it is.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent
from agents.bayesian.beta_prior import (
    check_bernoulli,
    check_beta_prior,
    posterior_top_k,
    prior_of,
)
from agents.registry import register_loader
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k
from bandit_envs.spaces import count_masks
from bandit_envs.top_k_batch import project_answer, project_pulls

__all__ = ["LOADERS", "PolicyAgent", "SampledPolicyAgent", "check_observation"]

#: The ``agents.make("PREFIX:PATH")`` prefixes that load a saved model (the algorithm).
LOADERS = ("ppo", "a2c", "dqn", "recurrent_ppo", "maskable_ppo")
#: Where each algorithm's class lives (``agents.learned.algos.ALGOS`` imports them all).
_ALGO_CLASSES = {
    "ppo": ("stable_baselines3", "PPO"),
    "a2c": ("stable_baselines3", "A2C"),
    "dqn": ("stable_baselines3", "DQN"),
    "recurrent_ppo": ("sb3_contrib", "RecurrentPPO"),
    "maskable_ppo": ("sb3_contrib", "MaskablePPO"),
}


class PolicyAgent(Agent):
    """Adapter from ``policy(observation) -> action`` to the agent protocol.

    Args:
        policy: a callable ``obs -> action``, or an object with
            ``predict(obs, deterministic=...)`` (stable-baselines3 models).
        deterministic: passed to ``predict``.
        answer: ``"policy"`` (the policy's action at the answer step marks the set;
            refused for a policy that cannot see the answer phase), ``"empirical"``
            (top-k empirical means), ``"posterior"`` (top-k posterior means under
            ``prior``; Bernoulli arms), or ``"auto"``: empirical for scalar
            (``TopK-v0``) policies and for policies that cannot see the answer phase
            (with a warning), the policy's own otherwise.
        obs_transform: applied to each observation before the policy sees it.
        name: the name results are reported under.
        seed: seeds the tie-breaking of empirical answers.
        prior: ``(a, b)``, the Beta prior of ``answer="posterior"``.
        pull_by_pull: compose every batch pull by pull (a policy trained on
            ``TopK-PullByPull-v0``); ``None``: when the policy's observation has a
            ``batch`` entry (its ``Dict`` space, or its ``obs_transform``'s features).
        torch_threads: the torch threads each ``act`` runs on (torch's setting is given
            back when ``act`` returns; nothing happens while torch is not imported);
            ``None``: leave torch's setting as it is.
        family: the family the policy was trained on, ``{"env_id": ..., "env_kwargs":
            ...}`` (the training env's; a saved model's metadata gives it); ``None``:
            unknown, not checked.

    Off its family: a policy is trained on one family. With ``family`` known, ``reset``
    warns (``UserWarning``, once per agent and distinct mismatch) when the problem is off
    it: ``n_arms``, ``k``, ``setting``, ``distribution``, ``objective``, ``budget``
    (fixed budget), ``cost_per_batch`` (fixed confidence), ``batch_size``,
    ``repeat_limit`` and ``max_batches`` (a one-pull ``TopK-v0`` policy plays any batch
    shape, and for it a ``max_batches`` of at least the budget, which never ends its
    episode early, is as none), and, played by :func:`agents.run_episode` (which shows it
    the env's instance), when the env's instance is not the family's (another Beta prior,
    or another instance). The warning names the family and the agents tuned to no family
    (:data:`agents.bayesian.learned_batch.ZERO_SHOT`). Reset by hand it checks what the problem
    shows; a family whose kwargs no longer build an env is not checked.

    Attributes:
        projections: actions this episode that were not in the play env's action set
            as the policy gave them (mapped by the env's projection rule).
        decisions: actions this episode (sampling steps and the answer step).
        total_projections: ``projections`` summed over every episode played.
        total_decisions: ``decisions`` summed over every episode played.
        recurrent: the policy carries a state (an LSTM) across steps.
        masked: the policy takes action masks (``predict(..., action_masks=)``).
        torch_threads: the torch threads ``act`` runs on (``None``: torch's setting).
    """

    name = "policy"

    def __init__(
        self,
        policy: Any,
        *,
        deterministic: bool = True,
        answer: str = "auto",
        obs_transform: Callable[[Mapping[str, Any]], Any] | None = None,
        name: str | None = None,
        seed: int | None = None,
        prior: Sequence[float] | None = None,
        pull_by_pull: bool | None = None,
        torch_threads: int | None = 1,
        family: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if torch_threads is not None and (
            isinstance(torch_threads, bool)
            or not isinstance(torch_threads, int)
            or torch_threads < 1
        ):
            raise ValueError(f"torch_threads={torch_threads!r} must be an integer >= 1 or None")
        if answer not in ("auto", "policy", "empirical", "posterior"):
            raise ValueError(
                f"answer={answer!r} must be 'auto', 'policy', 'empirical' or 'posterior'"
            )
        if (answer == "posterior") != (prior is not None):
            raise ValueError(
                f"answer={answer!r} with prior={prior!r}: answer='posterior' needs "
                "prior=(a, b), and prior is used only by answer='posterior'"
            )
        self.prior = check_beta_prior(*prior) if prior is not None else None
        if not (callable(policy) or hasattr(policy, "predict")):
            raise TypeError(f"policy {policy!r} must be callable or have .predict()")
        self.policy = policy
        self.deterministic = deterministic
        self.answer = answer
        self.obs_transform = obs_transform
        if name is not None:
            self.name = name
        self.torch_threads = torch_threads
        space = getattr(policy, "observation_space", None)
        self._keys = tuple(space.spaces) if hasattr(space, "spaces") else None
        if obs_transform is None and _flat_space(space) and hasattr(policy, "predict"):
            raise ValueError(
                f"policy {self.name!r} takes a flat observation ({space}) and no obs_transform "
                "was given to turn the env's dict observation into one: pass obs_transform= "
                "(its training transform, e.g. bandit_envs.wrappers.FlatObservation.from_env"
                "(env)), or save the model with agents.learned.save_policy, which stores it"
            )
        self.projections = self.decisions = 0
        self.total_projections = self.total_decisions = 0
        self._blind_answer = False  # auto, on a policy that cannot see the phase: empirical
        self._warned = False
        net = getattr(policy, "policy", None)
        self.recurrent = hasattr(net, "lstm_actor")
        predict = getattr(policy, "predict", None)
        self.masked = predict is not None and "action_masks" in _parameters(predict)
        if pull_by_pull is None:
            features = getattr(obs_transform, "features", ())
            pull_by_pull = "batch" in (self._keys or ()) or "batch" in features
        self.pull_by_pull = bool(pull_by_pull)
        self._state: Any = None
        self._episode_start = True
        self.family = _check_family(family)
        self._family_env = _family_env(self.family)
        self._seen_instance: Any = None

    # --------------------------------------------------------------- protocol
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode of ``problem``: zero this episode's projection counters."""
        fmt = getattr(problem, "action_format", "pulls")
        if fmt == "pull":
            raise ValueError(
                f"PolicyAgent {self.name!r} plays TopK-v0 and TopK-Batch-v0, not "
                "TopK-PullByPull-v0 (problem.action_format='pull'): play it on "
                "TopK-Batch-v0 with the same kwargs (the same problem; a policy trained on "
                "TopK-PullByPull-v0 composes each batch there pull by pull, as that env "
                "does), or step TopK-PullByPull-v0 with the model itself: "
                "model.predict(obs, action_masks=env.unwrapped.action_masks())"
            )
        if fmt not in ("pulls", "arm"):
            raise ValueError(f"problem.action_format={fmt!r} must be 'pulls' or 'arm'")
        if self.prior is not None:
            check_bernoulli(problem, self.name)
        seen, self._seen_instance = self._seen_instance, None
        self._blind_answer = False
        if getattr(problem, "answer", "empirical") == "agent" and not self.sees_phase:
            self._refuse_or_warn_blind_answer()
        super().reset(problem, seed=seed)
        self.projections = self.decisions = 0
        self._state, self._episode_start = None, True  # a recurrent policy starts afresh
        if self._family_env is not None:
            differences = _family_differences(self._family_env, problem, seen)
            if differences:
                from agents.bayesian.learned_batch import warn_off_family

                warn_off_family(self, self._family_env.text, differences, stacklevel=2)

    def see_instance(self, instance: Any) -> None:
        """Show the next ``reset`` the env's instance (:func:`agents.run_episode` does)."""
        self._seen_instance = instance

    @property
    def sees_phase(self) -> bool:
        """Whether the policy's input tells the answer step from a sampling step.

        False when the policy's observation space is a ``Dict`` without ``phase`` or
        its ``obs_transform`` has ``phase=False`` (a policy trained on an env with
        ``answer="empirical"``); a callable on the raw observation sees it.
        """
        if self._keys is not None and "phase" not in self._keys:
            return False
        phase = getattr(self.obs_transform, "phase", None)
        return phase is None or bool(phase)

    def _refuse_or_warn_blind_answer(self) -> None:
        if self.answer == "policy":
            raise ValueError(
                f"answer='policy' but policy {self.name!r} cannot see the answer phase (its "
                "observation has no 'phase': it was trained with answer='empirical'), so its "
                "answer was never trained; use answer='empirical' (or 'auto')"
            )
        if self.answer != "auto":
            return
        self._blind_answer = True
        action_space = getattr(self.policy, "action_space", None)
        if not self._warned and getattr(action_space, "shape", None) != ():  # not TopK-v0's
            warnings.warn(
                f"policy {self.name!r} cannot see the answer phase (its observation has no "
                "'phase': it was trained with answer='empirical'); answer='auto' answers "
                "with the k highest empirical means instead of its untrained answer",
                UserWarning,
                stacklevel=3,
            )
            self._warned = True

    @property
    def projection_rate(self) -> float:
        """Fraction of this episode's actions that had to be projected (0 before any)."""
        return self.projections / self.decisions if self.decisions else 0.0

    def act(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The policy's action, mapped into the play env's action set.

        Runs on :attr:`torch_threads` torch threads and gives torch its setting back.
        """
        return self._on_torch_threads(self._act, observation)

    def _act(self, observation: Mapping[str, Any]) -> np.ndarray:
        self.decisions += 1
        self.total_decisions += 1
        if int(observation.get("phase", 0)) == 1:
            action, projected = self._answer_action(observation)
        elif self.pull_by_pull:
            batch, projected = self._compose_batch(observation)
            action, _ = self._sampling_action(batch, observation)
        else:
            raw = self._predict(observation, self._masks(observation))
            action, projected = self._sampling_action(raw, observation)
        if projected:
            self.projections += 1
            self.total_projections += 1
        return action

    def policy_action(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The policy's own action for ``observation``, before any mapping (for inspection)."""
        return self._on_torch_threads(self._predict, observation)

    def _on_torch_threads(
        self, fn: Callable[[Mapping[str, Any]], np.ndarray], observation: Mapping[str, Any]
    ) -> np.ndarray:
        """``fn(observation)`` on :attr:`torch_threads` torch threads, torch's setting restored."""
        torch = sys.modules.get("torch") if self.torch_threads is not None else None
        if torch is None:
            return fn(observation)
        before = torch.get_num_threads()
        if before == self.torch_threads:
            return fn(observation)
        torch.set_num_threads(self.torch_threads)
        try:
            return fn(observation)
        finally:
            torch.set_num_threads(before)

    # ------------------------------------------------------------------ policy
    def _policy_observation(self, observation: Mapping[str, Any]) -> Any:
        obs: Any = observation
        wants_phase = "phase" in (self._keys or ()) or getattr(self.obs_transform, "phase", False)
        if wants_phase and "phase" not in observation:
            obs = {**observation, "phase": np.int64(0)}
        if self._keys is not None:
            obs = {key: obs[key] for key in self._keys}
        if self.obs_transform is not None:
            obs = self.obs_transform(obs)
        return obs

    def _predict(
        self, observation: Mapping[str, Any], mask: np.ndarray | None = None
    ) -> np.ndarray:
        """The policy's action (``mask``: the valid actions, for a masked policy)."""
        obs = self._policy_observation(observation)
        if not hasattr(self.policy, "predict"):
            return np.asarray(self.policy(obs))
        if self.deterministic and not self.recurrent:
            probs = _action_probs(self.policy, obs, mask if self.masked else None)
            if probs is not None:
                action = np.array([int(np.argmax(p)) for p in probs], dtype=np.int64)
                return action if len(probs) > 1 else action.reshape(())
        kwargs: dict[str, Any] = {"deterministic": self.deterministic}
        if self.masked and mask is not None:
            kwargs["action_masks"] = mask
        if self.recurrent:
            kwargs.update(state=self._state, episode_start=np.array([self._episode_start]))
        action, state = self.policy.predict(obs, **kwargs)
        if self.recurrent:
            self._state, self._episode_start = state, False
        return np.asarray(action)

    def _masks(self, observation: Mapping[str, Any]) -> np.ndarray | None:
        """The masks a masked policy's training env gives now (``None``: not masked).

        A ``Discrete`` policy (``TopK-v0``): every action; a ``MultiDiscrete`` one
        (``TopK-Batch-v0``): each arm's counts up to ``min(r, b, pulls left)``.
        """
        if not self.masked:
            return None
        space = getattr(self.policy, "action_space", None)
        nvec = getattr(space, "nvec", None)
        if nvec is None:
            return np.ones(int(getattr(space, "n", self.problem.n_arms + 1)), dtype=bool)
        r = int(nvec[0]) - 1
        return count_masks(len(nvec), r, np.array([min(r, self._batch_cap(observation))]))[0]

    def _repeat_limit(self) -> int:
        """The play env's per-arm cap in a batch (``TopK-PullByPull-v0``'s ``r``)."""
        p = self.problem
        for value in (p.repeat_limit, p.budget, p.batch_size):
            if value is not None:
                return int(value)
        raise ValueError("a pull-by-pull policy needs a repeat_limit, budget or batch_size")

    def _batch_cap(self, observation: Mapping[str, Any]) -> int:
        """The most pulls the next batch may hold: ``min(b, pulls left, n r)``."""
        p = self.problem
        caps = [p.n_arms * self._repeat_limit()]
        if p.batch_size is not None:
            caps.append(p.batch_size)
        if p.budget is not None:
            caps.append(p.budget - int(np.sum(observation["counts"])))
        return min(caps)

    def _compose_batch(self, observation: Mapping[str, Any]) -> tuple[np.ndarray, bool]:
        """A batch composed pull by pull, as ``TopK-PullByPull-v0`` would (and whether an
        invalid sub-step had to end it)."""
        n = self.problem.n_arms
        r, cap = self._repeat_limit(), self._batch_cap(observation)
        batch = np.zeros(n, dtype=np.int64)
        mask = np.ones(n + 1, dtype=bool)
        total = 0
        while total < cap:
            np.less(batch, r, out=mask[:n])
            choice = int(np.asarray(self._predict({**observation, "batch": batch.copy()}, mask)))
            if not 0 <= choice <= n:
                raise ValueError(f"policy sub-step {choice} must lie in [0, {n}]")
            if choice == n:
                break
            if not mask[choice]:  # the env's projection: end the batch
                return batch, True
            batch[choice] += 1
            total += 1
        return batch, False

    def _compose_answer(self, observation: Mapping[str, Any]) -> tuple[np.ndarray, bool]:
        """The answer picked one arm at a time (``TopK-PullByPull-v0``'s answer step)."""
        n, k = self.problem.n_arms, self.problem.k
        chosen = np.zeros(n, dtype=np.int64)
        mask = np.zeros(n + 1, dtype=bool)
        means = np.asarray(observation["means"], dtype=np.float64)
        projected = False
        for _ in range(k):
            np.equal(chosen, 0, out=mask[:n])
            choice = int(np.asarray(self._predict({**observation, "batch": chosen.copy()}, mask)))
            if not (0 <= choice < n and mask[choice]):  # the env's projection
                free = np.flatnonzero(chosen == 0)
                choice, projected = int(free[np.argmax(means[free])]), True
            chosen[choice] = 1
        return chosen, projected

    # ----------------------------------------------------------------- mapping
    def _pull_vector(self, raw: np.ndarray) -> np.ndarray:
        """The raw action as an integer pull vector (scalar: one pull, ``n_arms``: stop)."""
        n = self.problem.n_arms
        if raw.dtype.kind not in "iub":
            if (
                raw.dtype.kind != "f"
                or not np.all(np.isfinite(raw))
                or np.any(raw != np.floor(raw))
            ):
                raise ValueError(f"policy action {raw.tolist()!r} must hold integers")
        if raw.ndim == 0 or (raw.size == 1 and n > 1):
            arm = int(raw.reshape(()))
            if not 0 <= arm <= n:
                raise ValueError(
                    f"policy action {arm} must be an arm in [0, {n}) or the stop action {n}"
                )
            vector = np.zeros(n, dtype=np.int64)
            if arm < n:
                vector[arm] = 1
            return vector
        if raw.shape != (n,):
            raise ValueError(
                f"policy action of shape {raw.shape} must be ({n},): one count per arm"
            )
        return raw.astype(np.int64)

    def _sampling_action(
        self, raw: np.ndarray, observation: Mapping[str, Any]
    ) -> tuple[np.ndarray, bool]:
        """``(action in the play env's set, whether it had to be projected)``."""
        p = self.problem
        vector = self._pull_vector(raw)
        if getattr(p, "action_format", "pulls") == "arm":  # TopK-v0: the batch model with b = r = 1
            one = project_pulls(vector, 1, 1)
            arms = np.flatnonzero(one)
            arm = int(arms[0]) if arms.size else p.n_arms  # (none: the stop action)
            wanted = np.zeros(p.n_arms, dtype=np.int64)
            if arm < p.n_arms:
                wanted[arm] = 1
            return np.asarray(arm, dtype=np.int64), not np.array_equal(vector, wanted)
        r = p.repeat_limit if p.repeat_limit is not None else p.budget
        caps = [p.batch_size] if p.batch_size is not None else []
        if p.budget is not None:
            caps.append(p.budget - int(np.sum(observation["counts"])))
        action = project_pulls(vector, r, min(caps) if caps else None)
        return action, not np.array_equal(action, vector)

    def _answer_action(self, observation: Mapping[str, Any]) -> tuple[np.ndarray, bool]:
        """The answer step: ``k`` marked arms, and whether the policy's answer was projected."""
        n, k = self.problem.n_arms, self.problem.k
        if self.answer == "empirical" or self._blind_answer:
            return self._empirical_answer(observation), False
        if self.answer == "posterior":
            assert self.prior is not None
            action = np.zeros(n, dtype=np.int64)
            chosen = posterior_top_k(
                *self.prior, observation["counts"], observation["means"], k, self.rng
            )
            action[chosen] = 1
            return action, False
        if self.pull_by_pull:
            return self._compose_answer(observation)
        raw = self._predict(observation, self._answer_masks())
        if raw.ndim == 0 or (raw.size == 1 and n > 1) or raw.shape != (n,):
            if self.answer == "policy" and raw.ndim == 1 and raw.size > 1:
                raise ValueError(
                    f"policy answer of shape {raw.shape} must be ({n},): one entry per arm"
                )
            return self._empirical_answer(observation), False
        raw = raw.astype(np.int64)
        chosen = project_answer(raw, k, np.asarray(observation["means"], dtype=np.float64))
        action = np.zeros(n, dtype=np.int64)
        action[chosen] = 1
        valid = raw.min() >= 0 and int(np.count_nonzero(raw)) == k
        return action, not valid

    def _answer_masks(self) -> np.ndarray | None:
        """A masked ``MultiDiscrete`` policy's masks at the answer step: counts 0 and 1."""
        space = getattr(self.policy, "action_space", None)
        nvec = getattr(space, "nvec", None)
        if not self.masked or nvec is None:
            return None
        n, r = len(nvec), int(nvec[0]) - 1
        return count_masks(n, r, np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool))[0]

    def _empirical_answer(self, observation: Mapping[str, Any]) -> np.ndarray:
        counts = np.asarray(observation["counts"])
        values = np.where(counts > 0, np.asarray(observation["means"], dtype=np.float64), -np.inf)
        action = np.zeros(self.problem.n_arms, dtype=np.int64)
        action[top_k(values, self.problem.k, self.rng)] = 1
        return action

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, algo: str, path: str, **kwargs: Any) -> PolicyAgent:
        """Load a saved model (``algo`` one of :data:`LOADERS`) on the CPU.

        A model saved by :func:`agents.learned.saving.save_policy` carries its
        observation transform and how it plays (answer rule, sampling); explicit
        ``kwargs`` win. ``path`` may omit ``.zip``. A missing file is a
        ``FileNotFoundError`` naming ``path``; a model saved by another algorithm than
        ``algo`` (:func:`agents.learned.metadata.saved_algo`) a ``ValueError``.
        """
        import importlib

        from agents.learned.metadata import check_saved_algo, model_file, saved_agent_kwargs

        if algo not in LOADERS:
            raise ValueError(f"algo={algo!r} must be one of {list(LOADERS)}")
        package, cls_name = _ALGO_CLASSES[algo]
        try:
            model_cls = getattr(importlib.import_module(package), cls_name)
        except ImportError as err:  # pragma: no cover - depends on the install
            raise ImportError(
                f"loading a {algo} policy needs {package.replace('_', '-')}: "
                "pip install 'topk-bandit-envs[rl]'"
            ) from err
        name = f"{algo}:{path}"
        path = model_file(path)
        check_saved_algo(path, algo)
        model = model_cls.load(path, device="cpu")
        saved = saved_agent_kwargs(model, path)
        if not saved and "obs_transform" not in kwargs:
            check_observation(model, path, algo)
        for key, value in saved.items():
            kwargs.setdefault(key, value)
        kwargs.setdefault("name", name)
        if not kwargs.get("deterministic", True):
            kwargs.pop("deterministic")
            return SampledPolicyAgent(model, **kwargs)
        return cls(model, **kwargs)


def check_observation(model: Any, path: Any, algo: str) -> None:
    """Refuse a model saved without its metadata whose policy takes a flat observation.

    (The envs' observations are dicts; without the training transform SB3 would fail at
    the first step with ``The observation provided is a dict but the obs space is Box``.)
    """
    space = getattr(model, "observation_space", None)
    if _flat_space(space):
        raise ValueError(
            f"{path} has no metadata (saved by plain model.save(): nothing in the zip, no "
            f"sidecar {_sidecar_name(path)}) and its policy takes a flat observation "
            f"({space}), not the env's dict observation: save the model with "
            "agents.learned.save_policy(model, path, metadata), which stores its observation "
            "transform, or pass the transform it was trained with: "
            f"agents.make('{algo}:{path}', obs_transform=FlatObservation.from_env(env)) "
            "(bandit_envs.wrappers.FlatObservation, or any callable dict -> array)"
        )


def _sidecar_name(path: Any) -> str:
    from agents.learned.metadata import sidecar_path

    return str(sidecar_path(path))


class SampledPolicyAgent(PolicyAgent):
    """A :class:`PolicyAgent` that *samples* an SB3 actor-critic policy's action.

    SB3's ``predict(deterministic=False)`` draws from torch's global generator, so
    results would depend on what ran before. This agent draws from its own generator,
    seeded by ``reset(problem, seed=...)`` like every agent: the same seed gives the
    same episode. (``deterministic=True`` takes each arm's most likely count, which for
    a near-uniform factorised policy can be a degenerate action, e.g. all zeros = stop.)
    """

    def __init__(self, policy: Any, **kwargs: Any) -> None:
        kwargs["deterministic"] = False
        super().__init__(policy, **kwargs)
        if not hasattr(getattr(policy, "policy", None), "get_distribution"):
            raise TypeError(
                f"{policy!r} has no action distribution to sample (PPO/A2C models have one)"
            )

    def _predict(
        self, observation: Mapping[str, Any], mask: np.ndarray | None = None
    ) -> np.ndarray:
        import torch

        obs = self._policy_observation(observation)
        net = self.policy.policy
        probs = None if self.recurrent else _action_probs(self.policy, obs, self._mask(mask))
        multi = probs is not None and len(probs) > 1
        if probs is None:
            with torch.no_grad():
                tensor, _ = net.obs_to_tensor(obs)
                if self.recurrent:
                    state = self._state
                    if state is None:
                        zero = np.zeros(net.lstm_hidden_state_shape, dtype=np.float32)
                        state = (zero, zero)
                    dist, (h, c) = net.get_distribution(
                        tensor,
                        (torch.as_tensor(state[0]), torch.as_tensor(state[1])),
                        torch.tensor([float(self._episode_start)]),
                    )
                    self._state, self._episode_start = (h.numpy(), c.numpy()), False
                else:
                    kwargs = {"action_masks": mask} if self.masked else {}
                    dist = net.get_distribution(tensor, **kwargs)
            parts = dist.distribution
            multi = isinstance(parts, list)
            parts = parts if multi else [parts]
            probs = [d.probs[0].numpy().astype(np.float64) for d in parts]
        u = self.rng.random(len(probs))
        action = np.array(
            [
                min(int(np.searchsorted(np.cumsum(p), x * p.sum(), side="right")), p.size - 1)
                for p, x in zip(probs, u, strict=True)
            ],
            dtype=np.int64,
        )
        return action if multi else action.reshape(())

    def _mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        return mask if self.masked else None


#: The logit sb3-contrib's masked distributions give a masked action.
_MASKED_LOGIT = -1e8


def _action_probs(model: Any, obs: Any, mask: np.ndarray | None) -> list[np.ndarray] | None:
    """The action probabilities of an SB3 actor-critic ``model`` for one flat observation.

    One array per action dimension (``Discrete``: one; ``MultiDiscrete``: one per arm),
    computed as the policy's distribution does (the actor's logits, masked logits set to
    sb3-contrib's ``-1e8``, softmax), without building the distribution objects, and
    with the network put in evaluation mode once, under ``torch.inference_mode``: about
    twice as fast per step as ``model.predict``. ``None`` when this does not apply (a
    ``Dict`` observation, a recurrent or value-based policy): use ``predict``.
    """
    net = getattr(model, "policy", None)
    if not (
        isinstance(obs, np.ndarray)
        and hasattr(net, "mlp_extractor")
        and hasattr(net, "action_net")
        and not hasattr(net, "lstm_actor")
    ):
        return None
    import torch
    from stable_baselines3.common.policies import BaseModel

    if net.training:
        net.set_training_mode(False)
    with torch.inference_mode():
        tensor = torch.as_tensor(obs, dtype=torch.float32).reshape(1, -1)
        features = BaseModel.extract_features(net, tensor, net.pi_features_extractor)
        logits = net.action_net(net.mlp_extractor.forward_actor(features))[0]
        nvec = getattr(net.action_space, "nvec", None)
        sizes = [int(v) for v in nvec] if nvec is not None else [int(logits.shape[0])]
        out = []
        start = 0
        for size in sizes:
            part = logits[start : start + size]
            if mask is not None:
                valid = torch.as_tensor(np.asarray(mask[start : start + size], dtype=bool))
                part = torch.where(valid, part, torch.tensor(_MASKED_LOGIT))
            out.append(torch.softmax(part, dim=-1).numpy().astype(np.float64))
            start += size
    return out


def _flat_space(space: Any) -> bool:
    """Whether ``space`` is a flat (``Box``) observation space, not the envs' ``Dict``."""
    return (
        space is not None
        and not hasattr(space, "spaces")
        and len(getattr(space, "shape", None) or ()) == 1
    )


@dataclass(frozen=True)
class _FamilyEnv:
    """The problem and instance of a policy's training family, in its benchmark form."""

    problem: Problem
    instance: Any
    one_pull: bool  # trained on TopK-v0: one pull per step, any batch shape
    text: str


def _check_family(family: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``family`` as ``{"env_id": str, "env_kwargs": dict}``, else a ``ValueError``."""
    if family is None:
        return None
    if (
        not isinstance(family, Mapping)
        or not isinstance(family.get("env_id"), str)
        or not isinstance(family.get("env_kwargs"), Mapping)
    ):
        raise ValueError(
            f"family={family!r} must be a mapping {{'env_id': str, 'env_kwargs': mapping}} "
            "(the training env's, as a saved model's metadata records it)"
        )
    return {"env_id": family["env_id"], "env_kwargs": dict(family["env_kwargs"])}


def _means_of(instance: Any) -> tuple[tuple[Any, ...], str]:
    """A key and a description of what an instance's means are (a Beta prior, else the
    instance's name and parameters)."""
    try:
        a, b = prior_of(instance)
    except (ValueError, KeyError, AttributeError):
        name = getattr(instance, "name", type(instance).__name__)
        params = dict(getattr(instance, "params", {}) or {})
        text = f"instance {name!r}" + (f" {params}" if params else "")
        return ("instance", name, repr(sorted(params.items()))), text
    return ("beta", a, b), f"Bernoulli means ~ Beta({a:g}, {b:g})"


def _family_env(family: Mapping[str, Any] | None) -> _FamilyEnv | None:
    """The training family's problem and instance (``None``: unknown, or its kwargs no
    longer build an env: not checked)."""
    if family is None:
        return None
    from agents.learned.families import evaluation_env
    from bandit_envs.top_k_batch import TopKBatchEnv

    try:
        _, kwargs = evaluation_env(family["env_id"], family["env_kwargs"])
        env = TopKBatchEnv(**kwargs)
    except (ValueError, TypeError, KeyError):
        return None
    problem, instance = env.problem, env.instance
    env.close()
    one_pull = family["env_id"].removeprefix("bandit_envs:") == "TopK-v0"
    p = problem
    if p.setting == "fixed_budget":
        task = f"budget {p.budget}"
    else:
        task = f"fixed confidence, cost {p.cost_per_batch:g} per batch"
    if p.max_batches is not None and not (one_pull and _never_binds(p, p.max_batches)):
        task += f", max_batches {p.max_batches}"
    shape = "one pull per step" if one_pull else f"b = {p.batch_size}, r = {p.repeat_limit}"
    text = (
        f"{family['env_id']}: {p.n_arms} arms, k = {p.k}, {task}, {shape}, "
        f"{p.objective.replace('_', ' ')}, {_means_of(instance)[1]}"
    )
    return _FamilyEnv(problem, instance, one_pull, text)


def _never_binds(problem: Problem, max_batches: int) -> bool:
    """Whether ``max_batches`` steps of one pull cannot end a fixed-budget episode early."""
    return problem.setting == "fixed_budget" and (
        problem.budget is not None and max_batches >= problem.budget
    )


def _family_differences(family: _FamilyEnv, problem: Problem, instance: Any) -> list[str]:
    """How ``problem`` and the env's ``instance`` (``None``: not seen) are off the policy's
    training family (empty: on it)."""
    f = family.problem
    keys = ["n_arms", "k", "setting", "distribution", "objective"]
    keys.append("budget" if f.setting == "fixed_budget" else "cost_per_batch")
    if not family.one_pull:
        keys += ["batch_size", "repeat_limit", "max_batches"]
    out = [
        f"{key}={getattr(problem, key)!r} (fitted: {getattr(f, key)!r})"
        for key in keys
        if getattr(problem, key) != getattr(f, key)
    ]
    if family.one_pull:

        def binding(p: Problem) -> int | None:
            mb = p.max_batches
            return None if mb is None or _never_binds(p, mb) else mb

        if binding(problem) != binding(f):
            out.append(f"max_batches={problem.max_batches!r} (fitted: {f.max_batches!r})")
    if instance is not None:
        (got, got_text), (want, want_text) = _means_of(instance), _means_of(family.instance)
        if got != want:
            out.append(f"{got_text} (fitted: {want_text})")
    return out


def _parameters(fn: Callable[..., Any]) -> Mapping[str, Any]:
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return {}


def _register_loaders() -> None:
    """``agents.make("ppo:PATH")`` (also ``a2c:``, ``dqn:``, ``recurrent_ppo:``,
    ``maskable_ppo:``) loads a saved model."""
    for algo in LOADERS:
        register_loader(algo, functools.partial(PolicyAgent.load, algo), PolicyAgent)


_register_loaders()
