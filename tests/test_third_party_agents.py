"""A researcher's agent in a file of its own, outside the package, in every ``topk-bench``
command with no wrapper:

* named by import path ``module:Class`` in a config (and in ``agents.make``), checked by
  ``topk-bench check`` (import errors name the module, the class and the error);
* declared by an installed distribution in the entry-point group
  ``topk_bandit_envs.agents`` (a dist-info written to a temporary directory on
  ``sys.path``), listed by ``topk-bench list``;
* run by ``topk-bench run`` on the process backend (fork and spawn workers) and on Ray
  (the module is only on the parent's ``sys.path``: shipped as ``py_modules``), with
  the same rows everywhere, then ``compare`` and ``report``;
* the manifest and the report record where each class came from (module, file and its
  SHA-256, distribution and version, or a local module).

Two agents: a :class:`~agents.ScriptedAgent` subclass written as a Python generator of
``Pull`` requests, and a plain duck-typed class with ``reset``/``act``/``observe``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import agents
import agents.elimination.uniform
from agents import registry
from topk_bench.backends import ProcessBackend, local_agent_modules
from topk_bench.cli import main
from topk_bench.config import load
from topk_bench.episodes import TIMING_COLUMNS
from topk_bench.run import plan_chunks, run_experiment
from topk_bench.store import read_results

MODULE = "byo_thirdparty_algos"
MODULE_SOURCE = '''
"""Two agents written outside topk-bandit-envs."""

import numpy as np

from agents import Pull, ScriptedAgent


class GreedyHalf(ScriptedAgent):
    """Pull every arm ``warmup`` times, then one pull each of the 2k best empirical means
    while the budget allows; answer the empirical top k."""

    name = "greedy_half"
    settings = frozenset({"fixed_budget"})

    def __init__(self, warmup=2, *, seed=None):
        super().__init__(seed=seed)
        self.warmup = warmup

    def _run(self):
        n, k = self.problem.n_arms, self.problem.k
        yield Pull.each(range(n), self.warmup)
        width = min(n, 2 * k)
        while self.pulls_left() >= width:
            top = np.argsort(-self.means, kind="stable")[:width]
            yield Pull.each(top, 1)
        return self.current_answer()


class RandomArm:
    """No base class: one pull of a random arm per step; answer the top k means."""

    settings = frozenset({"fixed_budget"})

    def __init__(self, seed=None):
        self.seed = seed

    def reset(self, problem, *, seed=None):
        self.problem = problem
        self.rng = np.random.default_rng(seed)

    def act(self, observation):
        n, k = self.problem.n_arms, self.problem.k
        action = np.zeros(n, dtype=np.int64)
        if int(observation.get("phase", 0)) == 1:  # the answer step
            action[np.argsort(-np.asarray(observation["means"]), kind="stable")[:k]] = 1
        else:
            action[self.rng.integers(n)] = 1
        return action

    def observe(self, action, observation, reward, terminated, truncated, info):
        pass


def helper():
    return 1
'''

CONFIG = f"""
name = "byo"
metrics = ["aggregate_regret", "precision"]
runs = 4
env = {{ n_arms = 8, k = 2, budget = 64, instance = "uniform-random" }}

[[agents]]
name = "uniform"

[[agents]]
name = "{MODULE}:GreedyHalf"
label = "greedy"
params = {{ warmup = 3 }}

[[agents]]
name = "{MODULE}:RandomArm"
label = "random"

