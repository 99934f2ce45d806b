"""One reference to an agent's whole state, so that a generator resumes cheaply.

A numba generator saves, at every ``yield``, each value it still needs after it, and
an array (or each array of a tuple, such as :class:`agents.engine.Ctx`) costs about
11 ns to save and restore: a generator that keeps ``ctx`` (seven arrays and the
generator ``rng``), ``prm`` and a tuple of fifteen state arrays live across its yields
pays about 300 ns per resume, more than the rest of a LUCB round. A :class:`Frame`
holds them all behind one reference-counted pointer (a numba ``StructRef``): a
generator whose loop touches only the frame and a few scalars resumes in about 15 ns.
The algorithm's work then runs in ordinary compiled functions that take the frame and
read its fields (``fr.ctx``, ``fr.prm``, ``fr.state``).

Measured (one core, 10^6 resumes of a generator that touches two of fifteen arrays):
190 ns per resume with the tuple live across the ``yield``, 44 ns through a frame
whose fields one ordinary function loads per resume (each load of an array field costs
a reference count: load the fields once per round, not in several small functions).
"""

from __future__ import annotations

from numba.core import types
from numba.experimental import structref

__all__ = ["Frame", "FrameType"]


@structref.register
class FrameType(types.StructRef):
    """The numba type of a :class:`Frame` (its fields' types are the parameters)."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Frame(structref.StructRefProxy):
    """``Frame(ctx, prm, state)``: an agent's context, parameters and own state (any type).

    Built and read in compiled code (``fr = Frame(ctx, prm, state)``; ``fr.state``);
    the fields are fixed at construction, the arrays they hold are mutable.
    """


structref.define_proxy(Frame, FrameType, ["ctx", "prm", "state"])
