"""Episode seeds: a pure function of names and indices, never of scheduling.

Every episode of an experiment is identified by ``(experiment, point, agent, run)``.
Two seeds are derived from it with :class:`numpy.random.SeedSequence`:

* the **environment seed** from ``(base seed, experiment, point, run)``: it fixes the
  instance's means, the arm shuffle and (with the env's ``paired=True``, which the
  runner turns on by default) every reward, so *all agents at the same (point, run)
  play the same episode*: comparisons between agents are paired, and their
  differences have a much smaller variance than independent runs would give;
* the **agent seed** from ``(base seed, experiment, point, run, agent)``: the agent's
  own randomness (tie-breaking, randomized sampling rules). It is independent of the
  environment's stream, which matters because ``np.random.default_rng(s)`` and
  ``env.reset(seed=s)`` would otherwise produce the *same* bit stream and correlate
  the agent's coin flips with the instance draw.

A sweep with ``common_seeds = true`` derives the seeds of all its points from one name
(``common:PANEL``, the sweep's panel), so that run r plays the same means, shuffle and reward
streams at every point: common random numbers across the points (e.g. jun2016's Table 1 compares (b,
r) pairs on the same episodes, as the paper's ratios of means assume).

Names are hashed with SHA-256 (never Python's salted ``hash()``), so seeds are the
same in every process, on every machine, for any ``--jobs`` and either backend; the
rows of a run therefore do not depend on how the episodes were scheduled. Changing a
point's label or an agent's label changes its seeds; adding or removing other points,
agents or runs changes nothing else.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["agent_seed", "derived_seed", "env_seed", "name_hash"]

_MASK63 = (1 << 63) - 1
_ENV, _AGENT = 0, 1


def name_hash(name: str) -> int:
    """A stable 64-bit integer for ``name`` (first 8 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")


def _seed(words: list[int]) -> int:
    state = np.random.SeedSequence(words).generate_state(2, dtype=np.uint32)
    return (int(state[0]) | (int(state[1]) << 32)) & _MASK63


def env_seed(experiment: str, point: str, run: int, base_seed: int = 0) -> int:
    """Seed of the environment of run ``run`` at ``point`` (shared by all agents)."""
    return _seed([_ENV, int(base_seed), name_hash(experiment), name_hash(point), int(run)])


def agent_seed(experiment: str, point: str, run: int, agent: str, base_seed: int = 0) -> int:
    """Seed of ``agent``'s own generator in run ``run`` at ``point``."""
    return _seed(
        [
            _AGENT,
            int(base_seed),
            name_hash(experiment),
            name_hash(point),
            int(run),
            name_hash(agent),
        ]
    )


def derived_seed(kind: str, base_seed: int, *parts: str | int) -> int:
    """A seed for anything else (e.g. training a model): from ``kind``, the base seed and ``parts``.

    Strings are hashed with :func:`name_hash`, integers used as they are; ``kind``
    keeps these seeds apart from the episode seeds above.
    """
    words = [2, name_hash(kind), int(base_seed)]
    words += [name_hash(p) if isinstance(p, str) else int(p) for p in parts]
    return _seed(words)
