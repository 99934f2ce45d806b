"""The ``"rgb_array"`` frame of the environments, drawn with NumPy only.

One column per arm (arms are grouped into columns when there are more than
:data:`MAX_COLUMNS`): a bar whose height is the arm's empirical mean (orange for the
empirical top-k, blue otherwise, none for an arm never pulled), a strip under it whose
darkness is the arm's share of the pulls, and a strip at the bottom filled with the
fraction of the budget left (green).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BAR_HEIGHT", "FRAME_HEIGHT", "MAX_COLUMNS", "frame_shape", "render_rgb"]

BAR_HEIGHT = 96
SHARE_HEIGHT = 12
BUDGET_HEIGHT = 8
GAP = 2
FRAME_HEIGHT = BAR_HEIGHT + GAP + SHARE_HEIGHT + GAP + BUDGET_HEIGHT
MAX_COLUMNS = 2048
MIN_WIDTH = 64
MAX_COLUMN_WIDTH = 12

_BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)
_BAR = np.array([70, 110, 200], dtype=np.uint8)
_TOP = np.array([240, 130, 30], dtype=np.uint8)
_BUDGET = np.array([60, 170, 80], dtype=np.uint8)
_TRACK = np.array([225, 225, 225], dtype=np.uint8)


def _layout(n_arms: int) -> tuple[int, int, int]:
    """``(columns, arms per column, column width in pixels)`` for ``n_arms`` arms."""
    per = -(-n_arms // MAX_COLUMNS)
    cols = -(-n_arms // per)
    width = min(MAX_COLUMN_WIDTH, max(1, MAX_COLUMNS // cols))
    width = max(width, min(-(-MIN_WIDTH // cols), MAX_COLUMNS // cols))
    return cols, per, width


def frame_shape(n_arms: int) -> tuple[int, int, int]:
    """The ``(height, width, 3)`` shape of the frame of an env with ``n_arms`` arms.

    >>> frame_shape(5), frame_shape(100), frame_shape(10_000)
    ((120, 65, 3), (120, 1200, 3), (120, 2000, 3))
    """
    cols, _, width = _layout(n_arms)
    return FRAME_HEIGHT, cols * width, 3


def _heights(means: np.ndarray, pulled: np.ndarray, low: float, high: float) -> np.ndarray:
    """Bar heights in pixels: the empirical means scaled to the reward range.

    An unbounded range (Gaussian rewards) uses the range of the pulled arms' means.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        seen = means[pulled]
        if seen.size == 0:
            return np.zeros(means.shape[0], dtype=np.int64)
        low, high = float(seen.min()), float(seen.max())
        if high <= low:
            return np.where(pulled, BAR_HEIGHT // 2, 0)
        pad = 0.1 * (high - low)
        low, high = low - pad, high + pad
    frac = np.clip((means - low) / (high - low), 0.0, 1.0)
    h = np.rint(frac * BAR_HEIGHT).astype(np.int64)
    return np.where(pulled, np.maximum(h, 1), 0)


def render_rgb(
    counts: np.ndarray, means: np.ndarray, remaining: float, k: int, low: float, high: float
) -> np.ndarray:
    """The ``HxWx3 uint8`` frame of one env's state (see the module docstring).

    ``counts`` and ``means`` are the pulls and empirical means per arm, ``remaining``
    the fraction of the budget left, ``k`` the number of arms to find and ``[low,
    high]`` the reward range. Deterministic: the top-k ties go to the lower arm index.
    """
    counts = np.asarray(counts)
    means = np.asarray(means, dtype=np.float64)
    n = counts.shape[0]
    cols, per, width = _layout(n)
    pulled = counts > 0
    top = np.zeros(n, dtype=bool)
    if pulled.any():
        order = np.argsort(-np.where(pulled, means, -np.inf), kind="stable")[:k]
        top[order[pulled[order]]] = True
    heights = _heights(means, pulled, low, high)
    total = counts.sum()
    share = counts / total if total > 0 else np.zeros(n)
    if per > 1:  # group arms: the highest bar, the summed share, top-k if any arm is
        pad = cols * per - n
        heights = np.pad(heights, (0, pad)).reshape(cols, per).max(axis=1)
        share = np.pad(share, (0, pad)).reshape(cols, per).sum(axis=1)
        top = np.pad(top, (0, pad)).reshape(cols, per).any(axis=1)

    frame = np.empty((FRAME_HEIGHT, cols * width, 3), dtype=np.uint8)
    frame[:] = _BACKGROUND
    # Bars: rows of the bar area at or below the bar's top, in each column's left part.
    bar_w = width if width < 3 else width - 1
    rows = np.arange(BAR_HEIGHT)[:, None]
    filled = rows >= BAR_HEIGHT - heights[None, :]
    colour = np.where(top[:, None], _TOP, _BAR)
    area = frame[:BAR_HEIGHT].reshape(BAR_HEIGHT, cols, width, 3)
    area[:, :, :bar_w] = np.where(filled[:, :, None, None], colour[None, :, None, :], _BACKGROUND)
    # Pull share: darker for a larger share (the largest share is black).
    peak = share.max() if share.size else 0.0
    rel = share / peak if peak > 0 else share
    shade = np.rint(255 * (1.0 - rel)).astype(np.uint8)
    y0 = BAR_HEIGHT + GAP
    strip = frame[y0 : y0 + SHARE_HEIGHT].reshape(SHARE_HEIGHT, cols, width, 3)
    strip[:, :, :bar_w] = shade[None, :, None, None]
    # Budget left.
    y0 += SHARE_HEIGHT + GAP
    frame[y0:] = _TRACK
    fill = int(round(float(np.clip(remaining, 0.0, 1.0)) * frame.shape[1]))
    frame[y0:, :fill] = _BUDGET
    return frame
