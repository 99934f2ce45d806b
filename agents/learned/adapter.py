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

Every action that had to be changed to be valid is counted: ``agent.projections`` of
``agent.decisions`` actions this episode (:attr:`PolicyAgent.projection_rate`), and
``agent.total_projections`` / ``agent.total_decisions`` since the agent was built.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from agents.base import Agent
from agents.bayesian.beta_prior import check_bernoulli, check_beta_prior, posterior_top_k
from agents.registry import register_loader
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k
from bandit_envs.top_k_batch import project_answer, project_pulls

__all__ = ["PolicyAgent", "SampledPolicyAgent"]


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

    Attributes:
        projections: actions this episode that were not in the play env's action set
            as the policy gave them (mapped by the env's projection rule).
        decisions: actions this episode (sampling steps and the answer step).
        total_projections: ``projections`` summed over every episode played.
        total_decisions: ``decisions`` summed over every episode played.
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
    ) -> None:
        super().__init__(seed=seed)
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
        space = getattr(policy, "observation_space", None)
        self._keys = tuple(space.spaces) if hasattr(space, "spaces") else None
        self.projections = self.decisions = 0
        self.total_projections = self.total_decisions = 0
        self._blind_answer = False  # auto, on a policy that cannot see the phase: empirical
        self._warned = False

    # --------------------------------------------------------------- protocol
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode of ``problem``: zero this episode's projection counters."""
        fmt = getattr(problem, "action_format", "pulls")
        if fmt not in ("pulls", "arm"):
            raise ValueError(f"problem.action_format={fmt!r} must be 'pulls' or 'arm'")
        if self.prior is not None:
            check_bernoulli(problem, self.name)
        self._blind_answer = False
        if getattr(problem, "answer", "empirical") == "agent" and not self.sees_phase:
            self._refuse_or_warn_blind_answer()
        super().reset(problem, seed=seed)
        self.projections = self.decisions = 0

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
        """The policy's action, mapped into the play env's action set."""
        self.decisions += 1
        self.total_decisions += 1
        if int(observation.get("phase", 0)) == 1:
            action, projected = self._answer_action(observation)
        else:
            action, projected = self._sampling_action(self._predict(observation), observation)
        if projected:
            self.projections += 1
            self.total_projections += 1
        return action

    def policy_action(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The policy's own action for ``observation``, before any mapping (for inspection)."""
        return self._predict(observation)

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

    def _predict(self, observation: Mapping[str, Any]) -> np.ndarray:
        obs = self._policy_observation(observation)
        if hasattr(self.policy, "predict"):
            action, _ = self.policy.predict(obs, deterministic=self.deterministic)
        else:
            action = self.policy(obs)
        return np.asarray(action)

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
        raw = self._predict(observation)
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

    def _empirical_answer(self, observation: Mapping[str, Any]) -> np.ndarray:
        counts = np.asarray(observation["counts"])
        values = np.where(counts > 0, np.asarray(observation["means"], dtype=np.float64), -np.inf)
        action = np.zeros(self.problem.n_arms, dtype=np.int64)
        action[top_k(values, self.problem.k, self.rng)] = 1
        return action

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, algo: str, path: str, **kwargs: Any) -> PolicyAgent:
        """Load a saved stable-baselines3 model (``algo`` in ppo/a2c/dqn) on the CPU.

        A model saved by :func:`agents.learned.saving.save_policy` carries its
        observation transform and how it plays (answer rule, sampling); explicit
        ``kwargs`` win. ``path`` may omit ``.zip``. A missing file is a
        ``FileNotFoundError`` naming ``path``; a model saved by another algorithm than
        ``algo`` (:func:`agents.learned.metadata.saved_algo`) a ``ValueError``.
        """
        try:
            import stable_baselines3 as sb3
        except ImportError as err:  # pragma: no cover - depends on the install
            raise ImportError(
                "loading a learned policy needs stable-baselines3: "
                "pip install 'topk-bandit-envs[rl]'"
            ) from err
        from agents.learned.metadata import check_saved_algo, model_file, saved_agent_kwargs

        name = f"{algo}:{path}"
        path = model_file(path)
        check_saved_algo(path, algo)
        model_cls = getattr(sb3, algo.upper())
        model = model_cls.load(path, device="cpu")
        for key, value in saved_agent_kwargs(model, path).items():
            kwargs.setdefault(key, value)
        kwargs.setdefault("name", name)
        if not kwargs.get("deterministic", True):
            kwargs.pop("deterministic")
            return SampledPolicyAgent(model, **kwargs)
        return cls(model, **kwargs)


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

    def _predict(self, observation: Mapping[str, Any]) -> np.ndarray:
        import torch

        obs = self._policy_observation(observation)
        net = self.policy.policy
        with torch.no_grad():
            tensor, _ = net.obs_to_tensor(obs)
            dist = net.get_distribution(tensor).distribution
        parts = dist if isinstance(dist, list) else [dist]
        probs = [d.probs[0].numpy().astype(np.float64) for d in parts]
        u = self.rng.random(len(probs))
        action = np.array(
            [
                min(int(np.searchsorted(np.cumsum(p), x * p.sum(), side="right")), p.size - 1)
                for p, x in zip(probs, u, strict=True)
            ],
            dtype=np.int64,
        )
        return action if isinstance(dist, list) else action.reshape(())


def _register_loaders() -> None:
    """``agents.make("ppo:PATH")`` (also ``a2c:``, ``dqn:``) loads a saved model."""
    for algo in ("ppo", "a2c", "dqn"):
        register_loader(algo, functools.partial(PolicyAgent.load, algo), PolicyAgent)


_register_loaders()
