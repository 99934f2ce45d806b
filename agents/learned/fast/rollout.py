"""Rollouts of a :class:`~agents.learned.fast.network.FastArmSetNet` on a native vector env.

The native vector envs (``gym.make_vec(..., vectorization_mode="vector_entry_point")``,
``autoreset_mode="SameStep"``) step thousands of episodes with whole-array NumPy calls;
the observation goes through the policy's
:class:`~bandit_envs.wrappers.FlatObservation` once per step for all envs, and the
network runs once per step on all of them. No per-env Python object is made, so the
network is the only cost that grows with the number of steps.

A recurrent network (``FastArmSetNet(recurrent=True)``) carries its state across the
steps: :class:`Rollouts` keeps each env's state and whether its current observation
starts an episode (the envs autoreset in the step that ends an episode), zeroes the
state of an env whose episode ended, and stores with each rollout the state at its
start and the per-step start flags, from which the update re-runs the rollout
(truncated backprop through time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.learned.families import episode_score
from agents.learned.fast.network import FastArmSetNet
from agents.learned.vec_env import expected_value_gain, top_k_posterior_value
from bandit_envs.wrappers import FlatObservation

#: A step's posterior reward is the expected change of the posterior value when its pulls
#: have at most this many joint outcomes, else the realised change (same expectation).
EXPECTED_OUTCOMES = 64

__all__ = [
    "EXPECTED_OUTCOMES",
    "ActionLaw",
    "Rollout",
    "Rollouts",
    "play_scores",
    "posterior_answer_scores",
]


class ActionLaw:
    """The action distribution of an arm-set network's logits.

    ``Discrete`` (``TopK-v0``): one categorical over ``n`` (or ``n + 1``) logits;
    ``MultiDiscrete([r + 1] * n)`` (``TopK-Batch-v0``): one categorical per arm over
    its ``r + 1`` arm-major logits (as SB3's ``MultiCategoricalDistribution``).
    """

    def __init__(self, n_arms: int, logits_per_arm: int, stop: bool) -> None:
        self.n_arms, self.per_arm, self.stop = n_arms, logits_per_arm, stop
        self.multi = logits_per_arm > 1

    def _log_probs(self, logits: torch.Tensor) -> torch.Tensor:
        if self.multi:
            logits = logits.reshape(logits.shape[0], self.n_arms, self.per_arm)
        return torch.log_softmax(logits, dim=-1)

    def sample(self, logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Actions ``(B,)`` or ``(B, n)`` by the Gumbel-max trick."""
        if self.multi:
            logits = logits.reshape(logits.shape[0], self.n_arms, self.per_arm)
        u = torch.rand(logits.shape, generator=generator).clamp_(1e-12, 1.0)
        return (logits - torch.log(-torch.log(u))).argmax(dim=-1)

    def mode(self, logits: torch.Tensor) -> torch.Tensor:
        """The most likely actions (SB3's ``deterministic=True``)."""
        if self.multi:
            logits = logits.reshape(logits.shape[0], self.n_arms, self.per_arm)
        return logits.argmax(dim=-1)

    def log_prob_entropy(
        self, logits: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``log pi(a)`` and the entropy, per row (summed over arms for a batch action)."""
        logp = self._log_probs(logits)
        chosen = logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        entropy = -(logp.exp() * logp).sum(-1)
        if self.multi:
            return chosen.sum(-1), entropy.sum(-1)
        return chosen, entropy


@dataclass
class Rollout:
    """``n_steps x num_envs`` transitions (time-major), with their GAE advantages.

    A recurrent network's rollout also holds ``state0`` ``(num_envs, hidden)``, the
    state before its first step, and ``starts`` ``(n_steps, num_envs)``, whether each
    observation starts an episode (its state is zeroed); ``None`` otherwise.
    """

    obs: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    state0: torch.Tensor | None = None
    starts: torch.Tensor | None = None


def _stack(rows: Any) -> dict[str, np.ndarray]:
    """An object array of observation dicts as a dict of stacked arrays."""
    return {key: np.stack([row[key] for row in rows]) for key in rows[0]}


def posterior_answer_scores(
    env_kwargs: Mapping[str, Any],
    final_obs: Mapping[str, np.ndarray],
    true_means: np.ndarray,
    prior: tuple[float, float],
    batches: np.ndarray,
) -> np.ndarray:
    """The task's score of episodes answered with the posterior top k (Beta prior)."""
    k = int(env_kwargs["k"])
    a, b = prior
    counts = np.asarray(final_obs["counts"], dtype=np.float64)
    post = (a + np.rint(np.asarray(final_obs["means"]) * counts)) / (a + b + counts)
    answer = np.argsort(-post, axis=1, kind="stable")[:, :k]
    best = np.sort(true_means, axis=1)[:, -k:]
    chosen = np.take_along_axis(true_means, answer, axis=1)
    regret = (best.sum(1) - chosen.sum(1)) / k
    top = np.argsort(-true_means, axis=1, kind="stable")[:, :k]
    missed = np.array(
        [set(x) != set(y) for x, y in zip(answer.tolist(), top.tolist(), strict=True)]
    )
    return episode_score(env_kwargs, regret, missed, batches)


class Rollouts:
    """Collects rollouts from ``num_envs`` native vector envs of one training family.

    Args:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"``.
        env_kwargs: the family's checked kwargs.
        transform: the policy's observation.
        num_envs: episodes stepped together.
        seed: the envs' first reset (then their own stream).
        reward: ``"env"`` or ``"posterior"`` (the change of the posterior top-k value,
            :class:`~agents.learned.vec_env.VecPosteriorReward`'s reward; needs ``prior``).
        reward_scale: rewards are multiplied by this.
        prior: the family's Beta prior (scoring and the posterior reward).
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        transform: FlatObservation,
        num_envs: int,
        seed: int,
        *,
        reward: str = "env",
        reward_scale: float = 1.0,
        prior: tuple[float, float] | None = None,
    ) -> None:
        self.env_kwargs = dict(env_kwargs)
        self.venv = gym.make_vec(
            env_id,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode="SameStep",
            **self.env_kwargs,
        )
        self.transform, self.num_envs = transform, num_envs
        self.reward, self.reward_scale, self.prior = reward, reward_scale, prior
        if reward == "posterior" and prior is None:
            raise ValueError("reward='posterior' needs prior=(a, b)")
        self.k = int(self.env_kwargs["k"])
        self._raw, _ = self.venv.reset(seed=seed)
        self.scores: list[float] = []  # the task's score of every finished episode
        # a recurrent network's state before the current observation (made on first
        # use), and which envs' current observation starts an episode
        self._state: torch.Tensor | None = None
        self._starts = np.ones(num_envs, dtype=bool)

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def _flat(self, raw: Mapping[str, np.ndarray]) -> torch.Tensor:
        return torch.from_numpy(self.transform(raw).astype(np.float32, copy=False))

    def _policy(
        self, net: Any, forward: Any, obs: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Logits and values of the current observations (``forward``: ``net`` or its
        compiled form), and a recurrent ``net``'s state after this step (else ``None``)."""
        if not getattr(net, "recurrent", False):
            logits, values = forward(obs)
            return logits, values, None
        if self._state is None:
            self._state = net.initial_state(self.num_envs)
        return forward(obs, self._state, torch.from_numpy(self._starts))

    def _carry(self, state: torch.Tensor | None, ended: np.ndarray) -> None:
        """After a step: keep the state, zeroed for the envs whose episode ``ended``
        (their next observation is a new episode's first)."""
        self._starts = np.asarray(ended, dtype=bool).copy()
        if state is not None:
            self._state = state.masked_fill(torch.from_numpy(self._starts).unsqueeze(-1), 0.0)

    def _restart(self, mask: np.ndarray) -> None:
        """The envs of ``mask`` were reset: their next observation starts an episode."""
        self._starts |= mask
        if self._state is not None:
            self._state[torch.from_numpy(mask)] = 0.0

    def _finish(self, info: Mapping[str, Any], ended: np.ndarray) -> None:
        """Record the scores of the episodes that ended this step."""
        final = info["final_info"]
        rows = np.flatnonzero(ended)
        batches = np.asarray(final["batches"])[rows]
        if self.prior is not None:
            obs = _stack(info["final_obs"][rows])
            scores = posterior_answer_scores(
                self.env_kwargs, obs, np.asarray(final["means"])[rows], self.prior, batches
            )
        else:
            scores = episode_score(
                self.env_kwargs,
                np.asarray(final["aggregate_regret"])[rows],
                np.asarray(final["misidentified"])[rows],
                batches,
            )
        self.scores.extend(np.asarray(scores, dtype=np.float64).tolist())

    @torch.no_grad()
    def play_episodes(
        self,
        net: Any,
        law: ActionLaw,
        generator: torch.Generator,
        *,
        deterministic: bool = True,
    ) -> np.ndarray:
        """Play every env's current episode to its end with ``net`` (the most likely
        actions, or sampled from ``generator``); returns the task's score of each, in env
        order. Meant for fresh envs (all at an episode's start), as :func:`play_scores`
        makes them."""
        finished = np.zeros(self.num_envs, dtype=bool)
        scores = np.empty(self.num_envs)
        while not finished.all():
            logits, _, state = self._policy(net, net, self._flat(self._raw))
            action = law.mode(logits) if deterministic else law.sample(logits, generator)
            raw, _, terminated, truncated, info = self.venv.step(action.numpy())
            ended = terminated | truncated
            done = ended & ~finished
            if done.any():
                self.scores = []
                self._finish(info, done)
                scores[done] = self.scores
                finished |= done
            self._raw = raw
            self._carry(state, ended)
        return scores

    @torch.no_grad()
    def stagger(
        self,
        net: Any,
        law: ActionLaw,
        horizon: int,
        generator: torch.Generator,
        forward: Any = None,
    ) -> int:
        """Spread the envs over the phases of an episode; returns the steps taken.

        Envs reset together are in the same step of their episodes, so every rollout
        would show the policy one phase of an episode at a time (the start, then the
        middle, ...), and the updates would chase that phase. Env ``i`` is restarted
        at a uniform step ``o_i`` of ``horizon`` steps of ``net``'s play (not trained
        on), so afterwards the envs are at uniform steps of their episodes.
        ``forward``: as in :meth:`collect`.
        """
        forward = net if forward is None else forward
        offsets = torch.randint(0, horizon, (self.num_envs,), generator=generator).numpy()
        for j in range(horizon):
            mask = offsets == j
            if mask.any():
                fresh, _ = self.venv.reset(options={"reset_mask": mask})
                self._raw = fresh
                self._restart(mask)
            logits, _, state = self._policy(net, forward, self._flat(self._raw))
            self._raw, _, terminated, truncated, _ = self.venv.step(
                law.sample(logits, generator).numpy()
            )
            self._carry(state, terminated | truncated)
        return horizon * self.num_envs

    @torch.no_grad()
    def collect(
        self,
        net: FastArmSetNet,
        law: ActionLaw,
        n_steps: int,
        gamma: float,
        gae_lambda: float,
        generator: torch.Generator,
        forward: Any = None,
    ) -> Rollout:
        """``n_steps`` steps of every env under ``net``'s sampled actions, with GAE.

        ``forward``: ``net`` compiled for a batch of ``num_envs`` observations (used for
        the step's batch; ``net`` itself for the odd-sized ones). A recurrent ``net``
        plays from the envs' carried states; the rollout stores the state at its start
        and the episode-start flags of its steps.
        """
        forward = net if forward is None else forward
        recurrent = getattr(net, "recurrent", False)
        if recurrent and self._state is None:
            self._state = net.initial_state(self.num_envs)
        state0 = self._state.clone() if recurrent else None
        n, d = self.num_envs, self.transform.observation_space.shape[0]
        obs = torch.empty((n_steps, n, d))
        actions: list[torch.Tensor] = []
        log_probs = torch.empty((n_steps, n))
        values = torch.empty((n_steps, n))
        rewards = torch.empty((n_steps, n))
        ended = torch.empty((n_steps, n), dtype=torch.bool)
        starts = torch.empty((n_steps, n), dtype=torch.bool)
        for t in range(n_steps):
            obs[t] = self._flat(self._raw)
            starts[t] = torch.from_numpy(self._starts)
            logits, value, state = self._policy(net, forward, obs[t])
            action = law.sample(logits, generator)
            log_probs[t] = law.log_prob_entropy(logits, action)[0]
            values[t] = value
            actions.append(action)
            before = self._raw
            raw, reward, terminated, truncated, info = self.venv.step(action.numpy())
            done = terminated | truncated
            if self.reward == "posterior":
                reward = self._posterior_reward(before, raw, info, done)
            reward = torch.from_numpy(np.asarray(reward, dtype=np.float32) * self.reward_scale)
            if truncated.any():  # bootstrap a truncated episode from its last observation
                rows = np.flatnonzero(truncated)
                last = self._flat(_stack(info["final_obs"][rows]))
                if state is None:
                    reward[rows] += gamma * net(last)[1]
                else:  # the last observation continues the episode: its state goes on
                    more = torch.zeros(len(rows), dtype=torch.bool)
                    reward[rows] += gamma * net(last, state[torch.from_numpy(rows)], more)[1]
            if done.any():
                self._finish(info, done)
            rewards[t] = reward
            ended[t] = torch.from_numpy(done)
            self._raw = raw
            self._carry(state, done)
        next_value = self._policy(net, forward, self._flat(self._raw))[1]
        advantages = torch.empty((n_steps, n))
        running = torch.zeros(n)
        for t in range(n_steps - 1, -1, -1):
            live = (~ended[t]).float()
            delta = rewards[t] + gamma * next_value * live - values[t]
            running = delta + gamma * gae_lambda * live * running
            advantages[t] = running
            next_value = values[t]
        return Rollout(
            obs,
            torch.stack(actions),
            log_probs,
            values,
            advantages,
            advantages + values,
            state0,
            starts if recurrent else None,
        )

    def _posterior_reward(
        self,
        before: Mapping[str, np.ndarray],
        after: Mapping[str, np.ndarray],
        info: Mapping[str, Any],
        done: np.ndarray,
    ) -> np.ndarray:
        """The change of the posterior top-k value ``Phi`` the pulls of each env made.

        Its expectation over the pulls' outcomes (:func:`expected_value_gain`, the
        reward of :class:`~agents.learned.vec_env.VecPosteriorReward`) where a step's
        pulls have at most :data:`EXPECTED_OUTCOMES` joint outcomes (one pull: 2), the
        realised change ``Phi(s') - Phi(s)`` otherwise: the same conditional
        expectation, without enumerating up to ``2^b`` outcomes of a spread batch.
        """
        assert self.prior is not None
        counts = np.array(after["counts"], dtype=np.int64)
        means = np.array(after["means"], dtype=np.float64)
        rows = np.flatnonzero(done)
        if rows.size:
            last = _stack(info["final_obs"][rows])
            counts[rows], means[rows] = last["counts"], last["means"]
        start = np.asarray(before["counts"], dtype=np.int64)
        pulls = counts - start
        before_means = np.asarray(before["means"], dtype=np.float64)
        reward = np.empty(len(pulls))
        few = np.prod(pulls + 1.0, axis=1) <= EXPECTED_OUTCOMES
        if few.any():
            reward[few] = expected_value_gain(
                start[few], before_means[few], pulls[few], self.prior, self.k
            )
        many = ~few
        if many.any():  # one-pull tasks never get here: no sort on their hot path
            reward[many] = top_k_posterior_value(
                counts[many], means[many], self.prior, self.k
            ) - top_k_posterior_value(start[many], before_means[many], self.prior, self.k)
        return reward


@torch.no_grad()
def play_scores(
    net: FastArmSetNet,
    law: ActionLaw,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    transform: FlatObservation,
    episodes: int,
    seed: int,
    prior: tuple[float, float] | None = None,
    deterministic: bool = True,
) -> np.ndarray:
    """The task's score of ``episodes`` episodes played by ``net``.

    ``deterministic``: the most likely actions, else actions sampled from a generator
    seeded with ``seed``. All episodes run at once on one vector env reset with
    ``seed`` (so the same seed gives the same instances); an episode is answered by the
    posterior top k with ``prior``. A recurrent ``net`` carries each env's state, zeroed
    at every episode's start.
    """
    rollouts = Rollouts(env_id, env_kwargs, transform, episodes, seed, prior=prior)
    try:
        return rollouts.play_episodes(
            net, law, torch.Generator().manual_seed(seed), deterministic=deterministic
        )
    finally:
        rollouts.close()
