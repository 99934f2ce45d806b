"""The agents fitted to one family warn off it (learned_batch, learned_stop, saved policies).

Each warns once per agent object and distinct mismatch, naming the family and the agents
tuned to no family (``learned_batch.ZERO_SHOT``), and is silent on its family, in
particular at every point where a shipped experiment plays it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.bayesian import learned_batch as lb
from agents.bayesian import learned_stop as ls
from agents.bayesian.learned_batch import ZERO_SHOT

PRETRAINED = Path(__file__).resolve().parents[1] / "topk_bench" / "pretrained"
DAGGER = PRETRAINED / "learned-vs-scripted" / "dagger-kg-s0.zip"
BETA_5_5 = {"instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0}}
#: The default learned_batch family (10 arms, k = 3, b = 10, r = 5, 8 batches, Beta(5, 5)).
LB_FAMILY = dict(n_arms=10, k=3, batch_size=10, repeat_limit=5, max_batches=8, budget=80)
#: The default learned_stop family (10 arms, k = 1, one pull per step, Beta(1, 1)).
LS_FAMILY = dict(
    instance="uniform-random", n_arms=10, k=1, setting="fixed_confidence", batch_size=1,
    max_batches=20_000,
)  # fmt: skip


def _env(**kwargs: Any) -> gym.Env:
    return gym.make("TopK-Batch-v0", answer="agent", **kwargs)


def _warnings(play: Callable[[], Any]) -> list[str]:
    """The UserWarnings ``play()`` emits, every one (no deduplication by Python)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        play()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _silent(play: Callable[[], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        play()


def _reset(agent: agents.Agent, env: gym.Env, *, see: bool = True) -> None:
    """Reset ``agent`` as :func:`agents.run_episode` does (shown the env's instance)."""
    if see:
        agent.see_instance(env.unwrapped.instance)
    agent.reset(env.unwrapped.problem, seed=0)


def _episodes(agent: agents.Agent, env: gym.Env, n: int) -> Callable[[], None]:
    return lambda: [agents.run_episode(env, agent, seed=s) for s in range(n)]


# ------------------------------------------------------------------ learned_batch


def test_learned_batch_off_its_family_warns_naming_it_and_an_agent_of_no_family() -> None:
    """A new user's play: the default weights on jun2016-linear, 50 arms, k = 5, 1000 pulls."""
    env = _env(instance="jun2016-linear", n_arms=50, k=5, budget=1000, batch_size=None)
    (message,) = _warnings(_episodes(agents.make("learned_batch"), env, 3))
    assert lb.DEFAULT_FAMILY.describe() in message
    assert "10 arms, k = 3, b = 10, r = 5, 8 batches" in message
    assert ZERO_SHOT in message
    assert "n_arms=50 (fitted: 10)" in message and "budget=1000 (fitted: 80)" in message
    assert "instance 'jun2016-linear'" in message  # run_episode showed it the instance


def test_learned_batch_on_its_family_is_silent() -> None:
    env = _env(**BETA_5_5, **LB_FAMILY)
    _silent(_episodes(agents.make("learned_batch"), env, 2))
    _silent(lambda: _reset(agents.make("learned_batch"), env))


def test_learned_batch_warns_once_per_distinct_mismatch() -> None:
    agent = agents.make("learned_batch")
    wide = _env(**BETA_5_5, **{**LB_FAMILY, "n_arms": 20})
    deep = _env(**BETA_5_5, **{**LB_FAMILY, "k": 4})

    def play() -> None:
        for _ in range(200):
            _reset(agent, wide)
        for _ in range(200):
            _reset(agent, deep)
        _reset(agent, wide)

    messages = _warnings(play)
    assert len(messages) == 2
    assert "n_arms=20 (fitted: 10)" in messages[0] and "k=4 (fitted: 3)" in messages[1]
    assert _warnings(lambda: _reset(agents.make("learned_batch"), wide))  # a new agent: again


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"instance": "uniform-random"}, "means ~ Beta(1, 1) (fitted: Beta(5, 5))"),
        ({"instance": "beta-random", "instance_params": {"a": 2.0, "b": 8.0}}, "Beta(2, 8)"),
        ({"instance": "jun2016-linear"}, "instance 'jun2016-linear'"),
    ],
)
def test_learned_batch_checks_the_prior_of_the_instance_run_episode_shows(kwargs, expected):
    env = _env(**{**LB_FAMILY, **kwargs})
    (message,) = _warnings(lambda: _reset(agents.make("learned_batch"), env))
    assert expected in message and ZERO_SHOT in message
    # reset by hand (no instance shown) checks what the problem shows: on the family
    _silent(lambda: _reset(agents.make("learned_batch"), env, see=False))


