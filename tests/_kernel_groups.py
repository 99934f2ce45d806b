"""xdist groups by compiled kernel: the tests that play one numba kernel share a worker.

On a fresh clone every agent's kernel compiles on its first episode (up to a few minutes
for the largest, ``agents.lucb.family`` and ``agents.glr.top_two``) and is then read
from numba's on-disk cache. Under ``--dist loadgroup`` the two workers take the tests one
after the other in collection order, so both would start the first tests of an agent at
the same time and both compile its kernel; and the Gymnasium path's generator (never
cached, ``tests/test_jit_cache.py``) compiles in every process that steps the agent.
Grouped by kernel module, they compile once, on one worker. ``conftest.py`` groups every
test with an agent's name (or class) as a parameter; a module or test that plays one
family without one is marked ``pytest.mark.kernel_group(name)``.
"""

from __future__ import annotations

import functools

import agents


@functools.cache
def kernel_group(name: str) -> str:
    """The xdist group of registered agent ``name``: the module of its compiled kernel
    (every LUCB-family agent shares ``agents.lucb.family``'s, every Top-Two agent and
    ``zero_shot`` ``agents.glr.top_two``'s), else of its class."""
    cls = agents.agent_class(name)
    kernel = getattr(cls, "kernel", None)
    module = getattr(getattr(kernel, "py_func", kernel), "__module__", None)
    return f"kernel:{module or cls.__module__}"


@functools.cache
def _agents() -> dict[object, str]:
    """Registered agent names, and classes, to a name."""
    out: dict[object, str] = {}
    for name in agents.available():
        out[name] = name
        out.setdefault(agents.agent_class(name), name)
    return out


def _agent_of(value: object) -> str | None:
    if isinstance(value, (tuple, list)):
        return _agent_of(value[0]) if value else None
    try:
        return _agents().get(value)
    except TypeError:  # unhashable
        return None


def agent_param(item) -> str | None:  # noqa: ANN001 (a pytest item)
    """The registered agent a parametrized test plays: a parameter that is an agent's
    name or class, or a tuple that starts with one (``("lucb", {"delta": 0.1})``)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for value in callspec.params.values():
        name = _agent_of(value)
        if name is not None:
            return name
    return None
