"""Catalog of the top-K bandit instances used in the papers' experiments.

:func:`make` resolves a catalog name into an :class:`Instance`; ``instance.arms(rng)``
gives the reward distributions (:class:`Arms`) of one episode. Arms are listed best
first where the paper indexes them that way (the environment shuffles them). Every
synthetic family takes ``n_arms`` and ``k`` (formulas in n and k); the defaults are the
papers'. Rewards are Bernoulli unless marked G (Gaussian) or C (categorical).

| name | n_arms | k | means, i = 1..n | params | source |
| --- | --- | --- | --- | --- | --- |
| uniform-random | 1000 | 10 | Unif[0, 1], random | | zhou2014 6.1 |
| beta-random | 1000 | 10 | Beta(a, b), random | a=5, b=5 | shahrampour2017 IV.A |
| zhou2014-two-level | 1000 | 10 | high (k arms), low | high=0.6, low=0.5 | zhou2014 6.1 |
| zhou2014-rte | file | 10 | worker accuracies | path | zhou2014 6.2 |
| chen2017-twogroup | 1000 | 100 | high (k arms), low | high=0.7, low=0.3 | chen2017 3 |
| chen2017-uniform | 1000 | 100 | 1 - i/n | | chen2017 3 |
| chen2017-synthetic | 1000 | 100 | SYNTHETIC-p, see below | p=0.5 | chen2017 3 |
| shahrampour2017-setup1 | 50 | 2 | 0.7 (k), 0.5 | | shahrampour2017 IV.A |
| shahrampour2017-setup2 | 50 | 2 | 0.7 (k), 0.66 (k), 0.5 | | shahrampour2017 IV.A |
| shahrampour2017-setup3 | 50 | 2 | 0.7, 0.66, 0.62 (k each), 0.5 | | shahrampour2017 IV.A |
| shahrampour2017-setup4 | 50 | 2 | mu_1 - 0.6 (i-1)/(n-1) | mu_1=0.7 | shahrampour2017 IV.A |
| shahrampour2017-setup5 | 50 | 2 | Beta(a, b), random | a=5, b=5 | shahrampour2017 IV.A |
| shahrampour2017-setup6 | 50 | 2 | 0.7 (k), 0.68 (1), 0.5 | | shahrampour2017 IV.A |
| shahrampour2017-caption | file | 2 | C on {0, .5, 1}, rating freqs | path | shahrampour2017 IV.B |
| jun2016-linear | 100 | 10 | (n - i)/(n - 1) | | jun2016 5.1 |
| jun2016-sparse | 100 | 10 | high (n_top), low | n_top=k, high/low=.5/.3 | jun2016 5.1 |
| jun2016-virus | 12979 | 100 | G; file or stand-in | path, column, sigma | jun2016 5.2 |
| jun2016-twitter | 522062 | 100 | mu_max i^-alpha stand-in | alpha, mu_max | jun2016 5.3 |
| jiang2017-1-sparse | 100 | 2 | G; 1/2 (k), 0 | sigma=0.5 | jiang2017 5.1 |
| jiang2017-exponential | 100 | 2 | G; alpha-exponential | alpha=0.3, sigma=0.5 | jiang2017 5.1 |
| jiang2017-lil-exponential | 100 | 1 | G; 1 - ((i-1)/n)^alpha | alpha=.3, sigma=.5 | jiang2017 5.2|

SYNTHETIC-p and alpha-exponential share one formula (:func:`_exponential_profile`).
Where a paper leaves something open the choice is in the entry's ``description`` and
in the docstring of the function that builds it:

* shahrampour2017-setup4: ``Delta_i = mu_1 - mu_i`` (Sec. II.A), ``mu_1`` unstated, 0.7.
* jun2016-sparse: the 0.5 arms are the top k (``n_top = k``), as "gaps uniformly 0.2" implies.
* jun2016-virus: 0.1 is the variance, ``sigma = sqrt(0.1)``; the stand-in is
  deterministic Gumbel quantiles (:func:`_virus_stand_in`).
* jun2016-twitter: power law in rank calibrated to the paper's totals (:func:`_twitter`).
* jiang2017-*: the text gives no N; 100 is used.
"""

