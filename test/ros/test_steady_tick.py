"""kin_dyn_ros.node.steady_tick: two real nodes take the same stream, one with steady ticks (the
default), one with every tick the plain way (``TickLoop.steady_ticks = False``); every per-tick
message (field by field), ~/markers and ~/support_polygon, every state handed to the services
and every tick's record (stamp, inputs, state, notes, result) must be the same, tick by tick
(every 10th read only after the next tick, whose odometry and wrenches renew the steady tick in
place); once more with ~/zmp, ~/capture_point and ~/cop read (published by the steady tick too:
its kernel writes them while the CoPs defined stay those of the last rendered, which the stream
changes). The stream takes the steady ticks every way they go: odometry and
wrenches arriving (every 10th JointState: followed, or caught up with before the JointState is
taken), ~/markers and the contact mechanics due (both read; the nodes' clock driven by the test,
so that they are due at the same ticks), odometry and wrenches stamped ahead of the JointStates
(as in a backlog), and out of them every way it can: a wrench going stale, efforts missing
(forward dynamics off) and back, a repeated stamp, a stamp going back, /tf at a lower rate than
the ticks, two JointState publishers (two name lists), the steady tick's kernel still loading
(a cold start: plain ticks until it is in); and the steady node's JointStates taken by its
kernel (SteadyTick.take), declined where they must be, and once merged but not ticked (its tick
failing). Exact equality: both run the same kernels on the same arrays."""

import pathlib
import sys
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PolygonStamped
from visualization_msgs.msg import MarkerArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message

from kin_dyn_ros.dynamics.compiled import jit_path, jit_status, no_balancing
from kin_dyn_ros.node import KinDynNode
from kin_dyn_ros.dynamics import compiled
from kin_dyn_ros.node import steady_tick
from kin_dyn_ros.node.steady_tick import SteadyTick, SteadyTickRecord
from kin_dyn_ros_interfaces.msg import CentresOfPressure

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import (OUTPUTS, joint_state_msg, loopback_context,  # noqa: E402
                         module_namespace, odometry_msg, wrench_msg)

