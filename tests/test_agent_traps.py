"""Mistakes a third-party agent (or its user) can make, each answered by an error that
names the value and the rule it breaks:

* a Python ``_run`` that yields something other than a request (a tuple, an int);
* a Python ``_run`` that returns nothing while sampling could go on (the anytime answer
  is for an episode whose budget ended, not for an algorithm that forgot its answer),
  or returns something that is not ``k`` distinct arms;
* a missing model file (named as given, not with a second ``.zip``);
* a saved model loaded as another algorithm than the one that trained it (``a2c:`` on
  a PPO zip), from the zip's metadata, its JSON sidecar, or the zip's own data;
* an agent without a stopping rule in fixed confidence without ``max_batches`` (an
  episode that never ends): refused in ``reset``; every registered agent declares
  whether it stops by itself (:meth:`agents.Agent.stops_by_itself`), and the
  declaration is checked by playing it.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.base import FIXED_CONFIDENCE, Pull, PullOne, ScriptedAgent

PRETRAINED = Path(__file__).resolve().parents[1] / "topk_bench" / "pretrained"
PPO_ZIP = PRETRAINED / "learned-vs-scripted" / "dagger-kg-s0.zip"


def batch_env(**kw) -> gym.Env:
    base = {"n_arms": 6, "k": 2, "budget": 30, "answer": "agent", "instance": "uniform-random"}
    return gym.make("TopK-Batch-v0", **(base | kw))


# ----------------------------------------------------------------- Python _run
class _Yields(ScriptedAgent):
    name = "yields"

    def __init__(self, request, seed=None):
        super().__init__(seed=seed)
        self.request = request

    def _run(self):
        yield Pull.each(range(self.problem.n_arms), 1)
        yield self.request
        return np.arange(self.problem.k)


@pytest.mark.parametrize(
    "request_, shown",
    [
        ((np.arange(3), np.ones(3, dtype=np.int64)), "tuple"),
        (3, "int"),
        (None, "NoneType"),
        ([Pull.each([0], 1)], "list"),
    ],
)
@pytest.mark.parametrize("fast", [True, False])
def test_yielding_a_non_request_names_the_value_and_the_rule(request_, shown, fast) -> None:
    with pytest.raises(
        RuntimeError,
        match=rf"agent 'yields' yielded .*\({shown}\).* must yield Pull, Batch or PullOne",
    ):
        agents.run_episode(batch_env(), _Yields(request_), seed=0, fast=fast)


class _Returns(ScriptedAgent):
    name = "returns"

    def __init__(self, answer, times=1, seed=None):
        super().__init__(seed=seed)
        self.answer, self.times = answer, times

    def _run(self):
        yield Pull.each(range(self.problem.n_arms), self.times)
        return self.answer


@pytest.mark.parametrize("fast", [True, False])
def test_returning_none_with_budget_left_is_an_error(fast) -> None:
    # 6 arms pulled once of a budget of 30: 24 pulls left when the algorithm returns
    with pytest.raises(
        RuntimeError,
        match=r"agent 'returns' stopped sampling with 24 pulls left but returned None.*"
        r"must return its answer \(k=2 distinct arms in \[0, 6\)\).*current_answer\(\)",
    ):
        agents.run_episode(batch_env(), _Returns(None), seed=0, fast=fast)


def test_returning_none_in_fixed_confidence_is_an_error() -> None:
    env = batch_env(budget=None, setting="fixed_confidence", batch_size=1, max_batches=50)
    with pytest.raises(RuntimeError, match=r"agent 'returns' stopped sampling .* returned None"):
        agents.run_episode(env, _Returns(None), seed=0)


def test_anytime_answer_when_the_budget_ends_first() -> None:
    """A ``_run`` still asking for pulls when the budget ends is never resumed: it answers
    with :meth:`current_answer` (the empirical top k), which is the documented rule."""
    env = batch_env()
    agent = _Returns(None, times=100)
    result = agents.run_episode(env, agent, seed=0)
    assert result.pulls == 30 and agent.counts.tolist() == [5] * 6
    top = np.sort(np.argsort(-agent.means, kind="stable")[:2])
    if len(set(agent.means.tolist())) == 6:  # no tie: the empirical top 2 is unique
        assert result.recommendation.tolist() == top.tolist()


@pytest.mark.parametrize(
    "answer, rule",
    [
        ([0, 0], r"returned \[0, 0\]: .*k=2 distinct arms in \[0, 6\)"),
        ([0, 9], r"returned \[0, 9\]: .*k=2 distinct arms in \[0, 6\)"),
        ([0, 1, 2], r"returned \[0, 1, 2\]: .*k=2 distinct arms"),
        ("01", r"returned '01': .*k=2 distinct arms"),
    ],
)
def test_a_bad_answer_names_the_value_and_the_rule(answer, rule) -> None:
    with pytest.raises(RuntimeError, match=rf"agent 'returns' {rule}"):
        agents.run_episode(batch_env(), _Returns(answer), seed=0)


def test_a_good_python_agent_still_plays() -> None:
    class Good(ScriptedAgent):
        name = "good"

        def _run(self):
            yield Pull.each(range(self.problem.n_arms), 2)
            yield PullOne(0)
            return [5, 1]

    result = agents.run_episode(batch_env(), Good(), seed=0)
    assert result.recommendation.tolist() == [1, 5] and result.pulls == 13


# --------------------------------------------------------------- saved models
def test_missing_model_file_is_named_as_given(tmp_path) -> None:
    pytest.importorskip("stable_baselines3")
    path = tmp_path / "nope.zip"
    for load in (lambda: agents.make(f"ppo:{path}"), lambda: _load_policy(path, "ppo")):
        with pytest.raises(FileNotFoundError, match=r"model file '.*nope\.zip' does not exist"):
            load()
        with pytest.raises(FileNotFoundError) as info:
            load()
        assert ".zip.zip" not in str(info.value)


def test_missing_model_without_suffix_names_both_candidates(tmp_path) -> None:
    pytest.importorskip("stable_baselines3")
    path = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match=r"'.*nope' does not exist \(nor '.*nope\.zip'\)"):
        agents.make(f"ppo:{path}")


def test_model_without_suffix_loads_its_zip(tmp_path) -> None:
    pytest.importorskip("stable_baselines3")
    shutil.copy(PPO_ZIP, tmp_path / "m.zip")
    agent = agents.make(f"ppo:{tmp_path / 'm'}")
    assert type(agent.policy).__name__ == "PPO"


def _load_policy(path, algo):
    from agents.learned.saving import load_policy

    return load_policy(path, algo)


def test_a2c_refuses_a_ppo_zip_by_its_metadata() -> None:
    pytest.importorskip("stable_baselines3")
    with pytest.raises(ValueError, match=r"holds a PPO model .*not A2C.*'ppo:.*dagger-kg-s0\.zip'"):
        agents.make(f"a2c:{PPO_ZIP}")
    with pytest.raises(ValueError, match=r"holds a PPO model"):
        _load_policy(PPO_ZIP, "a2c")
    assert type(agents.make(f"ppo:{PPO_ZIP}").policy).__name__ == "PPO"


def _strip_metadata(src: Path, dest: Path) -> None:
    """``src`` without the ``topk_policy`` entry of its data (a plain SB3 save)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":
                obj = json.loads(data)
                obj.pop("topk_policy", None)
                data = json.dumps(obj).encode()
            zout.writestr(item, data)


