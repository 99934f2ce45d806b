"""The arm-set actor-critic of the fast path, in its cheap form, and its export to SB3.

:class:`FastArmSetNet` computes exactly the function of
:class:`~agents.learned.networks.ArmSetPolicy`'s network (DeepSets layers
``h_i <- relu(A h_i + B mean_j h_j + C max_j h_j + D g)``, a per-arm actor head, a pooled
stop logit and a pooled critic), but applies ``B``, ``C`` and ``D`` once per observation
instead of once per arm: ``[A | B | C | D] [h_i; mean; max; g]`` is split into the
per-arm product ``A h_i`` and the shared context ``[B | C | D] [mean; max; g]``. At 10
arms and 64 hidden units this is 2.4x fewer multiply-adds per observation
(``benchmarks/rl_throughput.py`` measures the network). :meth:`FastArmSetNet.export`
writes the weights into an ``ArmSetPolicy`` (the same layer stacked back), so a model
trained on the fast path is saved, loaded and played like any stable-baselines3 model.

``shared=True`` gives actor and critic one trunk (half the cost); the exported policy
then carries the trunk twice, and plays exactly as trained.

``recurrent=True`` adds a memory across the steps of an episode, for the ablation
"recurrent against feed-forward" (the RL^2 setting of Duan et al. 2016: a recurrent
policy trained over episodes of random tasks adapts within an episode). A GRU cell
(Cho et al. 2014) of ``hidden`` units reads each observation's pooled first-layer
context ``[mean_i x_i; max_i x_i; g]`` and its state ``s`` joins the context of every
arm-set layer (``... + D g + M s``) and the inputs of the stop and value heads. The state
is zeroed at an episode's first step. A recurrent network has no ``ArmSetPolicy``
counterpart, so it is not exported (it is for measurement, not for saved models).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["NEVER", "FastArmSetNet"]

#: The exported stop logit of a network without a stop action: the action is never
#: sampled (its probability is below exp(-1e4 + 20) next to any arm logit above -20).
NEVER = -1e4


class _Trunk(nn.Module):
    """DeepSets layers in the split form: per-arm ``own`` and per-observation ``context``.

    ``memory``: each layer's context also takes a recurrent state of ``hidden`` units
    (``memory[l]``, no bias).
    """

    def __init__(
        self, per_arm: int, n_global: int, hidden: int, layers: int, memory: bool = False
    ) -> None:
        super().__init__()
        self.own = nn.ModuleList()
        self.context = nn.ModuleList()
        width = per_arm
        for _ in range(layers):
            self.own.append(nn.Linear(width, hidden))
            self.context.append(nn.Linear(2 * width + n_global, hidden, bias=False))
            width = hidden
        self.memory = (
            nn.ModuleList(nn.Linear(hidden, hidden, bias=False) for _ in range(layers))
            if memory
            else None
        )

    def forward(
        self, arms: torch.Tensor, glob: torch.Tensor, state: torch.Tensor | None = None
    ) -> torch.Tensor:
        h = arms  # (B, n, F)
        for i, (own, context) in enumerate(zip(self.own, self.context, strict=True)):
            shared = context(torch.cat((h.mean(dim=1), h.amax(dim=1), glob), dim=-1))
            if state is not None:
                shared = shared + self.memory[i](state)
            h = torch.relu(own(h) + shared.unsqueeze(1))
        return h

    def stacked(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each layer as ``ArmSetPolicy`` holds it: weight ``[A | B | C | D]``, bias."""
        return [
            (torch.cat((own.weight, context.weight), dim=1), own.bias)
            for own, context in zip(self.own, self.context, strict=True)
        ]