def test_run_episode_shows_the_agent_the_instance() -> None:
    env = _env(instance="uniform-random", **LB_FAMILY)
    (message,) = _warnings(_episodes(agents.make("learned_batch"), env, 2))
    assert "means ~ Beta(1, 1) (fitted: Beta(5, 5))" in message


def test_the_instance_seen_is_for_the_next_reset_only() -> None:
    agent = agents.make("learned_batch")
    agent.see_instance(_env(instance="uniform-random", **LB_FAMILY).unwrapped.instance)
    assert _warnings(lambda: agent.reset(_env(**BETA_5_5, **LB_FAMILY).unwrapped.problem))
    _silent(lambda: _reset(agent, _env(instance="uniform-random", **LB_FAMILY), see=False))


def test_learned_batch_with_another_prior_than_its_weights_warns() -> None:
    env = _env(**BETA_5_5, **LB_FAMILY)
    (message,) = _warnings(lambda: _reset(agents.make("learned_batch", a=1.0, b=1.0), env))
    assert "the agent's prior Beta(1, 1) (fitted: Beta(5, 5))" in message


def test_learned_batch_weights_of_unknown_family_are_not_checked() -> None:
    env = _env(instance="jun2016-linear", n_arms=50, k=5, budget=1000, batch_size=None)
    agent = agents.make("learned_batch", weights=[0.0] * lb.N_WEIGHTS)
    assert agent.family is None
    _silent(lambda: _reset(agent, env))


def test_learned_batch_custom_weights_warn_off_the_family_given() -> None:
    weights = [0.1] * lb.N_WEIGHTS
    family = {"n": 50, "k": 5, "batch_size": 50, "repeat_limit": 10, "batches": 10}
    agent = agents.make("learned_batch", weights=weights, family=family)
    assert agent.family == lb.Family(50, 5, 50, 10, 10, a=5.0, b=5.0)
    on = _env(**BETA_5_5, n_arms=50, k=5, batch_size=50, repeat_limit=10, max_batches=10,
              budget=500)  # fmt: skip
    _silent(lambda: _reset(agent, on))
    (message,) = _warnings(lambda: _reset(agent, _env(**BETA_5_5, **LB_FAMILY)))
    assert "50 arms, k = 5, b = 50, r = 10, 10 batches" in message
    fit = lb.Fit(lb.Family(6, 2, 6, 3, 4, a=2.0, b=3.0), tuple(weights))
    assert lb.LearnedBatch.from_fit(fit).family == fit.family
    with pytest.raises(ValueError, match="family="):
        agents.make("learned_batch", family={"n": 10, "arms": 3})


# ------------------------------------------------------------------ learned_stop


def test_learned_stop_off_its_family_warns_naming_it_and_an_agent_of_no_family() -> None:
    env = _env(**{**LS_FAMILY, "k": 3})
    (message,) = _warnings(lambda: [_reset(agents.make("learned_stop"), env) for _ in range(1)])
    assert ls.DEFAULT_FAMILY.describe() in message
    assert "10 arms, k = 1, one pull per step" in message and "delta = 0.1" in message
    assert "k=3 (fitted: 1)" in message and ZERO_SHOT in message


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"batch_size": 10, "repeat_limit": 5}, "pulls per step=10 (fitted: 1)"),
        ({"instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0}}, "Beta(5, 5)"),
        ({"n_arms": 20}, "n_arms=20 (fitted: 10)"),
    ],
)
def test_learned_stop_checks_the_shape_and_the_prior(kwargs, expected) -> None:
    env = _env(**{**LS_FAMILY, **kwargs})
    (message,) = _warnings(lambda: _reset(agents.make("learned_stop"), env))
    assert expected in message


