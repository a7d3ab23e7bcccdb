"""node/rates.py: robot_state_publisher's publish_frequency rule over stamps.

Run:  python -m pytest test/ros/test_rates.py
"""

from kin_dyn_ros.node.rates import SinceLast

MS = 1_000_000


def test_due_at_least_a_period_after_the_last_due_stamp():
    gate = SinceLast()
    stamps = [0, 10 * MS, 49 * MS, 50 * MS, 51 * MS, 99 * MS, 100 * MS, 175 * MS, 200 * MS]
    assert [t for t in stamps if gate.due(t, 50 * MS)] == [0, 50 * MS, 100 * MS, 175 * MS]


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
