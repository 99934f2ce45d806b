"""What `topk-bench run` shows while it runs: the compilation notice and the progress bar."""

from __future__ import annotations

import importlib
import sys
import textwrap
from types import SimpleNamespace

import pytest

from topk_bench.run import _compiling_line, _progress, uncompiled_agents

MODULE = textwrap.dedent(
    """
    import numba

    import agents


    @numba.njit(cache=True)
    def loop(x):
        return x + 1


    class Compiled(agents.Agent):
        episode_kernel = staticmethod(loop)


    class Plain(agents.Agent):
        pass
    """
)


def _chunk(label: str, target: str) -> SimpleNamespace:
    return SimpleNamespace(agent=label, agent_name=target, agent_target=target)


def test_uncompiled_agents_follow_numbas_cache(tmp_path, monkeypatch):
    """Cold before the first call, warm once compiled (in this process, then from the
    on-disk cache in a fresh import), cold again when the source changes."""
    pytest.importorskip("numba")
    name = "compile_probe_module"
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    module = importlib.import_module(name)
    chunks = [
        _chunk("mine", f"{name}:Compiled"),
        _chunk("mine", f"{name}:Compiled"),  # another chunk of the same agent
        _chunk("python", f"{name}:Plain"),  # no compiled code: never listed
        _chunk("policy", "ppo:/no/such/model.zip"),  # not resolvable here: left out
    ]
    assert uncompiled_agents(chunks) == ["mine"]
    assert module.loop(1) == 2  # compiles, and writes numba's cache
    assert uncompiled_agents(chunks) == []
    module = importlib.reload(module)  # a new dispatcher: nothing compiled in it yet
    assert not module.loop.overloads
    assert uncompiled_agents(chunks) == []  # found in the on-disk cache
    path.write_text(MODULE + "\n# edited\n")
    module = importlib.reload(module)
    assert uncompiled_agents(chunks) == ["mine"]  # the cache is of the old source


def test_the_compiling_line_names_the_agents_when_not_all_compile():
    chunks = [_chunk(a, a) for a in ("uniform", "SAR", "OptMAI(0.8)")]
    line = _compiling_line({"uniform", "SAR", "OptMAI(0.8)"}, chunks)
    assert line.startswith("compiling 3 agents (first run only")
    assert _compiling_line({"OptMAI(0.8)"}, chunks).startswith(
        "compiling 1 of 3 agents, OptMAI(0.8), (first run only"
    )


def test_the_bar_says_compiling_and_then_takes_its_eta_from_the_warm_rate(capsys):
    bar = _progress(100, 0, "quick", True, {"a", "b"})
    clock = [0.0]
    bar._time = lambda: clock[0]
    bar.start_t = bar.last_print_t = 0.0
    clock[0] = 30.0  # a has compiled and finished a chunk; b is still compiling
    bar.update(10)
    bar.finished("a")
    assert "compiling" in str(bar) and "<" not in str(bar)  # no ETA from compile time
    clock[0] = 40.0
    bar.update(10)
    bar.finished("b")  # compilation over: no rate measured since yet
    assert "compiling" not in str(bar) and "20/100 [00:40<?]" in str(bar)
    clock[0] = 50.0
    bar.update(20)  # 20 episodes in the 10 s since: 2 per s, 60 left: 30 s
    assert "40/100 [00:50<00:30" in str(bar), str(bar)
    bar.close()
    capsys.readouterr()


def test_a_warm_start_shows_tqdms_own_bar(capsys):
    bar = _progress(100, 0, "quick", True)
    clock = [0.0]
    bar._time = lambda: clock[0]
    bar.start_t = bar.last_print_t = 0.0
    clock[0] = 10.0
    bar.update(50)
    assert "compiling" not in str(bar) and "50/100 [00:10<00:" in str(bar)
    bar.close()
    capsys.readouterr()