def test_learned_stop_on_its_family_is_silent_and_warns_once_off_it() -> None:
    agent = agents.make("learned_stop")
    _silent(_episodes(agent, _env(**LS_FAMILY), 2))
    _silent(lambda: _reset(agent, _env(**{**LS_FAMILY, "max_batches": 2000})))  # truncation
    off = _env(**{**LS_FAMILY, "k": 2})
    assert len(_warnings(lambda: [_reset(agent, off) for _ in range(500)])) == 1


def test_learned_stop_family_from_its_boundary_or_argument() -> None:
    (entry,) = [
        b
        for b in json.loads((PRETRAINED / "learned-stopping" / "boundaries.json").read_text())
        if b["fit"]["k"] == 3 and b["fit"]["delta"] == 0.05 and b["fit"]["seed"] == 1
    ]
    boundary = ls.Boundary(
        tuple(entry["knots"]), tuple(entry["deltas"]), entry["spacing"], 1.0, 1.0, entry["fit"]
    )
    agent = ls.LearnedStop.from_boundary(boundary)
    assert agent.family == ls.StopFamily(10, 3, 0.05)
    _silent(lambda: _reset(agent, _env(**{**LS_FAMILY, "k": 3})))
    assert _warnings(lambda: _reset(agent, _env(**LS_FAMILY)))
    custom = agents.make("learned_stop", deltas=[0.05] * 7)
    assert custom.family is None  # unknown family: not checked
    _silent(lambda: _reset(custom, _env(**{**LS_FAMILY, "k": 3})))
    given = agents.make("learned_stop", deltas=[0.05] * 7, family={"n": 10, "k": 3})
    assert given.family == ls.StopFamily(10, 3)
    assert _warnings(lambda: _reset(given, _env(**LS_FAMILY)))


# ------------------------------------------------------------------ saved policies


@pytest.fixture(scope="module")
def dagger() -> agents.PolicyAgent:
    pytest.importorskip("stable_baselines3")
    return agents.make(f"ppo:{DAGGER}")


def _dagger_env(**kwargs: Any) -> gym.Env:
    return _env(**{**BETA_5_5, "n_arms": 10, "k": 3, "budget": 200, "shuffle": True, **kwargs})


def test_a_saved_policy_knows_its_family(dagger) -> None:
    from agents.learned.metadata import saved_agent_kwargs

    family = saved_agent_kwargs(object(), DAGGER)["family"]
    assert family["env_id"] == "TopK-v0" and family["env_kwargs"]["n_arms"] == 10
    assert dagger.family == family


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"n_arms": 20}, "n_arms=20 (fitted: 10)"),
        ({"budget": 100}, "budget=100 (fitted: 200)"),
        ({"instance_params": {"a": 1.0, "b": 1.0}}, "Beta(1, 1) (fitted: Bernoulli means"),
        ({"max_batches": 100, "batch_size": 2}, "max_batches=100 (fitted: None)"),
        ({"objective": "misidentification"}, "objective='misidentification'"),
    ],
)
def test_a_saved_policy_off_its_family_warns_once(dagger, kwargs, expected) -> None:
    env = _dagger_env(**kwargs)
    agent = agents.make(f"ppo:{DAGGER}")
    (message,) = _warnings(lambda: [_reset(agent, env) for _ in range(100)])
    assert expected in message and ZERO_SHOT in message
    assert "TopK-v0: 10 arms, k = 3, budget 200, one pull per step" in message


