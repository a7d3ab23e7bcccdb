"""The rate gates of the tick's outputs, one class each: by stamps (a bag played fast, a 1 kHz
stream on a busy machine and a simulator all keep their rates) or by a clock.

- :class:`SinceLast` (/tf at ``publish_frequency``, by JointState stamps);
- :class:`OnPhase` (the contact mechanics at ``equilibrium_rate``, by JointState stamps);
- :class:`AtMost` (~/markers at ``markers_rate``, by the JointStates' arrival on the node's
  clock).

:class:`SinceLast` is robot_state_publisher's rule for /tf (``publish_frequency``): a stamp
is due when at least one period has passed since the last due stamp, less half the stream's
interval, so that stamps that jitter about their nominal times (a driver stamping each
message with its clock) keep the rate: at ``publish_frequency`` 1000 a 1 kHz stream whose
intervals vary by +-0.2 ms publishes on every tick, where the rule alone skips every tick
that came early.
"""

__all__ = ["SinceLast", "OnPhase", "AtMost"]

SMOOTHING = 0.1        # weight of a new interval in the stream's mean interval


class SinceLast:
    """Due stamps [ns] a period apart: the first stamp is due, then each one at least a
    period, less half the stream's mean interval (at most half a period), after the last
    due one; a stamp before the last due one (a bag restart, a clock jump) is due and
    restarts from there."""

    def __init__(self):
        self._last_ns = self._previous_ns = self._interval_ns = None

    def due(self, stamp_ns, period_ns):
        """Whether ``stamp_ns`` is due (it then becomes the last due stamp). The slack: half
        the stream's mean interval (at most half a period), with ``stamp_ns`` in it."""
        previous, self._previous_ns = self._previous_ns, stamp_ns
        slack = 0
        if previous is not None and stamp_ns > previous:
            step = stamp_ns - previous
            step = period_ns if step > period_ns else step
            mean = self._interval_ns
            self._interval_ns = step if mean is None else mean + SMOOTHING * (step - mean)
            slack = self._interval_ns // 2
        last = self._last_ns
        if last is not None and 0 <= stamp_ns - last < period_ns - slack:
            return False
        self._last_ns = stamp_ns
        return True

    def reset(self):
        """The next stamp is due."""
        self._last_ns = self._previous_ns = self._interval_ns = None


class OnPhase:
    """Due stamps [ns] on a kept phase: at most one per period, the next due a period after
    the last due one's turn (not after the stamp that took it), so that a stream whose
    stamps do not divide the period keeps the rate on average; a stamp before the last turn
    (a bag restart, a clock jump) is due and restarts from there."""

    def __init__(self):
        self._next_ns = None

    def is_due(self, stamp_ns, period_ns):
        """Whether ``stamp_ns`` is due, without taking its turn."""
        due = self._next_ns
        return due is None or not due - period_ns <= stamp_ns < due

    def take(self, stamp_ns, period_ns):
        """Whether ``stamp_ns`` is due; if so it takes the turn (the next is a period on)."""
        if not self.is_due(stamp_ns, period_ns):
            return False
        due = self._next_ns         # (not due: the stamp is not in [due - period, due))
        on_phase = due is not None and 0 <= stamp_ns - due < period_ns
        self._next_ns = due + period_ns if on_phase else stamp_ns + period_ns
        return True

    def reset(self):
        """The next stamp is due."""
        self._next_ns = None


class AtMost:
    """At most one per period of a clock [ns]: a time less than a period after the last
    taken one is not due; a clock going back is due."""

    def __init__(self):
        self._last_ns = None

    def due(self, now_ns, period_ns):
        """Whether ``now_ns`` is due (it then becomes the last)."""
        last = self._last_ns
        if last is not None and 0 <= now_ns - last < period_ns:
            return False
        self._last_ns = now_ns
        return True
