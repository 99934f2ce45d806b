"""Tests for the instance catalog, Arms, and the CSV loaders."""

from __future__ import annotations

import csv
import math
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bandit_envs import instances as inst
from bandit_envs.instances import Arms

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
RTE = DATA / "rte_workers.csv"
CAPTION = DATA / "caption_559_random.csv"
WORKER = ["worker_id", "n_answers", "n_correct"]
RATING = ["n_unfunny", "n_somewhat", "n_funny"]

EXPECTED_NAMES = {
    "uniform-random", "beta-random", "zhou2014-two-level", "zhou2014-rte",
    "chen2017-twogroup", "chen2017-uniform", "chen2017-synthetic",
    *(f"shahrampour2017-setup{i}" for i in range(1, 7)), "shahrampour2017-caption",
    "jun2016-linear", "jun2016-sparse", "jun2016-virus", "jun2016-twitter",
    "jiang2017-1-sparse", "jiang2017-exponential", "jiang2017-lil-exponential",
    "garivier2016-mu1", "garivier2016-mu2",
}  # fmt: skip


def test_garivier2016_instances_are_fixed_and_sized() -> None:
    got = inst.make("garivier2016-mu2").means()
    assert np.allclose(got, [0.3, 0.21, 0.2, 0.19, 0.18])
    with pytest.raises(ValueError, match="exactly 4 arms, got n_arms=5"):
        inst.make("garivier2016-mu1", 5)


def write_csv(path: Path, header: list[str], rows: Sequence[Sequence[object]]) -> Path:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def worker_csv(tmp_path: Path) -> Path:
    rows = [["a", 10, 9, 0.9], ["b", 20, 10, 0.5], ["c", 4, 1, 0.25], ["d", 5, 5, 1.0]]
    header = ["worker_id", "n_answers", "n_correct", "accuracy"]
    return write_csv(tmp_path / "workers.csv", header, rows)


@pytest.fixture
def rating_csv(tmp_path: Path) -> Path:
    rows = [[0, 2, 1, 1, 4], [1, 1, 1, 2, 4], [2, 5, 0, 0, 5]]
    header = ["caption_id", "n_unfunny", "n_somewhat", "n_funny", "n_total"]
    return write_csv(tmp_path / "ratings.csv", header, rows)


# --- catalog ---------------------------------------------------------------------------------


def test_available_is_the_sorted_catalog() -> None:
    assert inst.available() == sorted(EXPECTED_NAMES)
    assert list(inst.catalog()) == inst.available()


@pytest.mark.parametrize(
    ("name", "n_arms", "k", "params", "random", "dist"),
    [
        ("uniform-random", 1000, 10, {}, True, "bernoulli"),
        ("beta-random", 1000, 10, {"a": 5.0, "b": 5.0}, True, "bernoulli"),
        ("zhou2014-two-level", 1000, 10, {"high": 0.6, "low": 0.5}, False, "bernoulli"),
        ("zhou2014-rte", None, 10, {"path": None}, False, "bernoulli"),
        ("chen2017-twogroup", 1000, 100, {"high": 0.7, "low": 0.3}, False, "bernoulli"),
        ("chen2017-uniform", 1000, 100, {}, False, "bernoulli"),
        ("chen2017-synthetic", 1000, 100, {"p": 0.5}, False, "bernoulli"),
        ("shahrampour2017-setup1", 50, 2, {}, False, "bernoulli"),
        ("shahrampour2017-setup4", 50, 2, {"mu_1": 0.7}, False, "bernoulli"),
        ("shahrampour2017-setup5", 50, 2, {"a": 5.0, "b": 5.0}, True, "bernoulli"),
        ("shahrampour2017-caption", None, 2, {"path": None}, False, "categorical"),
        ("jun2016-linear", 100, 10, {}, False, "bernoulli"),
        ("jun2016-sparse", 100, 10, {"n_top": None, "high": 0.5, "low": 0.3}, False, "bernoulli"),
        ("jun2016-virus", 12979, 100, {"path": None, "column": "mean", "sigma": math.sqrt(0.1)},
         False, "gaussian"),
        ("jun2016-twitter", 522062, 100, {"alpha": 0.2624, "mu_max": 0.003545}, False, "bernoulli"),
        ("jiang2017-1-sparse", 100, 2, {"sigma": 0.5}, False, "gaussian"),
        ("jiang2017-exponential", 100, 2, {"alpha": 0.3, "sigma": 0.5}, False, "gaussian"),
        ("jiang2017-lil-exponential", 100, 1, {"alpha": 0.3, "sigma": 0.5}, False, "gaussian"),
    ],
)  # fmt: skip
def test_catalog_defaults(
    name: str, n_arms: int | None, k: int, params: dict[str, object], random: bool, dist: str
) -> None:
    entry = inst.catalog()[name]
    assert (entry.n_arms, entry.k, dict(entry.params)) == (n_arms, k, params)
    assert (entry.random, entry.distribution) == (random, dist)
    assert entry.reference and entry.description


