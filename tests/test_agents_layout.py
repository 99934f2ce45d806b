"""The layers of ``agents/``: every import points down, families stay apart, no cycles.

Layers, lowest first (``agents/__init__.py`` and the README describe them):

1. ``agents.engine``: the compiled engine and its data structures, in the order of
   :data:`ENGINE_ORDER` (each module imports only earlier ones);
2. the protocol: ``agents.base`` (``Agent``, ``ScriptedAgent``, the requests) and
   ``agents.scheduling`` (RoundRobin as a NumPy function);
3. the algorithm families, one subpackage each (:data:`FAMILIES`), none importing another;
4. playing: ``agents.registry`` and ``agents.runner``;
5. ``agents.zero_shot``: one agent built on two families (``glr``, ``bayesian``) and
   fitted by playing episodes (``agents.runner``);
6. ``agents.learned`` (its own order is checked by ``tests/test_learned_layout.py``);
7. the package ``agents`` itself (the public names).

Imports are read at any depth (function bodies too), so a lazy import that runs back up
fails here as well.
"""

from __future__ import annotations

import pytest
from _import_graph import MODULES, cycles, graph

import agents

#: The engine's modules, lowest first (``agents.engine`` is the package's public facade).
ENGINE_ORDER = [
    "agents.engine.dispatch",
    "agents.engine.frame",
    "agents.engine.context",
    "agents.engine.selection",
    "agents.engine.scheduler",
    "agents.engine.serving",
    "agents.engine.stepping",
    "agents.engine",
    "agents.engine.confidence",
    "agents.engine.order_stats",
    "agents.engine.count_buckets",
    "agents.engine.lowest_level",
    "agents.engine.level_bounds",
    "agents.engine.beta_math",
    "agents.engine.normal_math",
    "agents.engine.posterior_top_set",
]
FAMILIES = ["elimination", "lucb", "glr", "bayesian", "pac"]
LAYERS = ["engine", "protocol", "families", "playing", "zero_shot", "learned", "package"]


GRAPH = graph()


def layer(name: str) -> str:
    """The layer of module ``name``."""
    parts = name.split(".")
    if name == "agents":
        return "package"
    if parts[1] == "engine":
        return "engine"
    if name in ("agents.base", "agents.scheduling"):
        return "protocol"
    if parts[1] in FAMILIES:
        return "families"
    if name in ("agents.registry", "agents.runner"):
        return "playing"
    if parts[1] == "zero_shot":
        return "zero_shot"
    if parts[1] == "learned":
        return "learned"
    raise AssertionError(f"{name} belongs to no layer: place it in one (and in this test)")


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        layer(name)
    assert set(ENGINE_ORDER) == {m for m in MODULES if layer(m) == "engine"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name: str) -> None:
    here = LAYERS.index(layer(name))
    for target in sorted(GRAPH[name]):
        there = LAYERS.index(layer(target))
        if there < here:
            continue
        assert there == here, (
            f"{name} ({layer(name)}) imports {target} ({layer(target)}): an arrow up"
        )
        if layer(name) == "engine":
            assert ENGINE_ORDER.index(target) < ENGINE_ORDER.index(name), (
                f"{name} imports {target}, which comes after it in the engine's order"
            )
        elif layer(name) == "families":
            assert name.split(".")[1] == target.split(".")[1], (
                f"{name} imports {target}: algorithm families do not import each other"
            )
        elif layer(name) == "protocol" or layer(name) == "playing":
            raise AssertionError(f"{name} imports {target}, a module of its own layer")


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


#: registered agents built on several families (their own layer).
COMPOSITES = {"zero_shot": "agents.zero_shot.agent"}


def test_every_registered_agent_lives_in_a_family() -> None:
    for name in agents.available():
        module = agents.agent_class(name).__module__
        if name in COMPOSITES:
            assert module == COMPOSITES[name]
            continue
        assert layer(module) == "families", f"agent {name!r} lives in {module}, outside a family"