[[sweeps]]
vary = {{ k = [2, 3] }}
x = "k"
"""


def _forget(*modules: str) -> None:
    for name in modules:
        sys.modules.pop(name, None)
    registry.refresh_entry_points()


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A directory on ``sys.path`` (not on ``PYTHONPATH``) holding :data:`MODULE`."""
    root = tmp_path / "plugins"
    root.mkdir()
    (root / f"{MODULE}.py").write_text(MODULE_SOURCE)
    (root / "byo_broken_module.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(root))
    _forget(MODULE, "byo_broken_module")
    yield root
    _forget(MODULE, "byo_broken_module")


@pytest.fixture
def config(plugin, tmp_path) -> Path:
    path = tmp_path / "byo.toml"
    path.write_text(CONFIG)
    return path


def _rows(out: Path):
    return read_results(out).drop(columns=list(TIMING_COLUMNS))


# ---------------------------------------------------------------- import paths
def test_make_by_import_path(plugin) -> None:
    agent = agents.make(f"{MODULE}:GreedyHalf", warmup=3)
    assert type(agent).__name__ == "GreedyHalf" and agent.warmup == 3
    assert agents.agent_class(f"{MODULE}:RandomArm").__name__ == "RandomArm"
    assert registry.agent_origin(f"{MODULE}:RandomArm") == "import path"


def test_import_errors_name_module_class_and_error(plugin) -> None:
    with pytest.raises(
        registry.AgentImportError,
        match=r"cannot import class 'X' from module 'byo_no_such_module': "
        r"ModuleNotFoundError: .*not on the Python path.*PYTHONPATH",
    ):
        agents.make("byo_no_such_module:X")
    with pytest.raises(
        registry.AgentImportError,
        match=rf"cannot import class 'Nope' from module '{MODULE}': AttributeError",
    ):
        agents.make(f"{MODULE}:Nope")
    with pytest.raises(
        registry.AgentImportError,
        match=r"from module 'byo_broken_module': RuntimeError: boom at import",
    ):
        agents.make("byo_broken_module:Agent")
    with pytest.raises(TypeError, match=rf"{MODULE}:helper is not an agent class"):
        agents.make(f"{MODULE}:helper")
    with pytest.raises(ValueError, match=rf"write 'module:Class' \(e.g. '{MODULE}:GreedyHalf'\)"):
        agents.make(f"{MODULE}.GreedyHalf")


def test_register_keeps_working_and_rejects_bad_targets(plugin, monkeypatch) -> None:
    monkeypatch.setitem(registry._REGISTRY, "byo_greedy", f"{MODULE}:GreedyHalf")
    assert "byo_greedy" in agents.available()
    assert registry.agent_origin("byo_greedy") == "registered"
    assert type(agents.make("byo_greedy")).__name__ == "GreedyHalf"
    with pytest.raises(ValueError, match=r"'GreedyHalf' must be an import path"):
        agents.register("byo_bad", "GreedyHalf")


def test_check_validates_and_shows_where_agents_come_from(config, plugin, capsys) -> None:
    assert main(["check", str(config)]) == 0
    out = capsys.readouterr().out
    assert "agent uniform: agents.elimination.uniform.Uniform (built-in;" in out
    assert (
        f"agent greedy: {MODULE}.GreedyHalf (import path; local module (no installed "
        f"distribution); {plugin / (MODULE + '.py')})"
    ) in out
    assert f"agent random: {MODULE}.RandomArm (import path;" in out


@pytest.mark.parametrize(
    "name, message",
    [
        ("byo_no_such_module:X", "cannot import class 'X' from module 'byo_no_such_module'"),
        (f"{MODULE}:Nope", f"cannot import class 'Nope' from module '{MODULE}'"),
        (f"{MODULE}:helper", "is not an agent class"),
        ("byo_broken_module:A", "RuntimeError: boom at import"),
        ("greedy_half", "unknown agent 'greedy_half'"),
    ],
)
def test_check_refuses_agents_that_do_not_import(plugin, tmp_path, capsys, name, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG.replace(f"{MODULE}:GreedyHalf", name))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "config error: agents[1].name:" in err and message in err


def test_params_of_a_third_party_agent_are_checked(plugin) -> None:
    cfg = {
        "name": "p",
        "metrics": ["aggregate_regret"],
        "runs": 1,
        "env": {"n_arms": 6, "k": 2, "budget": 30},
        "agents": [{"name": f"{MODULE}:GreedyHalf", "params": {"warmpu": 3}}],
        "sweeps": [{"vary": {"k": [2]}}],
    }
    with pytest.raises(Exception, match=r"agents\[0\]\.params\.warmpu: unknown parameter"):
        load(cfg)


# ------------------------------------------------------------------ running
def test_run_compare_report_on_process_workers(config, plugin, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    argv = ["run", str(config), "--out", str(out), "--no-progress", "--no-report"]
    assert main([*argv, "--jobs", "2"]) == 0
    rows = _rows(out)
    assert sorted(set(rows["agent"])) == ["greedy", "random", "uniform"]
    assert len(rows) == 3 * 2 * 4
    assert set(rows[rows["agent"] == "greedy"]["pulls"]) <= set(range(60, 65))

    # the same rows in-process (serial): seeds reach the duck-typed agent's reset too
    serial = tmp_path / "serial"
    assert main(["run", str(config), "--out", str(serial), "--no-progress", "--no-report",
                 "--jobs", "1"]) == 0  # fmt: skip
    assert rows.equals(_rows(serial))
    random_rows = rows[rows["agent"] == "random"]
    assert random_rows["recommendation"].nunique() > 1  # seeded, but not all one episode

    manifest = json.loads((out / "manifest.json").read_text())
    sources = {a["label"]: a["source"] for a in manifest["agents"]}
    file = plugin / f"{MODULE}.py"
    greedy = sources["greedy"]
    assert greedy["origin"] == "import path" and greedy["target"] == f"{MODULE}:GreedyHalf"
    assert greedy["class"] == f"{MODULE}.GreedyHalf" and greedy["module"] == MODULE
    assert greedy["file"] == str(file)
    assert greedy["sha256"] == hashlib.sha256(file.read_bytes()).hexdigest()
    assert greedy["local"] is True and greedy["distribution"] is None
    assert sources["random"]["class"] == f"{MODULE}.RandomArm"
    assert sources["uniform"]["origin"] == "built-in"
    assert sources["uniform"]["file"] == os.path.abspath(agents.elimination.uniform.__file__)

    capsys.readouterr()
    assert main(["compare", str(out), "--baseline", "uniform", "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "greedy" in text and "random" in text

    assert main(["report", str(out), "--resamples", "200"]) == 0
    html = (out / "report.html").read_text()
    assert "<h3>Agents</h3>" in html
    assert f"{MODULE}.GreedyHalf" in html and f"{MODULE}.RandomArm" in html
    assert str(file) in html and "local module (no installed distribution)" in html
    assert greedy["sha256"][:16] in html


def test_spawned_workers_build_registered_agents_from_their_target(plugin, tmp_path) -> None:
    """A name registered at run time is unknown to a spawned worker: the chunk carries the
    class's ``module:Class``, and the module is on the worker's ``sys.path``."""
    registry.register("byo_greedy_spawn", f"{MODULE}:GreedyHalf")
    try:
        cfg = {
            "name": "spawn",
            "metrics": ["aggregate_regret"],
            "runs": 3,
            "env": {"n_arms": 6, "k": 2, "budget": 36, "instance": "uniform-random"},
            "agents": [{"name": "byo_greedy_spawn"}, {"name": f"{MODULE}:RandomArm"}],
            "sweeps": [{"vary": {"k": [2]}}],
        }
        exp = load(cfg)
        assert {c.agent_target for c in plan_chunks(exp)} == {
            f"{MODULE}:GreedyHalf",
            f"{MODULE}:RandomArm",
        }
        backend = ProcessBackend(2, start_method="spawn")
        run_experiment(exp, tmp_path / "spawn", backend=backend, chunk_size=1, progress=False)
        run_experiment(exp, tmp_path / "serial", jobs=1, progress=False)
        assert _rows(tmp_path / "spawn").equals(_rows(tmp_path / "serial"))
    finally:
        registry._REGISTRY.pop("byo_greedy_spawn", None)


def test_local_modules_shipped_to_ray(config, plugin) -> None:
    exp = load(config)
    assert local_agent_modules(plan_chunks(exp)) == [str(plugin / f"{MODULE}.py")]


@pytest.mark.ray
@pytest.mark.parametrize("started_by", ["backend", "caller"])
def test_ray_workers_import_the_third_party_module(
    config, plugin, tmp_path, monkeypatch, started_by
) -> None:
    """The module is only on the parent's ``sys.path``: shipped as the job's
    ``py_modules`` when the backend starts Ray, put on the tasks' ``PYTHONPATH`` in a
    job the caller started."""
    ray = pytest.importorskip("ray")
    from topk_bench.backends import RayBackend

    assert str(plugin) not in os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    exp = load(config)
    run_experiment(exp, tmp_path / "process", jobs=2, progress=False)
    if started_by == "caller":
        ray.init(num_cpus=2, include_dashboard=False)
    try:
        report = run_experiment(
            exp, tmp_path / "ray", backend=RayBackend(jobs=2), chunk_size=2, progress=False
        )
        assert started_by == "caller" or not ray.is_initialized()  # the backend stopped it
    finally:
        ray.shutdown()
    assert report.ran == len(exp.pairs()) * exp.runs
    assert _rows(tmp_path / "ray").equals(_rows(tmp_path / "process"))


# -------------------------------------------------------------- entry points
EP_MODULE = "byo_entry_point_algos"


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution ``byo-algos 0.3`` "installed" in a directory on ``sys.path``: a
    dist-info with ``entry_points.txt`` declaring ``byo_greedy`` and ``uniform``, and its
    module (the way pip lays out a wheel)."""
    site = tmp_path / "site"
    info = site / "byo_algos-0.3.dist-info"
    info.mkdir(parents=True)
    (site / f"{EP_MODULE}.py").write_text(MODULE_SOURCE)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: byo-algos\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            f"""\
            [topk_bandit_envs.agents]
            byo_greedy = {EP_MODULE}:GreedyHalf
            byo_random = {EP_MODULE}:RandomArm
            uniform = {EP_MODULE}:RandomArm
            """
        )
    )
    (info / "top_level.txt").write_text(f"{EP_MODULE}\n")
    (info / "RECORD").write_text(
        f"{EP_MODULE}.py,,\n"
        + "".join(
            f"byo_algos-0.3.dist-info/{f},,\n"
            for f in ("METADATA", "entry_points.txt", "top_level.txt", "RECORD")
        )
    )
    monkeypatch.syspath_prepend(str(site))
    _forget(EP_MODULE)
    yield site
    _forget(EP_MODULE)


def test_entry_points_are_discovered_lazily_and_listed(installed, capsys) -> None:
    with pytest.warns(RuntimeWarning, match=r"'uniform' .* of byo-algos 0.3 is shadowed"):
        names = agents.available()
    assert {"byo_greedy", "byo_random"} <= set(names)
    assert registry.agent_origin("byo_greedy") == "entry point"
    assert registry.agent_origin("uniform") == "built-in"  # built-in names come first
    assert type(agents.make("uniform")).__name__ == "Uniform"
    assert type(agents.make("byo_greedy", warmup=1)).__name__ == "GreedyHalf"
    source = registry.agent_source("byo_greedy")
    assert source["distribution"] == "byo-algos" and source["version"] == "0.3"
    assert source["entry_point_of"] == "byo-algos 0.3" and "local" not in source
    assert source["file"] == str(installed / f"{EP_MODULE}.py")

    assert main(["list", "--agents"]) == 0
    out = capsys.readouterr().out
    assert re.search(
        rf"byo_greedy +{EP_MODULE}\.GreedyHalf  \[fixed_budget\]  "
        r"\(entry point of byo-algos 0\.3\)",
        out,
    )
    assert "agents.elimination.uniform.Uniform  [fixed_budget, fixed_confidence]  (built-in)" in out


def test_entry_point_agents_run_with_their_version_recorded(installed, tmp_path) -> None:
    cfg = {
        "name": "ep",
        "metrics": ["aggregate_regret"],
        "runs": 2,
        "env": {"n_arms": 6, "k": 2, "budget": 36, "instance": "uniform-random"},
        "agents": [{"name": "byo_greedy"}, {"name": "byo_random"}],
        "sweeps": [{"vary": {"k": [2]}}],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exp = load(cfg)
    assert local_agent_modules(plan_chunks(exp)) == []  # installed: nothing to ship
    out = tmp_path / "out"
    run_experiment(exp, out, jobs=2, progress=False)
    assert len(read_results(out)) == 4
    manifest = json.loads((out / "manifest.json").read_text())
    greedy = manifest["agents"][0]["source"]
    assert greedy["origin"] == "entry point" and greedy["target"] == f"{EP_MODULE}:GreedyHalf"
    assert (greedy["distribution"], greedy["version"]) == ("byo-algos", "0.3")
    assert main(["report", str(out), "--resamples", "200"]) == 0
    html = (out / "report.html").read_text()
    assert "entry point of byo-algos 0.3" in html and "byo-algos 0.3</td>" in html


def test_entry_points_through_a_patched_importlib(monkeypatch, plugin) -> None:
    """The discovery reads ``importlib.metadata.entry_points(group=...)`` once, lazily."""
    from importlib.metadata import EntryPoint

    calls = []

    def fake(**params):
        calls.append(params)
        return [EntryPoint("byo_fake", f"{MODULE}:GreedyHalf", registry.ENTRY_POINT_GROUP)]

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", fake)
    registry.refresh_entry_points()
    try:
        agents.make("uniform")
        agents.make(f"{MODULE}:GreedyHalf")
        assert calls == []  # built-in names and import paths need no discovery
        assert type(agents.make("byo_fake")).__name__ == "GreedyHalf"
        assert "byo_fake" in agents.available()
        assert calls == [{"group": "topk_bandit_envs.agents"}]
        source = registry.agent_source("byo_fake")
        assert source["origin"] == "entry point" and source["local"] is True
        assert source["entry_point_of"] == "an unknown distribution"
    finally:
        registry.refresh_entry_points()


def test_manifest_warns_when_an_agent_class_changed(config, plugin, tmp_path) -> None:
    from topk_bench.store import StoreWarning

    out = tmp_path / "out"
    run_experiment(load(config, runs=1), out, jobs=1, progress=False)
    module = plugin / f"{MODULE}.py"
    module.write_text(module.read_text() + "\n# edited\n")
    with pytest.warns(StoreWarning) as record:
        run_experiment(load(config, runs=2), out, jobs=1, progress=False)
    changed = sorted(str(w.message).split("agent ")[1].split(" ")[0] for w in record)
    assert changed == ["'greedy'", "'random'"]  # both classes live in the edited file
    assert all("changed since its earlier episodes (sha256 " in str(w.message) for w in record)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["agents"][1]["source"]["sha256"] == hashlib.sha256(module.read_bytes()).hexdigest()
    )


def test_class_source_of_an_installed_distribution() -> None:
    import importlib.metadata

    import numpy as np

    source = registry.class_source(np.random.Generator)
    assert source["distribution"] == "numpy" and "local" not in source
    assert source["version"] == importlib.metadata.version("numpy")
    assert source["file"] == os.path.abspath(sys.modules[np.random.Generator.__module__].__file__)