class FastArmSetNet(nn.Module):
    """Actor-critic over a set of arms (:class:`~agents.learned.networks.ArmSetPolicy`'s function).

    Args:
        n_arms: number of arms.
        arm_features: per-arm features (feature-major blocks of the flat observation).
        n_global: global entries after the per-arm blocks (``remaining``, ``phase``).
        logits_per_arm: 1 (``Discrete`` actions) or ``r + 1`` (``MultiDiscrete``).
        stop: a pooled stop logit after the arms' (``Discrete(n + 1)``).
        hidden: width of the per-arm layers (and of the recurrent state).
        layers: DeepSets layers.
        shared: one trunk for actor and critic.
        recurrent: a GRU memory across an episode's steps (one cell, shared by actor
            and critic); then :meth:`forward` takes and returns the state.
    """

    def __init__(
        self,
        n_arms: int,
        arm_features: int,
        n_global: int,
        logits_per_arm: int,
        stop: bool,
        hidden: int = 32,
        layers: int = 2,
        shared: bool = False,
        recurrent: bool = False,
    ) -> None:
        super().__init__()
        if hidden < 1 or layers < 1:
            raise ValueError(f"hidden={hidden} and layers={layers} must be >= 1")
        self.n_arms, self.arm_features, self.n_global = n_arms, arm_features, n_global
        self.logits_per_arm, self.stop, self.hidden, self.layers = (
            logits_per_arm,
            stop,
            hidden,
            layers,
        )
        self.shared, self.recurrent = shared, bool(recurrent)
        self.pi = _Trunk(arm_features, n_global, hidden, layers, self.recurrent)
        self.vf = (
            self.pi if shared else _Trunk(arm_features, n_global, hidden, layers, self.recurrent)
        )
        self.pi_head = nn.Linear(hidden, logits_per_arm)
        pooled = 2 * hidden + n_global + (hidden if self.recurrent else 0)
        self.stop_head = nn.Linear(pooled, 1) if stop else None
        self.value_head = nn.Linear(pooled, 1)
        # the GRU keeps torch's own initialisation (uniform in +-1/sqrt(hidden))
        self.gru = nn.GRUCell(2 * arm_features + n_global, hidden) if self.recurrent else None
        # as ArmSetPolicy: orthogonal layers (gain sqrt 2), near-uniform initial policy
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight, gain=2**0.5)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        for head in (self.pi_head, self.stop_head):
            if head is not None:
                nn.init.orthogonal_(head.weight, gain=0.01)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)

    def _split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, f = self.n_arms, self.arm_features
        arms = obs[:, : n * f].reshape(-1, f, n).transpose(1, 2)
        return arms, obs[:, n * f :]

    @staticmethod
    def _pool(
        h: torch.Tensor, glob: torch.Tensor, state: torch.Tensor | None = None
    ) -> torch.Tensor:
        parts = (h.mean(dim=1), h.amax(dim=1), glob)
        return torch.cat(parts if state is None else (*parts, state), dim=-1)

    def _heads(
        self, arms: torch.Tensor, glob: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.pi(arms, glob, state)
        logits = self.pi_head(h).reshape(h.shape[0], -1)
        if self.stop_head is not None:
            logits = torch.cat((logits, self.stop_head(self._pool(h, glob, state))), dim=-1)
        hv = h if self.shared else self.vf(arms, glob, state)
        return logits, self.value_head(self._pool(hv, glob, state)).squeeze(-1)

    def initial_state(self, batch: int) -> torch.Tensor:
        """The state before an episode's first step: zeros ``(batch, hidden)``."""
        return torch.zeros(batch, self.hidden)

    def forward(
        self,
        obs: torch.Tensor,
        state: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, ...]:
        """Arm-major logits ``(B, n * logits_per_arm [+ 1])`` and values ``(B,)``.

        A recurrent network takes the state before this step ``(B, hidden)`` and
        ``starts`` ``(B,)`` (True: ``obs`` is an episode's first observation, whose
        state is zeroed) and returns the state after it as a third entry.
        """
        if self.gru is None:
            if state is not None or starts is not None:
                raise ValueError("a feed-forward FastArmSetNet (recurrent=False) takes no state")
            return self._heads(*self._split(obs))
        if state is None or starts is None:
            raise ValueError(
                "a recurrent FastArmSetNet needs state (B, hidden) and starts (B,): "
                "net(obs, state, starts)"
            )
        logits, values, states = self.unroll(obs.unsqueeze(0), state, starts.unsqueeze(0))
        return logits, values, states[0]

    def unroll(
        self, obs: torch.Tensor, state: torch.Tensor, starts: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A recurrent network over ``T`` steps of ``B`` episodes, from ``state``.

        ``obs`` ``(T, B, D)``, ``state`` ``(B, hidden)`` (before step 0), ``starts``
        ``(T, B)`` (zero the state before step ``t``). Returns time-major logits
        ``(T * B, ...)``, values ``(T * B,)`` and the states after each step ``(T, B,
        hidden)``. Only the GRU runs step by step; the arm-set layers run once on all
        ``T * B`` observations. Backpropagating through it is truncated backprop
        through time over the ``T`` steps (Williams and Peng 1990).
        """
        if self.gru is None:
            raise ValueError("unroll() runs a recurrent FastArmSetNet (recurrent=True)")
        steps, batch = starts.shape
        arms, glob = self._split(obs.reshape(steps * batch, -1))
        inputs = torch.cat((arms.mean(dim=1), arms.amax(dim=1), glob), dim=-1)
        inputs = inputs.reshape(steps, batch, -1)
        states = []
        for t in range(steps):
            state = self.gru(inputs[t], state.masked_fill(starts[t].unsqueeze(-1), 0.0))
            states.append(state)
        memory = torch.stack(states)
        logits, values = self._heads(arms, glob, memory.reshape(steps * batch, -1))
        return logits, values, memory

    @torch.no_grad()
    def export(self, policy: nn.Module) -> None:
        """Copy the weights into an ``ArmSetPolicy`` built with the same layout."""
        if self.recurrent:
            raise ValueError(
                "a recurrent FastArmSetNet (recurrent=True) cannot be exported: "
                "ArmSetPolicy is feed-forward and has no memory to carry"
            )
        net = policy.mlp_extractor
        if (net.n_arms, net.per_arm, len(net.pi.layers)) != (
            self.n_arms,
            self.arm_features,
            self.layers,
        ) or net.pi_head.out_features != self.logits_per_arm:
            raise ValueError(
                f"the policy's layout (n_arms={net.n_arms}, arm_features={net.per_arm}, "
                f"layers={len(net.pi.layers)}, logits per arm {net.pi_head.out_features}) "
                f"is not this network's ({self.n_arms}, {self.arm_features}, {self.layers}, "
                f"{self.logits_per_arm})"
            )
        for trunk, target in ((self.pi, net.pi), (self.vf, net.vf)):
            for (weight, bias), layer in zip(trunk.stacked(), target.layers, strict=True):
                layer.weight.copy_(weight)
                layer.bias.copy_(bias)
        net.pi_head.load_state_dict(self.pi_head.state_dict())
        if self.stop_head is not None:
            net.stop_head.load_state_dict(self.stop_head.state_dict())
        elif net.stop_head is not None:  # a stop action this network does not offer
            net.stop_head.weight.zero_()
            net.stop_head.bias.fill_(NEVER)
        policy.value_net.load_state_dict(self.value_head.state_dict())
