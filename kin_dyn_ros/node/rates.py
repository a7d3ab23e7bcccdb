"""The rate gates of the tick's outputs, one class each: by stamps (a bag played fast, a 1 kHz
stream on a busy machine and a simulator all keep their rates) or by a clock.

- :class:`SinceLast` (/tf at ``publish_frequency``, by JointState stamps);
- :class:`OnPhase` (the contact mechanics at ``equilibrium_rate``, by JointState stamps);
- :class:`AtMost` (~/markers at ``markers_rate``, by the JointStates' arrival on the node's
  clock).

:class:`SinceLast` is robot_state_publisher's rule for /tf (``publish_frequency``), kept on
turns a period apart: a stamp is due from half the stream's interval before its turn, so
that stamps that jitter about their nominal times (a driver stamping each message with its
clock) keep the rate: at ``publish_frequency`` 1000 a 1 kHz stream whose intervals vary by
+-0.2 ms publishes on every tick, where the rule alone skips every tick that came early. A
late stamp takes its turn late and the turns stay on their phase (up to three of the
stream's intervals late; later, they restart from the stamp), so that a driver that sends a
message late and the next ones early, to keep its rate, publishes all of them: the bench's
1 kHz publisher on a busy machine lost 0.1-0.3 % of /tf at 1000 Hz to the rule counted from
the last due stamp (docs/performance.md).
"""

__all__ = ["SinceLast", "OnPhase", "AtMost"]

SMOOTHING = 0.1        # weight of a new interval in the stream's mean interval
MAKE_UP = 3            # lateness made up by SinceLast, in the stream's mean intervals


class SinceLast:
    """Due stamps [ns] on turns a period apart (on average at most one per period): the
    first stamp is due and takes its turn; a later stamp is due from half the stream's mean
    interval before the next turn (the mean of the intervals up to a period: a pause is not
    an interval) and takes it, or, when it is more than MAKE_UP mean intervals late, a turn
    of its own (the turns restart from it: no burst after a pause). A stamp before the last
    due one (a bag restart, a clock jump) is due and restarts from there; the same stamp
    again is not due."""

    def __init__(self):
        self._last_ns = self._turn_ns = self._previous_ns = self._interval_ns = None

    def due(self, stamp_ns, period_ns):
        """Whether ``stamp_ns`` is due (it then takes a turn)."""
        previous, self._previous_ns = self._previous_ns, stamp_ns
        if previous is not None and 0 < stamp_ns - previous <= period_ns:
            step, mean = stamp_ns - previous, self._interval_ns
            self._interval_ns = step if mean is None else mean + SMOOTHING * (step - mean)
        interval = self._interval_ns or 0
        last = self._last_ns
        if last is None or stamp_ns < last:             # the first, or back: restart here
            self._last_ns = self._turn_ns = stamp_ns
            return True
        if stamp_ns == last:
            return False
        turn = self._turn_ns + period_ns
        if stamp_ns < turn - interval // 2:
            return False
        on_phase = stamp_ns - turn <= MAKE_UP * interval
        self._last_ns, self._turn_ns = stamp_ns, turn if on_phase else stamp_ns
        return True

    def reset(self):
        """The next stamp is due."""
        self._last_ns = self._turn_ns = self._previous_ns = self._interval_ns = None


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

    def not_due(self, period_ns):
        """(first, end) [ns]: the stamps in [first, end) are not due (:meth:`is_due`) until a
        turn is taken or the phase reset; (0, 0) (none) while the next is due."""
        due = self._next_ns
        return (0, 0) if due is None else (due - period_ns, due)

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
