"""Elimination and fixed-budget algorithms (and the uniform and RoundRobin baselines)."""
