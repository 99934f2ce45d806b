"""my_agent: top-k agents written outside topk-bandit-envs, benchmarked with topk-bench.

* :class:`SuccessiveEliminationPy`: Successive Elimination for the top k arms as a
  Python generator (a :class:`agents.ScriptedAgent` with ``_run``);
* :class:`SuccessiveElimination`: the same algorithm compiled with numba, played on the
  fast path by :func:`agents.run_episode`;
* :class:`RoundRobinPlain`: a plain class with ``reset``/``act``/``observe`` only.

Name them in a ``topk-bench`` config as ``my_agent:SuccessiveElimination`` (with this
directory's parent on ``PYTHONPATH``), or install the package (``pip install -e
examples/my_agent``) and use the entry-point names of its ``pyproject.toml``. See
``README.md`` for the commands.
"""

from my_agent.elimination import SuccessiveElimination, SuccessiveEliminationPy
from my_agent.plain import RoundRobinPlain

__all__ = ["RoundRobinPlain", "SuccessiveElimination", "SuccessiveEliminationPy"]
