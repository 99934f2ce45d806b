"""The arm-set network: an SB3 actor-critic policy that treats the arms as a set."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.policies import ActorCriticPolicy
from torch import nn

try:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
except ImportError:  # pragma: no cover - depends on the install
    MaskableActorCriticPolicy = None

__all__ = ["ArmSetPolicy", "MaskableArmSetPolicy"]


class _ArmSetTrunk(nn.Module):
    """DeepSets layers over arms: ``h_i <- relu(A h_i + B mean_j h_j + C max_j h_j + D g)``."""

    def __init__(self, per_arm: int, n_global: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        width = per_arm
        for _ in range(layers):
            self.layers.append(nn.Linear(3 * width + n_global, hidden))
            width = hidden

    def forward(self, arms: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        h = arms  # (B, n, F)
        n = h.shape[1]
        g = glob.unsqueeze(1).expand(-1, n, -1)
        for layer in self.layers:
            mean = h.mean(dim=1, keepdim=True).expand(-1, n, -1)
            top = h.max(dim=1, keepdim=True).values.expand(-1, n, -1)
            h = torch.relu(layer(torch.cat((h, mean, top, g), dim=-1)))
        return h


class _ArmSetNet(nn.Module):
    """The ``mlp_extractor`` of :class:`ArmSetPolicy`: per-arm logits and a pooled value latent."""

    def __init__(
        self,
        n_arms: int,
        per_arm: int,
        n_global: int,
        logits_per_arm: int,
        stop: bool,
        hidden: int,
        layers: int,
    ) -> None:
        super().__init__()
        self.n_arms, self.per_arm = n_arms, per_arm
        self.pi = _ArmSetTrunk(per_arm, n_global, hidden, layers)
        self.vf = _ArmSetTrunk(per_arm, n_global, hidden, layers)
        self.pi_head = nn.Linear(hidden, logits_per_arm)
        self.stop_head = nn.Linear(2 * hidden + n_global, 1) if stop else None
        self.latent_dim_pi = n_arms * logits_per_arm + int(stop)
        self.latent_dim_vf = 2 * hidden + n_global

    def _split(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, f = self.n_arms, self.per_arm
        arms = features[:, : n * f].reshape(-1, f, n).transpose(1, 2)
        return arms, features[:, n * f :]

    @staticmethod
    def _pool(h: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        return torch.cat((h.mean(dim=1), h.max(dim=1).values, glob), dim=-1)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        arms, glob = self._split(features)
        h = self.pi(arms, glob)
        logits = self.pi_head(h).reshape(h.shape[0], -1)  # arm-major, as MultiCategorical wants
        if self.stop_head is not None:
            logits = torch.cat((logits, self.stop_head(self._pool(h, glob))), dim=-1)
        return logits

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        arms, glob = self._split(features)
        return self._pool(self.vf(arms, glob), glob)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class _ArmSetLayout:
    """The arm-set network over an SB3 actor-critic base class (see :class:`ArmSetPolicy`)."""

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Any,
        *,
        n_arms: int,
        arm_features: int,
        hidden: int = 64,
        layers: int = 2,
        **kwargs: Any,
    ) -> None:
        self.n_arms, self.arm_features, self.hidden, self.n_layers = (
            n_arms,
            arm_features,
            hidden,
            layers,
        )
        n_global = int(np.prod(observation_space.shape)) - n_arms * arm_features
        if n_global < 0:
            raise ValueError(
                f"observation of size {observation_space.shape} is too small for "
                f"{n_arms} arms x {arm_features} features"
            )
        self.n_global = n_global
        if isinstance(action_space, spaces.Discrete) and action_space.n in (n_arms, n_arms + 1):
            self._logits_per_arm, self._stop = 1, action_space.n == n_arms + 1
        elif (
            isinstance(action_space, spaces.MultiDiscrete)
            and action_space.nvec.shape == (n_arms,)
            and len(set(action_space.nvec.tolist())) == 1
        ):
            self._logits_per_arm, self._stop = int(action_space.nvec[0]), False
        else:
            raise ValueError(f"ArmSetPolicy cannot act in {action_space} with n_arms={n_arms}")
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)  # type: ignore[call-arg]

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = _ArmSetNet(
            self.n_arms,
            self.arm_features,
            self.n_global,
            self._logits_per_arm,
            self._stop,
            self.hidden,
            self.n_layers,
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        # the per-arm head gives the logits directly; small initial logits (near-uniform policy)
        self.action_net = nn.Identity()
        heads = [self.mlp_extractor.pi_head] + [
            h for h in (self.mlp_extractor.stop_head,) if h is not None
        ]
        for head in heads:
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            n_arms=self.n_arms,
            arm_features=self.arm_features,
            hidden=self.hidden,
            layers=self.n_layers,
        )
        return data


class ArmSetPolicy(_ArmSetLayout, ActorCriticPolicy):
    """An actor-critic policy that treats the arms as a set (permutation-equivariant).

    The flat observation of :class:`~bandit_envs.wrappers.FlatObservation` is read as
    ``n_arms`` rows of ``arm_features`` per-arm features plus the global entries
    (``remaining``, ``phase``). Every arm goes through the same DeepSets layers (its own
    features, the mean and max over arms, the global entries), so a rule learned for one
    arm holds for all, and permuting the arms permutes the action distribution. The
    actor gives each arm its logits (``Discrete(n)``: one; ``MultiDiscrete([r+1]*n)``:
    ``r + 1``; the stop action of ``Discrete(n + 1)`` gets a pooled logit); the critic
    reads the pooled features. For PPO and A2C (:class:`MaskableArmSetPolicy` for
    MaskablePPO); :func:`~agents.learned.training.train` fills the layout in.

    Args:
        n_arms: number of arms.
        arm_features: per-arm features (feature-major blocks of ``n_arms`` entries).
        hidden: width of the per-arm layers.
        layers: number of DeepSets layers.
    """


if MaskableActorCriticPolicy is not None:

    class MaskableArmSetPolicy(_ArmSetLayout, MaskableActorCriticPolicy):
        """:class:`ArmSetPolicy` for sb3-contrib's ``MaskablePPO``: the same network, masked.

        The logits of the actions the env's ``action_masks()`` rule out are set to minus
        infinity before sampling (``MaskableActorCriticPolicy``). For ``Discrete`` action
        spaces (``TopK-v0``, ``TopK-PullByPull-v0``: an arm, or the stop / end-of-batch
        action, whose logit is pooled over the arms) and ``MultiDiscrete`` ones.
        """
