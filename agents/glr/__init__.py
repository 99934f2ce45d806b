"""GLR-stopped algorithms: the Top-Two family, Track-and-Stop, Frank-Wolfe sampling, the game explorer."""
