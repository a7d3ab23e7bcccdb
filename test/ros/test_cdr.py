"""kin_dyn_ros.node.cdr: the sensor inputs read from their bytes, checked against rclpy's own
deserialisation (``rclpy.serialization``, Fast-CDR through the C type support) and against
the messages they were serialised from. Exact equality throughout: no arithmetic happens."""

import struct
import tracemalloc

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from kin_dyn_ros.node.cdr import InputReader

ALPHABET = list('abcxyz_019') + ['é', 'ü', '中', '\U0001F916']


def random_text(rng, longest=12):
    return ''.join(rng.choice(ALPHABET, rng.integers(0, longest + 1)))


def random_stamp(msg, rng):
    msg.header.stamp.sec = int(rng.integers(-2 ** 31, 2 ** 31))
    msg.header.stamp.nanosec = int(rng.integers(0, 10 ** 9))
    msg.header.frame_id = random_text(rng)


def random_joint_state(rng):
    n = int(rng.integers(0, 40))
    msg = JointState(name=[random_text(rng) for _ in range(n)])
    random_stamp(msg, rng)
    for field in ('position', 'velocity', 'effort'):     # the reader does not check lengths
        size = n if rng.random() < 0.6 else int(rng.integers(0, 5))
        setattr(msg, field, rng.normal(size=size).tolist())
    return msg


def random_odometry(rng):
    msg = Odometry(child_frame_id=random_text(rng))
    random_stamp(msg, rng)
    pose, twist = msg.pose.pose, msg.twist.twist
    values = rng.normal(size=13).tolist()
    pose.position.x, pose.position.y, pose.position.z = values[:3]
    o = pose.orientation
    o.x, o.y, o.z, o.w = values[3:7]
    twist.linear.x, twist.linear.y, twist.linear.z = values[7:10]
    twist.angular.x, twist.angular.y, twist.angular.z = values[10:]
    msg.pose.covariance = rng.normal(size=36)
    msg.twist.covariance = rng.normal(size=36)
    return msg


def random_wrench(rng):
    msg = WrenchStamped()
    random_stamp(msg, rng)
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = rng.normal(size=6).tolist()
    return msg


def fields(msg):
    """The values the node uses, read from the message object the plain way."""
    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
    if isinstance(msg, JointState):
        return (stamp, tuple(msg.name), list(msg.position), list(msg.velocity),
                list(msg.effort))
    if isinstance(msg, Odometry):
        p, q, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
        return (stamp, msg.header.frame_id, msg.child_frame_id,
                [p.x, p.y, p.z, q.x, q.y, q.z, q.w],
                [t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z])
    f, t = msg.wrench.force, msg.wrench.torque
    return stamp, msg.header.frame_id, [f.x, f.y, f.z, t.x, t.y, t.z]


def read_fields(value):
    """The same tuple from a reader's result."""
    stamp = (value.stamp.sec, value.stamp.nanosec)
    return (stamp,) + tuple(v.tolist() if isinstance(v, np.ndarray) else v
                            for v in value[1:])


READERS = {JointState: 'joint_state', Odometry: 'odometry', WrenchStamped: 'wrench'}
MAKERS = {JointState: random_joint_state, Odometry: random_odometry,
          WrenchStamped: random_wrench}


@pytest.mark.parametrize('msg_type', list(READERS), ids=lambda t: t.__name__)
def test_random_messages_read_as_serialised(msg_type):
    rng = np.random.default_rng(1)
    reader = InputReader()
    read = getattr(reader, READERS[msg_type])
    for _ in range(60):
        msg = MAKERS[msg_type](rng)
        data = serialize_message(msg)
        assert read_fields(read(data)) == fields(msg)
        assert read_fields(read(msg)) == fields(msg)                # the object path