from __future__ import annotations

import functools
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
_CAPTION_SUPPORT = (0.0, 0.5, 1.0)
_CAPTION_COLUMNS = ("n_unfunny", "n_somewhat", "n_funny")
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
        """Validate every field; copy the arrays and make them read-only."""
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
            sigma = self.sigma
            if (
                isinstance(sigma, bool)
                or not isinstance(sigma, numbers.Real)
                or not (math.isfinite(sigma) and sigma > 0)
            ):
                raise ValueError(f"gaussian arms need a finite sigma > 0, got sigma={sigma!r}")
            object.__setattr__(self, "sigma", float(sigma))
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
        """Pickle support that re-validates, so unpickled arrays are read-only again."""
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

    def _permuted_trusted(self, perm: np.ndarray) -> Arms:
        """:meth:`permuted` for an ``int64`` permutation the caller drew itself.

        The environment's reset shuffles the arms by ``rng.permutation(n_arms)``, a
        permutation by construction, of arms already validated: the same arms as
        :meth:`permuted` (equal, read-only arrays), without checking ``perm`` again or
        re-validating the arms (about 20 us per reset).
        """
        arms = object.__new__(Arms)
        means = self.means[perm]
        means.setflags(write=False)
        probs = None
        if self.probs is not None:
            probs = self.probs[perm]
            probs.setflags(write=False)
        object.__setattr__(arms, "means", means)
        object.__setattr__(arms, "distribution", self.distribution)
        object.__setattr__(arms, "sigma", self.sigma)
        object.__setattr__(arms, "support", self.support)
        object.__setattr__(arms, "probs", probs)
        return arms


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
        """Create an instance; see the class docstring. ``k`` must satisfy 1 <= k < n_arms."""
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

    def means_batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Means of ``size`` independent episodes, shape ``(size, n_arms)``.

        Equal in law to ``size`` calls of :meth:`means`; one vectorized draw when the
        instance draws its arms i.i.d. (uniform-random, beta-random, setup 5), which is
        what the native vector env needs at reset.
        """
        if self._arms is not None:
            return np.broadcast_to(self._arms.means, (size, self._n_arms))
        if getattr(self._draw, "iid", False):
            if not isinstance(rng, np.random.Generator):
                self.arms(rng)  # raises the documented error
            return self._draw(self._n_arms * size, self.params, rng).reshape(size, self._n_arms)
        return np.stack([self.arms(rng).means for _ in range(size)])

    def means(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """``arms(rng).means`` (read-only)."""
        return self.arms(rng).means

    def hardness(self, rng: np.random.Generator | None = None) -> _hardness.Hardness:
        """Hardness measures (:mod:`bandit_envs.hardness`) of ``arms(rng).means`` at this k."""
        return _hardness.hardness(self.arms(rng).means, self._k)

    def __repr__(self) -> str:
        """``Instance(name=..., n_arms=..., k=..., params={...})``."""
        return (
            f"Instance(name={self._name!r}, n_arms={self._n_arms}, k={self._k}, "
            f"params={self._params!r})"
        )


@dataclass(frozen=True, eq=False)
class CatalogEntry:
    """A named setup with the paper's defaults.

    Attributes:
        name: Catalog name.
        n_arms: Default number of arms; ``None`` when it comes from the data file ``path``.
        k: Default number of top arms.
        params: Default parameters (read-only). ``path=None`` marks a data file that
            ``make`` requires (zhou2014-rte, shahrampour2017-caption) or that is optional
            (jun2016-virus); ``n_top=None`` means "k".
        reference: Paper and section.
        description: One line, including the choices made where the paper is open.
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

# (n, k, params) -> means; validates its own params (and may resolve them in place).
MeansFn = Callable[[int, int, dict[str, Any]], np.ndarray]


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

    Returns:
        The resolved instance; ``instance.params`` holds every parameter.

    Raises:
        ValueError: Unknown name (lists the available ones), unknown parameter (lists
            the accepted ones), or any out-of-range value.

    Example:
        >>> make("shahrampour2017-setup1", n_arms=4, k=1).means().tolist()
        [0.7, 0.5, 0.5, 0.5]
        >>> make("beta-random", n_arms=3, k=1, a=2).params
        mappingproxy({'a': 2.0, 'b': 5.0})
        >>> make("uniform-random", n_arms=3, k=1).means(np.random.default_rng(0)).shape
        (3,)
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


