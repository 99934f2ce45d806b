"""Tests for bandit_envs.hardness on small hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bandit_envs import hardness as hd

# Sorted: 0.9, 0.8 | 0.5, 0.4, 0.1 with k = 2, so mu_(k) = 0.8 and mu_(k+1) = 0.5.
# Gaps (jun2016 eq. 3): 0.9-0.5, 0.8-0.5, 0.8-0.5, 0.8-0.4, 0.8-0.1 = .4, .3, .3, .4, .7.
SORTED = [0.9, 0.8, 0.5, 0.4, 0.1]
SORTED_GAPS = [0.4, 0.3, 0.3, 0.4, 0.7]
ORDER = [3, 0, 4, 2, 1]  # a shuffled order, to check that gaps follow the arms' own order
MEANS = [SORTED[i] for i in ORDER]
H1 = 2 / 0.16 + 2 / 0.09 + 1 / 0.49  # 36.7630...
# Gaps ascending .3, .3, .4, .4, .7 -> i * gap^-2 for i = 2..5: 22.2, 18.75, 25, 10.2.
H2 = 4 / 0.16


def test_gaps_in_the_arms_own_order() -> None:
    np.testing.assert_allclose(hd.gaps(MEANS, 2), [SORTED_GAPS[i] for i in ORDER], atol=1e-12)
    np.testing.assert_allclose(hd.gaps(SORTED, 2), SORTED_GAPS, atol=1e-12)


def test_gaps_k1_are_distances_to_the_best() -> None:
    # chen2017 after eq. (2): for K = 1, Delta_i = theta_1 - theta_i, Delta_1 = theta_1 - theta_2.
    np.testing.assert_allclose(hd.gaps([0.2, 0.9, 0.6], 1), [0.7, 0.3, 0.3], atol=1e-12)


def test_h1_h2_hand_computed() -> None:
    assert hd.h1(MEANS, 2) == pytest.approx(H1, rel=1e-12)
    assert hd.h2(MEANS, 2) == pytest.approx(H2, rel=1e-12)
    # H2 is attained at i = 4, not at the smallest gap: a formula using max_i gap^-2 fails.
    assert hd.h2(MEANS, 2) != pytest.approx(2 / 0.09)


def test_h_nsar_hand_computed() -> None:
    # i^p Delta_(i)^-2 for i = 2..5 with gaps .3, .4, .4, .7.
    assert hd.h_nsar(MEANS, 2, 1.0) == pytest.approx(hd.h2(MEANS, 2), rel=1e-12)
    assert hd.h_nsar(MEANS, 2, 0.5) == pytest.approx(math.sqrt(2) / 0.09, rel=1e-12)
    assert hd.h_nsar(MEANS, 2, 2.0) == pytest.approx(16 / 0.16, rel=1e-12)


def test_ties_at_the_boundary_give_zero_gaps_and_infinite_h() -> None:
    means = [0.9, 0.5, 0.5, 0.1]
    np.testing.assert_allclose(hd.gaps(means, 2), [0.4, 0.0, 0.0, 0.4], atol=1e-12)
    assert hd.h1(means, 2) == math.inf
    assert hd.h2(means, 2) == math.inf
    assert hd.h_nsar(means, 2, 0.7) == math.inf
    # chen2017 caps every term at (Psi_t^eps)^-2 <= eps^-2, so H stays finite.
    assert hd.h_chen(means, 2, 0, 0.1) == pytest.approx(2 / 0.16 + 2 / 0.01)


def test_ties_away_from_the_boundary_are_fine() -> None:
    means = [0.9, 0.9, 0.5, 0.5]
    np.testing.assert_allclose(hd.gaps(means, 2), [0.4] * 4, atol=1e-12)
    assert hd.h1(means, 2) == pytest.approx(4 / 0.16)


def test_h_chen_hand_computed() -> None:
    # t = 0: Psi_0 = min(Delta_2, Delta_3) = 0.3 (chen2017 eq. 4).
    assert hd.h_chen(MEANS, 2, 0, 0.01) == pytest.approx(H1, rel=1e-12)  # no gap below 0.3
    cap = 0.35**-2  # eps above Psi_0: Psi^eps = eps (eq. 5) caps the two 0.3 gaps
    assert hd.h_chen(MEANS, 2, 0, 0.35) == pytest.approx(2 / 0.16 + 2 * cap + 1 / 0.49)
    # t = 1: Psi_1 = min(Delta_1, Delta_4) = 0.4, every gap below 0.4 counts as 0.4.
    assert hd.h_chen(MEANS, 2, 1, 0.01) == pytest.approx(4 / 0.16 + 1 / 0.49)


def test_chen_t_eq3() -> None:
    # t = 1 is allowed iff Delta_1 * 1 <= K eps and Delta_4 * 1 <= K eps, i.e. eps >= 0.2.
    assert hd.chen_t(MEANS, 2, 0.01) == 0
    assert hd.chen_t(MEANS, 2, 0.19) == 0
    assert hd.chen_t(MEANS, 2, 0.25) == 1
    assert hd.h_chen(MEANS, 2, None, 0.25) == pytest.approx(hd.h_chen(MEANS, 2, 1, 0.25))


def test_h_chen_properties_on_random_means() -> None:
    rng = np.random.default_rng(3)
    means = rng.uniform(size=40)
    k, eps = 10, 0.02
    values = [hd.h_chen(means, k, t, eps) for t in range(10)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))  # non-increasing in t
    assert max(values) <= len(means) / eps**2  # H(t, eps) <= n eps^-2
    assert values[0] <= hd.h1(means, k)


def test_hardness_dataclass() -> None:
    h = hd.hardness(MEANS, 2)
    assert h.k == 2
    assert h.h1 == pytest.approx(H1) and h.h2 == pytest.approx(H2)
    np.testing.assert_allclose(h.gaps, hd.gaps(MEANS, 2))
    assert h.nsar(2.0) == pytest.approx(100.0)
    assert h.chen(1, 0.01) == pytest.approx(4 / 0.16 + 1 / 0.49)
    assert h.chen_t(0.25) == 1
    with pytest.raises(ValueError):
        h.gaps[0] = 1.0
    with pytest.raises(ValueError):
        h.means[0] = 1.0


@pytest.mark.parametrize(
    ("means", "k", "match"),
    [
        ([0.5, 0.4], 0, "1 <= k < n_arms"),
        ([0.5, 0.4], 2, "1 <= k < n_arms"),
        ([0.5, 0.4], True, "integer"),
        ([0.5, 0.4], 1.0, "integer"),
        ([[0.5, 0.4]], 1, "1-D"),
        ([0.5], 1, "at least 2"),
        ([0.5, float("nan")], 1, "finite"),
    ],
)
def test_bad_input_raises(means: object, k: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        hd.gaps(means, k)  # type: ignore[arg-type]


def test_bad_parameters_raise() -> None:
    with pytest.raises(ValueError, match="p must be"):
        hd.h_nsar(MEANS, 2, 0.0)
    with pytest.raises(ValueError, match="eps must be"):
        hd.h_chen(MEANS, 2, 0, -0.1)
    with pytest.raises(ValueError, match=r"t must satisfy 0 <= t <= .* = 1"):
        hd.h_chen(MEANS, 2, 2, 0.1)
    with pytest.raises(ValueError, match="t must be an integer"):
        hd.h_chen(MEANS, 2, 0.5, 0.1)  # type: ignore[arg-type]


def test_bandit_envs_modules_import_no_circle() -> None:
    """No module of ``bandit_envs`` imports itself through others, at any depth (function
    bodies too): ``hardness`` and ``lower_bound`` share their validation through a module
    of its own, ``_means_check``."""
    import ast
    from pathlib import Path

    from _import_graph import cycles

    import bandit_envs

    root = Path(bandit_envs.__file__).resolve().parent
    names = {f"bandit_envs.{p.stem}": p for p in root.glob("*.py") if p.stem != "__init__"}
    edges: dict[str, set[str]] = {}
    for name, path in names.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
        edges[name] = (found & set(names)) - {name}
    assert "bandit_envs._means_check" in edges["bandit_envs.hardness"]
    assert "bandit_envs._means_check" in edges["bandit_envs.lower_bound"]
    assert cycles(edges) == []