def test_every_entry_builds_with_its_defaults(worker_csv: Path, rating_csv: Path) -> None:
    paths = {"zhou2014-rte": worker_csv, "shahrampour2017-caption": rating_csv}
    rng = np.random.default_rng(0)
    for name, entry in inst.catalog().items():
        kwargs: dict[str, Any] = {"path": paths[name]} if name in paths else {}
        k = 1 if name in paths else None  # the small test files have 3-4 arms
        instance = inst.make(name, k=k, **kwargs)
        arms = instance.arms(rng)
        assert instance.name == name and instance.is_random == entry.random
        assert arms.n_arms == instance.n_arms and arms.distribution == entry.distribution
        if entry.n_arms is not None:
            assert instance.n_arms == entry.n_arms and instance.k == entry.k
        assert instance.reference == entry.reference


# --- exact means of each named setup (hand-computed small cases) ---------------------------------


@pytest.mark.parametrize(
    ("name", "n_arms", "k", "params", "expected"),
    [
        ("zhou2014-two-level", 5, 2, {}, [0.6, 0.6, 0.5, 0.5, 0.5]),
        ("zhou2014-two-level", 3, 1, {"high": 0.9, "low": 0.1}, [0.9, 0.1, 0.1]),
        ("chen2017-twogroup", 5, 2, {}, [0.7, 0.7, 0.3, 0.3, 0.3]),
        ("chen2017-uniform", 4, 1, {}, [0.75, 0.5, 0.25, 0.0]),
        # SYNTHETIC-p, n=4, K=2, p=2: 1/2 + 1/2 (1/2)^2, 1/2, 1/2 - 1/2 (1/2)^2, 0.
        ("chen2017-synthetic", 4, 2, {"p": 2}, [0.625, 0.5, 0.375, 0.0]),
        ("shahrampour2017-setup1", 5, 2, {}, [0.7, 0.7, 0.5, 0.5, 0.5]),
        ("shahrampour2017-setup2", 6, 2, {}, [0.7, 0.7, 0.66, 0.66, 0.5, 0.5]),
        ("shahrampour2017-setup3", 7, 2, {}, [0.7, 0.7, 0.66, 0.66, 0.62, 0.62, 0.5]),
        ("shahrampour2017-setup4", 4, 1, {}, [0.7, 0.5, 0.3, 0.1]),
        ("shahrampour2017-setup4", 3, 1, {"mu_1": 0.9}, [0.9, 0.6, 0.3]),
        ("shahrampour2017-setup6", 5, 2, {}, [0.7, 0.7, 0.68, 0.5, 0.5]),
        ("jun2016-linear", 4, 1, {}, [1.0, 2 / 3, 1 / 3, 0.0]),
        ("jun2016-sparse", 5, 2, {}, [0.5, 0.5, 0.3, 0.3, 0.3]),
        ("jun2016-sparse", 5, 2, {"n_top": 3}, [0.5, 0.5, 0.5, 0.3, 0.3]),
        ("jiang2017-1-sparse", 4, 2, {}, [0.5, 0.5, 0.0, 0.0]),
        ("jiang2017-exponential", 4, 2, {"alpha": 0.5},
         [0.5 + 0.5 * 0.5**0.5, 0.5, 0.5 - 0.5 * 0.5**0.5, 0.0]),
        ("jiang2017-lil-exponential", 4, 1, {"alpha": 0.5},
         [1.0, 1 - 0.25**0.5, 1 - 0.5**0.5, 1 - 0.75**0.5]),
        ("jun2016-twitter", 3, 1, {"alpha": 1.0, "mu_max": 0.6}, [0.6, 0.3, 0.2]),
    ],
)  # fmt: skip
def test_setup_means(
    name: str, n_arms: int, k: int, params: dict[str, object], expected: list[float]
) -> None:
    instance = inst.make(name, n_arms=n_arms, k=k, **params)
    np.testing.assert_allclose(instance.means(), expected, rtol=0, atol=1e-12)
    assert (instance.n_arms, instance.k) == (n_arms, k)


