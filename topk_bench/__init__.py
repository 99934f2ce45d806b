"""Benchmark runner for top-k arm identification: the papers' experiments as data.

``topk-bench`` (:mod:`topk_bench.cli`) runs an experiment config (shipped in
``topk_bench/experiments/`` or your own TOML/YAML) on a process pool or Ray, stores one
Parquet row per episode (resumable), and summarises/plots the metrics with 95%
confidence intervals. Two layers:

**The generic runner** (imports nothing from the layer below it):

* :mod:`topk_bench.schema`, :mod:`topk_bench.config`: config schema, loading, checking;
* :mod:`topk_bench.expressions`: ``"=20*n"``-style values;
* :mod:`topk_bench.seeds`: episode and agent seeds;
* :mod:`topk_bench.episodes`: the worker side (chunks of episodes -> rows);
* :mod:`topk_bench.backends`: serial, process pool, Ray;
* :mod:`topk_bench.models`: learned models named in configs (trained on demand);
* :mod:`topk_bench.store`: Parquet parts, manifest, lock;
* :mod:`topk_bench.run`: planning, chunking, progress, resume;
* :mod:`topk_bench.summary`, :mod:`topk_bench.plot`: tables and figures;
* :mod:`topk_bench.tables`: the terminal tables (figures rounded alike, fit to the width);
* :mod:`topk_bench.compare`, :mod:`topk_bench.claims`, :mod:`topk_bench.report`: paired
  comparisons, the configs' claims, the HTML report;
* :mod:`topk_bench.generated`: configs written by code (TOML, fitted parameters);
* :mod:`topk_bench.cli`: the ``topk-bench`` command.

**The experiments** (:mod:`topk_bench.experiments`): the shipped configs (``*.toml``) and
the generators of the experiments whose configs are written by code or whose parameters
are fitted (``rl_baselines`` with ``rl_plan`` and ``rl_tuning``, ``learned_batch``,
``learned_stopping``); each runs as ``python -m topk_bench.experiments.NAME``. The
runner reaches a generator only by the name a config gives (``fitted_by``).

Python use::

    from topk_bench import load, run_experiment
    exp = load("quick", reduced=True)
    report = run_experiment(exp, "results/quick", jobs=2)
"""

from __future__ import annotations

from topk_bench.config import Experiment, load, shipped
from topk_bench.run import RunReport, run_experiment
from topk_bench.schema import ConfigError
from topk_bench.store import read_results

__all__ = [
    "ConfigError",
    "Experiment",
    "RunReport",
    "load",
    "read_results",
    "run_experiment",
    "shipped",
]
