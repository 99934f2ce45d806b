"""The numba cache stamps (``bandit_envs._jit``) cover the compiled sources a file reaches."""

from __future__ import annotations

from pathlib import Path

from bandit_envs import _jit

ROOT = Path(_jit.__file__).resolve().parent.parent


def _closure(rel: str) -> set[str]:
    seen: set[Path] = set()
    todo = [ROOT / rel]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(_jit._imports(current))
    return {str(p.relative_to(ROOT)) for p in seen}


def test_agent_stamp_covers_the_engine_and_the_reward_kernels() -> None:
    reach = _closure("agents/lucb/at_lucb.py")
    assert {
        "agents/engine/scheduler.py",
        "agents/engine/serving.py",
        "bandit_envs/kernels.py",
        "agents/engine/count_buckets.py",
    } <= reach


def test_from_package_import_module_and_inheritance_are_followed() -> None:
    # ``from agents import confidence, engine`` and ``from agents.elimination.nsar import NSAR``
    assert {"agents/engine/confidence.py", "agents/engine/__init__.py"} <= _closure(
        "agents/lucb/family.py"
    )
    assert "agents/elimination/nsar.py" in _closure("agents/elimination/nsar.py")


def test_the_lucb_stamp_covers_the_family_modules_and_their_layout() -> None:
    """The LUCB kernels embed the family's helpers and read ``layout``'s constants as
    compile-time constants: the stamp of ``family.py`` hashes them all (``_jit`` hashes a
    reached source only if it mentions numba, as ``layout.py``'s docstring does)."""
    reach = _closure("agents/lucb/family.py")
    modules = ["heaps", "radii", "kinetic", "kl_bounds", "clucb_split", "layout"]
    assert {f"agents/lucb/{m}.py" for m in modules} <= reach
    assert b"numba" in (ROOT / "agents/lucb/layout.py").read_bytes()


def test_an_agent_stamp_ignores_unrelated_agents() -> None:
    reach = _closure("agents/elimination/nsar.py")
    assert "agents/lucb/family.py" not in reach
    assert "agents/lucb/at_lucb.py" not in reach


def test_the_digest_changes_with_an_imported_source(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "agents"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "engine.py").write_text("import numba\nX = 1\n")
    (pkg / "algo.py").write_text("import numba\nfrom agents import engine\n")
    (pkg / "other.py").write_text("import numba\n")
    monkeypatch.setattr(_jit, "_ROOT", tmp_path)
    monkeypatch.setattr(_jit, "_PACKAGES", (pkg,))
    monkeypatch.setattr(_jit, "_TOP", frozenset({"agents"}))
    for cached in (_jit._imports, _jit._digest):
        cached.cache_clear()
    try:
        before = _jit._digest(pkg / "algo.py")
        (pkg / "other.py").write_text("import numba\nY = 2\n")
        _jit._digest.cache_clear()
        assert _jit._digest(pkg / "algo.py") == before
        (pkg / "engine.py").write_text("import numba\nX = 2\n")
        _jit._digest.cache_clear()
        assert _jit._digest(pkg / "algo.py") != before
    finally:
        for cached in (_jit._imports, _jit._digest):
            cached.cache_clear()


def test_no_compiled_generator_is_cached() -> None:
    """A generator loaded from numba's cache cannot be called from a function compiled
    in that process (numba issues #8679, #8778): an agent played on the Gymnasium path
    (which caches ``run``) and then, in a new process, on the fast path (which compiles
    ``episode`` around ``run``) failed with ``KeyError`` in ``get_generator_impl``."""
    import importlib
    import inspect
    import pkgutil

    from numba.core.caching import NullCache

    import agents

    generators = []
    for info in pkgutil.walk_packages(agents.__path__, "agents."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            py_func = getattr(value, "py_func", None)
            if py_func is not None and inspect.isgeneratorfunction(py_func):
                if getattr(value, "__module__", None) == info.name:
                    generators.append(f"{info.name}.{name}")
                    assert isinstance(value._cache, NullCache), f"{info.name}.{name} is cached"
    assert "agents.bayesian.top_two_thompson.run" in generators
    assert len(generators) >= 20  # every compiled agent's run (and sub-generators)