def test_paper_sized_setups() -> None:
    linear = inst.make("jun2016-linear").means()  # mu_i = (99 - i + 1)/99
    assert linear[0] == 1.0 and linear[-1] == 0.0 and linear[9] == pytest.approx(90 / 99)
    sparse = inst.make("jun2016-sparse").means()
    assert np.count_nonzero(sparse == 0.5) == 10 and np.count_nonzero(sparse == 0.3) == 90
    s4 = inst.make("shahrampour2017-setup4").means()
    np.testing.assert_allclose(s4[0] - s4, 0.6 * np.arange(50) / 49, atol=1e-12)  # Delta_i
    s3 = inst.make("shahrampour2017-setup3", k=4).means()
    assert list(s3[:13]) == [0.7] * 4 + [0.66] * 4 + [0.62] * 4 + [0.5]
    # jiang2017 alpha-exponential: mu_K = (N-K)/N, the minimum is 0 and arm 1 is below 1.
    ex = inst.make("jiang2017-exponential", n_arms=100, k=50).means()
    assert ex[49] == pytest.approx(0.5) and ex[-1] == 0.0 and ex[0] < 1.0
    assert np.all(np.diff(ex) < 0)


def test_synthetic_p1_equals_uniform() -> None:
    # chen2017 Sec. 3: "SYNTHETIC-1 is identical to UNIFORM".
    for n, k in ((1000, 100), (10, 3)):
        a = inst.make("chen2017-synthetic", n_arms=n, k=k, p=1).means()
        np.testing.assert_allclose(
            a, inst.make("chen2017-uniform", n_arms=n, k=k).means(), rtol=0, atol=1e-12
        )
    p6 = inst.make("chen2017-synthetic", p=6).means()
    p05 = inst.make("chen2017-synthetic", p=0.5).means()
    # Larger p pulls arms towards the boundary 1 - K/n = 0.9 (arms 50 and 200 shown).
    assert abs(p6[49] - 0.9) < abs(p05[49] - 0.9) and abs(p6[199] - 0.9) < abs(p05[199] - 0.9)


def test_jun2016_virus_stand_in_is_fixed_and_right_skewed() -> None:
    a = inst.make("jun2016-virus")
    b = inst.make("jun2016-virus")
    m = a.means(np.random.default_rng(1))
    np.testing.assert_array_equal(m, b.means(np.random.default_rng(2)))
    assert m.size == 12979 and a.k == 100 and not a.is_random
    assert a.sigma == pytest.approx(math.sqrt(0.1)) and a.distribution == "gaussian"
    assert np.all(np.diff(m) < 0)  # best first, no ties
    median = np.median(m)
    assert m[0] - median > 3 * (median - m[-1])  # a long right tail: few genes with large means
    small = inst.make("jun2016-virus", n_arms=50, k=5, sigma=0.2)
    assert small.n_arms == 50 and small.sigma == 0.2