def mutations(data):
    """Every single-byte change of ``data`` by three masks (lengths, characters, padding,
    numbers, the encapsulation header), then every truncation."""
    for pos in range(len(data)):
        for mask in (0x01, 0x80, 0xFF):
            changed = bytearray(data)
            changed[pos] ^= mask
            yield bytes(changed)
    for end in range(len(data)):
        yield data[:end]


def bits(value):
    """``value`` with each float replaced by its bytes: a NaN read from damaged bytes (or
    from a serialiser's uninitialised padding) equals the same NaN read by rclpy."""
    if isinstance(value, float):
        return struct.pack('<d', value)
    if isinstance(value, (list, tuple)):
        return type(value)(bits(v) for v in value)
    return value


def rclpy_fields(data, msg_type):
    try:
        return fields(deserialize_message(data, msg_type))
    except Exception:  # rclpy's errors for bytes that are not a message of the type
        return None


@pytest.mark.parametrize('msg_type', list(READERS), ids=lambda t: t.__name__)
def test_changed_and_truncated_bytes_read_as_rclpy_reads_them_or_raise(msg_type):
    """Differential: whatever rclpy makes of damaged bytes, the reader makes the same, and
    where rclpy fails the reader raises ValueError (never another error). JointState twice:
    with a reader that has seen the undamaged name list (its bytes compared, not decoded)
    and with a fresh one."""
    rng = np.random.default_rng(2)
    msg = MAKERS[msg_type](rng)
    if msg_type is JointState:
        msg = JointState(name=['ab', 'c', 'déf'], position=[1.0, 2.0, 3.0], effort=[4.0] * 3)
        msg.header.frame_id = 'x'
    data = serialize_message(msg)
    primed = InputReader()
    getattr(primed, READERS[msg_type])(data)
    checked = failed = 0
    for damaged in mutations(data):
        expected = rclpy_fields(damaged, msg_type)
        for reader in (primed, InputReader()):
            try:
                got = read_fields(getattr(reader, READERS[msg_type])(damaged))
            except ValueError:
                got = None
            assert bits(got) == bits(expected), damaged.hex()
        checked += 1
        failed += expected is None
    assert 0 < failed < checked                 # both outcomes were exercised


@pytest.mark.parametrize('msg_type', list(READERS), ids=lambda t: t.__name__)
def test_encapsulation_options_and_end_padding_read_as_rclpy_reads_them(msg_type):
    """The two option bytes of the encapsulation header, where the distributions differ:
    Kilted's Fast CDR reads their low two bits as a count of padding bytes at the end (and
    rejects a message that lacks them), Jazzy's ignores them. With every kind of options
    and 0-3 bytes appended, the reader makes what the running rclpy makes, or raises
    ValueError where it fails."""
    rng = np.random.default_rng(3)
    data = serialize_message(MAKERS[msg_type](rng))
    for options in (b'\x00\x00', b'\x00\x01', b'\x00\x02', b'\x00\x03', b'\x00\x04',
                    b'\x01\x00', b'\x80\x03', b'\xff\xff'):
        for padding in range(4):
            variant = data[:2] + options + data[4:] + bytes(padding)
            expected = rclpy_fields(variant, msg_type)
            try:
                got = read_fields(getattr(InputReader(), READERS[msg_type])(variant))
            except ValueError:
                got = None
            assert got == expected, variant.hex()
            if options == b'\x00\x00':
                assert got == fields(deserialize_message(data, msg_type))


def test_name_lists_of_several_publishers_are_told_apart():
    """More alternating name lists than the reader remembers, some the same length and
    differing in one character: every message reads its own names."""
    reader = InputReader()
    lists = [[f'joint_{k}_{i}' for i in range(6)] for k in range(12)]
    lists += [['a', 'b'], ['a', 'c'], ['ab', 'c'], ['a', 'bc']]
    for rnd in range(3):
        for k, names in enumerate(lists):
            msg = JointState(name=names, position=[float(k)] * len(names))
            got = reader.joint_state(serialize_message(msg))
            assert got.name == tuple(names) and got.position.tolist() == msg.position.tolist()


