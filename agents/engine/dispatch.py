"""Calling compiled functions from Python without re-typing their arguments each time.

A numba dispatcher types every argument of every call to pick the compiled overload.
For arrays and plain tuples of arrays that is done in C from a cached *fingerprint*,
but a tuple holding a ``numpy.random.Generator`` (an :class:`agents.engine.Ctx`, a
:class:`bandit_envs.kernels.RewardState`) has no fingerprint, and numba falls back to
typing it field by field in Python: about 90 us per such argument, several times per
episode on the fast path (:func:`agents.run_episode`), more than a short episode's
pulls cost.

:func:`compiled_call` keys the call by a cheap, exact description of the argument
types (numba's own fingerprints, with the generators and Python ints spelled out),
remembers which compiled overload the dispatcher chose for that key the first time,
and afterwards calls that overload's entry point directly. The entry point runs the
same machine code the dispatcher would call, so results are identical; only the
typing is skipped. Keys cover arrays, NumPy scalars, Python ints, floats and bools,
generators and (named) tuples of these; any other argument (a list, an object) sends
the call to the dispatcher every time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba._dispatcher import compute_fingerprint

__all__ = ["compiled_call"]

#: (dispatcher, argument-type key) -> the entry point of the overload it chose.
_ENTRIES: dict[tuple[Any, tuple[Any, ...]], Any] = {}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63


class _NoKey(Exception):
    """An argument whose numba type the key cannot describe exactly."""


def _key(value: Any) -> Any:
    """A hashable description of ``value``'s numba type (equal keys: equal types)."""
    t = type(value)
    if t is int:
        # numba types a Python int by its value (int64, else uint64); its fingerprint does not
        return int, _INT64_MIN <= value < _INT64_MAX
    if t is np.random.Generator:
        return t  # one numba type for every generator (NumPyRandomGeneratorType)
    if isinstance(value, tuple):
        # field by field: a generator field has no fingerprint, and the class is part of the type
        return t, tuple(map(_key, value))
    if t is float or t is bool or isinstance(value, (np.ndarray, np.generic)):
        try:
            return t, compute_fingerprint(value)
        except (NotImplementedError, ValueError, TypeError):
            pass
    raise _NoKey  # (lists, sets, objects...: left to the dispatcher)


def compiled_call(dispatcher: Any, *args: Any) -> Any:
    """``dispatcher(*args)``, calling the compiled overload directly once it is known.

    ``dispatcher`` is a numba ``@njit`` function. The first call for each combination
    of argument types goes through the dispatcher (compiling or loading as usual); the
    overload it picked (``dispatcher.overloads[types]``) is then called directly for
    later arguments of the same types.
    """
    try:
        key = (dispatcher, tuple(map(_key, args)))
    except _NoKey:
        return dispatcher(*args)
    entry = _ENTRIES.get(key)
    if entry is not None:
        return entry(*args)
    result = dispatcher(*args)
    cres = dispatcher.overloads.get(tuple(dispatcher.typeof_pyval(a) for a in args))
    if cres is not None:
        _ENTRIES[key] = cres.entry_point
    return result
