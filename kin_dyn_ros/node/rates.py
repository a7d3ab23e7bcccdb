"""Rates judged by stamps, not by the wall clock (a bag played fast, a 1 kHz stream on a
busy machine and a simulator all keep their rates).

:class:`SinceLast` is robot_state_publisher's rule for /tf (``publish_frequency``): a stamp
is due when at least one period has passed since the last due stamp.
"""

__all__ = ["SinceLast"]


class SinceLast:
    """Due stamps [ns] at least ``period_ns`` apart: the first stamp is due, then each one at
    least a period after the last due one; a stamp before the last due one (a bag restart,
    a clock jump) is due and restarts from there."""

    def __init__(self):
        self._last_ns = None

    def due(self, stamp_ns, period_ns):
        """Whether ``stamp_ns`` is due (it then becomes the last due stamp)."""
        last = self._last_ns
        if last is not None and 0 <= stamp_ns - last < period_ns:
            return False
        self._last_ns = stamp_ns
        return True

    def reset(self):
        """The next stamp is due."""
        self._last_ns = None