def test_a2c_refuses_a_ppo_zip_by_its_sidecar(tmp_path) -> None:
    pytest.importorskip("stable_baselines3")
    _strip_metadata(PPO_ZIP, tmp_path / "m.zip")
    shutil.copy(PPO_ZIP.with_suffix(".json"), tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"holds a PPO model \(its metadata.*m\.json"):
        agents.make(f"a2c:{tmp_path / 'm.zip'}")


def test_a2c_refuses_a_plain_ppo_zip_by_its_data(tmp_path) -> None:
    """No metadata at all: the zip's data has PPO's own hyperparameters (clip_range)."""
    pytest.importorskip("stable_baselines3")
    _strip_metadata(PPO_ZIP, tmp_path / "m.zip")
    with pytest.raises(ValueError, match=r"holds a PPO model \(its saved hyperparameters"):
        agents.make(f"a2c:{tmp_path / 'm.zip'}")
    with pytest.raises(ValueError, match=r"holds a PPO model"):
        agents.make(f"dqn:{tmp_path / 'm.zip'}")


@pytest.mark.parametrize("algo", ["a2c", "dqn"])
def test_saved_algorithm_is_read_from_a_plain_sb3_save(tmp_path, algo) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    from agents.learned.metadata import saved_algo

    model = getattr(sb3, algo.upper())("MlpPolicy", "CartPole-v1", device="cpu")
    model.save(tmp_path / "m")
    assert saved_algo(tmp_path / "m.zip") == (algo, "its saved hyperparameters")


