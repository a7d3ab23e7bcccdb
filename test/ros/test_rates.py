"""node/rates.py: robot_state_publisher's publish_frequency rule over stamps, on turns a period
apart, with half the stream's interval allowed for stamp jitter and up to three intervals of
lateness kept on the turns.

Run:  python -m pytest test/ros/test_rates.py
"""

import numpy as np

from kin_dyn_ros.node.rates import AtMost, OnPhase, SinceLast

MS = 1_000_000


def due(stamps, period):
    gate = SinceLast()
    return [t for t in stamps if gate.due(t, period)]


def test_a_regular_stream_publishes_one_stamp_per_period():
    stamps = [k * MS for k in range(1000)]              # 1 kHz for 1 s
    assert due(stamps, 50 * MS) == [k * 50 * MS for k in range(20)]
    assert due(stamps, 10 * MS) == [k * 10 * MS for k in range(100)]
    assert due(stamps, MS) == stamps                    # publish_frequency 1000: every tick


def test_a_jittered_stream_keeps_the_rate():
    """Stamps at 1 kHz +-0.2 ms (a driver stamping with its clock): every tick at 1000 Hz,
    where robot_state_publisher's rule alone skips the ticks that came early; 20 Hz stays
    20 Hz, no interval shorter than a period less half a tick and the lateness kept."""
    rng = np.random.default_rng(0)
    stamps = [int(k * MS + rng.uniform(-0.2, 0.2) * MS) for k in range(10_000)]   # 10 s
    assert due(stamps, MS) == stamps
    twenty = due(stamps, 50 * MS)
    assert 199 <= len(twenty) <= 201
    assert min(np.diff(twenty)) >= 49.5 * MS - 0.4 * MS


def late_stream(count, rng):
    """Stamps of a 1 kHz timer on a busy machine, stamped when sent: now and then one is
    sent 0.3-2.5 ms late, and the messages due meanwhile follow it at once (0.01-0.05 ms
    apart) until the timer is back on time."""
    stamps = []
    for k in range(count):
        sent = k * MS if not stamps else max(k * MS, stamps[-1] + rng.integers(10, 50) * 1000)
        if rng.random() < 0.01:
            sent += int(rng.uniform(0.3, 2.5) * MS)
        stamps.append(sent)
    return stamps


def test_a_late_and_catching_up_stream_keeps_every_tick_at_its_rate():
    """The bench's publisher on a busy machine (1 kHz, a message now and then late, the next
    early): every tick at 1000 Hz (the rule from the last due stamp skipped the early
    ones); 20 Hz stays 20 Hz, and no window has more than its share plus one."""
    stamps = late_stream(20_000, np.random.default_rng(1))
    gaps = np.diff(stamps)
    assert (gaps < 0.5 * MS).sum() > 100 and (gaps > 1.5 * MS).sum() > 100   # (the stream)
    assert due(stamps, MS) == stamps
    twenty = np.array(due(stamps, 50 * MS))
    span = (stamps[-1] - stamps[0]) / (50 * MS)
    assert span - 1 <= len(twenty) <= span + 1
    for window in (50 * MS, 200 * MS, 1000 * MS):
        most = max(np.searchsorted(twenty, t + window) - k for k, t in enumerate(twenty))
        assert most <= window // (50 * MS) + 1, window


def test_a_pause_longer_than_a_period_restarts_the_turns_without_a_burst():
    """A stream pausing for 0.9 s (more than a period late): the first stamp after the pause
    is due and the turns restart from it, the next one a period later, not at once to make
    up the pause."""
    stamps = [k * MS for k in range(100)] + [k * MS for k in range(1000, 1300)]
    got = due(stamps, 50 * MS)
    after = np.diff([t for t in got if t >= 1000 * MS])
    assert got[:3] == [0, 50 * MS, 1000 * MS]
    assert list(after) == [50 * MS] * 5