# --- parameter checks ---------------------------------------------------------------------------


def _real(
    params: dict[str, Any],
    key: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
) -> float:
    """Check ``params[key]`` is a finite number in the range; store it as float."""
    value = params[key]
    rules = [f"{'>' if lo_open else '>='} {lo}"] if lo is not None else []
    rules += [f"<= {hi}"] if hi is not None else []
    try:
        x = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        x = math.nan
    ok = math.isfinite(x) and (lo is None or (x > lo if lo_open else x >= lo))
    if not (ok and (hi is None or x <= hi)):
        rule = " and ".join(rules) or "finite"
        raise ValueError(f"param {key!r} must be a number {rule}, got {value!r}")
    params[key] = x
    return x


def _positive(params: dict[str, Any], key: str) -> float:
    return _real(params, key, 0.0, lo_open=True)


def _levels(params: dict[str, Any]) -> tuple[float, float]:
    high, low = _real(params, "high", 0.0, 1.0), _real(params, "low", 0.0, 1.0)
    if not low < high:
        raise ValueError(
            f"param 'low' must be < 'high' (the high arms are the top ones), "
            f"got low={low}, high={high}"
        )
    return high, low


def _nk(name: str, n_arms: Any, k: Any, min_n: Callable[[int], int] | None) -> tuple[int, int]:
    n = _as_int(n_arms, "n_arms")
    if n < 2:
        raise ValueError(f"n_arms must be >= 2, got {n}")
    k = _check_k(k, n)
    if min_n is not None and n < min_n(k):
        raise ValueError(f"{name} needs n_arms >= {min_n(k)} for k = {k}, got n_arms = {n}")
    return n, k


def _path(entry: CatalogEntry, params: dict[str, Any], what: str) -> str:
    path = params["path"]
    if path is None:
        raise ValueError(f"make({entry.name!r}) requires param 'path': {what}")
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"param 'path' must be a str or os.PathLike, got {path!r}")
    params["path"] = os.fspath(path)
    return params["path"]


def _file_instance(
    entry: CatalogEntry, n_arms: Any, k: int, params: dict[str, Any], arms: Arms
) -> Instance:
    if n_arms is not None and _as_int(n_arms, "n_arms") != arms.n_arms:
        raise ValueError(
            f"{entry.name}: n_arms={n_arms} given but {params['path']} has {arms.n_arms} arms"
        )
    return Instance(
        entry.name,
        k,
        arms=arms,
        params=params,
        reference=entry.reference,
        description=entry.description,
    )


def _build_synthetic(
    entry: CatalogEntry,
    n_arms: Any,
    k: int,
    p: dict[str, Any],
    *,
    means: MeansFn | None = None,
    draw: DrawFn | None = None,
    check: Callable[[dict[str, Any]], object] | None = None,
    min_n: Callable[[int], int] | None = None,
) -> Instance:
    """Build a formula (``means``) or random (``draw``) entry with adjustable n_arms and k."""
    n, k = _nk(entry.name, entry.n_arms if n_arms is None else n_arms, k, min_n)
    sigma = _positive(p, "sigma") if entry.distribution == "gaussian" else None
    common: dict[str, Any] = dict(
        params=p, reference=entry.reference, description=entry.description
    )
    if draw is not None:
        if check is not None:
            check(p)
        return Instance(
            entry.name,
            k,
            draw=draw,
            n_arms=n,
            distribution=entry.distribution,
            sigma=sigma,
            **common,
        )
    arms = Arms(means(n, k, p), entry.distribution, sigma)  # type: ignore[misc]
    return Instance(entry.name, k, arms=arms, **common)