def test_a_saved_policy_on_its_family_is_silent(dagger) -> None:
    """A one-pull policy plays any batch shape; a max_batches it cannot reach is none."""
    for kwargs in ({"batch_size": 1}, {"batch_size": 10, "repeat_limit": 5}, {"max_batches": 200}):
        _silent(lambda kwargs=kwargs: _reset(dagger, _dagger_env(**kwargs)))
    _silent(_episodes(dagger, _dagger_env(batch_size=10, repeat_limit=5), 1))
    one = gym.make("TopK-v0", **BETA_5_5, n_arms=10, k=3, budget=200)
    _silent(lambda: _reset(dagger, one))


def test_a_policy_of_unknown_family_is_not_checked() -> None:
    agent = agents.PolicyAgent(lambda obs: 0)
    assert agent.family is None
    _silent(lambda: _reset(agent, _env(instance="jun2016-linear", n_arms=50, k=5, budget=100)))
    with pytest.raises(ValueError, match="family="):
        agents.PolicyAgent(lambda obs: 0, family={"env_kwargs": {}})


# ------------------------------------------------------------------ shipped experiments


def _family_of(spec: Any) -> dict[str, Any]:
    """The family a model trained from a ``[[train]]`` table records (its metadata's)."""
    from agents.learned.families import training_kwargs

    kwargs = training_kwargs(spec.env_id, spec.env_kwargs)
    kwargs.pop("render_mode", None)
    return {"env_id": spec.env_id, "env_kwargs": kwargs}


def _agent_of(exp: Any, point: Any, spec: Any) -> agents.Agent | None:
    """The agent a shipped experiment plays at ``point`` if it is family-fitted (else None).

    ``trained:MODEL``: the shipped model if there is one, else a stand-in policy with the
    family the model's metadata records (rl-baselines ships no models)."""
    from topk_bench.models import TRAINED_PREFIX, shipped_model

    params = {**spec.params, **point.agent_params}
    if spec.name in ("learned_batch", "learned_stop"):
        return agents.make(spec.name, **params)
    if not spec.name.startswith(TRAINED_PREFIX):
        return None
    train = next(t for t in exp.train if t.model == spec.name[len(TRAINED_PREFIX) :])
    path = shipped_model(train, exp.name)
    if path is not None:
        return agents.make(f"{train.algo}:{path}", **params)
    return agents.PolicyAgent(lambda obs: 0, family=_family_of(train))


@pytest.mark.parametrize("reduced", [False, True])
@pytest.mark.parametrize(
    "name", ["learned-batch", "learned-stopping", "learned-vs-scripted", "rl-baselines"]
)
def test_shipped_experiments_play_their_learned_agents_on_family(name, reduced) -> None:
    """Every family-fitted agent of the shipped experiment, reset as run_episode resets it
    on every point that plays it, raises no warning; and each is checked (it has a family)."""
    pytest.importorskip("stable_baselines3")
    from topk_bench.config import load
    from topk_bench.episodes import make_env

    exp = load(name, reduced=reduced, warn=lambda _msg: None)
    checked = 0
    for point, spec in exp.pairs():
        agent = _agent_of(exp, point, spec)
        if agent is None or (spec.name == "learned_batch" and spec.params["weights"] == [0] * 8):
            continue
        assert agent.family is not None, spec.label
        env = make_env(point.env_id, point.env_kwargs)
        try:
            _silent(lambda agent=agent, env=env: _reset(agent, env))
        except UserWarning as err:
            raise AssertionError(f"{name}: {spec.label} at {point.label}: {err}") from None
        checked += 1
    assert checked >= {"learned-batch": 6, "learned-stopping": 12}.get(name, 6)


def test_the_agents_a_warning_points_to_exist() -> None:
    """The warning's advice names agents that ``agents.make`` builds."""
    import re

    names = re.findall(r'agents\.make\("([a-z_0-9]+)"\)', ZERO_SHOT)
    assert names, ZERO_SHOT
    for name in names:
        assert name in agents.available()
        agents.make(name)