pytestmark = [pytest.mark.skipif(
    jit_path() is None, reason=f"the NumPy core runs here ({jit_status().reason}): no "
    "steady ticks; the compiled pass of scripts/test.sh runs these"),
    pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')]

NAMESPACE = module_namespace(__name__)
FEET = ('l_sole', 'r_sole')
SOLE = [0.05, 0.025, 0.0, -0.05, 0.025, 0.0, -0.05, -0.025, 0.0, 0.05, -0.025, 0.0]
PARAMS = {'contacts': list(FEET), 'world_frame': 'odom', 'rate': 0.0, 'use_odometry': True,
          'publish_frequency': 250.0, 'equilibrium_rate': 100.0, 'markers_rate': 30.0,
          'wrench_timeout': 0.1, **{f'contact.{c}.points': SOLE for c in FEET}}
PER_TICK = ('tf', 'com', 'momentum', 'gravity', 'forward_dynamics')
TICKS = 700
BALANCE = {'zmp': (PointStamped, 'zmp'), 'capture_point': (PointStamped, 'capture_point'),
           'cop': (CentresOfPressure, 'cop')}
NOW = [0]           # the nodes' loops' clock [ns]: each JointState's arrival, 1 ms apart
FAILING = {121, 122, 255}    # JointStates merged by the steady tick whose tick then fails
AHEAD_NS = 2_500_000         # odometry and wrenches stamped ahead of their JointState
GAVE_UP = 42                 # the steady tick has given up taking JointStates (not offered)
LOADING = range(520, 530)    # the steady tick's kernel still loading (a cold start)
DISPATCHED = range(200, 300)  # the base's arrays not what the kernel's code takes directly


@pytest.fixture(scope='module')
def context():
    yield from loopback_context(67, 89)


@pytest.fixture(scope='module', params=[False, True], ids=['', 'balance read'])
def nodes(context, icub_urdf, request):
    """{'steady': node, 'plain': node} of iCub, each with a reader of every per-tick output,
    ~/markers and ~/support_polygon (with ``request.param``: and of ~/zmp, ~/capture_point,
    ~/cop), and a record of what it published and handed to the services."""
    made, helper, balance = {}, rclpy_node(context), request.param
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(helper)
    try:
        for name in ('steady', 'plain'):
            space = f'{NAMESPACE}/{name}{"_balance" if balance else ""}'
            params = {**PARAMS, 'services_process': not balance}   # (the two ways to them)
            node = KinDynNode(context=context, namespace=space,
                              parameter_overrides=[Parameter('robot_description', value=icub_urdf),
                                                   *(Parameter(k, value=v)
                                                     for k, v in params.items())])
            node.loop.steady_ticks = name == 'steady'
            for key in PER_TICK + ('markers',):
                msg_type, topic, qos = OUTPUTS[key]
                topic = topic if topic.startswith('/') else f'{space}/kin_dyn_node/{topic}'
                helper.create_subscription(msg_type, topic, lambda m: None, qos, raw=True)
            helper.create_subscription(PolygonStamped, f'{space}/kin_dyn_node/support_polygon',
                                       lambda m: None, 10, raw=True)
            for key, (msg_type, topic) in BALANCE.items() if balance else ():
                helper.create_subscription(msg_type, f'{space}/kin_dyn_node/{topic}',
                                           lambda m: None, 10, raw=True)
            executor.add_node(node)
            node.record = _recorded(node)
            node.record['markers'], node.record['support'] = _counted(
                node.loop.publishers.markers), _counted(node.loop.mechanics._polygon_pub)
            for key in BALANCE if balance else ():
                node.record[key] = _counted(getattr(node.loop.publishers, key))
            node.loop.inputs._now_ns = lambda: NOW[0]    # (~/markers due at the same ticks)
            made[name] = node
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and not all(
                p.get_subscription_count() for n in made.values()
                for p in (*n.loop.by_name.values(), n.loop.publishers.markers)):
            executor.spin_once(timeout_sec=0.05)
        assert all(p.get_subscription_count() for n in made.values()
                   for p in n.loop.by_name.values()), 'the readers were not discovered'
        while time.monotonic() < deadline and balance and not all(
                n.loop.balance <= n.loop.publishers.is_read.current() for n in made.values()):
            executor.spin_once(timeout_sec=0.05)
        assert not balance or all(n.loop.balance <= n.loop.publishers.is_read.current()
                                  for n in made.values()), 'no reader of the balance outputs'
        yield made
    finally:
        executor.shutdown()
        for node in made.values():
            node.destroy_node()
        helper.destroy_node()


def rclpy_node(context):
    import rclpy
    return rclpy.create_node('steady_helper', namespace=NAMESPACE, context=context,
                             start_parameter_services=False)


class _RecordingHandle:
    """An rclpy publisher's handle that records each message (bytes) it publishes: the
    steady tick publishes through the handle (outputs.byte_publisher), the plain tick
    through ``publish()``, which uses it too."""

    def __init__(self, handle, out):
        self._handle, self._out = handle, out

    def __enter__(self):
        return self._handle.__enter__()

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)

    def publish_raw(self, data):
        self._out.append(bytes(data))
        self._handle.publish_raw(data)

    def publish(self, msg):
        self._out.append(serialize_message(msg))
        self._handle.publish(msg)

    def __getattr__(self, name):
        return getattr(self._handle, name)


def _recorded(node):
    """{per-tick output: [bytes published]} and 'services': [state arrays]: the publishers'
    calls recorded (and passed on), and what the services got: with services in the node's
    process each state written (and passed on); in a process of their own, the memory they
    read after each step (:func:`_after_step`; its sequence word counts the writes)."""
    record = {key: [] for key in PER_TICK}
    record['services'] = []
    for key, publisher in node.loop.by_name.items():
        assert hasattr(publisher, '_Publisher__publisher'), 'rclpy changed: record elsewhere'
        publisher._Publisher__publisher = _RecordingHandle(publisher.handle, record[key])
    loop = node.loop
    node.shared = loop.planners.shared(loop.model.kd.NDoF, loop.settings.representation)
    if node.shared is not None:
        return record
    write = loop.planners.write

    def services(state):
        record['services'].append(np.concatenate([state.w_H_b.ravel(), state.s,
                                                  state.base_vel, state.s_dot]))
        write(state)
    loop.planners.write = services
    return record


def _after_step(node):
    """Record the state memory shared with the services' process (when it is)."""
    if node.shared is not None:
        words, header = node.shared[:2]
        node.record['services'].append(words[:header + 22 + 2 * int(words[4])].copy())


def _counted(publisher):
    """A list that gets (tick (NOW), serialised message) of each message ``publisher``
    publishes, through ``publish()`` or its handle (as :func:`_recorded`)."""
    seen = _AtTick()
    publisher._Publisher__publisher = _RecordingHandle(publisher.handle, seen)
    return seen