def test_a_slower_stream_publishes_the_first_stamp_a_period_after_the_last():
    """A 10 Hz stream (mean interval 100 ms, half of it more than half a 50 ms period: the
    slack is capped at 25 ms): every stamp is due; a 100 Hz stream, 5 ms slack: every 5th."""
    assert due([k * 100 * MS for k in range(10)], 50 * MS) == [k * 100 * MS for k in range(10)]
    stamps = [k * 10 * MS for k in range(100)]
    assert due(stamps, 50 * MS) == stamps[::5]


def test_a_stamp_going_back_is_due_and_restarts():
    gate = SinceLast()
    assert gate.due(1000 * MS, 50 * MS)
    assert gate.due(10 * MS, 50 * MS)            # back: due at once
    assert not gate.due(40 * MS, 50 * MS)        # the period counts from there
    assert gate.due(60 * MS, 50 * MS)


def test_the_same_stamp_again_is_not_due_and_reset_makes_the_next_due():
    gate = SinceLast()
    assert gate.due(5, 50 * MS) and not gate.due(5, 50 * MS)
    gate.reset()
    assert gate.due(6, 50 * MS)


def test_on_phase_keeps_the_phase_of_a_stream_that_does_not_divide_the_period():
    """equilibrium_rate 100 Hz on a 300 Hz stream (3.33 ms apart): on average 100 per
    second, never two in one period; the turn is taken by take() only."""
    gate = OnPhase()
    stamps = [k * 10 * MS // 3 for k in range(3000)]      # 10 s
    assert gate.is_due(stamps[0], 10 * MS) and gate.is_due(stamps[0], 10 * MS)
    taken = [t for t in stamps if gate.take(t, 10 * MS)]
    assert len(taken) == 1000
    assert min(np.diff(taken)) >= 10 * MS - 10 * MS // 3


def test_on_phase_restarts_on_a_stamp_going_back_and_reset():
    gate = OnPhase()
    assert gate.take(100 * MS, 10 * MS) and not gate.take(105 * MS, 10 * MS)
    assert gate.take(50 * MS, 10 * MS)                     # back: due, restarts there
    assert not gate.is_due(55 * MS, 10 * MS) and gate.is_due(60 * MS, 10 * MS)
    gate.reset()
    assert gate.take(55 * MS, 10 * MS)


def test_at_most_one_per_period_of_the_clock():
    gate = AtMost()
    taken = [t for t in range(0, 1000 * MS, MS) if gate.due(t, round(1e9 / 30.0))]
    assert len(taken) == 30 and taken[:2] == [0, 34 * MS]
    assert gate.due(5 * MS, 10 * MS)                       # the clock went back: due


def test_on_phase_keeps_the_rate_after_a_stamp_going_back():
    """A bag restarted half a second back: 100 per second of stamps still (before this gate,
    the contact mechanics' own went due on every tick after such a jump: 1000 of 1000)."""
    gate = OnPhase()
    first = sum(gate.take(k * MS, 10 * MS) for k in range(1000))
    again = sum(gate.take((500 + k) * MS, 10 * MS) for k in range(1000))
    assert first == again == 100


def test_on_phase_not_due_is_exactly_the_stamps_that_are_not_due():
    """OnPhase.not_due(period) against is_due, after every kind of turn (in phase, late, a
    stamp going back, reset): a stamp is in [first, end) exactly when it is not due."""
    gate, rng, period = OnPhase(), np.random.default_rng(3), 10 * MS
    t, inside = 50 * MS, 0
    for step in range(2000):
        t += int(rng.choice([1, 2, 13, -40], p=[.9, .05, .03, .02])) * MS
        if step % 500 == 250:
            gate.reset()
        first, end = gate.not_due(period)
        for probe in (t, first - 1, first, end - 1, end, *rng.integers(t - 30 * MS, t + 30 * MS,
                                                                       4)):
            assert gate.is_due(int(probe), period) == (not first <= probe < end), (step, probe)
        inside += first <= t < end
        gate.take(t, period)
    assert inside > 1500            # (most ticks of a 1 kHz stream: not due)
