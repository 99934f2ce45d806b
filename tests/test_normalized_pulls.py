"""The runner's ``normalized_pulls`` metric and reading results written before it existed."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agents
from bandit_envs.hardness import characteristic_time
from topk_bench.episodes import _normalized_pulls
from topk_bench.store import ResultStore, row_schema


def _env(setting: str) -> gym.Env:
    kwargs = {"max_batches": 10**6} if setting == "fixed_confidence" else {"budget": 400}
    return gym.make(
        "TopK-Batch-v0", instance="garivier2016-mu1", setting=setting, batch_size=1,
        repeat_limit=1, **kwargs,
    )  # fmt: skip


def test_normalized_pulls_is_pulls_over_the_lower_bound() -> None:
    env = _env("fixed_confidence")
    agent = agents.make("track_and_stop", delta=0.05)
    res = agents.run_episode(env, agent, seed=3)
    cache: dict = {}
    got = _normalized_pulls(env.unwrapped, agent, res.pulls, cache)
    t_star = characteristic_time([0.5, 0.45, 0.43, 0.4], 1)
    assert got == pytest.approx(res.pulls / (t_star * math.log(1 / 0.05)))
    assert len(cache) == 1  # computed once per instance


def test_normalized_pulls_is_nan_where_it_does_not_apply() -> None:
    env = _env("fixed_budget")
    agent = agents.make("sar")
    res = agents.run_episode(env, agent, seed=0)
    assert math.isnan(_normalized_pulls(env.unwrapped, agent, res.pulls, {}))  # fixed budget
    env = _env("fixed_confidence")
    agent = agents.make("uniform", rounds=3)
    res = agents.run_episode(env, agent, seed=0)
    assert math.isnan(_normalized_pulls(env.unwrapped, agent, res.pulls, {}))  # no delta


def test_parts_written_before_the_column_read_as_nan(tmp_path) -> None:
    store = ResultStore(tmp_path)
    schema = row_schema()
    old = pa.schema([f for f in schema if f.name != "normalized_pulls"])
    row = {
        f.name: (
            "x" if pa.types.is_string(f.type)
            else False if pa.types.is_boolean(f.type)
            else 1
        )
        for f in old
    }  # fmt: skip
    (tmp_path / "parts").mkdir()
    pq.write_table(pa.Table.from_pylist([row], schema=old), tmp_path / "parts" / "part-old.parquet")
    df = store.read()
    assert len(df) == 1 and np.isnan(df["normalized_pulls"].iloc[0])
    assert store.quarantine() == []  # not mistaken for a damaged part
