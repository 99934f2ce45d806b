"""``agents.engine.dispatch.compiled_call``: the dispatcher's overload, called without re-typing."""

from __future__ import annotations

from typing import NamedTuple

import gymnasium as gym
import numba
import numpy as np
import pytest

import agents
from agents import engine
from agents.engine import dispatch


class _Pair(NamedTuple):
    values: np.ndarray
    rng: np.random.Generator


@numba.njit
def _probe(pair, scale):
    """The sum of ``pair.values`` times ``scale``, plus one uniform of ``pair.rng``."""
    return pair.values.sum() * scale + pair.rng.random()


def test_compiled_call_matches_the_dispatcher_and_caches_the_overload() -> None:
    values = np.arange(4.0)
    a = _probe(_Pair(values, np.random.default_rng(3)), 2.0)
    b = dispatch.compiled_call(_probe, _Pair(values, np.random.default_rng(3)), 2.0)
    c = dispatch.compiled_call(_probe, _Pair(values, np.random.default_rng(3)), 2.0)
    assert a == b == c
    key = (_probe, tuple(map(dispatch._key, (_Pair(values, np.random.default_rng(3)), 2.0))))
    assert dispatch._ENTRIES[key] is next(iter(_probe.overloads.values())).entry_point
    # another argument type is another key: the dispatcher picks (compiles) its overload
    ints = np.arange(4)
    d = dispatch.compiled_call(_probe, _Pair(ints, np.random.default_rng(3)), 2)
    assert d == _probe(_Pair(ints, np.random.default_rng(3)), 2)
    assert len(_probe.overloads) == 2


def test_keys_separate_every_numba_type() -> None:
    rng = np.random.default_rng(0)
    w = np.zeros(3)
    r = np.zeros(3)
    r.flags.writeable = False
    keys = [
        dispatch._key(v)
        for v in (
            w,
            r,
            w[::2],
            np.zeros((3, 1)),
            np.zeros(3, np.int64),
            1,
            2**63,
            1.0,
            True,
            np.int64(1),
        )
    ]
    assert len(set(keys)) == len(keys)
    assert dispatch._key((w, rng)) != dispatch._key(_Pair(w, rng))  # the class is part of the type
    assert dispatch._key(_Pair(w, rng)) == dispatch._key(
        _Pair(np.ones(5), np.random.default_rng(1))
    )
    with pytest.raises(dispatch._NoKey):
        dispatch._key(object())


def test_compiled_call_falls_back_for_arguments_without_a_key() -> None:
    @numba.njit
    def is_none(x):
        return x is None

    # None (like a list, a set, an object) is left to the dispatcher: nothing is cached
    assert dispatch.compiled_call(is_none, None)
    assert not any(k[0] is is_none for k in dispatch._ENTRIES)


def test_current_answer_through_compiled_call() -> None:
    env = gym.make(
        "TopK-Batch-v0", instance="zhou2014-two-level", n_arms=10, k=3, budget=60, answer="agent"
    )
    agent = agents.make("uniform")
    for seed in range(3):
        env.reset(seed=seed)
        agent.reset(env.unwrapped.problem, seed=seed)
        agent.means[:] = np.random.default_rng(seed).random(10)
        agent.counts[:] = 1
        ref = engine.current_answer(agent.ctx._replace(rng=np.random.default_rng(seed)))
        got = dispatch.compiled_call(
            engine.current_answer, agent.ctx._replace(rng=np.random.default_rng(seed))
        )
        assert np.array_equal(ref, got)
