"""A fast-path network played in the agent protocol, recurrent or not.

A feed-forward :class:`~agents.learned.fast.network.FastArmSetNet` is exported to a
stable-baselines3 model and played by :class:`~agents.learned.adapter.PolicyAgent`
(``FastResult.agent()``, ``agents.make("ppo:PATH")``). A recurrent one has no such
model, so :class:`NetAgent` plays the network itself: one step per ``act``, its state
carried across an episode's steps and zeroed by ``reset``. It is how
``benchmarks/fast_training.py`` scores the recurrent variant on the held-out episodes
the saved feed-forward models and the reference agents play.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.learned.adapter import PolicyAgent
from agents.learned.fast.network import FastArmSetNet
from agents.learned.fast.rollout import ActionLaw
from bandit_envs.wrappers import FlatObservation

__all__ = ["NetAgent"]


class NetAgent(PolicyAgent):
    """Plays a :class:`FastArmSetNet` with its training observation.

    Args:
        net: the network (feed-forward or recurrent).
        transform: its training observation (``FastResult.transform``).
        deterministic: the most likely action, else one sampled from the network's
            distribution with the agent's generator (seeded by ``reset``, as
            :class:`~agents.learned.adapter.SampledPolicyAgent`).
        kwargs: the other :class:`~agents.learned.adapter.PolicyAgent` arguments
            (``answer``, ``prior``, ``name``, ``seed``, ...); ``FastResult.metadata
            ["policy_agent"]`` holds the ones of the training.
    """

    name = "fast-net"

    def __init__(
        self,
        net: FastArmSetNet,
        transform: FlatObservation,
        *,
        deterministic: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(net, FastArmSetNet):
            raise TypeError(f"net must be a FastArmSetNet, not {type(net).__name__}")
        kwargs.pop("obs_transform", None)
        super().__init__(
            self._net_action, obs_transform=transform, deterministic=deterministic, **kwargs
        )
        self.net = net
        self.law = ActionLaw(net.n_arms, net.logits_per_arm, net.stop)
        self.recurrent = net.recurrent

    @classmethod
    def from_result(cls, result: Any, **kwargs: Any) -> NetAgent:
        """The network of a :class:`~agents.learned.fast.train.FastResult` played as its
        saved model would be: the stored answer, prior, play mode and training family
        (``kwargs`` override them)."""
        stored = dict(result.metadata["policy_agent"])
        stored.setdefault("prior", None)
        stored["family"] = {
            "env_id": result.metadata["env_id"],
            "env_kwargs": dict(result.metadata["env_kwargs"]),
        }
        stored["name"] = result.metadata["algo"]
        return cls(result.net, result.transform, **{**stored, **kwargs})

    @torch.no_grad()
    def _net_action(self, obs: np.ndarray) -> np.ndarray:
        """One step of the network on one flat observation (``reset`` zeroes the state)."""
        x = torch.from_numpy(np.asarray(obs, dtype=np.float32).reshape(1, -1))
        if self.net.recurrent:
            state = self._state if self._state is not None else self.net.initial_state(1)
            start = torch.tensor([self._episode_start])
            logits, _, self._state = self.net(x, state, start)
            self._episode_start = False
        else:
            logits, _ = self.net(x)
        if self.deterministic:
            return self.law.mode(logits)[0].numpy()
        if self.law.multi:
            logits = logits.reshape(self.net.n_arms, self.law.per_arm)
        probs = torch.softmax(logits.double(), dim=-1).reshape(-1, logits.shape[-1]).numpy()
        u = self.rng.random(len(probs))
        action = np.array(
            [
                min(int(np.searchsorted(np.cumsum(p), x * p.sum(), side="right")), p.size - 1)
                for p, x in zip(probs, u, strict=True)
            ],
            dtype=np.int64,
        )
        return action if self.law.multi else action.reshape(())
