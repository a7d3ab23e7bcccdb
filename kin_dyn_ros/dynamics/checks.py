"""Argument checks shared by the core's public functions."""

import numpy as np

__all__ = ["checked_array"]


def checked_array(name, value, shape):
    """``value`` as a float array of ``shape``; ValueError naming ``name`` when the shape is
    wrong ("expected s with shape (32,), got (31,)") or a value is NaN or inf."""
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"expected {name} with shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr
