"""A stable-baselines3 ``VecEnv`` over a Gymnasium vector env (the native ones first).

stable-baselines3 trains on its own ``VecEnv`` interface, not on Gymnasium vector envs.
:class:`SB3VecEnv` adapts one: SB3's ``reset() -> obs`` and
``step_async``/``step_wait -> (obs, rewards, dones, infos)``, with one ``info`` dict
per env holding ``"terminal_observation"`` (the last observation of an episode that
ended) and ``"TimeLimit.truncated"`` (truncated and not terminated), as SB3's
``DummyVecEnv`` does. :func:`make_sb3_vec_env` builds the native vector env with
``autoreset_mode=SAME_STEP`` and wraps it.

The wrapped env may be

* a native :class:`~bandit_envs.vector.TopKVectorEnv` /
  :class:`~bandit_envs.vector.TopKBatchVectorEnv` or any vector env with
  ``autoreset_mode=SAME_STEP``: final observations come from ``info["final_obs"]``;
* a ``NEXT_STEP`` vector env that accepts ``reset(options={"reset_mask": mask})``
  (``gymnasium.vector.SyncVectorEnv``, the native envs): ended envs are restarted at
  once with a masked reset, so SB3 sees the same thing.

Needs stable-baselines3 (``pip install 'topk-bandit-envs[rl]'``); ``import
bandit_envs`` does not import it, ``import bandit_envs.sb3`` does.

Example:
    >>> import numpy as np
    >>> from bandit_envs.sb3 import make_sb3_vec_env
    >>> venv = make_sb3_vec_env("TopK-v0", num_envs=4, seed=0, n_arms=5, k=2, budget=10)
    >>> obs = venv.reset()
    >>> obs["counts"].shape
    (4, 5)
    >>> for t in range(10):
    ...     obs, rewards, dones, infos = venv.step(np.full(4, t % 5))
    >>> dones.tolist(), sorted(infos[0])[:3]
    ([True, True, True, True], ['TimeLimit.truncated', 'aggregate_regret', 'batches'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from bandit_envs.wrappers import vector_action_masks

_INSTALL_HINT = (
    "bandit_envs.sb3 needs stable-baselines3; install the extra: pip install 'topk-bandit-envs[rl]'"
)
try:
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn
except ImportError as error:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(_INSTALL_HINT) from error

__all__ = ["SB3VecEnv", "make_sb3_vec_env"]


def _per_env(info: dict[str, Any], out: list[dict[str, Any]], skip: Sequence[str] = ()) -> None:
    """Gymnasium's vector ``info`` (arrays + ``_key`` masks) into one dict per env."""
    for key, value in info.items():
        if key.startswith("_") or key in skip:
            continue
        mask = info.get("_" + key)
        rows = range(len(out)) if mask is None else np.flatnonzero(mask).tolist()
        if isinstance(value, dict):
            nested: list[dict[str, Any]] = [{} for _ in out]
            _per_env(value, nested)
            for i in rows:
                out[i][key] = nested[i]
            continue
        for i in rows:
            item = value[i]
            out[i][key] = item.item() if isinstance(item, np.generic) else item


