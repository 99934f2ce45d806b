"""``PolicyAgent`` at its old place: it lives in :mod:`agents.learned.adapter`."""

from __future__ import annotations

from agents.learned.adapter import PolicyAgent, SampledPolicyAgent

__all__ = ["PolicyAgent", "SampledPolicyAgent"]
