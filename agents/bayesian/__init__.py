"""Prior-aware (Bayesian) yardsticks on Beta-Bernoulli families: knowledge gradient, top-two Thompson sampling, the exact Bayes-optimal DP."""
