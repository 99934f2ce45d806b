"""Training and evaluation of learned policies, kept importable from their old place.

The code lives in the subpackage :mod:`agents.learned`, one concern per module (see
its docstring); this module re-exports the names ``agents.training`` always had.
"""

from __future__ import annotations

from agents.learned.adapter import PolicyAgent, SampledPolicyAgent
from agents.learned.algos import ALGO_DEFAULTS, ALGOS
from agents.learned.callbacks import PeriodicEval, Progress, TimeLimit, keep_deterministic
from agents.learned.cli import add_train_arguments, parse_env, train_from_args
from agents.learned.evaluation import (
    TABLE_HEADER,
    TEST_SEED0,
    VALIDATION_SEED0,
    Summary,
    compare,
    evaluate,
    summarize,
)
from agents.learned.families import PRESETS, evaluation_env, training_kwargs
from agents.learned.metadata import (
    METADATA_FORMAT,
    METADATA_VERSION,
    policy_metadata,
    saved_agent_kwargs,
    sidecar_path,
)
from agents.learned.networks import ArmSetPolicy
from agents.learned.saving import load_policy, policy_agent, save_policy
from agents.learned.training import TrainResult, train
from agents.learned.vec_env import VecFlatObservation, VecScaleReward, make_training_env

# The old private names, for code that imported them.
_ALGO_DEFAULTS = ALGO_DEFAULTS
_training_kwargs = training_kwargs
_sidecar = sidecar_path
_keep_deterministic = keep_deterministic
_parse_env = parse_env
_Progress, _TimeLimit, _PeriodicEval = Progress, TimeLimit, PeriodicEval

__all__ = [
    "ALGOS",
    "ArmSetPolicy",
    "METADATA_FORMAT",
    "METADATA_VERSION",
    "PRESETS",
    "PolicyAgent",
    "SampledPolicyAgent",
    "Summary",
    "TABLE_HEADER",
    "TEST_SEED0",
    "TrainResult",
    "VALIDATION_SEED0",
    "VecFlatObservation",
    "VecScaleReward",
    "add_train_arguments",
    "compare",
    "evaluate",
    "evaluation_env",
    "load_policy",
    "make_training_env",
    "policy_agent",
    "policy_metadata",
    "save_policy",
    "saved_agent_kwargs",
    "summarize",
    "train",
    "train_from_args",
]