@pytest.mark.parametrize(
    ("algo", "policy"), [("recurrent_ppo", "MlpLstmPolicy"), ("maskable_ppo", "MlpPolicy")]
)
def test_saved_algorithm_is_read_from_an_sb3_contrib_policy_class(tmp_path, algo, policy) -> None:
    """sb3-contrib's PPO variants save PPO's hyperparameters (``clip_range``): only the
    policy class tells them from PPO."""
    contrib = pytest.importorskip("sb3_contrib")
    from agents.learned.metadata import saved_algo

    cls = {"recurrent_ppo": contrib.RecurrentPPO, "maskable_ppo": contrib.MaskablePPO}[algo]
    cls(policy, "CartPole-v1", n_steps=8, batch_size=8, device="cpu").save(tmp_path / "m")
    assert saved_algo(tmp_path / "m.zip") == (algo, "its policy class")


# -------------------------------------------- fixed confidence without a stop
def fc_env(env_id: str, **kw) -> gym.Env:
    base = {
        "n_arms": 6,
        "k": 2,
        "setting": "fixed_confidence",
        "instance": [0.9, 0.8, 0.3, 0.2, 0.1, 0.1],
    }
    if env_id == "TopK-Batch-v0":
        base |= {"batch_size": 1, "answer": "agent"}
    return gym.make(env_id, **(base | kw))


@pytest.mark.parametrize("env_id", ["TopK-v0", "TopK-Batch-v0"])
@pytest.mark.parametrize("name", ["bayes_ttts", "uniform"])
def test_agent_without_stopping_rule_is_refused_in_fixed_confidence(env_id, name) -> None:
    """Without ``max_batches`` the episode would never end (``max_steps`` only guards the
    test): the agent refuses in ``reset``, naming itself, the setting and the rule."""
    with pytest.raises(
        ValueError,
        match=rf"agent '{name}' has no stopping rule in fixed_confidence.*never end.*"
        r"set max_batches",
    ):
        agents.run_episode(fc_env(env_id), agents.make(name), seed=0, max_steps=2000)


def test_uniform_hint_names_rounds() -> None:
    with pytest.raises(ValueError, match=r"or give it rounds=N"):
        agents.run_episode(fc_env("TopK-Batch-v0"), agents.make("uniform"), seed=0, max_steps=100)


@pytest.mark.kernel_group("bayes_ttts")  # its compile (tests/_kernel_groups.py)
@pytest.mark.parametrize("env_id", ["TopK-v0", "TopK-Batch-v0"])
def test_truncation_or_a_stopping_rule_makes_them_playable(env_id) -> None:
    result = agents.run_episode(fc_env(env_id, max_batches=40), agents.make("bayes_ttts"), seed=0)
    assert result.truncated and result.batches == 40
    result = agents.run_episode(fc_env(env_id), agents.make("uniform", rounds=3), seed=0)
    assert result.terminated and not result.truncated and result.pulls == 18


def _fc_agents() -> list[str]:
    return [n for n in agents.available() if FIXED_CONFIDENCE in agents.agent_class(n).settings]


@pytest.mark.parametrize("name", _fc_agents())
def test_declared_stopping_matches_play(name) -> None:
    """Every registered fixed-confidence agent: declared to stop by itself => it ends an
    episode on an easy instance (gaps >= 0.1) before ``max_batches`` = 10^7 steps; declared
    not to => refused without ``max_batches``, and truncated with it."""
    cls = agents.agent_class(name)
    k = 1 if cls.k_values is not None and 2 not in cls.k_values else 2
    kw = {"k": k, "max_batches": 10**7}
    env = fc_env("TopK-Batch-v0", **kw)
    agent = agents.make(name)
    problem = env.unwrapped.problem
    if agent.stops_by_itself(problem):
        result = agents.run_episode(env, agent, seed=0)
        assert result.terminated and not result.truncated, name
    else:
        capped = fc_env("TopK-Batch-v0", **(kw | {"max_batches": 30}))
        assert agents.run_episode(capped, agent, seed=0).truncated
        with pytest.raises(ValueError, match="no stopping rule"):
            agents.run_episode(fc_env("TopK-Batch-v0", k=k, batch_size=1), agent, seed=0)


def test_the_agents_without_a_stopping_rule() -> None:
    """The list, so that a new agent's declaration is a visible change."""
    problem = fc_env("TopK-Batch-v0").unwrapped.problem
    never = [n for n in _fc_agents() if not agents.make(n).stops_by_itself(problem)]
    assert never == ["bayes_ttts", "uniform"]
    assert agents.make("uniform", rounds=5).stops_by_itself(problem)
