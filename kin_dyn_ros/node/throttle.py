"""Throttled logging that costs nothing while it is throttled.

rclpy's ``logger.warning(..., throttle_duration_sec=...)`` looks up its caller with
``inspect`` on every call, throttled or not (about 0.5 ms each here): in a 1 kHz callback a
persistent bad input would then slow every tick down. :class:`ThrottledLogger` checks a
per-key monotonic clock first and calls the logger only when the period has passed.
"""

import time

__all__ = ["ThrottledLogger"]


class ThrottledLogger:
    """Logs each ``key`` at most once per ``period_s`` seconds through ``logger``."""

    def __init__(self, logger, period_s, clock=time.monotonic):
        self._logger, self._period, self._clock = logger, float(period_s), clock
        self._last = {}

    def _due(self, key):
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self._period:
            return False
        self._last[key] = now
        return True

    def warning(self, key, text):
        """Log ``text`` as a warning unless ``key`` was logged less than a period ago."""
        if self._due(key):
            self._logger.warning(text)

    def error(self, key, text):
        """Log ``text`` as an error unless ``key`` was logged less than a period ago."""
        if self._due(key):
            self._logger.error(text)

    def info(self, key, text):
        """Log ``text`` as info unless ``key`` was logged less than a period ago."""
        if self._due(key):
            self._logger.info(text)