def _add(
    name: str,
    n_arms: int | None,
    k: int,
    reference: str,
    description: str,
    *,
    params: Mapping[str, Any] | None = None,
    dist: str = "bernoulli",
    means: MeansFn | None = None,
    draw: DrawFn | None = None,
    check: Callable[[dict[str, Any]], object] | None = None,
    min_n: Callable[[int], int] | None = None,
    build: Callable[[CatalogEntry, int | None, int, dict[str, Any]], Instance] | None = None,
) -> None:
    """Register an entry: a fixed formula ``means``, a random ``draw``, or a custom ``build``."""
    if build is None:
        build = functools.partial(
            _build_synthetic, means=means, draw=draw, check=check, min_n=min_n
        )
    _CATALOG[name] = CatalogEntry(
        name,
        n_arms,
        k,
        MappingProxyType(dict(params or {})),
        reference,
        description,
        draw is not None,
        dist,
        build,
    )


# --- formulas -----------------------------------------------------------------------------------


def _ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def _groups(n: int, levels: Sequence[tuple[int, float]], rest: float) -> np.ndarray:
    """Consecutive blocks ``(size, value)`` from arm 1, then ``rest`` for the remaining arms."""
    out = np.full(n, rest)
    start = 0
    for size, value in levels:
        out[start : start + size] = value
        start += size
    return out


def _exponential_profile(n: int, k: int, power: float) -> np.ndarray:
    """chen2017 SYNTHETIC-p and jiang2017 alpha-exponential means, i = 1..n, best first.

    ``(1 - K/n) + (K/n) ((K - i)/K)^power`` for ``i <= K`` and
    ``(1 - K/n) - (1 - K/n) ((i - K)/(n - K))^power`` for ``i > K``: jiang2017 Sec. 5.1,
    and chen2017 Sec. 3, whose text does not give SYNTHETIC-p's formula: the same
    expression is used, the one for which ``power = 1`` gives ``1 - i/n`` (chen2017
    UNIFORM) and the means span [0, 1].
    """
    i = _ranks(n)
    base = 1.0 - k / n
    top = base + (k / n) * (np.maximum(k - i, 0.0) / k) ** power
    bottom = base - base * (np.maximum(i - k, 0.0) / (n - k)) ** power
    return np.where(i <= k, top, bottom)


def _two_level(n: int, k: int, p: dict[str, Any]) -> np.ndarray:
    high, low = _levels(p)
    return _groups(n, [(k, high)], low)


def _check_beta(p: dict[str, Any]) -> None:
    _positive(p, "a")
    _positive(p, "b")