class SB3VecEnv(VecEnv):
    """stable-baselines3's ``VecEnv`` interface over a Gymnasium vector env.

    Args:
        venv: a ``gymnasium.vector.VectorEnv`` with ``autoreset_mode`` ``SAME_STEP``, or
            ``NEXT_STEP`` if its ``reset`` accepts ``options={"reset_mask": mask}``.

    Spaces are the single env's (SB3's convention); rewards are float32, ``dones`` is
    ``terminated | truncated``. An ended env's ``info`` also holds its terminal
    ``info`` keys (``aggregate_regret``, ``misidentified``, ...), so ``VecMonitor``
    and callbacks see them.

    Seeding: :meth:`seed` stores ``seed`` for the next :meth:`reset`, which passes it to
    ``venv.reset(seed=seed)``: the native envs seed their shared generator with it, a
    ``SyncVectorEnv`` gives env ``i`` the seed ``seed + i`` (SB3's own rule).

    ``get_attr`` reads the vector env's attribute (the same for every env; per env for
    a ``SyncVectorEnv``); ``set_attr`` sets it on the vector env only for all envs at
    once; ``env_method`` calls the sub-envs' methods of a ``SyncVectorEnv`` and raises
    ``NotImplementedError`` for the native envs (which have no per-env objects: call
    the method on :attr:`venv`).
    """

    def __init__(self, venv: gym.vector.VectorEnv) -> None:
        if not isinstance(venv, gym.vector.VectorEnv):
            raise TypeError(f"venv must be a gymnasium.vector.VectorEnv, got {type(venv).__name__}")
        mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if not isinstance(mode, AutoresetMode):
            mode = AutoresetMode(mode)
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(
                "SB3VecEnv needs autoreset_mode SAME_STEP (or NEXT_STEP with reset_mask), "
                f"got {mode}"
            )
        self.venv = venv
        self._same_step = mode is AutoresetMode.SAME_STEP
        self._sub_envs: list[gym.Env] | None = getattr(venv, "envs", None)
        self._actions: np.ndarray | None = None
        self._next_seed: int | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # ------------------------------------------------------------------ the loop
    def reset(self) -> dict[str, np.ndarray]:
        """Reset every env (with the seed from :meth:`seed`, once); return the observations."""
        options = self._options[0] if self._options[0] else None
        if any(o != self._options[0] for o in self._options):
            raise NotImplementedError(
                "SB3VecEnv passes one options dict to all envs, not one per env"
            )
        obs, info = self.venv.reset(seed=self._next_seed, options=options)
        self._next_seed = None
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        _per_env(info, self.reset_infos)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step the vector env; ended envs are restarted and report ``terminal_observation``."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = np.logical_or(terminated, truncated)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        _per_env(info, infos, skip=("final_obs", "final_info"))
        ended = np.flatnonzero(dones).tolist()
        if ended and self._same_step:
            final_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            _per_env(info.get("final_info", {}), final_infos)
            final_obs = info["final_obs"]
            for i in ended:
                infos[i].update(final_infos[i])
                infos[i]["terminal_observation"] = final_obs[i]
        elif ended:
            for i in ended:
                infos[i]["terminal_observation"] = {
                    key: value[i].copy() for key, value in obs.items()
                }
            obs, reset_info = self.venv.reset(options={"reset_mask": dones})
            restarted: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            _per_env(reset_info, restarted)
            for i in ended:
                self.reset_infos[i] = restarted[i]
        for i, (term, trunc) in enumerate(
            zip(terminated.tolist(), truncated.tolist(), strict=True)
        ):
            infos[i]["TimeLimit.truncated"] = trunc and not term
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset` (a random seed if ``None``, as SB3 does)."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._next_seed = int(seed)
        self._seeds = [self._next_seed + i for i in range(self.num_envs)]
        return self._seeds

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def render(self, mode: str | None = None) -> Any:
        """The vector env's ``render()`` (``"ansi"``: one string per env; ``"rgb_array"``: one
        frame per env)."""
        return self.venv.render()

    # ----------------------------------------------------------- attributes
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute for each env in ``indices`` (the vector env's, or each sub-env's)."""
        rows = list(self._get_indices(indices))
        if self._sub_envs is not None:
            return [self._sub_envs[i].get_wrapper_attr(attr_name) for i in rows]
        value = getattr(self.venv, attr_name)
        return [value for _ in rows]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute (per sub-env, or on the native vector env for all envs at once)."""
        rows = list(self._get_indices(indices))
        if self._sub_envs is not None:
            for i in rows:
                setattr(self._sub_envs[i], attr_name, value)
            return
        if sorted(rows) != list(range(self.num_envs)):
            raise NotImplementedError(
                f"set_attr({attr_name!r}) on some envs only: the native vector env shares its "
                f"attributes between all envs"
            )
        setattr(self.venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each sub-env (``SyncVectorEnv``); the native envs have none.

        ``action_masks`` (what sb3-contrib's ``MaskablePPO`` calls) also works on the
        native envs: their :meth:`action_masks` rows, one per env.
        """
        if self._sub_envs is None and method_name == "action_masks":
            masks = vector_action_masks(self.venv)
            return [masks[i] for i in self._get_indices(indices)]
        if self._sub_envs is None:
            raise NotImplementedError(
                f"env_method({method_name!r}): the native vector env has no per-env env objects; "
                f"call the method on SB3VecEnv.venv (the vector env) instead"
            )
        rows = list(self._get_indices(indices))
        return [
            self._sub_envs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs)
            for i in rows
        ]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Whether each sub-env is wrapped with ``wrapper_class`` (never, for the native envs)."""
        rows = list(self._get_indices(indices))
        if self._sub_envs is None:
            return [False for _ in rows]
        from stable_baselines3.common.env_util import is_wrapped

        return [is_wrapped(self._sub_envs[i], wrapper_class) for i in rows]


def make_sb3_vec_env(
    env_id: str, num_envs: int, seed: int | None = None, **env_kwargs: Any
) -> SB3VecEnv:
    """The native vector env of ``env_id`` (``SAME_STEP`` autoreset) as an SB3 ``VecEnv``.

    Args:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"`` (or another id with a
            ``vector_entry_point`` that takes ``autoreset_mode``).
        num_envs: number of envs.
        seed: seed of the first :meth:`SB3VecEnv.reset` (``None``: unseeded).
        **env_kwargs: the environment's keyword arguments (the default
            ``invalid_action="project"`` is what a learned ``TopK-Batch-v0`` policy needs).
    """
    venv = gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
        **env_kwargs,
    )
    env = SB3VecEnv(venv)
    if seed is not None:
        env.seed(seed)
    return env
