"""Prior-aware (Bayesian) yardsticks on Beta-Bernoulli families.

The knowledge gradient, top-two Thompson sampling, and the exact Bayes-optimal DP.
"""
