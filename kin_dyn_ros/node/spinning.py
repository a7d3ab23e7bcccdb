"""Spinning rclpy: until a condition holds (the demo runner and the tests), or until the
context shuts down (the node's ``main``)."""

import time

import rclpy
from rclpy.executors import ExternalShutdownException

__all__ = ["spin_until", "spin_until_shutdown"]


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


def spin_until_shutdown(node, executor=None):
    """Spin ``node`` (on ``executor``, rclpy's global one when None) until Ctrl-C or the
    shutdown of its context. Ctrl-C shuts the context down from rclpy's signal handler, maybe
    while a callback runs: that callback's publish then fails ("publisher's context is
    invalid"). An exception raised once the context is shut down ends the spin quietly; one
    raised while the context is up is a bug and propagates."""
    try:
        rclpy.spin(node, executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if node.context.ok():
            raise
