"""Classic (epsilon, delta)-PAC best-arm baselines.

Median Elimination and Exponential-Gap Elimination.
"""
