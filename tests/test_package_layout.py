"""The layers of ``topk_bench`` and ``bandit_envs``: no import cycle, and the runner never
imports the experiments' generators (``topk_bench.experiments``).

Imports are read at any depth (function bodies too), so a lazy import that runs back up
fails here as well. ``agents`` has its own layout tests (``test_agents_layout.py``).
"""

from __future__ import annotations

import pytest
from _import_graph import cycles, graph, package_modules

BENCH = package_modules("topk_bench")
ENVS = package_modules("bandit_envs")
EXPERIMENTS = "topk_bench.experiments"


def is_experiment(name: str) -> bool:
    return name == EXPERIMENTS or name.startswith(EXPERIMENTS + ".")


@pytest.mark.parametrize("modules", [BENCH, ENVS], ids=["topk_bench", "bandit_envs"])
def test_no_import_cycle(modules) -> None:
    assert cycles(graph(modules)) == []


def test_the_runner_never_imports_an_experiment() -> None:
    edges = graph(BENCH)
    runner = sorted(m for m in BENCH if not is_experiment(m))
    bad = {m: sorted(t for t in edges[m] if is_experiment(t)) for m in runner}
    assert {m: t for m, t in bad.items() if t} == {}


def test_the_generators_live_in_the_experiments_layer() -> None:
    generators = {"rl_baselines", "rl_plan", "rl_tuning", "learned_batch", "learned_stopping"}
    assert {m.rsplit(".", 1)[-1] for m in BENCH if is_experiment(m)} >= generators
    assert not any(f"topk_bench.{g}" in BENCH for g in generators)


def test_the_graph_sees_a_lazy_import(tmp_path) -> None:
    """The check reads imports inside functions (else a lazy import would hide a circle)."""
    from _import_graph import imports

    src = tmp_path / "m.py"
    src.write_text("def f():\n    from topk_bench.experiments.rl_plan import runs\n")
    assert imports(src, BENCH) == {"topk_bench.experiments.rl_plan"}