def test_jun2016_virus_from_file(tmp_path: Path) -> None:
    rows = [["g1", 0.3], ["g2", 1.5], ["g3", -0.2]]
    path = write_csv(tmp_path / "genes.csv", ["gene", "mean"], rows)
    instance = inst.make("jun2016-virus", k=1, path=path)
    np.testing.assert_array_equal(instance.means(), [0.3, 1.5, -0.2])
    assert instance.params["path"] == str(path) and instance.n_arms == 3
    other = write_csv(tmp_path / "g2.csv", ["score"], [[1.0], [2.0]])
    assert inst.make("jun2016-virus", k=1, path=other, column="score").n_arms == 2
    with pytest.raises(ValueError, match="missing column 'mean'"):
        inst.make("jun2016-virus", k=1, path=other)
    with pytest.raises(ValueError, match="n_arms=5 given but .* has 3 arms"):
        inst.make("jun2016-virus", n_arms=5, k=1, path=path)


def test_jun2016_twitter_calibration() -> None:
    m = inst.make("jun2016-twitter").means()
    assert m.size == 522062 and np.all(np.diff(m) < 0)
    assert m[-1] == pytest.approx(1 / 8928, rel=0.01)  # one tweet in 31 * 24 * 12 slots
    assert m.sum() == pytest.approx(707776 / 8928, rel=0.01)  # all tweets, one slot each
    top = inst.make("jun2016-twitter", n_arms=1000).means()
    np.testing.assert_array_equal(top, m[:1000])  # smaller n keeps the most active users


def test_sparse_with_n_top_not_k_ties_the_boundary() -> None:
    instance = inst.make("jun2016-sparse", n_arms=5, k=2, n_top=3)
    assert instance.params["n_top"] == 3
    assert instance.hardness().h1 == math.inf
    assert inst.make("jun2016-sparse").params["n_top"] == 10  # resolved to k


def test_gaussian_entries_carry_sigma() -> None:
    for name in ("jiang2017-1-sparse", "jiang2017-exponential", "jiang2017-lil-exponential"):
        instance = inst.make(name)
        assert instance.sigma == 0.5 and instance.arms().sigma == 0.5  # variance 1/4
        assert instance.arms().sub_gaussian_sigma == 0.5
    assert inst.make("jiang2017-1-sparse", sigma=2).sigma == 2.0


def test_instance_hardness_matches_the_setup() -> None:
    # shahrampour2017 setup 1: all 50 gaps are 0.2, so H1 = 50 / 0.04 = 1250 = T.
    assert inst.make("shahrampour2017-setup1").hardness().h1 == pytest.approx(1250)
    assert inst.make("jun2016-sparse").hardness().gaps == pytest.approx(np.full(100, 0.2))


# --- random instances -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["uniform-random", "beta-random", "shahrampour2017-setup5"])
def test_random_instances_are_seeded_and_leave_global_state_alone(name: str) -> None:
    np.random.seed(12345)
    before = np.random.get_state()
    instance = inst.make(name)
    a = instance.means(np.random.default_rng(7))
    b = instance.means(np.random.default_rng(7))
    c = instance.means(np.random.default_rng(8))
    instance.hardness(np.random.default_rng(7))
    after = np.random.get_state()
    assert isinstance(before, tuple) and isinstance(after, tuple)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2:] == after[2:]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (instance.n_arms,) and np.all((a >= 0) & (a <= 1))
    assert instance.is_random


def test_random_instances_require_a_generator() -> None:
    instance = inst.make("uniform-random", n_arms=5, k=2)
    with pytest.raises(ValueError, match="rng=np.random.Generator"):
        instance.arms()
    with pytest.raises(ValueError, match="rng=np.random.Generator"):
        instance.means(1234)  # type: ignore[arg-type]


def test_random_draws_use_the_params() -> None:
    instance = inst.make("beta-random", a=50.0, b=1.0)
    assert instance.means(np.random.default_rng(0)).mean() > 0.95  # Beta(50, 1) has mean 50/51
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(
        inst.make("uniform-random", n_arms=7, k=3).means(rng_a), rng_b.uniform(0, 1, 7)
    )


def test_fixed_instances_ignore_rng() -> None:
    instance = inst.make("chen2017-uniform")
    assert instance.arms() is instance.arms(np.random.default_rng(3))
    assert not instance.is_random


