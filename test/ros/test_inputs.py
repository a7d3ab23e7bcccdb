"""kin_dyn_ros.node.inputs: a JointState taken as bytes (the node's path: the common message
merged straight from its bytes by one compiled call, :mod:`.compiled_inputs`, or read by
:meth:`.cdr.InputReader.joint_state_block` and merged by
:meth:`.conversions.JointStateMerger.update_block`) leaves the same state, stamps and
errors as the same message taken as an object (the plain read and merge). Exact equality:
values are copied, never computed."""

import math
import pathlib
import sys

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.node.conversions import JointStateMerger
from kin_dyn_ros.dynamics.compiled import compiled_kernels, jit_status
from kin_dyn_ros.node import inputs as inputs_module
from kin_dyn_ros.node.compiled_inputs import CompiledJointStates
from kin_dyn_ros.node.inputs import SensorInputs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import MIMIC_URDF  # noqa: E402


def inputs_of(kd):
    inputs = SensorInputs(lambda: 123_456_789)
    inputs.configure(JointStateMerger(kd.joints_name_list, kd.mimic_joints, 0.25),
                     lambda f: f, 'world')
    return inputs


def random_joint_states(rng, joints, count):
    """JointStates of a few name lists (subsets of ``joints`` in shuffled orders, with
    unknown names, repeated across messages as publishers do), mostly complete, some without
    velocities or efforts, some with wrong lengths, NaN/inf, duplicate names, or unstamped."""
    lists = [[str(j) for j in rng.permutation(joints)[:rng.integers(1, len(joints) + 1)]]
             for _ in range(4)]
    lists[1] += ['not_a_joint']
    lists.append(['unknown_a', 'unknown_b'])
    for k in range(count):
        names = list(lists[rng.integers(len(lists))])
        n, roll = len(names), rng.random()
        msg = JointState(name=names, position=rng.normal(size=n).tolist(),
                         velocity=rng.normal(size=n).tolist(), effort=rng.normal(size=n).tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = (0, 0) if roll < 0.05 else (
            -k if k % 7 == 3 else k, 7)      # (sec is an int32)
        msg.header.frame_id = 'x' * int(rng.integers(0, 9))      # shifts the alignment
        if roll > 0.92:
            setattr(msg, ['velocity', 'effort'][k % 2], [])
        elif roll > 0.88:
            msg.effort = msg.effort.tolist()[:-1]
        elif roll > 0.84:
            values = msg.position.tolist()
            values[rng.integers(n)] = [math.nan, math.inf, -math.inf][k % 3]
            msg.position = values
        elif roll > 0.82:
            msg.name = names + names[:1]
            msg.position, msg.velocity, msg.effort = ([0.0] * (n + 1),) * 3
        yield msg


def taken(inputs, data):
    """(error text or None, every field the merge and the take leave)."""
    try:
        inputs.take_joint_state(data)
        error = None
    except ValueError as exc:
        error = str(exc)
    m = inputs.merger
    s, s_dot = m.state()
    stamp = inputs.joint_state_stamp
    return error, (s.tolist(), s_dot.tolist(), m.efforts.tolist(), m.received.tolist(),
                   m.effort_received.tolist(), m.efforts_complete, m.missing,
                   None if stamp is None else (stamp.sec, stamp.nanosec),
                   inputs.joint_state_stamp_ns)


@pytest.mark.parametrize('path', ['compiled', 'block'])
@pytest.mark.parametrize('urdf', ['icub', 'mimic'])
def test_joint_states_taken_as_bytes_leave_what_the_plain_path_leaves(urdf, path, icub_urdf,
                                                                      monkeypatch):
    """Bytes merged by the compiled kernel (:class:`.compiled_inputs.CompiledJointStates`),
    or with it off by the block read, leave what the message object leaves."""
    kd = KinDynComputations(icub_urdf if urdf == 'icub' else MIMIC_URDF)
    if path == 'compiled' and compiled_kernels() is None:
        pytest.skip(f'no compiled kernels in this process: {jit_status().describe()}')
    if path == 'block':
        monkeypatch.setattr(inputs_module, 'compiled_kernels', lambda: None)
    rng = np.random.default_rng(5)
    plain, fast = inputs_of(kd), inputs_of(kd)
    short = []
    if path == 'compiled':
        merge = CompiledJointStates.merge
        monkeypatch.setattr(CompiledJointStates, 'merge', lambda self, data: short.append(
            merge(self, data)) or short[-1])
    else:
        update_block = fast.merger.update_block
        fast.merger.update_block = lambda block: short.append(
            update_block(block)) or short[-1]
    messages = list(random_joint_states(rng, kd.joints_name_list, 300))
    mimic = np.isin(kd.joints_name_list, list(kd.mimic_joints))
    for msg in messages:
        want = taken(plain, msg)                     # an object: the plain path
        assert taken(fast, serialize_message(msg)) == want, msg
        # (efforts_complete is kept between messages: against its definition)
        assert want[1][5] == bool((plain.merger.effort_received | mimic).all())
    assert sum(x is not None and x is not False for x in short) > 150   # most: the short way
    assert sum(taken(plain, m)[0] is not None for m in messages) > 20   # errors compared


def test_cut_and_corrupted_bytes_of_a_learnt_name_list_leave_what_the_block_path_leaves(
        icub_urdf, monkeypatch):
    """The compiled merge checks every offset it reads against the length of the bytes:
    every prefix of a JointState whose name list it has learnt, and bytes with one byte
    changed (counts, lengths, names, values), leave the state and the error that the block
    path (no kernel) leaves, and never read past the end."""
    kd = KinDynComputations(icub_urdf)
    if compiled_kernels() is None:
        pytest.skip(f'no compiled kernels in this process: {jit_status().describe()}')
    names = kd.joints_name_list
    n, rng = len(names), np.random.default_rng(9)
    good = JointState(name=list(names), position=rng.normal(size=n).tolist(),
                      velocity=rng.normal(size=n).tolist(), effort=rng.normal(size=n).tolist())
    good.header.frame_id = 'abc'
    data = serialize_message(good)
    fast = inputs_of(kd)
    monkeypatch.setattr(inputs_module, 'compiled_kernels', lambda: None)
    plain = inputs_of(kd)
    for inputs in (fast, plain):
        taken(inputs, data)                        # learnt (fast) and remembered (both)
    assert fast._compiled is not None and plain._compiled is None
    variants = [data[:k] for k in range(len(data))]
    for k in rng.choice(len(data), 300, replace=False):
        changed = bytearray(data)
        changed[k] = (changed[k] + int(rng.integers(1, 256))) % 256
        variants.append(bytes(changed))
    for variant in variants:
        assert taken(fast, variant) == taken(plain, variant), variant
