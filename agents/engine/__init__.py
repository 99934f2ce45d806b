"""The compiled engine of the scripted agents: one implementation, two ways to play it.

Modules (their public names are re-exported here, so kernels write ``engine.X``):

* :mod:`~agents.engine.context`: an agent's state :class:`Ctx`, its registers, the
  requests an algorithm yields and its answer;
* :mod:`~agents.engine.selection`: top-k selection, random tie-breaking, the anytime
  answer rules;
* :mod:`~agents.engine.scheduler`: Jun et al.'s RoundRobin and the request bookkeeping;
* :mod:`~agents.engine.serving`: requests served on the environment's arrays, the fast
  path's loop :func:`drive` and :func:`fast_path`;
* data structures of the algorithms: :mod:`~agents.engine.confidence` (confidence
  radii), :mod:`~agents.engine.count_buckets`, :mod:`~agents.engine.order_stats`,
  :mod:`~agents.engine.level_bounds`, :mod:`~agents.engine.lowest_level`,
  :mod:`~agents.engine.beta_math` (Beta posteriors: tails, truncated draws) and
  :mod:`~agents.engine.posterior_top_set` (the top-k set of a posterior sample, for the
  Thompson-sampling agents of two families), and :mod:`~agents.engine.frame` and
  :mod:`~agents.engine.dispatch` (cheap resumption of generators, calls from Python
  without re-typing).

Every algorithm of :mod:`agents` is a numba *generator* ``run(ctx, prm)`` (one per
module, next to its agent class): it reads the statistics in ``ctx``, yields pull
requests, and finally writes its answer with :func:`finish`. ``ctx`` (:class:`Ctx`)
holds the agent's arrays: pull counts and empirical means, the request buffer, the
scheduler's state, a per-arm ``status`` (for anytime answers), the answer, the
integer/float registers ``iv``/``fv`` and the agent's generator ``rng``. ``prm`` is the
agent's float64 parameter vector.

Requests (the values a generator yields):

* ``arm >= 0``: pull ``arm`` once, as one batch of one pull (fits every batch model);
* :data:`PULL` (from :func:`request_pull` / :func:`request_each`): pull
  the requested arms the requested numbers of times, spread over batches by RoundRobin;
* :data:`BATCH` (from :func:`request_batch`): exactly one RoundRobin batch over
  the requested arms.

The same generator is played in two ways, which make the same requests, the same
batches and the same draws (``tests/test_fast_path.py`` checks every agent bit for
bit):

* the reference (Gymnasium) path: :class:`agents.base.ScriptedAgent` resumes the
  generator from Python, asks :func:`schedule` for each batch and records it with
  :func:`record_batch` after the environment stepped;
* the fast path: :func:`drive`, compiled, iterates the generator, schedules batches
  with the same functions, and draws rewards with the environment's own kernels
  (:mod:`bandit_envs.kernels`) on the environment's arrays, until the episode's
  sampling ends; :func:`agents.run_episode` then lets the environment finish the
  episode (answer step, scores, terminal ``info``) in Python. A ``PULL`` request that
  is exactly one batch (distinct arms, each within ``r``, all within ``b`` and the
  budget: :func:`_whole_batch`) is served as that batch without the scheduler's
  bookkeeping: the batch ``schedule`` would make of it, drawn in arm order with
  independent rewards. :func:`serve_request` and :func:`serve_arm` serve one yielded
  request each; loops that play an algorithm without its generator (the LUCB family's
  fast path) call them as ``drive`` does.

Batches follow Jun et al. (2016) Algorithm 1 (RoundRobin; its line 5 ``a_l <= r`` read as
``a_l < r``, a typo: with ``<=`` an arm could take ``r + 1`` pulls): each pull goes to the
requested arm with the fewest pulls (counting the batch's own), ties uniformly at random;
:func:`round_robin` computes the allocation by water filling, and one-pull batches take the
arms of the lowest level in random order from a bucket (the same law, O(1) amortised per
pull).
"""

from __future__ import annotations

from agents.engine.context import *  # noqa: F403
from agents.engine.context import __all__ as _context_all
from agents.engine.scheduler import *  # noqa: F403
from agents.engine.scheduler import __all__ as _scheduler_all
from agents.engine.selection import *  # noqa: F403
from agents.engine.selection import __all__ as _selection_all
from agents.engine.serving import *  # noqa: F403
from agents.engine.serving import __all__ as _serving_all

__all__ = _context_all + _selection_all + _scheduler_all + _serving_all