# --- make: validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("no-such-setup",), {}, r"unknown instance 'no-such-setup'; available: .*jun2016-linear"),
        (("jun2016-linear",), {"bogus": 1}, r"unknown param 'bogus'.*accepted: \(none\)"),
        (("jun2016-sparse",), {"hi": 1}, "unknown param 'hi'.*accepted: n_top, high, low"),
        (("jun2016-linear",), {"k": 100}, r"1 <= k < n_arms \(= 100\), got k = 100"),
        (("jun2016-linear",), {"k": 0}, "1 <= k < n_arms"),
        (("jun2016-linear",), {"n_arms": 1, "k": 1}, "n_arms must be >= 2"),
        (("jun2016-linear",), {"n_arms": 10.0}, "n_arms must be an integer"),
        (("jun2016-linear",), {"k": True}, "k must be an integer"),
        (("chen2017-synthetic",), {"p": 0}, "param 'p' must be a number > 0.0"),
        (("chen2017-synthetic",), {"p": "x"}, "param 'p'"),
        (("zhou2014-two-level",), {"high": 0.4}, "param 'low' must be < 'high'"),
        (("zhou2014-two-level",), {"high": 1.2}, "param 'high' must be a number >= 0.0 and <= 1.0"),
        (("shahrampour2017-setup4",), {"mu_1": 0.5}, "param 'mu_1' must be a number >= 0.6"),
        (("shahrampour2017-setup3",), {"n_arms": 6}, "needs n_arms >= 7 for k = 2"),
        (("beta-random",), {"a": -1}, "param 'a' must be a number > 0.0"),
        (("jun2016-sparse",), {"n_top": 100}, "param 'n_top' must satisfy 1 <= n_top < n_arms"),
        (("jun2016-twitter",), {"n_arms": 10, "k": 2, "mu_max": 2}, "param 'mu_max'"),
        (("jiang2017-1-sparse",), {"sigma": 0}, "param 'sigma' must be a number > 0.0"),
        (("zhou2014-rte",), {}, "requires param 'path'"),
        (("shahrampour2017-caption",), {}, "requires param 'path'"),
    ],
)  # fmt: skip
def test_make_rejects_bad_input(args: tuple[str], kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        inst.make(*args, **kwargs)


def test_instance_params_repr_and_pickle() -> None:
    instance = inst.make("chen2017-synthetic", n_arms=20, k=4, p=6)
    assert dict(instance.params) == {"p": 6.0}
    with pytest.raises(TypeError):
        instance.params["p"] = 1  # type: ignore[index]
    expected = "Instance(name='chen2017-synthetic', n_arms=20, k=4, params={'p': 6.0})"
    assert repr(instance) == expected
    for original in (instance, inst.make("beta-random", n_arms=8, k=2)):
        clone = pickle.loads(pickle.dumps(original))
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        np.testing.assert_array_equal(clone.means(rng_a), original.means(rng_b))
        assert repr(clone) == repr(original)
    arms = pickle.loads(pickle.dumps(instance.arms()))
    assert not arms.means.flags.writeable


# --- Arms --------------------------------------------------------------------------------------


def test_arms_copy_and_freeze_their_arrays() -> None:
    src = np.array([0.2, 0.8])
    arms = Arms(src, "bernoulli")
    src[0] = 0.9
    assert arms.means[0] == 0.2 and arms.means.dtype == np.float64
    with pytest.raises(ValueError):
        arms.means[0] = 0.5
    assert arms.n_arms == 2 and arms.sub_gaussian_sigma == 0.5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"means": [0.2, 1.2], "distribution": "bernoulli"},
         r"bernoulli means must lie in \[0, 1\], got 1.2"),
        ({"means": [0.2, -0.1], "distribution": "bernoulli"}, "got -0.1"),
        ({"means": [0.2, 0.3], "distribution": "poisson"}, "distribution must be one of"),
        ({"means": [0.2, float("inf")], "distribution": "gaussian", "sigma": 1.0}, "finite"),
        ({"means": [[0.2]], "distribution": "bernoulli"}, "1-D"),
        ({"means": [], "distribution": "bernoulli"}, "at least one arm"),
        ({"means": [0.2], "distribution": "gaussian"}, "finite sigma > 0, got sigma=None"),
        ({"means": [0.2], "distribution": "gaussian", "sigma": -1.0}, "sigma > 0"),
        ({"means": [0.2], "distribution": "bernoulli", "sigma": 1.0}, "sigma is only for gaussian"),
        ({"means": [0.5], "distribution": "categorical"}, "need both support and probs"),
        ({"means": [0.5], "distribution": "categorical", "support": [1, 0], "probs": [[0.5, 0.5]]},
         "strictly increasing"),
        ({"means": [0.5], "distribution": "categorical", "support": [0, 1], "probs": [[0.6, 0.6]]},
         "row 0 sums to 1.2"),
        ({"means": [0.5], "distribution": "categorical", "support": [0, 1], "probs": [[1.5, -0.5]]},
         "probs must be >= 0"),
        ({"means": [0.5], "distribution": "categorical", "support": [0, 1],
          "probs": [[0.5, 0.5, 0]]},
         "probs must have shape"),
        ({"means": [0.4], "distribution": "categorical", "support": [0, 1], "probs": [[0.5, 0.5]]},
         "means must equal probs @ support"),
    ],
)  # fmt: skip
def test_arms_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Arms(**kwargs)  # type: ignore[arg-type]


