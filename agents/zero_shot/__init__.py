"""``zero_shot``: one learned agent for every instance (:class:`~agents.zero_shot.agent.ZeroShot`).

Modules: :mod:`~agents.zero_shot.index` (the fixed-budget score and its kernel),
:mod:`~agents.zero_shot.agent` (the agent, both settings), :mod:`~agents.zero_shot.generator`
(the training episodes) and :mod:`~agents.zero_shot.fit` (the fit, ``--retrain``).
"""

from agents.zero_shot.agent import ZeroShot

__all__ = ["ZeroShot"]
