"""Config schema, expressions, agent filtering and shipped configs of topk_bench."""

from __future__ import annotations

import copy
import math

import pytest

from topk_bench import expressions
from topk_bench.config import load, read_config, shipped
from topk_bench.schema import ConfigError

BASE = {
    "name": "t",
    "metrics": ["aggregate_regret"],
    "runs": 2,
    "env": {"n_arms": 10, "k": 2, "instance": "zhou2014-two-level"},
    "agents": [{"name": "uniform"}],
    "sweeps": [{"panel": "p", "vary": {"budget": [100, 200]}, "x": "budget"}],
}


def cfg(**changes):
    out = copy.deepcopy(BASE)
    out.update(changes)
    return out


def error_of(config, **kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load(config, **kwargs)
    return str(info.value)


def test_minimal_config_loads():
    exp = load(cfg())
    assert [p.x_value for p in exp.points] == [100, 200]
    assert [p.env_kwargs["budget"] for p in exp.points] == [100, 200]
    # runner defaults: agent's answer scored, paired rewards, standard model
    env = exp.points[0].env_kwargs
    assert env["answer"] == "agent" and env["paired"] is True and env["batch_size"] is None
    assert len(exp.pairs()) == 2


@pytest.mark.parametrize(
    "config, key",
    [
        (cfg(colour="red"), "colour"),
        (cfg(runs=0), "runs"),
        (cfg(runs="many"), "runs"),
        (cfg(metrics=["regret"]), "metrics[0]"),
        (cfg(agents=[{"name": "uniform", "parms": {}}]), "agents[0].parms"),
        (cfg(agents=[{"params": {}}]), "agents[0].name"),
        (cfg(agents=[{"name": "uniform", "params": {"roundz": 3}}]), "agents[0].params.roundz"),
        (cfg(agents=[{"name": "uniform", "params": {"rounds": 0}}]), "agents[0].params"),
        (cfg(agents=[{"name": "uniform", "params": {"seed": 3}}]), "agents[0].params.seed"),
        (cfg(agents=[{"name": "no_such_agent"}]), "agents[0].name"),
        (cfg(agents=[{"name": "uniform"}, {"name": "uniform"}]), "agents[1].label"),
        (cfg(sweeps=[{"vary": {"budget": [100]}, "xx": "budget"}]), "sweeps[0].xx"),
        (cfg(sweeps=[{"vary": {"budget": 100}}]), "sweeps[0].vary.budget"),
        (cfg(sweeps=[{"vary": {"budget": [100]}, "x": "k"}]), "sweeps[0].x"),
        (cfg(sweeps=[{"zip": {"budget": [100, 200], "k": [2]}}]), "sweeps[0].zip"),
        (cfg(sweeps=[{"vary": {"budget": [5]}}]), "sweeps[0]"),  # budget < n_arms
        (cfg(sweeps=[{"vary": {"budget": ["=20*m"]}}]), "sweeps[0].env.budget"),
        (cfg(sweeps=[{"vary": {"budget": ["=__import__('os')"]}}]), "sweeps[0].env.budget"),
        (cfg(sweeps=[{"agents": ["nobody"], "vary": {"budget": [100]}}]), "sweeps[0].agents"),
        (cfg(sweeps=[{"env": {"instance": "nope"}, "vary": {"budget": [100]}}]), "sweeps[0]"),
        (cfg(sweeps=[], points=[]), "sweeps/points"),
        (cfg(points=[{"label": "a"}, {"label": "a"}], sweeps=[]), "points[1]"),
        (
            cfg(
                env={"setting": "fixed_confidence", "n_arms": 10, "k": 2, "repeat_limit": 1},
                sweeps=[{"vary": {"k": [2]}}],
            ),
            "env.max_batches",
        ),
        (cfg(plot={"kind": "pie"}), "plot.kind"),
        (cfg(reduced={"runz": 1}), "reduced.runz"),
        (cfg(data={"required": True}), "data"),
    ],
)
def test_bad_config_names_the_key(config, key):
    message = error_of(config)
    assert key in message, message


def test_reduced_without_table_and_unknown_vary_key():
    assert "reduced" in error_of(cfg(), reduced=True)
    assert "reduced.vary.k" in error_of(cfg(reduced={"vary": {"k": [1]}}), reduced=True)


def test_reduced_overrides():
    exp = load(
        cfg(reduced={"runs": 1, "env": {"n_arms": 20}, "vary": {"budget": [40]}}), reduced=True
    )
    assert exp.runs == 1 and exp.reduced
    assert [p.env_kwargs["n_arms"] for p in exp.points] == [20]
    assert [p.env_kwargs["budget"] for p in exp.points] == [40]


def test_expressions_and_labels():
    exp = load(
        cfg(
            env={
                "instance": "shahrampour2017-setup1",
                "n_arms": 50,
                "objective": "misidentification",
            },
            sweeps=[
                {
                    "panel": "M = {k}",
                    "vary": {"k": [2, "=n//25"]},
                    "zip": {"budget": ["=ceil(h1)"], "_T": ["H1"]},
                }
            ],
        )
    )
    assert [p.env_kwargs["budget"] for p in exp.points] == [1250, 1250]  # float noise of H1 ignored
    assert [p.env_kwargs["k"] for p in exp.points] == [2, 2]
    assert exp.points[0].panel == "M = 2" and exp.points[1].panel == "M = n//25"
    assert exp.points[0].label != exp.points[1].label
    assert exp.points[0].x == exp.points[0].label and math.isnan(exp.points[0].x_value)


def test_expression_evaluator():
    assert expressions.evaluate("=ceil(2.5) + 20*n", {"n": 3}) == 63
    assert expressions.evaluate("=n/4", {"n": 10}) == 2.5
    calls = []
    assert expressions.evaluate("=1", {"h1": lambda: calls.append(1)}) == 1 and not calls
    for bad in ("=n.__class__", "=open('x')", "=[1]", "=n if n else 1", "=True"):
        with pytest.raises(expressions.ExpressionError):
            expressions.evaluate(bad, {"n": 1})


def test_settings_filter_warns_and_skips():
    messages = []
    exp = load(
        cfg(
            env={
                "n_arms": 10,
                "k": 2,
                "instance": "zhou2014-two-level",
                "setting": "fixed_confidence",
                "max_batches": 50,
                "repeat_limit": 1,
                "budget": "none",
            },
            agents=[{"name": "uniform"}, {"name": "sar"}],
            sweeps=[{"vary": {"k": [2]}}],
        ),
        warn=messages.append,
    )
    assert exp.points[0].agents == ("uniform",)
    assert any("'sar' cannot play fixed_confidence" in m for m in messages)


def test_unimplemented_agent_is_skipped(monkeypatch):
    import agents.registry

    monkeypatch.setitem(agents.registry._REGISTRY, "not_written_yet", "agents.not_written_yet:Nope")
    messages = []
    exp = load(cfg(agents=[{"name": "uniform"}, {"name": "not_written_yet"}]), warn=messages.append)
    assert [a.label for a in exp.agents] == ["uniform"]
    assert any("not_written_yet" in m and "skipped" in m for m in messages)
    only_missing = cfg(agents=[{"name": "not_written_yet"}])
    assert "agents" in error_of(only_missing)


def test_yaml_equals_toml(tmp_path):
    yaml = pytest.importorskip("yaml")
    toml_text = """
name = "t"
metrics = ["aggregate_regret"]
runs = 2
env = { n_arms = 10, k = 2, instance = "zhou2014-two-level", batch_size = "none" }
[[agents]]
name = "uniform"
[[sweeps]]
vary = { budget = [100, 200] }
x = "budget"
"""
    (tmp_path / "c.toml").write_text(toml_text)
    data, _ = read_config(tmp_path / "c.toml")
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    a, b = load(tmp_path / "c.toml"), load(tmp_path / "c.yaml")
    assert a.describe()["points"] == b.describe()["points"]
    (tmp_path / "bad.toml").write_text("name = \n")
    assert "cannot parse" in error_of(tmp_path / "bad.toml")
    assert "neither a config file" in error_of("no-such-experiment")


def test_shipped_experiments_load_in_both_modes(tmp_path):
    names = set(shipped())
    expected = {
        "jun2016-table1",
        "jun2016-virus",
        "zhou2014-fig1",
        "shahrampour2017-fig2",
        "jiang2017-fig1",
        "zhou2014-rte",
        "shahrampour2017-captions",
        "quick",
    } | {f"chen2017-fig{i}" for i in range(1, 5)}
    assert expected <= names
    for name in ("jun2016-table1", "shahrampour2017-fig2", "chen2017-fig2", "quick"):
        full, red = load(name), load(name, reduced=True)
        assert red.runs < full.runs
    exp = load("shahrampour2017-fig2")
    assert exp.runs == 4000 and len(exp.points) == 12
    assert load("chen2017-fig1").runs == 200 and load("jun2016-table1").runs == 10
    # real-data experiments need --data, and say so
    assert "--data" in error_of("zhou2014-rte")
    csv = tmp_path / "w.csv"
    csv.write_text(
        "worker_id,n_answers,n_correct\n" + "".join(f"w{i},10,{i % 10}\n" for i in range(120))
    )
    exp = load("zhou2014-rte", data=csv, reduced=True)
    assert exp.points[0].env_kwargs["instance_params"]["path"] == str(csv)
    assert "takes no data" in error_of("quick", data=csv)


def test_the_main_job_puts_a_learned_row_beside_the_papers_agents():
    """README's first command: ``quick`` plays the fitted ``zero_shot`` beside the papers'
    scripted agents, and its label says which row is learned."""
    labels = {a.name: a.label for a in load("quick").agents}
    assert labels["zero_shot"] == "zero_shot (learned)"
    assert {"optmai", "sar", "nsar", "halving", "uniform"} <= set(labels)
    assert [n for n, label in labels.items() if "learned" in label] == ["zero_shot"]


def test_common_seeds_give_every_point_of_a_sweep_the_same_episodes():
    from topk_bench.run import plan_chunks
    from topk_bench.seeds import env_seed

    common = cfg(
        sweeps=[
            {"panel": "p", "vary": {"budget": [100, 200]}, "x": "budget", "common_seeds": True},
            {"panel": "q", "vary": {"budget": [100, 200]}, "x": "budget"},
        ]
    )
    exp = load(common)
    p100, p200, q100, q200 = exp.points
    assert p100.seed_name == p200.seed_name != p100.label
    assert q100.seed_name == q100.label and q200.seed_name == q200.label
    assert env_seed("t", p100.seed_name, 0) == env_seed("t", p200.seed_name, 0)
    assert env_seed("t", q100.seed_name, 0) != env_seed("t", q200.seed_name, 0)
    seeds = {
        (c.point, r): s for c in plan_chunks(exp) for r, s in zip(c.runs, c.env_seeds, strict=True)
    }
    for r in (0, 1):
        assert seeds[(p100.label, r)] == seeds[(p200.label, r)]
        assert seeds[(q100.label, r)] != seeds[(q200.label, r)]
    assert seeds[(p100.label, 0)] != seeds[(p100.label, 1)]
    assert "seed_label" in exp.describe()["points"][0]
    assert "seed_label" not in exp.describe()["points"][2]  # manifests of other sweeps unchanged
    bad = cfg(sweeps=[{"panel": "p", "vary": {"budget": [100]}, "common_seeds": "yes"}])
    assert "common_seeds" in error_of(bad)


def test_distribution_filter_warns_and_skips():
    """Beta-Bernoulli agents (kg) are left out of Gaussian points, with a warning."""
    messages = []
    exp = load(
        cfg(
            agents=[{"name": "uniform"}, {"name": "kg"}],
            sweeps=[],
            points=[
                {"label": "bern", "env": {"instance": "zhou2014-two-level", "budget": 100}},
                {"label": "gauss", "env": {"instance": "jiang2017-1-sparse", "budget": 100}},
            ],
        ),
        warn=messages.append,
    )
    by_label = {p.label: p.agents for p in exp.points}
    assert by_label == {"bern": ("uniform", "kg"), "gauss": ("uniform",)}
    assert any("'kg' plays only bernoulli rewards" in m for m in messages)


def test_sweeps_can_vary_an_agent_parameter():
    """``vary = {"agent.delta" = [...]}``: one point per value, the value set on every agent."""
    exp = load(
        cfg(
            env={
                "n_arms": 6,
                "k": 2,
                "setting": "fixed_confidence",
                "max_batches": 100,
                "repeat_limit": 1,
                "budget": "none",
                "instance": "zhou2014-two-level",
            },
            agents=[{"name": "lucb", "label": "LUCB"}, {"name": "eb_tc", "label": "EB-TC"}],
            sweeps=[{"panel": "p", "vary": {"agent.delta": [0.1, 0.01]}, "x": "agent.delta"}],
        )
    )
    assert [p.x_value for p in exp.points] == [0.1, 0.01]
    assert [dict(p.agent_params) for p in exp.points] == [{"delta": 0.1}, {"delta": 0.01}]
    assert "delta" not in exp.points[0].env_kwargs
    from topk_bench.run import plan_chunks

    deltas = {(c.point, c.agent): c.agent_params["delta"] for c in plan_chunks(exp)}
    assert set(deltas.values()) == {0.1, 0.01} and len(deltas) == 4
    assert exp.describe()["points"][1]["agent_params"] == {"delta": 0.01}


def test_agent_parameter_sweep_rejects_agents_without_it():
    msg = error_of(
        cfg(
            agents=[{"name": "uniform"}],
            sweeps=[{"panel": "p", "vary": {"agent.delta": [0.1]}}],
        )
    )
    assert "agent.delta" in msg and "'uniform'" in msg


def test_plot_options_are_checked():
    assert "plot.binary_ci" in error_of(cfg(plot={"binary_ci": "exact"}))
    assert "plot.diagonal[0]" in error_of(cfg(plot={"diagonal": ["nope"]}))


def test_source_survives_skipped_agents():
    """An agent skipped at some points (k = 1 only here) leaves ``source`` the config's path.

    (The skip warnings reused the variable holding the path: the manifest's ``source`` was
    a list of point labels and ``topk-bench report`` failed on it.)
    """
    messages: list[str] = []
    exp = load("delta-calibration", reduced=True, warn=messages.append)
    assert messages, "the test needs an experiment with skipped agents"
    assert isinstance(exp.source, str) and exp.source.endswith("delta-calibration.toml")
    assert exp.describe()["source"] == exp.source