def test_arms_permuted_and_sub_gaussian_sigma() -> None:
    arms = inst.from_categorical(
        [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], [-1.0, 0.0, 3.0], k=1
    ).arms()
    np.testing.assert_allclose(arms.means, [-0.5, 3.0, -1.0])
    assert arms.sub_gaussian_sigma == 2.0  # (3 - (-1)) / 2
    moved = arms.permuted(np.array([2, 0, 1]))
    np.testing.assert_allclose(moved.means, [-1.0, -0.5, 3.0])
    assert moved.probs is not None and arms.probs is not None and moved.support is not None
    np.testing.assert_allclose(moved.probs, arms.probs[[2, 0, 1]])
    np.testing.assert_array_equal(moved.support, arms.support)  # type: ignore[arg-type]
    bads: list[Any] = [[0, 1, 1], [0, 1], [0.0, 1.0, 2.0], [0, 1, 3]]
    for bad in bads:
        with pytest.raises(ValueError, match=r"permutation of range\(3\)"):
            arms.permuted(bad)
    assert Arms(np.array([1.0]), "gaussian", sigma=0.3).sub_gaussian_sigma == 0.3


def test_from_means_and_from_categorical() -> None:
    custom = inst.from_means([0.1, 0.9, 0.5], k=1)
    assert (custom.name, custom.n_arms, custom.k) == ("custom", 3, 1)
    assert custom.distribution == "bernoulli" and custom.reference
    assert custom.hardness().gaps == pytest.approx([0.8, 0.4, 0.4])
    g = inst.from_means([3.0, -1.0], k=1, distribution="gaussian", sigma=2.0, name="g")
    assert g.sigma == 2.0 and g.name == "g"
    with pytest.raises(ValueError, match="use from_categorical"):
        inst.from_means([0.5, 0.4], k=1, distribution="categorical")
    with pytest.raises(ValueError, match=r"1 <= k < n_arms \(= 2\)"):
        inst.from_means([0.5, 0.4], k=2)
    with pytest.raises(ValueError, match="gaussian arms need"):
        inst.from_means([0.5, 0.4], k=1, distribution="gaussian")
    with pytest.raises(ValueError, match="columns"):
        inst.from_categorical([[0.5, 0.5]], [0.0, 0.5, 1.0], k=1)


# --- loaders -----------------------------------------------------------------------------------


def test_load_worker_table(worker_csv: Path) -> None:
    instance = inst.load_worker_table(worker_csv, k=2)
    np.testing.assert_allclose(instance.means(), [0.9, 0.5, 0.25, 1.0], rtol=0, atol=1e-15)
    assert instance.name == "workers" and instance.distribution == "bernoulli"
    assert inst.load_worker_table(worker_csv, k=1, name="w").name == "w"
    rte = inst.make("zhou2014-rte", path=worker_csv, k=3)
    np.testing.assert_array_equal(rte.means(), instance.means())
    with pytest.raises(ValueError, match="n_arms=5 given but .* has 4 arms"):
        inst.make("zhou2014-rte", path=worker_csv, n_arms=5)