def test_big_endian_bytes_are_deserialised_by_rclpy():
    """Encapsulation ``00 00`` (plain CDR, big-endian), encoded here by hand."""
    frame = 'l_sole'.encode() + b'\0'
    body = struct.pack('>iII', 7, 8, len(frame)) + frame
    data = (b'\x00\x00\x00\x00' + body + bytes(-len(body) % 8)
            + struct.pack('>6d', 1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    got = InputReader().wrench(data)
    assert read_fields(got) == ((7, 8), 'l_sole', [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


def test_a_runaway_name_list_is_read_but_not_remembered():
    """A JointState of 100,000 names (a runaway publisher; the soak's bad input) reads
    correctly, and reading it holds no memory afterwards (it held ~20 MB, the reader's
    layout of the list) nor peaks far above the message's own names (~60 MB more, which the
    node's process then kept). A list of the model's size is still remembered."""
    names = [f'j{i}' for i in range(100_000)]
    data = serialize_message(JointState(name=names, position=[0.5] * len(names)))
    InputReader().joint_state(data)     # warm-up: lazy imports and caches of a first call
    reader = InputReader()
    tracemalloc.start()
    try:
        got = reader.joint_state(data)
        assert got.name == tuple(names) and got.position.shape == (100_000,)
        del got
        held, peak = tracemalloc.get_traced_memory()    # allocated since start(), and alive
    finally:
        tracemalloc.stop()
    assert held < 1e6, f'{held / 1e6:.1f} MB held after reading'
    assert peak < 25e6, f'{peak / 1e6:.1f} MB peak while reading'
    small = serialize_message(JointState(name=names[:32], position=[0.5] * 32))
    reader.joint_state(small)
    assert reader._layouts[0].names == tuple(names[:32])


def block_fields(block):
    """The JointState fields of a JointStateBlock, as :func:`read_fields` gives them."""
    values = block.values[:, 1:]
    return ((block.stamp.sec, block.stamp.nanosec), block.name,
            *(row.tolist() for row in values))


def test_joint_state_blocks_are_the_messages_or_none():
    """The short read gives every field of a JointState whose name list it has read before
    and whose three arrays have one value per name, and None for any other (a new name list,
    other lengths, no names, a message object): then the plain read is taken."""
    rng = np.random.default_rng(3)
    reader = InputReader()
    blocks = 0
    for _ in range(200):
        msg = random_joint_state(rng)
        data = serialize_message(msg)
        seen = any(layout.names == tuple(msg.name) for layout in reader._layouts)
        complete = len(msg.position) == len(msg.velocity) == len(msg.effort) == len(msg.name) > 0
        block = reader.joint_state_block(data)
        if seen and complete:
            assert block_fields(block) == fields(msg)
        else:
            assert block is None
        assert reader.joint_state_block(msg) is None
        reader.joint_state(data)
        block = reader.joint_state_block(data)        # the list is known now
        if complete:
            assert block_fields(block) == fields(msg)
            blocks += 1
        else:
            assert block is None
    assert blocks > 10


def test_changed_and_truncated_joint_state_blocks_are_rclpys_or_none():
    """Differential, as for the plain read: damaged bytes give None or what rclpy reads."""
    msg = JointState(name=['ab', 'c', 'déf'], position=[1.0, 2.0, 3.0],
                     velocity=[4.0, 5.0, 6.0], effort=[7.0, 8.0, 9.0])
    msg.header.frame_id = 'xyz'
    data = serialize_message(msg)
    reader = InputReader()
    reader.joint_state(data)
    read = 0
    for damaged in mutations(data):
        block = reader.joint_state_block(damaged)
        if block is not None:
            assert bits(block_fields(block)) == bits(rclpy_fields(damaged, JointState)), \
                damaged.hex()
            read += 1
    assert read > len(data)       # value and stamp bytes changed are read the short way
