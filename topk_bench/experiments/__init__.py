"""The shipped experiments: configs (``*.toml``, listed by :func:`topk_bench.config.shipped`)
and the generators of the configs written by code or fitted (``python -m
topk_bench.experiments.NAME``: :mod:`~topk_bench.experiments.rl_baselines`,
:mod:`~topk_bench.experiments.rl_plan`, :mod:`~topk_bench.experiments.rl_tuning`,
:mod:`~topk_bench.experiments.learned_batch`, :mod:`~topk_bench.experiments.learned_stopping`).

This layer stands on the generic runner (the rest of :mod:`topk_bench`), which never
imports it.
"""