def test_worker_table_without_accuracy_column(tmp_path: Path) -> None:
    rows = [["x", 4, 3], ["y", 2, 0]]
    path = write_csv(tmp_path / "w.csv", ["worker_id", "n_answers", "n_correct"], rows)
    np.testing.assert_allclose(inst.load_worker_table(path, k=1).means(), [0.75, 0.0])


@pytest.mark.parametrize(
    ("header", "rows", "match"),
    [
        (["worker_id", "n_answers"], [["a", 3]], r"w\.csv: missing column 'n_correct'"),
        (["id", "n_answers", "n_correct"], [["a", 3, 1]], "missing column 'worker_id'"),
        (["worker_id", "n_answers", "n_correct"], [["a", 3, -1], ["b", 2, 1]],
         r"line 2: column 'n_correct' must be >= 0"),
        (["worker_id", "n_answers", "n_correct"], [["a", 3, 1], ["b", 2, 3]],
         r"line 3: n_correct \(3\) must be <= n_answers \(2\)"),
        (WORKER, [["a", 0, 0], ["b", 2, 1]], "n_answers must be > 0"),
        (WORKER, [["a", 2.5, 1], ["b", 2, 1]], "whole-number count"),
        (["worker_id", "n_answers", "n_correct"], [["a", "", 1], ["b", 2, 1]], "empty value"),
        (WORKER, [["a", 2, 1], ["a", 2, 1]], "duplicate worker_id"),
        (["worker_id", "n_answers", "n_correct", "accuracy"], [["a", 4, 1, 0.5], ["b", 2, 1, 0.5]],
         "accuracy 0.5 must equal n_correct / n_answers = 1/4"),
        (["worker_id", "n_answers", "n_correct"], [], "no data rows"),
        (["worker_id", "n_answers", "n_correct"], [["a", 2, 1]], "at least 2 workers"),
    ],
)  # fmt: skip
def test_worker_table_validation(
    tmp_path: Path, header: list[str], rows: list[list[object]], match: str
) -> None:
    path = write_csv(tmp_path / "w.csv", header, rows)
    with pytest.raises(ValueError, match=match):
        inst.load_worker_table(path, k=1)


def test_load_rating_table(rating_csv: Path) -> None:
    instance = inst.load_rating_table(rating_csv, k=1)
    arms = instance.arms()
    np.testing.assert_allclose(arms.probs, [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5], [1, 0, 0]])  # type: ignore[arg-type]
    np.testing.assert_allclose(arms.means, [0.375, 0.625, 0.0])
    np.testing.assert_array_equal(arms.support, [0.0, 0.5, 1.0])  # type: ignore[arg-type]
    assert instance.distribution == "categorical" and instance.name == "ratings"
    assert instance.params["columns"] == ("n_unfunny", "n_somewhat", "n_funny")
    two = {"support": (1, 2), "columns": ("n_unfunny", "n_funny")}
    with pytest.raises(ValueError, match=r"n_total \(4\) must equal .* total_column=None"):
        inst.load_rating_table(rating_csv, k=1, **two)  # type: ignore[arg-type]
    custom = inst.load_rating_table(rating_csv, k=1, total_column=None, **two)  # type: ignore[arg-type]
    np.testing.assert_allclose(custom.means(), [4 / 3, 5 / 3, 1.0])
    caption = inst.make("shahrampour2017-caption", path=rating_csv, k=1)
    np.testing.assert_array_equal(caption.means(), instance.means())


@pytest.mark.parametrize(
    ("header", "rows", "match"),
    [
        (["n_unfunny", "n_funny"], [[1, 2]], r"r\.csv: missing column 'n_somewhat'"),
        (RATING, [[1, -2, 3], [1, 1, 1]], "column 'n_somewhat' must be >= 0"),
        (RATING, [[1, 2, 3], [0, 0, 0]], r"line 3: the counts .* sum to 0"),
        (["n_unfunny", "n_somewhat", "n_funny", "n_total"], [[1, 2, 3, 7], [1, 1, 1, 3]],
         r"n_total \(7\) must equal the sum"),
        (["n_unfunny", "n_somewhat", "n_funny"], [[1, "x", 3], [1, 1, 1]], "whole-number count"),
    ],
)  # fmt: skip
def test_rating_table_validation(
    tmp_path: Path, header: list[str], rows: list[list[object]], match: str
) -> None:
    path = write_csv(tmp_path / "r.csv", header, rows)
    with pytest.raises(ValueError, match=match):
        inst.load_rating_table(path, k=1)


