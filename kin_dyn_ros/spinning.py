"""Spinning an rclpy executor until a condition holds (the demo runner and the tests)."""

import time

__all__ = ["spin_until"]


def spin_until(executor, predicate, timeout_s, on_tick=None, step_s=0.02):
    """Spin ``executor`` (``spin_once`` of at most ``step_s`` [s]) until ``predicate()`` or
    ``timeout_s`` [s] have passed, calling ``on_tick()`` before each spin; returns
    ``predicate()``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        if on_tick is not None:
            on_tick()
        executor.spin_once(timeout_sec=step_s)
    return predicate()