def _draw_uniform(n: int, params: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """zhou2014 Sec. 6.1: theta_i ~ Unif[0, 1] i.i.d."""
    return rng.uniform(0.0, 1.0, size=n)


def _draw_beta(n: int, params: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """shahrampour2017 Sec. IV.A setup 5: means ~ Beta(a, b) i.i.d."""
    return rng.beta(params["a"], params["b"], size=n)


_draw_uniform.iid = True  # type: ignore[attr-defined]
_draw_beta.iid = True  # type: ignore[attr-defined]


def _jun_sparse(n: int, k: int, p: dict[str, Any]) -> np.ndarray:
    """jun2016 Sec. 5.1 Sparse: "10 arms are 0.5 and the rest are 0.3" with k = 10.

    The text says "the gaps are uniformly 0.2", which holds only if the 0.5 arms are the
    top k, so ``n_top`` defaults to k. Other ``n_top`` values tie the top-k boundary.
    """
    n_top = k if p["n_top"] is None else _as_int(p["n_top"], "n_top")
    if not 1 <= n_top < n:
        raise ValueError(f"param 'n_top' must satisfy 1 <= n_top < n_arms (= {n}), got {n_top}")
    p["n_top"] = n_top
    high, low = _levels(p)
    return _groups(n, [(n_top, high)], low)


_VIRUS_N, _VIRUS_SCALE = 12979, 0.25


def _virus_stand_in(n: int, k: int, p: dict[str, Any]) -> np.ndarray:
    """Deterministic stand-in for the jun2016 Sec. 5.2 gene means (Hao et al. 2008 data).

    ``mu_i = -0.25 ln(-ln u_i)``, ``u_i = (n - i + 0.5)/n``: the quantiles of a
    Gumbel(0, 0.25) law, best first. No random numbers, so the instance is fixed. It
    has the shape of the paper's Fig. 1(a), a bulk of genes near 0 and a long right tail
    of few large rewards, but not its values.
    """
    u = (n - _ranks(n) + 0.5) / n
    return -_VIRUS_SCALE * np.log(-np.log(u))


def _build_virus(entry: CatalogEntry, n_arms: Any, k: int, p: dict[str, Any]) -> Instance:
    """jun2016 Sec. 5.2: the stand-in, or the means in column ``p["column"]`` of ``p["path"]``.

    The paper simulates ``N(mu_i, 0.1)`` where 0.1 is an averaged unbiased *variance*
    estimate, so ``sigma = sqrt(0.1)``.
    """
    if p["path"] is None:
        return _build_synthetic(entry, n_arms, k, p, means=_virus_stand_in)
    sigma = _positive(p, "sigma")
    path = _path(entry, p, "")
    arms = Arms(_loaders.read_means_column(path, str(p["column"])), "gaussian", sigma)
    return _file_instance(entry, n_arms, k, p, arms)


def _twitter(n: int, k: int, p: dict[str, Any]) -> np.ndarray:
    """Stand-in for the jun2016 Sec. 5.3 Twitter rates (data not public).

    ``mu_i = mu_max * i^(-alpha)``: a power law in rank, as Fig. 2(b) shows on log-log
    axes; strictly decreasing, best first. The defaults solve two constraints stated in
    Sec. 5.3 for n = 522,062 users: the least active user tweeted once, so
    ``mu_n = 1/8928`` (31 days * 24 hours * 12 five-minute slots), and
    ``sum_i mu_i = 707,776/8928`` (each tweet in its own slot). A smaller ``n_arms`` keeps
    the ``n_arms`` most active users. Rewards are Bernoulli(mu_i); the paper's daily
    reward averages 24 hourly Bernoullis of mean mu_i, so means, top-k and gain agree and
    only the per-pull variance differs.
    """
    alpha = _positive(p, "alpha")
    mu_max = _real(p, "mu_max", 0.0, 1.0, lo_open=True)
    return mu_max * _ranks(n) ** -alpha


# --- catalog ------------------------------------------------------------------------------------

_SH = "shahrampour2017 Sec. IV.A setup "
_add(
    "uniform-random",
    1000,
    10,
    "zhou2014 Sec. 6.1",
    "theta_i ~ Unif[0, 1] i.i.d., drawn per episode",
    draw=_draw_uniform,
)
_add(
    "beta-random",
    1000,
    10,
    "shahrampour2017 Sec. IV.A setup 5; zhou2014 App. E",
    "theta_i ~ Beta(a, b) i.i.d., drawn per episode (zhou2014 App. E uses Beta(4, 1))",
    params={"a": 5.0, "b": 5.0},
    draw=_draw_beta,
    check=_check_beta,
)
_add(
    "zhou2014-two-level",
    1000,
    10,
    "zhou2014 Sec. 6.1",
    "theta_i = high for the k best arms, low for the rest",
    params={"high": 0.6, "low": 0.5},
    means=_two_level,
)
_add(
    "zhou2014-rte",
    None,
    10,
    "zhou2014 Sec. 6.2",
    "Bernoulli arms, mean = RTE worker accuracy (Snow et al. 2008) from a worker table; "
    "n_arms from the file",
    params={"path": None},
    build=lambda e, n, k, p: _file_instance(
        e,
        n,
        k,
        p,
        _worker_arms(_path(e, p, "a worker-accuracy CSV (worker_id,n_answers,n_correct)")),
    ),
)
_add(
    "chen2017-twogroup",
    1000,
    100,
    "chen2017 Sec. 3",
    "TWOGROUP: high for the k best arms, low for the rest",
    params={"high": 0.7, "low": 0.3},
    means=_two_level,
)
_add(
    "chen2017-uniform",
    1000,
    100,
    "chen2017 Sec. 3",
    "UNIFORM: theta_i = 1 - i/n, i = 1..n",
    means=lambda n, k, p: 1.0 - _ranks(n) / n,
)
_add(
    "chen2017-synthetic",
    1000,
    100,
    "chen2017 Sec. 3 (formula reconstructed)",
    "SYNTHETIC-p: (1-K/n) + (K/n)((K-i)/K)^p for i <= K, (1-K/n)(1 - ((i-K)/(n-K))^p) after; "
    "p = 1 is UNIFORM",
    params={"p": 0.5},
    means=lambda n, k, p: _exponential_profile(n, k, _positive(p, "p")),
)
_add(
    "shahrampour2017-setup1",
    50,
    2,
    _SH + "1",
    "one group of suboptimal arms: 0.7 (k), 0.5 rest",
    means=lambda n, k, p: _groups(n, [(k, 0.7)], 0.5),
)
_add(
    "shahrampour2017-setup2",
    50,
    2,
    _SH + "2",
    "two groups: 0.7 (k), 0.66 (next k), 0.5 rest",
    means=lambda n, k, p: _groups(n, [(k, 0.7), (k, 0.66)], 0.5),
    min_n=lambda k: 2 * k + 1,
)
_add(
    "shahrampour2017-setup3",
    50,
    2,
    _SH + "3",
    "three groups: 0.7 (k), 0.66 (next k), 0.62 (next k), 0.5 rest",
    means=lambda n, k, p: _groups(n, [(k, 0.7), (k, 0.66), (k, 0.62)], 0.5),
    min_n=lambda k: 3 * k + 1,
)
_add(
    "shahrampour2017-setup4",
    50,
    2,
    _SH + "4",
    "arithmetic: mu_i = mu_1 - 0.6 (i-1)/(n-1), as Delta_i = mu_1 - mu_i (Sec. II.A); "
    "mu_1 is not stated, 0.7 as in setups 1-3 and 6",
    params={"mu_1": 0.7},
    means=lambda n, k, p: _real(p, "mu_1", 0.6, 1.0) - 0.6 * (_ranks(n) - 1.0) / (n - 1),
)
_add(
    "shahrampour2017-setup5",
    50,
    2,
    _SH + "5",
    "means ~ Beta(a, b) i.i.d., drawn per episode",
    params={"a": 5.0, "b": 5.0},
    draw=_draw_beta,
    check=_check_beta,
)
_add(
    "shahrampour2017-setup6",
    50,
    2,
    _SH + "6",
    "one real competitive arm: 0.7 (k), 0.68 (one arm), 0.5 rest",
    means=lambda n, k, p: _groups(n, [(k, 0.7), (1, 0.68)], 0.5),
    min_n=lambda k: k + 2,
)
_add(
    "shahrampour2017-caption",
    None,
    2,
    "shahrampour2017 Sec. IV.B",
    "caption contest 559: categorical rewards on {0, 0.5, 1} with each caption's empirical "
    "rating frequencies; n_arms from the file",
    params={"path": None},
    dist="categorical",
    build=lambda e, n, k, p: _file_instance(
        e,
        n,
        k,
        p,
        _rating_arms(
            _path(e, p, "a rating-count CSV (n_unfunny,n_somewhat,n_funny)"),
            _CAPTION_SUPPORT,
            _CAPTION_COLUMNS,
        ),
    ),
)
_GK2016 = {
    "garivier2016-mu1": (0.5, 0.45, 0.43, 0.4),
    "garivier2016-mu2": (0.3, 0.21, 0.2, 0.19, 0.18),
}


def _fixed_means(values: tuple[float, ...], name: str) -> MeansFn:
    def means(n: int, k: int, p: Mapping[str, Any]) -> np.ndarray:
        if n != len(values):
            raise ValueError(f"{name} has exactly {len(values)} arms, got n_arms={n}")
        return np.array(values, dtype=np.float64)

    return means


for _name, _values in _GK2016.items():
    _add(
        _name,
        len(_values),
        1,
        "Garivier & Kaufmann 2016, Sec. 5",
        f"the fixed Bernoulli means {list(_values)} of the paper's experiments",
        means=_fixed_means(_values, _name),
    )
_add(
    "jun2016-linear",
    100,
    10,
    "jun2016 Sec. 5.1",
    "Linear: mu_i = (n - i)/(n - 1), i = 1..n",
    means=lambda n, k, p: (n - _ranks(n)) / (n - 1),
)
_add(
    "jun2016-sparse",
    100,
    10,
    "jun2016 Sec. 5.1",
    "Sparse: n_top arms at high, the rest at low; n_top defaults to k (the paper: 10 of 100 "
    "arms at 0.5 with k = 10)",
    params={"n_top": None, "high": 0.5, "low": 0.3},
    means=_jun_sparse,
)
_add(
    "jun2016-virus",
    _VIRUS_N,
    100,
    "jun2016 Sec. 5.2",
    "Gaussian, variance 0.1 (sigma = sqrt(0.1)); means from a CSV column if path is given, else "
    "a fixed stand-in (data unavailable): Gumbel(0, 0.25) quantiles, few large means",
    params={"path": None, "column": "mean", "sigma": math.sqrt(0.1)},
    dist="gaussian",
    build=_build_virus,
)
_add(
    "jun2016-twitter",
    522_062,
    100,
    "jun2016 Sec. 5.3",
    "stand-in power law mu_i = mu_max i^-alpha (data not public), calibrated to the paper's "
    "522,062 users, 707,776 tweets and 8928 five-minute slots",
    means=_twitter,
    params={"alpha": 0.2624, "mu_max": 0.003545},
)
_add(
    "jiang2017-1-sparse",
    100,
    2,
    "jiang2017 Sec. 5.1",
    "1-sparse: 1/2 for the k best arms, 0 for the rest; Gaussian, variance 1/4; K in {2, N/2} "
    "in the paper, N = 100 chosen (the text gives no N)",
    params={"sigma": 0.5},
    dist="gaussian",
    means=lambda n, k, p: _groups(n, [(k, 0.5)], 0.0),
)
_add(
    "jiang2017-exponential",
    100,
    2,
    "jiang2017 Sec. 5.1",
    "alpha-exponential: (N-K)/N + (K/N)((K-i)/K)^alpha for i <= K, "
    "(N-K)/N (1 - ((i-K)/(N-K))^alpha) after; Gaussian, variance 1/4; N = 100 chosen",
    params={"alpha": 0.3, "sigma": 0.5},
    dist="gaussian",
    means=lambda n, k, p: _exponential_profile(n, k, _positive(p, "alpha")),
)
_add(
    "jiang2017-lil-exponential",
    100,
    1,
    "jiang2017 Sec. 5.2",
    "lil-exponential: mu_1 = 1, mu_i = 1 - ((i-1)/N)^alpha, alpha in {0.3, 0.6}; Gaussian, "
    "variance 1/4; N = 100 chosen",
    params={"alpha": 0.3, "sigma": 0.5},
    dist="gaussian",
    means=lambda n, k, p: 1.0 - ((_ranks(n) - 1.0) / n) ** _positive(p, "alpha"),
)


# --- custom instances and loaders ---------------------------------------------------------------


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
    arms = Arms(_frozen(means, "means", 1), distribution, sigma)
    return Instance(
        name, k, arms=arms, reference="user-supplied means", description="means given by the caller"
    )


def from_categorical(
    probs: Sequence[Sequence[float]] | np.ndarray,
    support: Sequence[float] | np.ndarray,
    k: int,
    name: str = "custom-categorical",
) -> Instance:
    """A fixed instance of categorical arms: arm i pays ``support[j]`` w.p. ``probs[i, j]``.

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
    path: str | os.PathLike[str],
    support: Sequence[float],
    columns: Sequence[str],
    total_column: str | None = "n_total",
) -> Arms:
    s = _frozen(support, "support", 1)
    if s.size != len(columns):
        raise ValueError(f"support must have one value per column ({len(columns)}), got {len(s)}")
    counts = _loaders.read_rating_table(path, tuple(columns), total_column)
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
    total_column: str | None = "n_total",
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
        total_column: Checked to equal the row sum of ``columns`` when the file has it;
            ``None`` skips the check (needed when ``columns`` omits some levels).
    """
    arms = _rating_arms(path, support, columns, total_column)
    params = {
        "path": os.fspath(path),
        "support": tuple(float(x) for x in support),
        "columns": tuple(columns),
        "total_column": total_column,
    }
    return Instance(
        name or Path(path).stem,
        k,
        arms=arms,
        params=params,
        reference="rating-count table",
        description="categorical arms with each row's empirical rating frequencies",
    )
