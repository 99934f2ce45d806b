"""Catalog of the top-K bandit instances used in the papers' experiments.

Each entry is resolved with :func:`make` into an :class:`Instance`; ``instance.arms(rng)``
gives the reward distributions (:class:`Arms`) of one episode. Arms are listed best
first where the paper indexes them that way (the environment shuffles them). All
synthetic families take ``n_arms`` and ``k``; the defaults are the papers'.

| name | n_arms | k | means, i = 1..n | rewards | params (defaults) | source |
| --- | --- | --- | --- | --- | --- | --- |
| uniform-random | 1000 | 10 | theta_i ~ Unif[0, 1] (random) | Bernoulli | | zhou2014 Sec. 6.1 |
| beta-random | 1000 | 10 | theta_i ~ Beta(a, b) (random) | Bernoulli | a=5, b=5 | shahrampour2017 IV.A setup 5; zhou2014 App. E |
| zhou2014-two-level | 1000 | 10 | high for i <= k, low after | Bernoulli | high=0.6, low=0.5 | zhou2014 Sec. 6.1 |
| zhou2014-rte | file | 10 | worker accuracies | Bernoulli | path (required) | zhou2014 Sec. 6.2 |
| chen2017-twogroup | 1000 | 100 | high for i <= k, low after | Bernoulli | high=0.7, low=0.3 | chen2017 Sec. 3 |
| chen2017-uniform | 1000 | 100 | 1 - i/n | Bernoulli | | chen2017 Sec. 3 |
| chen2017-synthetic | 1000 | 100 | SYNTHETIC-p (see :func:`_exponential_profile`) | Bernoulli | p=0.5 | chen2017 Sec. 3 |
| shahrampour2017-setup1 | 50 | 2 | 0.7 (k), 0.5 | Bernoulli | | shahrampour2017 IV.A |
| shahrampour2017-setup2 | 50 | 2 | 0.7 (k), 0.66 (k), 0.5 | Bernoulli | | shahrampour2017 IV.A |
| shahrampour2017-setup3 | 50 | 2 | 0.7 (k), 0.66 (k), 0.62 (k), 0.5 | Bernoulli | | shahrampour2017 IV.A |
| shahrampour2017-setup4 | 50 | 2 | mu_1 - 0.6 (i - 1)/(n - 1) | Bernoulli | mu_1=0.7 | shahrampour2017 IV.A |
| shahrampour2017-setup5 | 50 | 2 | Beta(a, b) (random) | Bernoulli | a=5, b=5 | shahrampour2017 IV.A |
| shahrampour2017-setup6 | 50 | 2 | 0.7 (k), 0.68 (one), 0.5 | Bernoulli | | shahrampour2017 IV.A |
| shahrampour2017-caption | file | 2 | caption rating frequencies | categorical {0, .5, 1} | path (required) | shahrampour2017 IV.B |
| jun2016-linear | 100 | 10 | (n - i)/(n - 1) | Bernoulli | | jun2016 Sec. 5.1 |
| jun2016-sparse | 100 | 10 | high for i <= n_top, low after | Bernoulli | n_top=k, high=0.5, low=0.3 | jun2016 Sec. 5.1 |
| jun2016-virus | 12979 | 100 | file column, or Gumbel-quantile stand-in | Gaussian | path=None, column="mean", sigma=sqrt(0.1) | jun2016 Sec. 5.2 |
| jun2016-twitter | 522062 | 100 | mu_max * i^-alpha (stand-in) | Bernoulli | alpha=0.2624, mu_max=0.003545 | jun2016 Sec. 5.3 |
| jiang2017-1-sparse | 100 | 2 | 1/2 for i <= k, 0 after | Gaussian | sigma=0.5 | jiang2017 Sec. 5.1 |
| jiang2017-exponential | 100 | 2 | alpha-exponential (see :func:`_exponential_profile`) | Gaussian | alpha=0.3, sigma=0.5 | jiang2017 Sec. 5.1 |
| jiang2017-lil-exponential | 100 | 1 | 1 - ((i - 1)/n)^alpha | Gaussian | alpha=0.3, sigma=0.5 | jiang2017 Sec. 5.2 |

Choices where the papers leave something open are stated in each builder's docstring
and in ``CatalogEntry.description``.
"""

from __future__ import annotations

import math
import numbers
import operator
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from . import hardness as _hardness
from . import loaders as _loaders

__all__ = [
    "DISTRIBUTIONS",
    "Arms",
    "CatalogEntry",
    "Instance",
    "available",
    "catalog",
    "from_categorical",
    "from_means",
    "load_rating_table",
    "load_worker_table",
    "make",
]

DISTRIBUTIONS = ("bernoulli", "gaussian", "categorical")
_TOL = 1e-9

DrawFn = Callable[[int, Mapping[str, Any], np.random.Generator], np.ndarray]


def _frozen(value: Any, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers, got {value!r}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr[~np.isfinite(arr)][0]}")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Arms:
    """The reward distributions of one episode (what the environment samples from).

    Attributes:
        means: float64, shape ``(n_arms,)``, read-only.
        distribution: One of :data:`DISTRIBUTIONS`.
        sigma: Standard deviation of every arm (gaussian only, else ``None``).
        support: Categorical reward values, shape ``(m,)``, strictly increasing.
        probs: Categorical probabilities, shape ``(n_arms, m)``, rows sum to 1 and
            ``means == probs @ support`` (tolerance 1e-9).

    Raises:
        ValueError: On any violated rule, naming the value and the rule.
    """

    means: np.ndarray
    distribution: str
    sigma: float | None = None
    support: np.ndarray | None = None
    probs: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"distribution must be one of {DISTRIBUTIONS}, got {self.distribution!r}"
            )
        means = _frozen(self.means, "means", 1)
        if means.size == 0:
            raise ValueError("means must hold at least one arm, got 0")
        object.__setattr__(self, "means", means)
        dist = self.distribution
        if dist != "gaussian" and self.sigma is not None:
            raise ValueError(
                f"sigma is only for gaussian arms, got sigma={self.sigma!r} for {dist}"
            )
        if dist != "categorical" and (self.support is not None or self.probs is not None):
            raise ValueError(f"support/probs are only for categorical arms, got them for {dist}")
        if dist == "bernoulli" and not np.all((means >= 0) & (means <= 1)):
            bad = means[(means < 0) | (means > 1)][0]
            raise ValueError(f"bernoulli means must lie in [0, 1], got {bad}")
        if dist == "gaussian":
            ok = isinstance(self.sigma, numbers.Real) and not isinstance(self.sigma, bool)
            if not ok or not (math.isfinite(self.sigma) and self.sigma > 0):  # type: ignore[arg-type]
                raise ValueError(f"gaussian arms need a finite sigma > 0, got sigma={self.sigma!r}")
            object.__setattr__(self, "sigma", float(self.sigma))  # type: ignore[arg-type]
        if dist == "categorical":
            self._check_categorical(means)

    def _check_categorical(self, means: np.ndarray) -> None:
        if self.support is None or self.probs is None:
            raise ValueError("categorical arms need both support and probs")
        support = _frozen(self.support, "support", 1)
        if support.size == 0 or np.any(np.diff(support) <= 0):
            raise ValueError(f"support must be non-empty and strictly increasing, got {support}")
        probs = _frozen(self.probs, "probs", 2)
        if probs.shape != (means.size, support.size):
            raise ValueError(
                f"probs must have shape (n_arms, len(support)) = {(means.size, support.size)}, "
                f"got {probs.shape}"
            )
        if np.any(probs < 0):
            raise ValueError(f"probs must be >= 0, got {probs[probs < 0][0]}")
        row_sums = probs.sum(axis=1)
        bad = np.flatnonzero(np.abs(row_sums - 1.0) > _TOL)
        if bad.size:
            raise ValueError(
                f"each row of probs must sum to 1, row {bad[0]} sums to {row_sums[bad[0]]}"
            )
        implied = probs @ support
        bad = np.flatnonzero(
            np.abs(implied - means) > _TOL * max(1.0, float(np.abs(support).max()))
        )
        if bad.size:
            i = bad[0]
            raise ValueError(
                f"means must equal probs @ support, arm {i}: {means[i]} != {implied[i]}"
            )
        object.__setattr__(self, "support", support)
        object.__setattr__(self, "probs", probs)

    def __reduce__(self) -> tuple[Any, ...]:
        # Re-run validation on unpickling so the arrays are read-only again.
        return (Arms, (self.means, self.distribution, self.sigma, self.support, self.probs))

    @property
    def n_arms(self) -> int:
        """Number of arms."""
        return int(self.means.size)

    @property
    def sub_gaussian_sigma(self) -> float:
        """A sub-Gaussian parameter of every arm.

        ``sigma`` for gaussian; 1/2 for bernoulli and ``(max support - min support)/2`` for
        categorical (Hoeffding's lemma for bounded rewards).
        """
        if self.distribution == "gaussian":
            return float(self.sigma)  # type: ignore[arg-type]
        if self.distribution == "bernoulli":
            return 0.5
        return 0.5 * float(self.support[-1] - self.support[0])  # type: ignore[index]

    def permuted(self, perm: Sequence[int] | np.ndarray) -> Arms:
        """The same arms in another order: new arm j is old arm ``perm[j]``.

        Raises:
            ValueError: If ``perm`` is not a permutation of ``range(n_arms)``.
        """
        p = np.asarray(perm)
        if (
            p.shape != (self.n_arms,)
            or not np.issubdtype(p.dtype, np.integer)
            or not np.array_equal(np.sort(p), np.arange(self.n_arms))
        ):
            raise ValueError(f"perm must be a permutation of range({self.n_arms}), got {perm!r}")
        probs = None if self.probs is None else self.probs[p]
        return Arms(self.means[p], self.distribution, self.sigma, self.support, probs)


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _check_k(k: Any, n_arms: int) -> int:
    k = _as_int(k, "k")
    if not 1 <= k < n_arms:
        raise ValueError(f"k must satisfy 1 <= k < n_arms (= {n_arms}), got k = {k}")
    return k


class Instance:
    """A catalog entry resolved with its parameters: fixed means, or a recipe for random means.

    Build instances with :func:`make`, :func:`from_means`, :func:`from_categorical` or the
    loaders rather than directly. Exactly one of ``arms`` (fixed) and ``draw`` (random,
    called as ``draw(n_arms, params, rng)``; must be a module-level function so that
    instances pickle) is given.
    """

    __slots__ = (
        "_name",
        "_k",
        "_arms",
        "_draw",
        "_n_arms",
        "_distribution",
        "_sigma",
        "_params",
        "_reference",
        "_description",
    )

    def __init__(
        self,
        name: str,
        k: int,
        *,
        arms: Arms | None = None,
        draw: DrawFn | None = None,
        n_arms: int | None = None,
        distribution: str | None = None,
        sigma: float | None = None,
        params: Mapping[str, Any] | None = None,
        reference: str = "",
        description: str = "",
    ) -> None:
        if (arms is None) == (draw is None):
            raise ValueError("give exactly one of arms (fixed means) and draw (random means)")
        if arms is not None:
            n_arms, distribution, sigma = arms.n_arms, arms.distribution, arms.sigma
        else:
            n_arms = _as_int(n_arms, "n_arms")
            if distribution not in ("bernoulli", "gaussian"):
                raise ValueError(
                    f"random instances support bernoulli or gaussian, got {distribution!r}"
                )
            Arms(np.full(1, 0.5), distribution, sigma)  # validates sigma
        self._name = str(name)
        self._n_arms = int(n_arms)  # type: ignore[arg-type]
        self._k = _check_k(k, self._n_arms)
        self._arms, self._draw = arms, draw
        self._distribution, self._sigma = distribution, sigma
        self._params = dict(params or {})
        self._reference, self._description = reference, description

    @property
    def name(self) -> str:
        """Catalog name (or the name given)."""
        return self._name

    @property
    def n_arms(self) -> int:
        """Number of arms."""
        return self._n_arms

    @property
    def k(self) -> int:
        """Number of top arms to identify."""
        return self._k

    @property
    def distribution(self) -> str:
        """One of :data:`DISTRIBUTIONS`."""
        return self._distribution  # type: ignore[return-value]

    @property
    def sigma(self) -> float | None:
        """Gaussian standard deviation, else ``None``."""
        return self._sigma

    @property
    def is_random(self) -> bool:
        """True when the means are drawn per episode."""
        return self._draw is not None

    @property
    def reference(self) -> str:
        """Source, e.g. ``"zhou2014 Sec. 6.1"``."""
        return self._reference

    @property
    def description(self) -> str:
        """One-line description."""
        return self._description

    @property
    def params(self) -> Mapping[str, Any]:
        """The resolved parameters (defaults filled in), read-only."""
        return MappingProxyType(self._params)

    def arms(self, rng: np.random.Generator | None = None) -> Arms:
        """Reward distributions of one episode.

        Args:
            rng: Required for random instances, which draw only from it. Fixed
                instances ignore it and always return the same :class:`Arms`.

        Raises:
            ValueError: If the instance is random and ``rng`` is not a ``numpy.random.Generator``.
        """
        if self._arms is not None:
            return self._arms
        if not isinstance(rng, np.random.Generator):
            raise ValueError(
                f"instance {self._name!r} draws its means at random and needs "
                f"rng=np.random.Generator (e.g. np.random.default_rng(seed)), got {rng!r}"
            )
        means = self._draw(self._n_arms, self.params, rng)  # type: ignore[misc]
        return Arms(means, self._distribution, self._sigma)  # type: ignore[arg-type]

    def means(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """``arms(rng).means`` (read-only)."""
        return self.arms(rng).means

    def hardness(self, rng: np.random.Generator | None = None) -> _hardness.Hardness:
        """Hardness measures (:mod:`bandit_envs.hardness`) of ``arms(rng).means`` at this k."""
        return _hardness.hardness(self.arms(rng).means, self._k)

    def __repr__(self) -> str:
        return f"Instance(name={self._name!r}, n_arms={self._n_arms}, k={self._k}, params={self._params!r})"


@dataclass(frozen=True, eq=False)
class CatalogEntry:
    """A named setup with the paper's defaults.

    Attributes:
        name: Catalog name.
        n_arms: Default number of arms; ``None`` when it comes from the data file ``path``.
        k: Default number of top arms.
        params: Default parameters (read-only); ``None`` marks a required ``path``.
        reference: Paper and section.
        description: One line, including every interpretation the paper left open.
        random: True if means are drawn per episode.
        distribution: One of :data:`DISTRIBUTIONS`.
    """

    name: str
    n_arms: int | None
    k: int
    params: Mapping[str, Any]
    reference: str
    description: str
    random: bool
    distribution: str
    build: Callable[[CatalogEntry, int | None, int, dict[str, Any]], Instance] = field(repr=False)


_CATALOG: dict[str, CatalogEntry] = {}


def _register(
    name: str,
    n_arms: int | None,
    k: int,
    ref: str,
    desc: str,
    *,
    params: Mapping[str, Any] | None = None,
    dist: str = "bernoulli",
    random: bool = False,
) -> Callable[[Callable[..., Instance]], Callable[..., Instance]]:
    def deco(build: Callable[..., Instance]) -> Callable[..., Instance]:
        _CATALOG[name] = CatalogEntry(
            name, n_arms, k, MappingProxyType(dict(params or {})), ref, desc, random, dist, build
        )
        return build

    return deco


def available() -> list[str]:
    """Sorted catalog names."""
    return sorted(_CATALOG)


def catalog() -> dict[str, CatalogEntry]:
    """Catalog name -> :class:`CatalogEntry` (a new dict, sorted by name)."""
    return {name: _CATALOG[name] for name in available()}


def make(name: str, n_arms: int | None = None, k: int | None = None, **params: Any) -> Instance:
    """Resolve a catalog entry into an :class:`Instance`.

    Args:
        name: A name from :func:`available`.
        n_arms: Number of arms; defaults to the paper's. For file-based entries it is
            read from the file and, if given, must match.
        k: Number of top arms, ``1 <= k < n_arms``; defaults to the paper's.
        **params: Entry parameters (see ``catalog()[name].params``).

    Raises:
        ValueError: Unknown name (lists the available ones), unknown parameter (lists
            the accepted ones), or any out-of-range value.
    """
    entry = _CATALOG.get(name)
    if entry is None:
        raise ValueError(f"unknown instance {name!r}; available: {', '.join(available())}")
    unknown = sorted(set(params) - set(entry.params))
    if unknown:
        accepted = ", ".join(entry.params) or "(none)"
        raise ValueError(
            f"unknown param {unknown[0]!r} for instance {name!r}; accepted: {accepted}"
        )
    resolved = {**entry.params, **params}
    return entry.build(entry, n_arms, entry.k if k is None else k, resolved)


# --- parameter checks -------------------------------------------------------------------------


def _real(
    params: dict[str, Any],
    key: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> float:
    value = params[key]
    rule = (
        " and ".join(
            r
            for r in (
                (f"{'>' if lo_open else '>='} {lo}" if lo is not None else ""),
                (f"<= {hi}" if hi is not None else ""),
            )
            if r
        )
        or "finite"
    )
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    ok = (
        math.isfinite(x)
        and (lo is None or (x > lo if lo_open else x >= lo))
        and (hi is None or x <= hi)
    )
    if not ok:
        raise ValueError(f"param {key!r} must be a number {rule}, got {value!r}")
    params[key] = x
    return x


def _levels(params: dict[str, Any]) -> tuple[float, float]:
    high, low = _real(params, "high", 0.0, 1.0), _real(params, "low", 0.0, 1.0)
    if not low < high:
        raise ValueError(
            f"param 'low' must be < 'high' so the high arms are the top ones, got low={low}, high={high}"
        )
    return high, low


def _nk(
    entry: CatalogEntry, n_arms: int | None, k: int, min_n: Callable[[int], int] | None = None
) -> tuple[int, int]:
    n = _as_int(entry.n_arms if n_arms is None else n_arms, "n_arms")
    if n < 2:
        raise ValueError(f"n_arms must be >= 2, got {n}")
    k = _check_k(k, n)
    if min_n is not None and n < min_n(k):
        raise ValueError(f"{entry.name} needs n_arms >= {min_n(k)} for k = {k}, got n_arms = {n}")
    return n, k


def _fixed(
    entry: CatalogEntry,
    k: int,
    params: dict[str, Any],
    means: np.ndarray,
    sigma: float | None = None,
) -> Instance:
    return Instance(
        entry.name,
        k,
        arms=Arms(means, entry.distribution, sigma),
        params=params,
        reference=entry.reference,
        description=entry.description,
    )


def _random(entry: CatalogEntry, n: int, k: int, params: dict[str, Any], draw: DrawFn) -> Instance:
    return Instance(
        entry.name,
        k,
        draw=draw,
        n_arms=n,
        distribution=entry.distribution,
        params=params,
        reference=entry.reference,
        description=entry.description,
    )


def _path(entry: CatalogEntry, params: dict[str, Any], what: str) -> str:
    path = params["path"]
    if path is None:
        raise ValueError(f"make({entry.name!r}) requires param 'path': {what}")
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"param 'path' must be a str or os.PathLike, got {path!r}")
    params["path"] = os.fspath(path)
    return params["path"]


def _file_n(entry: CatalogEntry, n_arms: int | None, n_file: int, path: str) -> None:
    if n_arms is not None and _as_int(n_arms, "n_arms") != n_file:
        raise ValueError(f"{entry.name}: n_arms={n_arms} given but {path} has {n_file} arms")


def _ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def _exponential_profile(n: int, k: int, power: float) -> np.ndarray:
    """chen2017 SYNTHETIC-p / jiang2017 alpha-exponential means, i = 1..n (best first).

    ``(1 - K/n) + (K/n) ((K - i)/K)^power`` for ``i <= K`` and
    ``(1 - K/n) - (1 - K/n) ((i - K)/(n - K))^power`` for ``i > K`` (jiang2017 Sec. 5.1;
    chen2017 Sec. 3 as restored in paper-notes). ``power = 1`` gives exactly ``1 - i/n``.
    """
    i = _ranks(n)
    b = 1.0 - k / n
    top = b + (k / n) * np.clip((k - i) / k, 0.0, None) ** power
    bottom = b - b * np.clip((i - k) / (n - k), 0.0, None) ** power
    return np.where(i <= k, top, bottom)


def _groups(n: int, levels: Sequence[tuple[int, float]], rest: float) -> np.ndarray:
    means = np.full(n, rest)
    start = 0
    for size, value in levels:
        means[start : start + size] = value
        start += size
    return means


# --- random recipes (module level so that instances pickle) -------------------------------------


def _draw_uniform(n: int, params: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.0, 1.0, size=n)


def _draw_beta(n: int, params: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    return rng.beta(params["a"], params["b"], size=n)


# --- catalog ------------------------------------------------------------------------------------


@_register(
    "uniform-random",
    1000,
    10,
    "zhou2014 Sec. 6.1",
    "theta_i ~ Unif[0, 1] i.i.d., drawn per episode",
    random=True,
)
def _uniform_random(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    return _random(entry, n, k, params, _draw_uniform)


@_register(
    "beta-random",
    1000,
    10,
    "shahrampour2017 Sec. IV.A setup 5; zhou2014 App. E",
    "theta_i ~ Beta(a, b) i.i.d., drawn per episode (zhou2014 App. E uses Beta(4, 1))",
    params={"a": 5.0, "b": 5.0},
    random=True,
)
def _beta_random(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    _real(params, "a", 0.0, lo_open=True)
    _real(params, "b", 0.0, lo_open=True)
    return _random(entry, n, k, params, _draw_beta)


@_register(
    "zhou2014-two-level",
    1000,
    10,
    "zhou2014 Sec. 6.1",
    "theta = high for the k best arms, low for the rest",
    params={"high": 0.6, "low": 0.5},
)
def _zhou_two_level(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    high, low = _levels(params)
    return _fixed(entry, k, params, _groups(n, [(k, high)], low))


@_register(
    "zhou2014-rte",
    None,
    10,
    "zhou2014 Sec. 6.2",
    "RTE worker accuracies (Snow et al. 2008) from a worker table; n_arms from the file",
    params={"path": None},
)
def _zhou_rte(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    path = _path(entry, params, "a worker-accuracy CSV (worker_id,n_answers,n_correct)")
    arms = _worker_arms(path)
    _file_n(entry, n_arms, arms.n_arms, path)
    return Instance(
        entry.name,
        k,
        arms=arms,
        params=params,
        reference=entry.reference,
        description=entry.description,
    )


@_register(
    "chen2017-twogroup",
    1000,
    100,
    "chen2017 Sec. 3",
    "TWOGROUP: high for the k best arms, low for the rest",
    params={"high": 0.7, "low": 0.3},
)
def _chen_twogroup(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    high, low = _levels(params)
    return _fixed(entry, k, params, _groups(n, [(k, high)], low))


@_register("chen2017-uniform", 1000, 100, "chen2017 Sec. 3", "UNIFORM: theta_i = 1 - i/n, i = 1..n")
def _chen_uniform(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    return _fixed(entry, k, params, 1.0 - _ranks(n) / n)


@_register(
    "chen2017-synthetic",
    1000,
    100,
    "chen2017 Sec. 3 (formula restored in paper-notes)",
    "SYNTHETIC-p: (1-K/n) + (K/n)((K-i)/K)^p for i <= K, (1-K/n)(1 - ((i-K)/(n-K))^p) after; p=1 is UNIFORM",
    params={"p": 0.5},
)
def _chen_synthetic(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    p = _real(params, "p", 0.0, lo_open=True)
    return _fixed(entry, k, params, _exponential_profile(n, k, p))


_SH = "shahrampour2017 Sec. IV.A"


@_register(
    "shahrampour2017-setup1",
    50,
    2,
    _SH + " setup 1",
    "one group of suboptimal arms: 0.7 (k arms), 0.5 rest",
)
def _sh1(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k)
    return _fixed(entry, k, params, _groups(n, [(k, 0.7)], 0.5))


@_register(
    "shahrampour2017-setup2",
    50,
    2,
    _SH + " setup 2",
    "two groups: 0.7 (k arms), 0.66 (next k), 0.5 rest",
)
def _sh2(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k, lambda k: 2 * k + 1)
    return _fixed(entry, k, params, _groups(n, [(k, 0.7), (k, 0.66)], 0.5))


@_register(
    "shahrampour2017-setup3",
    50,
    2,
    _SH + " setup 3",
    "three groups: 0.7 (k arms), 0.66 (next k), 0.62 (next k), 0.5 rest",
)
def _sh3(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k, lambda k: 3 * k + 1)
    return _fixed(entry, k, params, _groups(n, [(k, 0.7), (k, 0.66), (k, 0.62)], 0.5))


@_register(
    "shahrampour2017-setup4",
    50,
    2,
    _SH + " setup 4",
    "arithmetic progression mu_i = mu_1 - 0.6 (i-1)/(n-1) (Delta_i = mu_1 - mu_i, Sec. II.A); "
    "mu_1 is not stated, 0.7 matches setups 1-3 and 6",
    params={"mu_1": 0.7},
)
def _sh4(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k)
    mu_1 = _real(params, "mu_1", 0.6, 1.0)
    return _fixed(entry, k, params, mu_1 - 0.6 * (_ranks(n) - 1.0) / (n - 1))


@_register(
    "shahrampour2017-setup5",
    50,
    2,
    _SH + " setup 5",
    "means ~ Beta(a, b) i.i.d., drawn per episode",
    params={"a": 5.0, "b": 5.0},
    random=True,
)
def _sh5(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    return _beta_random(entry, n_arms, k, params)


@_register(
    "shahrampour2017-setup6",
    50,
    2,
    _SH + " setup 6",
    "one real competitive arm: 0.7 (k arms), 0.68 (one), 0.5 rest",
)
def _sh6(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k, lambda k: k + 2)
    return _fixed(entry, k, params, _groups(n, [(k, 0.7), (1, 0.68)], 0.5))


@_register(
    "shahrampour2017-caption",
    None,
    2,
    "shahrampour2017 Sec. IV.B",
    "New Yorker caption contest 559: categorical rewards on {0, 0.5, 1} with each caption's "
    "empirical rating frequencies; n_arms from the file",
    params={"path": None},
    dist="categorical",
)
def _sh_caption(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    path = _path(entry, params, "a rating-count CSV (n_unfunny,n_somewhat,n_funny)")
    arms = _rating_arms(path, _CAPTION_SUPPORT, _CAPTION_COLUMNS)
    _file_n(entry, n_arms, arms.n_arms, path)
    return Instance(
        entry.name,
        k,
        arms=arms,
        params=params,
        reference=entry.reference,
        description=entry.description,
    )


@_register(
    "jun2016-linear", 100, 10, "jun2016 Sec. 5.1", "Linear: mu_i = (n - i)/(n - 1), i = 1..n"
)
def _jun_linear(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    return _fixed(entry, k, params, (n - _ranks(n)) / (n - 1))


@_register(
    "jun2016-sparse",
    100,
    10,
    "jun2016 Sec. 5.1",
    "Sparse: n_top arms at high, the rest at low; the paper's 10 arms at 0.5 with k = 10, so n_top defaults to k",
    params={"n_top": None, "high": 0.5, "low": 0.3},
)
def _jun_sparse(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    n_top = k if params["n_top"] is None else _as_int(params["n_top"], "n_top")
    if not 1 <= n_top < n:
        raise ValueError(f"param 'n_top' must satisfy 1 <= n_top < n_arms (= {n}), got {n_top}")
    params["n_top"] = n_top
    high, low = _levels(params)
    return _fixed(entry, k, params, _groups(n, [(n_top, high)], low))


_VIRUS_N, _VIRUS_SCALE = 12979, 0.25


@_register(
    "jun2016-virus",
    _VIRUS_N,
    100,
    "jun2016 Sec. 5.2",
    "Gaussian N(mu_i, variance 0.1); mu from a CSV column if path is given, else a fixed stand-in "
    "(Hao et al. 2008 data unavailable): right-skewed Gumbel quantiles, few genes with large means",
    params={"path": None, "column": "mean", "sigma": math.sqrt(0.1)},
    dist="gaussian",
)
def _jun_virus(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    """jun2016 Sec. 5.2 virus replication screen.

    The paper simulates ``N(mu_i, 0.1)``; 0.1 is the averaged unbiased *variance*
    estimate, so ``sigma = sqrt(0.1)``. The real per-gene means are not available here.
    Without ``path`` the stand-in is deterministic (no RNG, identical every time):
    ``mu_i = -0.25 * ln(-ln(u_i))`` with ``u_i = (n - i + 0.5)/n``, i.e. the quantiles of a
    Gumbel(0, 0.25) distribution, best first. This reproduces the shape of Fig. 1(a)
    (a bulk of genes near 0 and a long right tail of few large rewards) but not the
    real values; results on it are not comparable with the paper's numbers.
    """
    sigma = _real(params, "sigma", 0.0, lo_open=True)
    if params["path"] is not None:
        path = _path(entry, params, "")
        column = str(params["column"])
        means = _loaders.read_means_column(path, column)
        _file_n(entry, n_arms, means.size, path)
        if means.size < 2:
            raise ValueError(f"{path}: needs at least 2 arms, got {means.size}")
        _check_k(k, means.size)
        return _fixed(entry, k, params, means, sigma)
    n, k = _nk(entry, n_arms, k)
    u = (n - _ranks(n) + 0.5) / n
    return _fixed(entry, k, params, -_VIRUS_SCALE * np.log(-np.log(u)), sigma)


@_register(
    "jun2016-twitter",
    522_062,
    100,
    "jun2016 Sec. 5.3",
    "stand-in power-law rates mu_i = mu_max * i^-alpha for the n most active users, calibrated to "
    "n = 522,062 users, 707,776 tweets and 31*24*12 = 8928 five-minute slots",
    params={"alpha": 0.2624, "mu_max": 0.003545},
)
def _jun_twitter(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    """jun2016 Sec. 5.3 Twitter users (data not public).

    The paper's means ``mu_i`` follow a power law in a log-log plot (Fig. 2(b)). The
    stand-in is ``mu_i = mu_max * i^(-alpha)``, strictly decreasing, best first. The
    defaults solve two constraints stated in Sec. 5.3 for n = 522,062: the least active
    user tweeted once, so ``mu_n = 1/8928`` (8928 = 31 days * 24 hours * 12 slots), and
    ``sum_i mu_i = 707,776/8928`` (every tweet in its own slot). Smaller ``n_arms`` keeps
    the ``n_arms`` most active users of that population. Rewards are Bernoulli(mu_i);
    the paper's daily reward averages 24 hourly Bernoullis with the same mean, so means,
    top-k and gain agree but the per-pull variance is larger here.
    """
    n, k = _nk(entry, n_arms, k)
    alpha = _real(params, "alpha", 0.0, lo_open=True)
    mu_max = _real(params, "mu_max", 0.0, 1.0, lo_open=True)
    return _fixed(entry, k, params, mu_max * _ranks(n) ** -alpha)


_JI = "jiang2017 Sec. 5.1"


@_register(
    "jiang2017-1-sparse",
    100,
    2,
    _JI,
    "1-sparse: 1/2 for the k best arms, 0 for the rest; Gaussian "
    "variance 1/4; K in {2, N/2} in the paper, default N = 100 chosen here (the text gives no N)",
    params={"sigma": 0.5},
    dist="gaussian",
)
def _jiang_sparse(
    entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]
) -> Instance:
    n, k = _nk(entry, n_arms, k)
    sigma = _real(params, "sigma", 0.0, lo_open=True)
    return _fixed(entry, k, params, _groups(n, [(k, 0.5)], 0.0), sigma)


@_register(
    "jiang2017-exponential",
    100,
    2,
    _JI,
    "alpha-exponential: (N-K)/N + (K/N)((K-i)/K)^alpha for i <= K, "
    "(N-K)/N (1 - ((i-K)/(N-K))^alpha) after; Gaussian variance 1/4; default N = 100 chosen here",
    params={"alpha": 0.3, "sigma": 0.5},
    dist="gaussian",
)
def _jiang_exp(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k)
    alpha = _real(params, "alpha", 0.0, lo_open=True)
    sigma = _real(params, "sigma", 0.0, lo_open=True)
    return _fixed(entry, k, params, _exponential_profile(n, k, alpha), sigma)


@_register(
    "jiang2017-lil-exponential",
    100,
    1,
    "jiang2017 Sec. 5.2",
    "lil-exponential: mu_1 = 1, mu_i = 1 - ((i-1)/N)^alpha, alpha in {0.3, 0.6}; Gaussian variance 1/4; "
    "default N = 100 chosen here",
    params={"alpha": 0.3, "sigma": 0.5},
    dist="gaussian",
)
def _jiang_lil(entry: CatalogEntry, n_arms: int | None, k: int, params: dict[str, Any]) -> Instance:
    n, k = _nk(entry, n_arms, k)
    alpha = _real(params, "alpha", 0.0, lo_open=True)
    sigma = _real(params, "sigma", 0.0, lo_open=True)
    return _fixed(entry, k, params, 1.0 - ((_ranks(n) - 1.0) / n) ** alpha, sigma)


# --- custom instances and loaders ---------------------------------------------------------------

_CAPTION_SUPPORT = (0.0, 0.5, 1.0)
_CAPTION_COLUMNS = ("n_unfunny", "n_somewhat", "n_funny")


def from_means(
    means: Sequence[float] | np.ndarray,
    k: int,
    distribution: str = "bernoulli",
    sigma: float | None = None,
    name: str = "custom",
) -> Instance:
    """A fixed instance from explicit means.

    Args:
        means: One mean per arm, in the order to keep.
        k: Number of top arms, ``1 <= k < len(means)``.
        distribution: ``"bernoulli"`` or ``"gaussian"`` (use :func:`from_categorical`
            for categorical arms).
        sigma: Gaussian standard deviation (required for gaussian).
        name: Name shown in ``repr``.
    """
    if distribution == "categorical":
        raise ValueError("distribution 'categorical' needs probs and support: use from_categorical")
    arms = Arms(means, distribution, sigma)
    return Instance(
        name, k, arms=arms, reference="user-supplied means", description="means given by the caller"
    )


def from_categorical(
    probs: Sequence[Sequence[float]] | np.ndarray,
    support: Sequence[float] | np.ndarray,
    k: int,
    name: str = "custom-categorical",
) -> Instance:
    """A fixed instance of categorical arms: arm i gives ``support[j]`` with probability ``probs[i, j]``.

    Args:
        probs: Shape ``(n_arms, m)``, non-negative rows summing to 1.
        support: Shape ``(m,)``, strictly increasing reward values.
        k: Number of top arms.
        name: Name shown in ``repr``.
    """
    p = _frozen(probs, "probs", 2)
    s = _frozen(support, "support", 1)
    if p.shape[1] != s.size:
        raise ValueError(f"probs must have len(support) = {s.size} columns, got shape {p.shape}")
    arms = Arms(p @ s, "categorical", support=s, probs=p)
    return Instance(
        name,
        k,
        arms=arms,
        reference="user-supplied categorical arms",
        description="categorical arms given by the caller",
    )


def _worker_arms(path: str | os.PathLike[str]) -> Arms:
    table = _loaders.read_worker_table(path)
    if table.n_answers.size < 2:
        raise ValueError(f"{os.fspath(path)}: needs at least 2 workers, got {table.n_answers.size}")
    return Arms(table.n_correct / table.n_answers, "bernoulli")


def _rating_arms(
    path: str | os.PathLike[str], support: Sequence[float], columns: Sequence[str]
) -> Arms:
    s = _frozen(support, "support", 1)
    if s.size != len(columns):
        raise ValueError(f"support must have one value per column ({len(columns)}), got {len(s)}")
    counts = _loaders.read_rating_table(path, tuple(columns))
    if counts.shape[0] < 2:
        raise ValueError(f"{os.fspath(path)}: needs at least 2 rows (arms), got {counts.shape[0]}")
    probs = counts / counts.sum(axis=1, keepdims=True)
    return Arms(probs @ s, "categorical", support=s, probs=probs)


def load_worker_table(path: str | os.PathLike[str], k: int, name: str | None = None) -> Instance:
    """Bernoulli arms from a worker-accuracy CSV (zhou2014 Sec. 6.2).

    One row per worker with columns ``worker_id,n_answers,n_correct[,accuracy]``; arm i
    is Bernoulli(n_correct/n_answers). Resampling a worker's 0/1 answers with
    replacement gives exactly this distribution, so no separate bootstrap mode exists.
    Validation is described in :func:`bandit_envs.loaders.read_worker_table`.

    Args:
        path: CSV file.
        k: Number of top arms.
        name: Instance name; defaults to the file stem.
    """
    arms = _worker_arms(path)
    return Instance(
        name or Path(path).stem,
        k,
        arms=arms,
        params={"path": os.fspath(path)},
        reference="worker-accuracy table",
        description="Bernoulli arms with mean n_correct/n_answers",
    )


def load_rating_table(
    path: str | os.PathLike[str],
    k: int,
    name: str | None = None,
    support: Sequence[float] = _CAPTION_SUPPORT,
    columns: Sequence[str] = _CAPTION_COLUMNS,
) -> Instance:
    """Categorical arms from a rating-count CSV (shahrampour2017 Sec. IV.B).

    One row per arm; column ``columns[j]`` counts ratings with reward ``support[j]``. Arm i
    is categorical with the empirical frequencies. Validation is described in
    :func:`bandit_envs.loaders.read_rating_table`.

    Args:
        path: CSV file.
        k: Number of top arms.
        name: Instance name; defaults to the file stem.
        support: Reward of each rating level, strictly increasing.
        columns: Count column of each rating level, same order as ``support``.
    """
    arms = _rating_arms(path, support, columns)
    params = {
        "path": os.fspath(path),
        "support": tuple(float(x) for x in support),
        "columns": tuple(columns),
    }
    return Instance(
        name or Path(path).stem,
        k,
        arms=arms,
        params=params,
        reference="rating-count table",
        description="categorical arms with each row's empirical rating frequencies",
    )
