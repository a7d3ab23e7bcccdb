"""Argument checks shared by the core's public functions."""

import numpy as np

__all__ = ["checked_array", "checked_arrays", "finite_array"]


def checked_array(name, value, shape):
    """``value`` as a float array of ``shape``; ValueError naming ``name`` when the shape is
    wrong ("expected s with shape (32,), got (31,)") or a value is NaN or inf."""
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"expected {name} with shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def finite_array(name, values):
    """float64 array of ``values`` (any shape); ValueError naming ``name`` and listing the
    values when one is NaN or inf."""
    arr = np.asarray(values, dtype=float)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf: {arr.tolist()}")
    return arr


def checked_arrays(*items):
    """:func:`checked_array` of each ``(name, value, shape)`` (a None value stays None), with
    one finiteness test for all of them; when a shape or that test fails, the items are
    checked one by one, so that the first bad one raises exactly as :func:`checked_array`."""
    try:
        given = [(np.asarray(v, dtype=float), shape) for _, v, shape in items if v is not None]
        valid = all(a.shape == shape for a, shape in given) and np.isfinite(
            np.concatenate([a.ravel() for a, _ in given])).all()
    except (TypeError, ValueError):
        valid = False
    if not valid:
        return [None if v is None else checked_array(name, v, shape) for name, v, shape in items]
    arrays = iter(a for a, _ in given)
    return [None if v is None else next(arrays) for _, v, _ in items]
