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

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics.base_state import change_base_representation
from kin_dyn_ros.node.conversions import JointStateMerger
from kin_dyn_ros.dynamics.compiled import compiled_kernels, jit_status
from kin_dyn_ros.node import inputs as inputs_module
from kin_dyn_ros.node.compiled_inputs import CompiledJointStates, CompiledStamped
from kin_dyn_ros.node.inputs import SensorInputs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import MIMIC_URDF  # noqa: E402

BODY, MIXED = Representations.BODY_FIXED_REPRESENTATION, Representations.MIXED_REPRESENTATION


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
    kernels = compiled_kernels()
    assert path != 'compiled' or all(      # (its compiled code, without numba's dispatch)
        merge is not kernels.merge_joint_state for _, _, merge in fast._compiled._layouts)
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


def stamped_messages(rng, links, count):
    """Odometry and WrenchStamped messages of a few frame ids (some not links, some with
    another world frame), with good and non-unit quaternions, NaN, and some cut short."""
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    for k in range(count):
        roll = rng.random()
        odom = Odometry()
        odom.header.frame_id = ['world', '', 'map'][int(rng.integers(3)) if roll < 0.1 else 0]
        odom.child_frame_id = (links[0] if rng.random() < 0.9 else links[1]) \
            if roll > 0.05 else 'not_a_link'     # (mostly one child: one odometry source)
        odom.header.stamp.sec, odom.header.stamp.nanosec = -k if k % 5 == 1 else k, 11
        q = rng.normal(size=4)
        q /= np.linalg.norm(q) * (1.0 if roll > 0.15 else 0.97 if roll > 0.12 else 0.5)
        p = odom.pose.pose
        p.position.x, p.position.y, p.position.z = rng.normal(size=3).tolist()
        p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = q.tolist()
        t = odom.twist.twist
        t.linear.x, t.linear.y, t.linear.z = rng.normal(size=3).tolist()
        t.angular.x, t.angular.y, t.angular.z = rng.normal(size=3).tolist()
        if 0.2 < roll < 0.25:
            t.angular.y = math.nan
        wrench = WrenchStamped()
        wrench.header.frame_id = ['', links[0], links[1], 'nope'][int(rng.integers(4))] \
            if roll < 0.3 else links[0]
        wrench.header.stamp.sec = k
        f, m = wrench.wrench.force, wrench.wrench.torque
        f.x, f.y, f.z, m.x, m.y, m.z = rng.normal(size=6).tolist()
        if 0.3 < roll < 0.33:
            m.z = math.inf
        data = [serialize_message(odom), serialize_message(wrench)]
        if 0.4 < roll < 0.45:
            data = [d[:int(rng.integers(len(d)))] for d in data]
        yield data


def stamped_taken(inputs, odometry, wrench):
    """(odometry error, its (frame, stamp_ns, pose, twist)), the same for the wrench."""
    out = []
    for take, data, latest in ((inputs.take_odometry, (odometry,), lambda: inputs.odometry),
                               (inputs.take_wrench, ('l_sole', wrench),
                                lambda: inputs.wrenches.get('l_sole'))):
        try:
            take(*data)
            error = None
        except ValueError as exc:
            error = str(exc)
        entry = latest()
        out.append((error, None if entry is None else (entry.frame, entry.stamp_ns,
                                                       np.array(entry.value, dtype=object))))
    return out


def test_odometry_and_wrenches_read_compiled_leave_what_the_plain_path_leaves(
        icub_urdf, monkeypatch):
    """Odometry and wrench bytes read by one compiled call once their frame ids are learnt
    (:class:`.compiled_inputs.CompiledStamped`) give the plain reader's inputs: frames,
    stamps, twist and wrench exactly, the pose matrix to 1e-15 (the quaternion's norm is
    summed in another order) and the twist in the world's axes (the core's MIXED
    conversion of the plain reader's, which leaves it to the tick; the pose's 1e-15 times
    the twist), and the same errors (bad frames, non-unit quaternions, NaN, bytes cut
    short)."""
    kd = KinDynComputations(icub_urdf)
    if compiled_kernels() is None:
        pytest.skip(f'no compiled kernels in this process: {jit_status().describe()}')
    links = ['root_link', 'l_sole']
    fast = inputs_of(kd)
    monkeypatch.setattr(inputs_module, 'compiled_kernels', lambda: None)
    plain = inputs_of(kd)
    read_compiled = []
    odometry = CompiledStamped.odometry
    monkeypatch.setattr(CompiledStamped, 'odometry', lambda self, data: read_compiled.append(
        odometry(self, data)) or read_compiled[-1])
    rng, mixed_read = np.random.default_rng(12), 0
    for odom, wrench in stamped_messages(rng, links, 400):
        got, want = stamped_taken(fast, odom, wrench), stamped_taken(plain, odom, wrench)
        for (error, entry), (want_error, want_entry) in zip(got, want):
            assert error == want_error
            assert (entry is None) == (want_entry is None)
            if entry is None:
                continue
            assert entry[:2] == want_entry[:2]
            value, want_value = entry[2], want_entry[2]
            if value.shape == (3,):              # odometry: (pose, twist, mixed)
                np.testing.assert_allclose(value[0], want_value[0], rtol=0, atol=1e-15)
                np.testing.assert_array_equal(value[1], want_value[1])
                # the twist in the world's axes (read compiled): the core's MIXED of the
                # plain reader's, which leaves it to the tick
                assert want_value[2] is None
                if value[2] is not None:
                    mixed = change_base_representation(want_value[1], want_value[0], BODY,
                                                       MIXED)
                    np.testing.assert_allclose(value[2], mixed, rtol=0, atol=1e-15 * (
                        1.0 + 3.0 * np.abs(value[1]).max()))
                    mixed_read += 1
            else:
                np.testing.assert_array_equal(value.astype(float), want_value.astype(float))
    assert sum(r is not None for r in read_compiled) > 200       # most: the compiled way
    kernel, stamped = compiled_kernels().read_stamped, fast._stamped   # (without the dispatch)
    assert all(known[2] is not kernel for known in (stamped._odometry,
                                                    *stamped._wrenches.values()))
    assert mixed_read > 100


def test_strings_layout_learns_only_plain_little_endian_bytes_it_can_read():
    """A layout is learnt from plain little-endian CDR only (another encapsulation's
    lengths would read as garbage, e.g. a 167-million-byte string), and never from a
    string that runs past the end."""
    from geometry_msgs.msg import WrenchStamped
    from kin_dyn_ros.node.compiled_inputs import strings_layout
    msg = WrenchStamped()
    msg.header.frame_id = 'l_sole'
    data = serialize_message(msg)
    size, keep, expected = strings_layout(data, 1)
    assert size == 4 + len('l_sole') + 1 and keep.tolist() == list(range(size))
    assert bytes(expected[4:]) == b'l_sole\x00'
    assert strings_layout(b'\x01\x00\x00\x00' + data[4:], 1) is None        # big-endian
    assert strings_layout(b'\x00\x01\x00\x01' + data[4:], 1) is None        # options
    assert strings_layout(data[:12] + (10 ** 8).to_bytes(4, 'little') + data[16:], 1) is None


def test_for_tick_matches_each_input_as_its_definition_says(icub_urdf, monkeypatch):
    """SensorInputs.for_tick (which keeps its last matches while no input is taken, for the
    stamps up to the first newer input buffered) against the definition, on a random
    stream: per buffer, the input with the JointState's stamp, else the newest one not
    newer, else the oldest one; ages = JointState stamp - input stamp; a wrench further
    than wrench_timeout is stale. Inputs come ahead of the ticks and behind them (each topic
    in stamp order, as one publisher sends it); ticks mostly go forward, some repeat or go
    back."""
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    kd = KinDynComputations(icub_urdf)
    inputs = inputs_of(kd)
    contacts = ('l_sole', 'r_sole')
    rng = np.random.default_rng(5)
    ms = 1_000_000

    def definition(buffer, stamp_ns):
        if not buffer:
            return None
        exact = [e for e in buffer if e.stamp_ns == stamp_ns]
        older = [e for e in buffer if e.stamp_ns <= stamp_ns]
        return exact[-1] if exact else older[-1] if older else buffer[0]

    def stamped(msg, t_ns):
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(t_ns), 10 ** 9)
        return msg

    tick_ns, kept_ticks, kept_older = 10_000 * ms, 0, 0
    last = {}                           # per topic, its last stamp [ns]
    searches = []                       # (a tick that searched no buffer: the kept matches)
    search = inputs_module.matched
    monkeypatch.setattr(inputs_module, 'matched',
                        lambda *a: searches.append(1) or search(*a))

    def next_stamp(topic):
        last[topic] = max(last.get(topic, 0), tick_ns + int(rng.integers(-30, 4)) * ms)
        return last[topic]

    for step in range(3000):
        roll = rng.random()
        if roll < 0.05:
            odom = Odometry(child_frame_id='root_link')
            odom.header.frame_id = 'world'
            odom.pose.pose.orientation.w = 1.0
            inputs.take_odometry(stamped(odom, next_stamp('odom')))
        elif roll < 0.1:
            w, contact = WrenchStamped(), contacts[int(rng.integers(2))]
            w.wrench.force.z = float(step)
            inputs.take_wrench(contact, stamped(w, next_stamp(contact)))
        else:
            tick_ns += int(rng.choice([1, 2, 0, -3, -40], p=[.9, .04, .03, .02, .01])) * ms
            timeout = float(rng.choice([0.005, 0.02, 1.0]))
            searched = len(searches)
            got = inputs.for_tick(tick_ns, contacts, timeout)
            odometry = definition(inputs.odometry_buffer, tick_ns)
            kept = len(searches) == searched
            kept_ticks += kept
            kept_older += kept and odometry is not None \
                and odometry is not inputs.odometry_buffer[-1]
            assert got.odometry is odometry
            assert got.odometry_age == (None if odometry is None
                                        else (tick_ns - odometry.stamp_ns) * 1e-9)
            want, ages, stale = {}, {}, set()
            for c in contacts:
                e = definition(inputs.wrench_buffers.get(c), tick_ns)
                if e is None:
                    continue
                age = (tick_ns - e.stamp_ns) * 1e-9
                if abs(age) <= timeout:
                    want[c], ages[c] = (e.frame, e.value), age
                else:
                    stale.add(c)
            assert got.wrenches.keys() == want.keys() and got.stale == stale
            for c, (frame, value) in want.items():
                assert got.wrenches[c][0] == frame and got.wrenches[c][1] is value
                assert got.wrench_ages[c] == ages[c]
    assert kept_ticks > 1500          # the kept matches were used (and checked) often,
    assert kept_older > 200, kept_older    # also while a newer odometry was buffered
