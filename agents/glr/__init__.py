"""GLR-stopped algorithms.

The GLR statistic and its thresholds, the Top-Two family, Track-and-Stop, Frank-Wolfe
sampling and the game explorer.
"""
