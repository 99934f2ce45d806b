"""Scripted agents for top-k arm identification, and an adapter for learned policies.

Every agent follows one act/observe protocol (:class:`agents.base.Agent`):
``reset(problem, seed=...)``, ``act(observation) -> action``, ``observe(...)``.
:func:`available` lists the registered algorithms, :func:`make` builds one with its
paper's defaults, :func:`run_episode` plays one episode and scores it.

Note: another PyPI distribution (``openai-agents``) also installs a top-level
``agents`` package; if both are installed, whichever comes first on ``sys.path`` wins.
Install this project in its own environment.
"""

from __future__ import annotations

from agents.base import Agent, AgentProtocol, Batch, Pull, PullOne, ScriptedAgent
from agents.learned.adapter import PolicyAgent
from agents.registry import agent_class, available, make, register
from agents.runner import EpisodeResult, fast_path_applies, run_episode
from agents.scheduling import round_robin

__all__ = [
    "Agent",
    "AgentProtocol",
    "Batch",
    "EpisodeResult",
    "PolicyAgent",
    "Pull",
    "PullOne",
    "ScriptedAgent",
    "agent_class",
    "available",
    "fast_path_applies",
    "make",
    "register",
    "round_robin",
    "run_episode",
]
