"""agents.learned: one concern per module, layered, no import cycle."""

from __future__ import annotations

import subprocess
import sys

from _import_graph import ROOT, cycles, graph

import agents.learned

#: The documented order (agents/learned/__init__.py): each module imports only earlier ones.
ORDER = [
    "families",
    "metadata",
    "adapter",
    "algos",
    "networks",
    "vec_env",
    "saving",
    "evaluation",
    "callbacks",
    "imitation",
    "exact",
    "training",
    "fast",
    "cli",
]
#: Subpackages (one layer each: their modules import only earlier layers and each other).
PACKAGES = {"fast"}


def _layer(module: str) -> str:
    """``agents.learned.X`` or ``agents.learned.X.Y`` -> ``X``."""
    return module.split(".")[2]


def test_every_module_is_in_the_documented_order() -> None:
    found = {p.stem for p in (ROOT / "learned").glob("*.py")} - {"__init__"}
    found |= {p.parent.name for p in (ROOT / "learned").glob("*/__init__.py")}
    assert found == set(ORDER)
    for name in ORDER:
        assert f"``{name}``" in agents.learned.__doc__


def test_no_import_cycle_through_the_learned_code() -> None:
    edges = graph()
    ours = {f"agents.learned.{m}" for m in ORDER} | {"agents.learned", "agents.registry"}
    bad = [c for c in cycles(edges) if ours & set(c)]
    assert bad == []
    # the layering: a module imports only modules before it in ORDER
    for i, name in enumerate(ORDER):
        own = [
            m
            for m in edges
            if m == f"agents.learned.{name}"
            or (name in PACKAGES and m.startswith(f"agents.learned.{name}."))
        ]
        deps = {_layer(m) for src in own for m in edges[src] if "learned." in m} - {name}
        assert deps <= set(ORDER[:i]), (name, deps - set(ORDER[:i]))


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_imports_in_a_fresh_interpreter_load_only_earlier_modules() -> None:
    """Import the modules in order; each import loads no later module of the subpackage."""
    code = f"""
import sys
order = {ORDER!r}
import agents  # loads agents.learned.adapter (agents.PolicyAgent), nothing heavy
assert "torch" not in sys.modules and "stable_baselines3" not in sys.modules, "agents is light"
before = set(sys.modules)
for i, name in enumerate(order):
    __import__("agents.learned." + name)
    later = [m for m in order[i + 1:] if "agents.learned." + m in set(sys.modules) - before]
    assert not later, (name, later)
import agents.learned as learned
from agents.learned.adapter import PolicyAgent
from agents.learned.saving import load_policy
from agents.learned.training import train
assert agents.PolicyAgent is PolicyAgent is learned.PolicyAgent
assert learned.train is train and learned.load_policy is load_policy
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
