"""``PolicyAgent``: a learned policy (any callable or a stable-baselines3 model) as an agent.

The adapter lets a policy trained on ``TopK-v0`` or ``TopK-Batch-v0`` play through the
same act/observe protocol as the scripted agents, so the benchmark runner gives it the
same seeds and the same episodes:

* the observation is passed through ``obs_transform`` (e.g. the normalisation the
  policy was trained with) and reduced to the keys of the policy's observation space;
* a scalar action (a ``TopK-v0`` policy) becomes a one-pull vector; ``n_arms`` (the
  fixed-confidence stop action) becomes the all-zero stop vector;
* at the answer step a policy that was not trained to answer (``answer="empirical"``,
  the default for scalar policies) answers with the ``k`` highest empirical means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agents.base import Agent
from bandit_envs.scoring import top_k

__all__ = ["PolicyAgent"]


class PolicyAgent(Agent):
    """Adapter from ``policy(observation) -> action`` to the agent protocol.

    Args:
        policy: a callable ``obs -> action``, or an object with
            ``predict(obs, deterministic=...)`` (stable-baselines3 models).
        deterministic: passed to ``predict``.
        answer: ``"policy"`` (the policy's action at the answer step marks the set),
            ``"empirical"`` (top-k empirical means), or ``"auto"``: empirical for scalar
            (``TopK-v0``) policies, the policy's own otherwise.
        obs_transform: applied to each observation before the policy sees it.
        name: the name results are reported under.
        seed: seeds the tie-breaking of empirical answers.
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
    ) -> None:
        super().__init__(seed=seed)
        if answer not in ("auto", "policy", "empirical"):
            raise ValueError(f"answer={answer!r} must be 'auto', 'policy' or 'empirical'")
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

    def _predict(self, observation: Mapping[str, Any]) -> np.ndarray:
        obs: Any = observation
        if self._keys is not None:
            obs = {key: observation[key] for key in self._keys}
        if self.obs_transform is not None:
            obs = self.obs_transform(obs)
        if hasattr(self.policy, "predict"):
            action, _ = self.policy.predict(obs, deterministic=self.deterministic)
        else:
            action = self.policy(obs)
        return np.asarray(action)

    def act(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The policy's action, converted to a ``TopK-Batch-v0`` action."""
        n = self.problem.n_arms
        answering = int(observation.get("phase", 0)) == 1
        if answering and self.answer == "empirical":
            return self._empirical_answer(observation)
        raw = self._predict(observation)
        if raw.ndim == 0 or raw.size == 1 and n > 1:
            if answering:
                return self._empirical_answer(observation)
            arm = int(raw.reshape(()))
            action = np.zeros(n, dtype=np.int64)
            if arm < n:
                action[arm] = 1
            return action
        if answering and self.answer == "auto" and raw.shape != (n,):
            return self._empirical_answer(observation)
        return raw.astype(np.int64, copy=False)

    def _empirical_answer(self, observation: Mapping[str, Any]) -> np.ndarray:
        counts = np.asarray(observation["counts"])
        values = np.where(counts > 0, np.asarray(observation["means"], dtype=np.float64), -np.inf)
        action = np.zeros(self.problem.n_arms, dtype=np.int64)
        action[top_k(values, self.problem.k, self.rng)] = 1
        return action

    @classmethod
    def load(cls, algo: str, path: str, **kwargs: Any) -> PolicyAgent:
        """Load a saved stable-baselines3 model (``algo`` in ppo/a2c/dqn) on the CPU."""
        try:
            import stable_baselines3 as sb3
        except ImportError as err:  # pragma: no cover - depends on the install
            raise ImportError(
                "loading a learned policy needs stable-baselines3: pip install 'topk-bandit-envs[rl]'"
            ) from err
        model_cls = getattr(sb3, algo.upper())
        model = model_cls.load(path, device="cpu")
        # Models saved by agents.training carry their observation transform and how
        # they play (answer rule, sampling); explicit kwargs win.
        from agents.training import SampledPolicyAgent, saved_agent_kwargs

        for key, value in saved_agent_kwargs(model, path).items():
            kwargs.setdefault(key, value)
        kwargs.setdefault("name", f"{algo}:{path}")
        if not kwargs.get("deterministic", True):
            kwargs.pop("deterministic")
            return SampledPolicyAgent(model, **kwargs)
        return cls(model, **kwargs)