class _AtTick(list):
    """A list whose ``append(data)`` keeps (tick (NOW), data)."""

    def append(self, data):
        super().append((NOW[0], data))


def stream(kd):
    """(JointState, odometry or None, {foot: wrench} bytes) of TICKS JointStates at 1 kHz
    (see the module docstring)."""
    rng = np.random.default_rng(7)
    n, t = kd.NDoF, 5 * 10**9
    for k in range(TICKS):
        t += 1_000_000 if k != 600 else -40_000_000         # (a stamp going back)
        if k == 500:
            t -= 1_000_000                                  # (a repeated stamp)
        stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
        efforts = () if 450 <= k < 470 else rng.normal(size=n)
        js = joint_state_msg(kd.joints_name_list, rng.uniform(-0.5, 0.5, n), rng.normal(size=n),
                             efforts, stamp)
        if k >= 620:          # (two publishers from here: each a half, the same stamp)
            half = n // 2
            js = tuple(serialize_message(joint_state_msg(
                js.name[part], js.position[part], js.velocity[part], js.effort[part], stamp))
                for part in (slice(0, half), slice(half, n)))
        odometry, wrenches = None, {}
        if k % 10 == 3:         # (not with the contact mechanics, due at k % 10 == 0)
            h = np.eye(4)
            h[:3, 3] = [0.01 * k / TICKS, 0.0, 0.6]
            ahead = AHEAD_NS if 130 <= k < 200 else 0     # (JointStates behind: a backlog)
            at = Time(sec=(t + ahead) // 10**9, nanosec=(t + ahead) % 10**9)
            odometry = odometry_msg('odom', 'root_link', h, rng.normal(size=6) * 0.1, at)
            for foot in FEET if not 200 <= k < 400 else FEET[:1]:    # r_sole stale 300-400
                wrenches[foot] = wrench_msg(foot, [*rng.normal(size=2), _normal(k, foot),
                                                   *rng.normal(size=3) * 0.1], at)
        yield (js if k >= 620 else serialize_message(js), odometry and serialize_message(odometry),
               {f: serialize_message(w) for f, w in wrenches.items()})


def _normal(k, foot):
    """A sole's normal force [N]: both active, but r_sole under the threshold (20 N) in
    the wrenches of k in [40, 60) and both in those of [60, 80) (no balance output then:
    the JointStates 63-82): the CoPs' pattern changes in a stretch of steady ticks."""
    return 5.0 if 60 <= k < 80 or 40 <= k < 60 and foot == 'r_sole' else 150.0


def _same_inputs(a, b, k):
    """Two ticks' TickInputs of two nodes (their Timed inputs: equal but not the same)."""
    assert (a.stamp_ns, a.stale, a.odometry_age, a.wrench_ages) == \
        (b.stamp_ns, b.stale, b.odometry_age, b.wrench_ages), k
    assert (a.odometry is None) == (b.odometry is None), k
    if a.odometry is not None:
        assert (a.odometry.frame, a.odometry.stamp_ns) == (b.odometry.frame, b.odometry.stamp_ns)
        for x, y in zip(a.odometry.value, b.odometry.value):
            np.testing.assert_array_equal(x, y)
    assert list(a.wrenches) == list(b.wrenches), k
    for contact, (frame, value) in a.wrenches.items():
        assert frame == b.wrenches[contact][0], k
        np.testing.assert_array_equal(value, b.wrenches[contact][1])


def _same_record(a, b, k):
    if a is None or b is None:
        assert a is b, k
        return
    assert (a.stamp_ns, a.fd_note, a.have_base) == (b.stamp_ns, b.fd_note, b.have_base), k
    _same_inputs(a.inputs, b.inputs, k)
    for field in ('w_H_b', 's', 'base_vel', 's_dot'):
        np.testing.assert_array_equal(getattr(a.state, field), getattr(b.state, field))
    np.testing.assert_array_equal(a.result.packed, b.result.packed)
    assert a.result.massless_joints == b.result.massless_joints


def test_steady_ticks_publish_what_the_plain_ticks_publish(nodes, monkeypatch):
    steady, plain = nodes['steady'], nodes['plain']
    kinds, taken, given, written, direct = [], [], [], [], []
    take = SteadyTick.take

    def counted(self, loop, read, data, last_ns):     # (which ticks took their JointState)
        call, nu = self._call, self._in.base[1]
        direct.append((len(kinds), call is not self._kernel))   # (without numba's dispatch)

        def spied(*args):                       # (which JointStates the kernel was given)
            given.append(len(kinds))
            if len(kinds) in FAILING:           # the tick fails once merged (a NaN nu)
                args = [np.full(6, np.nan) if x is nu else x for x in args]
            return call(*args)
        self._call = spied
        try:
            record = take(self, loop, read, data, last_ns)
        finally:
            self._call = call
        taken.append(('ticked' if record else 'not taken' if record is False else 'merged',
                      len(kinds)))
        return record
    monkeypatch.setattr(SteadyTick, 'take', counted)
    kernels, made = jit_path(), []     # (the balance's holders made: not at each renewal)
    monkeypatch.setattr(kernels, 'steady_balancing',
                        lambda parts, _made=kernels.steady_balancing: (
                            made.append(len(kinds)) or _made(parts)))
    read_late = None
    for k, (js, odometry, wrenches) in enumerate(stream(steady.loop.model.kd)):
        NOW[0] = 10**9 + k * 1_000_000
        if k in LOADING:        # (from a plain tick on: none learnt until it is loaded)
            monkeypatch.setattr(steady_tick, 'steady_ready', lambda: False)
            steady.loop._steady = None
        elif k == LOADING.stop:
            monkeypatch.setattr(steady_tick, 'steady_ready', compiled.steady_ready)
        if k in (DISPATCHED.start, DISPATCHED.stop):     # (e.g. a Fortran-ordered w_H_b)
            monkeypatch.setattr(steady_tick, 'direct_arrays', compiled.direct_arrays
                                if k == DISPATCHED.stop else lambda *arrays: False)
        if k == GAVE_UP:        # (as after an ask declined: renewed, it asks again)
            steady.loop._steady._merging, steady.loop._steady.offers = None, False
        for node in (steady, plain):
            loop = node.loop
            with loop.lock:
                if odometry:
                    loop.take_odometry(odometry)
                for foot, data in wrenches.items():
                    loop.take_wrench(foot, data)
                for part in js if isinstance(js, tuple) else (js,):
                    loop.take_joint_state(part)
                while loop.run_step():
                    pass
            _after_step(node)
        if read_late:         # (read once the next JointState's inputs renewed the steady one)
            _same_record(*read_late, k - 1)
        read_late = (steady.loop.last_tick, plain.loop.last_tick) if k % 10 == 2 else None
        if read_late is None:
            _same_record(steady.loop.last_tick, plain.loop.last_tick, k)
        kinds.append(type(steady.loop.last_tick) is SteadyTickRecord)
        ran = steady.loop._steady       # (the balance bytes its kernel wrote, if it ticked)
        written.append(kinds[-1] and ran is not None and bool(ran._bal_state[1]))
        assert type(plain.loop.last_tick) is not SteadyTickRecord
    balance = [(key, msg_type) for key, (msg_type, _) in BALANCE.items()
               if key in steady.record]
    for key, msg_type in (('markers', MarkerArray), ('support', PolygonStamped), *balance):
        ours, theirs = steady.record[key], plain.record[key]     # due at the same ticks
        assert [t for t, _ in ours] == [t for t, _ in theirs] and len(ours) >= 10, key
        for (t, a), (_, b) in zip(ours, theirs):
            assert deserialize_message(a, msg_type) == deserialize_message(b, msg_type), (key, t)
    for key in PER_TICK + ('services',):
        ours, theirs = steady.record[key], plain.record[key]
        assert len(ours) == len(theirs), key
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if key == 'services':
                assert np.array_equal(a, b), (key, i)
            else:   # (two nodes' templates: the same fields, their padding bytes not)
                msg_type = OUTPUTS[key][0]
                assert deserialize_message(a, msg_type) == deserialize_message(b, msg_type), \
                    (key, i)
    if balance:     # (the kernel wrote them but where the CoPs defined changed or none was)
        assert np.mean(written) > 0.4 and not any(written[63:83]), np.mean(written)
        assert sum(written[43:63]) >= 15 and sum(written[83:103]) >= 15
    else:
        assert not any(written)
    steady_share = np.mean(kinds)
    assert 0.5 < steady_share < 0.95, steady_share      # steady mostly, plain where it must
    assert not any(kinds[310:400]), 'a stale wrench: the plain way (it logs it)'
    assert not any(kinds[LOADING.start:LOADING.stop]) and all(kinds[LOADING.stop + 1:560]), \
        'the plain way while the steady kernel loads'
    assert all(kinds[k] for k in range(13, 290, 10)), 'odometry and wrenches came: followed'
    assert all(kinds[130:200]), 'JointStates behind the odometry and wrenches: steady too'
    behind = [how for how, k in taken if 130 <= k < 200 and k % 10 in (4, 5, 6)]
    assert behind == ['ticked', 'ticked', 'not taken'] * 7, 'taken until the newer inputs'
    caught = {k: how for how, k in taken if k % 10 == 3}     # (odometry, wrenches just taken)
    assert all(caught.get(k) == 'ticked' for k in range(13, 130, 10)), \
        'caught up with the odometry and wrenches, then the JointState taken'
    assert GAVE_UP not in [k for _, k in taken], 'not offered'
    assert all(caught.get(k) == 'not taken' for k in range(133, 200, 10)), \
        'caught up with inputs ahead of the JointState: not taken (then followed)'
    assert all(kinds[k] for k in range(10, 290, 10)), 'contact mechanics due: steady too'
    markers = [(t - 10**9) // 1_000_000 for t, _ in steady.record['markers']]
    assert sum(kinds[k] for k in markers) > len(markers) // 2, '~/markers on steady ticks'
    assert any(kinds[452:470]), 'no efforts: steady without forward dynamics'
    fused = [k for how, k in taken if how == 'ticked']    # merged and ticked in one call
    assert {k for how, k in taken if how == 'merged'} == FAILING   # then ticked by run()
    assert all(d for k, d in direct if k not in range(DISPATCHED.start, DISPATCHED.stop + 10)) \
        and not any(d for k, d in direct if k in range(DISPATCHED.start + 10, DISPATCHED.stop)) \
        and sum(k in DISPATCHED for k, _ in direct) > 50, 'called directly, else dispatched'
    assert len(fused) > 0.5 * sum(kinds), (len(fused), sum(kinds))
    assert all(kinds[k] for k in fused)
    assert all(how == 'not taken' for how, k in taken if k in (500, 600) or 450 <= k <= 470)
    assert {how for how, k in taken if k >= 620} == {'not taken'}, 'two name lists: not taken'
    assert [k for k in given if k >= 620] == [620], 'the kernel given one, then not offered'
    assert len(steady.record['tf']) < 0.4 * TICKS     # /tf at 250 Hz of stamps
    # the balance's holder is kept as the steady tick renews its inputs (every 10th JointState
    # of 13-123: new values of the same wrenches), made anew for a new CoP pattern
    assert sum(13 <= m < 130 for m in made) < 5 if 'zmp' in steady.record else not made, made
    assert len(steady.record['forward_dynamics']) > 0.8 * TICKS


def test_the_steady_tick_kernel_given_a_joint_state_merges_it_then_ticks(icub_urdf):
    """:func:`.kernels.steady_tick` given a JointState's bytes (:meth:`.SteadyTick.take`'s
    one call) leaves what :func:`.kernels.merge_joint_state` and then the same kernel
    without bytes leave, bit for bit (merged values, flags and stamp; out, poses, ages,
    state, shared words, message bytes), on JointStates of the learnt name list; and
    nothing (but scratch: the ages), with the status that says why, for a stamp that is 0,
    not after the last tick's, before the steady tick's or from a newer input's on
    (NOT_NEWER), a stale wrench
    (STALE), changed or cut bytes and NaN (the merge's); and the merge alone when the tick
    fails (MERGED: a NaN base velocity)."""
    from kin_dyn_ros.dynamics import KinDynComputations
    from kin_dyn_ros.node.conversions import JointStateMerger
    from kin_dyn_ros.node.inputs import SensorInputs
    kd = KinDynComputations(icub_urdf, compiled=True)
    names, n, rng = kd.joints_name_list, kd.NDoF, np.random.default_rng(11)
    prepared = kd.prepared_tick({'l_sole': ('l_sole', np.linspace(-3.0, 4.0, 6))})
    k, head, wrench, size, shape = prepared.arguments()
    sources = rng.permutation(size + 7 + 2)[:60].astype(np.intp)
    places, pairs = np.arange(1, 61, dtype=np.intp), np.array([[124, 125]], np.intp)
    no_mimic = (np.zeros((2, 0), np.int64), np.zeros((2, 0)))
    no_merge = (np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.uint8),
                np.zeros(0), np.zeros(0, np.bool_), np.zeros(0, np.bool_), np.zeros(2, np.int64))
    w_H_b, nu = np.eye(4), rng.normal(size=6)     # (nu NaN: the tick fails, merged)
    last, since, wrench_ns = 5 * 10**9, 5 * 10**9 - 3, 5 * 10**9 - 20_000_000
    until = last + 200_000_000           # (a newer input's stamp: the ticks before it)

    def message(stamp_ns, bad=None):
        msg = joint_state_msg(names, rng.normal(size=n), rng.normal(size=n), rng.normal(size=n),
                              Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9))
        if bad == 'nan':
            msg.position[3] = float('nan')
        data = serialize_message(msg)
        if bad == 'cut':
            return data[:int(rng.integers(len(data)))]
        if bad == 'changed':
            changed = bytearray(data)
            at = int(rng.integers(12, len(data)))
            changed[at] = (changed[at] + int(rng.integers(1, 256))) % 256
            return bytes(changed)
        return data

    sides, first = {}, [message(last - 1), message(last)]
    for side in ('fused', 'reference'):
        inputs = SensorInputs(lambda: 0)
        inputs.configure(JointStateMerger(names, kd.mimic_joints, 0.25), lambda f: f, 'odom')
        for data in first:                  # (merged, then learnt by the plain path)
            inputs.take_joint_state(data)
        sides[side] = inputs
    arguments = sides['fused'].merge_arguments()
    assert arguments is not None and sides['reference'].merge_arguments() is not None

    at, ages_at, state_at, end = k.steady_results_layout(size, shape[0], 2, n)

    def call(data, merge, last, since, until, values, rest, results):
        fixed = k.steady_arguments(*merge, *head, values, wrench[0], *rest)
        return k.steady_tick(data, last, since, until, fixed, w_H_b, nu, wrench[1], results,
                             no_balancing(k))

    def tick(side, data, ticking):
        values = sides[side].merger.merged_arrays()[0]
        words, buf = np.zeros(7 + 22 + 2 * n), np.zeros(8 * 63, np.uint8)
        rest = (np.array([0, 0, wrench_ns], np.int64), True, False, 0.1, True, words, 7, 3, 2,
                buf, sources, places, pairs, *no_mimic, size, shape[0])
        results = np.full(end, 7.0)
        if side == 'fused':
            status = call(data, arguments, last, since, until, values, rest, results)
        else:
            status = ticking(values, rest, results)
        out, poses, ages, state = (results[:at], results[at:ages_at],
                                   results[ages_at:state_at], results[state_at:end])
        return status, [a.copy() for a in (values, *sides[side].merger.merged_arrays()[1:],
                                           out, poses, ages, state, words, buf)]

    def reference(data):
        stamp = int.from_bytes(data[4:8], 'little', signed=True) * 10**9 \
            + int.from_bytes(data[8:12], 'little')

        def ticking(values, rest, results):
            if stamp == 0 or stamp <= last or not since <= stamp < until:
                return k.NOT_NEWER
            if abs(stamp - wrench_ns) > 100_000_000:
                return k.STALE
            if sides['reference']._compiled.merge(data) is None:
                return None                      # (UNREAD or NOT_FINITE: nothing changed)
            rest[0][0] = stamp
            status = call(b"", no_merge, 0, 0, 0, values, rest, results)
            return k.OK if status == k.OK else k.MERGED
        return ticking

    stamps = [last + 1_000_000 * j for j in range(-3, 60)] + [0, last, since - 1, until,
                                                              until - 50_000_000, 7 * 10**9]
    statuses = []
    for stamp in stamps:
        for bad in (None, None, 'nan', 'cut', 'changed', 'tick fails'):
            data = message(stamp, bad)
            nu[0] = np.nan if bad == 'tick fails' else 0.25
            got, want = tick('fused', data, None), tick('reference', data, reference(data))
            if want[0] is None:
                assert got[0] in (k.UNREAD, k.NOT_FINITE), (stamp, bad, got[0])
            else:
                assert got[0] == want[0], (stamp, bad)
            for i, (a, b) in enumerate(zip(got[1], want[1])):
                if i != 5 or got[0] == k.OK:       # (the ages: scratch unless it ticked)
                    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
            statuses.append(got[0])
    for status in (k.OK, k.NOT_NEWER, k.STALE, k.UNREAD, k.NOT_FINITE, k.MERGED):
        assert statuses.count(status) >= 3, status
