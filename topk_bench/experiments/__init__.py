"""Shipped experiment configs (``*.toml``); list them with :func:`topk_bench.config.shipped`."""
