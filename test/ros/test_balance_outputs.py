"""node/balance_outputs.py: ~/zmp, ~/capture_point and ~/cop rendered from the compiled
balance's vector (one TemplatePack call, its numbers written by the compiled kernel or by
NumPy) are the bytes rendered one by one from the Balance object, in every state a standing
robot passes through: both soles loaded, one below the threshold, one without a wrench, none
active, and the CoM below the ground plane (no capture point). What the numbers are is
tested against Pinocchio in test_balance_node.py.

Run:  source scripts/env.sh && python -m pytest test/ros/test_balance_outputs.py
"""

from types import SimpleNamespace

import numpy as np
import pytest

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402

from kin_dyn_ros.dynamics import KinDynComputations  # noqa: E402
from kin_dyn_ros.dynamics.compiled import compiled_kernels, jit_status  # noqa: E402
from kin_dyn_ros.dynamics.contacts import Contact  # noqa: E402
from kin_dyn_ros.node.balance_outputs import BalanceMessages  # noqa: E402
from kin_dyn_ros_interfaces.msg import CentresOfPressure  # noqa: E402

FEET = ('l_sole', 'r_sole')
SOLE = np.array([[0.05, 0.025, 0.0], [-0.05, 0.025, 0.0], [-0.05, -0.025, 0.0],
                 [0.05, -0.025, 0.0]])
THRESHOLD = 20.0        # [N]
NAMES = ['zmp', 'capture_point', 'cop']
# a body hanging under its two "soles" (fixed frames 1 m above its base): the CoM is below
# the ground plane, so there is a ZMP and no capture point
INERTIA = '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
HANGING = f"""<robot name="hanging">
  <link name="base"><inertial><mass value="10"/>{INERTIA}</inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 -0.3"/><mass value="2"/>{INERTIA}</inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="l_sole"/><link name="r_sole"/>
  <joint name="l" type="fixed"><parent link="base"/><child link="l_sole"/>
    <origin xyz="0 0.1 1"/></joint>
  <joint name="r" type="fixed"><parent link="base"/><child link="r_sole"/>
    <origin xyz="0 -0.1 1"/></joint>
</robot>"""


@pytest.fixture(scope='module')
def models(icub_urdf):
    if jit_status().compiled is False:
        pytest.skip(f'the NumPy core runs here: {jit_status().describe()}')
    return KinDynComputations(icub_urdf), KinDynComputations(HANGING)


def cases():
    """(name, model: 0 iCub / 1 HANGING, {sole: (frame, wrench)})."""
    def w(fz, tx=0.0, ty=0.0, fx=0.0):
        return np.array([fx, 0.4, fz, tx, ty, 0.02])
    return [
        ('both loaded', 0, {'l_sole': ('l_sole', w(180.0, 1.0, -2.0, 3.0)),
                            'r_sole': ('r_foot', w(140.0, -0.5, 1.5))}),
        ('one below the threshold', 0, {'l_sole': ('l_sole', w(200.0, 0.3)),
                                        'r_sole': ('r_sole', w(5.0))}),
        ('one without a wrench', 0, {'r_sole': ('root_link', w(150.0, 0.0, 0.2))}),
        ('none active', 0, {'l_sole': ('l_sole', w(3.0)), 'r_sole': ('r_sole', w(1.0))}),
        ('CoM below the ground', 1, {'l_sole': ('l_sole', w(60.0)),
                                     'r_sole': ('base', w(70.0, 0.1))})]


@pytest.mark.parametrize('kernel', [True, False], ids=['compiled', 'numpy'])
def test_balance_messages_from_the_vector_are_the_ones_from_the_balance(models, kernel):
    contacts = {c: Contact(c, SOLE, [0, 0, 1], 0.6) for c in FEET}
    msgs = BalanceMessages('odom', FEET, compiled_kernels().scatter_words if kernel else None)
    rng = np.random.default_rng(5)
    seen = set()
    for k, (name, model, wrenches) in enumerate(cases()):
        kd = models[model]
        n = kd.NDoF
        w_H_b = np.eye(4)
        w_H_b[:3, 3] = [0.1, -0.2, 0.6]
        r = kd.compute_tick(w_H_b, 0.1 * rng.normal(size=n), rng.normal(size=6),
                            rng.normal(size=n), None, wrenches, contacts, THRESHOLD)
        assert r.balance_vector is not None, name          # the compiled balance
        stamp = Time(sec=7 + k, nanosec=10 ** 9 - 1 - k)
        for names in (NAMES, ['cop'], ['capture_point', 'zmp']):
            packed = msgs.render(r, stamp, names)
            from_object = msgs.render(SimpleNamespace(balance_vector=None, balance=r.balance),
                                      stamp, names)
            assert list(packed) == list(from_object), (name, names)
            for topic, data in packed.items():
                assert isinstance(data, bytes) and data == from_object[topic], (name, topic)
        out = msgs.render(r, stamp, NAMES)
        balance = r.balance
        expected = [] if not balance.active else [
            t for t, p in (('zmp', balance.zmp_point), ('capture_point', balance.capture_point),
                           ('cop', 0)) if p is not None]
        assert list(out) == expected, name
        seen.add(tuple(out))
        if 'cop' in out:
            cop = deserialize_message(out['cop'], CentresOfPressure)
            assert cop.header.stamp == stamp and list(cop.contacts) == list(FEET)
            assert list(cop.defined) == [c.point is not None for c in balance.cops]
            np.testing.assert_array_equal(cop.normal_forces,
                                          [c.normal_force for c in balance.cops])
        if 'zmp' in out:
            zmp = deserialize_message(out['zmp'], PointStamped)
            np.testing.assert_array_equal([zmp.point.x, zmp.point.y, zmp.point.z],
                                          balance.zmp_point)
    # every kind of tick met: all three, none, and the CoP and ZMP without a capture point
    assert seen >= {tuple(NAMES), (), ('zmp', 'cop')}, seen