def test_rating_table_support_must_match_columns(rating_csv: Path) -> None:
    with pytest.raises(ValueError, match="one value per column"):
        inst.load_rating_table(rating_csv, k=1, support=(0.0, 1.0))
    with pytest.raises(ValueError, match="strictly increasing"):
        inst.load_rating_table(rating_csv, k=1, support=(1.0, 0.5, 0.0))


def test_missing_file_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        inst.load_worker_table(tmp_path / "nope.csv", k=1)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        inst.load_rating_table(empty, k=1)


# --- real data (skipped when absent) -------------------------------------------------------------


@pytest.mark.skipif(not RTE.exists(), reason="shared RTE table not available")
def test_real_rte_workers() -> None:
    instance = inst.make("zhou2014-rte", path=RTE)
    assert (instance.n_arms, instance.k) == (164, 10)
    with open(RTE, newline="") as fh:
        rows = list(csv.DictReader(fh))
    expected = [int(r["n_correct"]) / int(r["n_answers"]) for r in rows]
    np.testing.assert_allclose(instance.means(), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(instance.means(), [float(r["accuracy"]) for r in rows], atol=1e-12)
    assert sum(int(r["n_answers"]) for r in rows) == 8000  # PROVENANCE.md


@pytest.mark.skipif(not CAPTION.exists(), reason="shared caption table not available")
def test_real_caption_559() -> None:
    instance = inst.make("shahrampour2017-caption", path=CAPTION)
    assert (instance.n_arms, instance.k, instance.distribution) == (138, 2, "categorical")
    with open(CAPTION, newline="") as fh:
        rows = list(csv.DictReader(fh))
    mean_01 = [float(r["mean_01"]) for r in rows]
    np.testing.assert_allclose(instance.means(), mean_01, rtol=0, atol=1e-12)
    assert sum(int(r["n_total"]) for r in rows) == 62743  # PROVENANCE.md
    assert math.isfinite(instance.hardness().h1)


def test_means_batch_matches_the_law_of_single_draws() -> None:
    random_inst = inst.make("uniform-random", n_arms=5, k=2)
    batch = random_inst.means_batch(np.random.default_rng(0), 4000)
    assert batch.shape == (4000, 5) and batch.min() >= 0 and batch.max() <= 1
    # mean of 20000 Unif[0,1]: Hoeffding at level 1e-6
    assert abs(batch.mean() - 0.5) <= np.sqrt(np.log(2e6) / (2 * batch.size))
    fixed = inst.make("jun2016-linear", n_arms=6, k=2)
    assert np.array_equal(fixed.means_batch(None, 3)[2], fixed.means())
    with pytest.raises(ValueError, match="needs"):
        random_inst.means_batch(None, 2)


@pytest.mark.parametrize("dist", ["bernoulli", "gaussian", "categorical"])
def test_trusted_permutation_gives_the_checked_one(dist: str) -> None:
    """The env's reset shuffle (``Arms._permuted_trusted``) gives the arms ``permuted`` gives."""
    rng = np.random.default_rng(7)
    if dist == "categorical":
        made = inst.from_categorical(
            rng.dirichlet(np.ones(3), size=6), np.array([0.0, 0.5, 1.0]), k=2
        )
    else:
        made = inst.from_means(
            rng.random(6), k=2, distribution=dist, sigma=0.5 if dist == "gaussian" else None
        )
    arms = made.arms()
    perm = rng.permutation(6)
    want, got = arms.permuted(perm), arms._permuted_trusted(perm)
    for field in ("means", "probs", "support"):
        a, b = getattr(want, field), getattr(got, field)
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b) and a.dtype == b.dtype and not b.flags.writeable
    assert (want.distribution, want.sigma) == (got.distribution, got.sigma)
