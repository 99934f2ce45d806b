"""Classic (epsilon, delta)-PAC best-arm baselines: Median Elimination, Exponential-Gap Elimination."""
