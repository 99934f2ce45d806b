"""The fast training path: PPO and A2C on native vector envs with a cheap arm-set network.

| module | concern |
| --- | --- |
| ``network`` | ``FastArmSetNet``: ``ArmSetPolicy``'s function in split form; export to SB3 |
| ``rollout`` | ``Rollouts`` on a native vector env, GAE, ``play_scores`` (validation) |
| ``train`` | ``FastConfig``, ``fast_train``: the updates, validation, export and saving |
| ``agent`` | ``NetAgent``: a network played in the agent protocol (the recurrent one) |

``topk-bench train --fast`` is :func:`~agents.learned.fast.train.fast_train`; a model
it saves is a stable-baselines3 model and plays through ``agents.make("ppo:PATH")``.
"""

from agents.learned.fast.train import FAST_ALGOS, FastConfig, FastResult, fast_train

__all__ = ["FAST_ALGOS", "FastConfig", "FastResult", "fast_train"]
