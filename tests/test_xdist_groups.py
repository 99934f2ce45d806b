"""The xdist groups of ``conftest.py``: the tests of one compiled kernel share a worker."""

from __future__ import annotations

import pytest
from _kernel_groups import kernel_group

from agents.lucb.ugape import UGapEc

pytestmark = pytest.mark.kernel_group("uniform")


def _group(request) -> str | None:
    """The test's xdist group; under ``--dist loadgroup`` also the one xdist uses (the
    suffix of the worker's node id)."""
    marks = [m.args[0] for m in request.node.iter_markers("xdist_group")]
    assert len(marks) <= 1, marks  # xdist would join several names into another group
    group = marks[0] if marks else None
    if getattr(request.config.option, "loadgroup", False):
        nodeid = request.node.nodeid
        assert nodeid.endswith(f"@{group}") if group else "@" not in nodeid, nodeid
    return group


def test_agents_sharing_a_kernel_share_a_group() -> None:
    lucb = {"lucb", "kl_lucb", "lil_clucb", "lil_lucb", "lil_rand_lucb", "lucb_pp"}
    assert {kernel_group(n) for n in lucb} == {"kernel:agents.lucb.family"}
    assert {kernel_group(n) for n in ("eb_tc", "eb_tci", "t3c", "ttts", "zero_shot")} == {
        "kernel:agents.glr.top_two"
    }
    assert kernel_group("learned_stop") == kernel_group("bayes_ttts")
    assert kernel_group("sar") == kernel_group("nsar") == "kernel:agents.elimination.nsar"
    assert kernel_group("lil_ucb") == "kernel:agents.lucb.lil_ucb"
    assert kernel_group("bayes_dp") == "kernel:agents.bayesian.bayes_dp"  # (no kernel)


@pytest.mark.parametrize(
    "param, agent", [("lucb", "lucb"), (("t3c", {"beta": 0.5}), "t3c"), (UGapEc, "ugape_c")]
)
def test_a_test_playing_an_agent_joins_its_kernels_group(request, param, agent) -> None:
    """By the agent's name, a tuple starting with it, or its class: over the module's
    ``kernel_group`` mark."""
    assert _group(request) == kernel_group(agent)


def test_the_kernel_group_mark_names_the_group(request) -> None:
    assert _group(request) == kernel_group("uniform")


@pytest.mark.xdist_group("mine")
def test_a_group_of_its_own_is_kept(request) -> None:
    assert _group(request) == "mine"
