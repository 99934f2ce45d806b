"""The Gymnasium path's calls into the engine from Python, at a fraction of a microsecond.

On the Gymnasium path (:meth:`agents.base.ScriptedAgent.act` / ``observe``) the
scheduler is called from Python a few times per step. A compiled function called with
``ctx`` unboxes its seven arrays and its generator at every call (about 3-8 us, more
than a short step costs); :class:`Stepper` instead wraps ``ctx`` once per episode in a
:class:`~agents.engine.frame.Frame` (one pointer to unbox) and calls the compiled
overloads taking it directly, without the dispatcher's typing (about 0.1 us a call).
The calls are the engine's own functions, so the Gymnasium path and the fast path make
the same decisions.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from agents.engine.context import Ctx
from agents.engine.frame import Frame
from agents.engine.scheduler import accept_request, close_request, record_batch, schedule

__all__ = ["Stepper"]


@numba.njit(cache=True)
def _wrap(ctx):
    return Frame(ctx, np.zeros(0), 0)


@numba.njit(cache=True)
def _schedule(fr):
    return schedule(fr.ctx)


@numba.njit(cache=True)
def _close_request(fr):
    close_request(fr.ctx)


@numba.njit(cache=True)
def _accept_request(fr, code):
    accept_request(fr.ctx, code)


@numba.njit(cache=True)
def _record_batch(fr, arms, reps):
    record_batch(fr.ctx, arms, reps)


def _entry(dispatcher: Any, *args: Any) -> Any:
    """The entry point of the overload ``dispatcher(*args)`` runs (compiled if needed)."""
    types = tuple(dispatcher.typeof_pyval(a) for a in args)
    cres = dispatcher.overloads.get(types)
    if cres is None:
        dispatcher.compile(types)
        cres = dispatcher.overloads[types]
    return cres.entry_point


_ARMS = np.zeros(1, dtype=np.int64)


class Stepper:
    """The scheduler's calls for one episode's ``ctx`` (:func:`agents.engine.schedule`, ...).

    ``schedule()``, ``close_request()``, ``accept_request(code)`` and
    ``record_batch(arms, reps)`` (int64 arrays) do what the engine's functions of the
    same names do on ``ctx``.
    """

    __slots__ = ("_frame", "accept_request", "close_request", "record_batch", "schedule")

    def __init__(self, ctx: Ctx) -> None:
        frame = self._frame = _wrap(ctx)
        sched, close = _entry(_schedule, frame), _entry(_close_request, frame)
        accept, record = (
            _entry(_accept_request, frame, 0),
            _entry(_record_batch, frame, _ARMS, _ARMS),
        )
        self.schedule = lambda: sched(frame)
        self.close_request = lambda: close(frame)
        self.accept_request = lambda code: accept(frame, code)
        self.record_batch = lambda arms, reps: record(frame, arms, reps)
