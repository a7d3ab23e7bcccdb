"""kin_dyn_ros.node.sensor_thread: subscriptions taken on a thread of their own, over real rclpy.

A publisher node and a subscriber node in one context on loopback DDS; the subscriber's
executor spins in the test thread, so a callback run by it would be seen on the wrong
thread.
"""

import os
import subprocess
import pathlib
import sys
import threading
import time
from types import SimpleNamespace

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import Int32, String

from kin_dyn_ros.node import sensor_thread
from kin_dyn_ros.node.sensor_thread import SensorThread

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import loopback_context, spin_until  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(166, 199)


@pytest.fixture
def pair(ros_context):
    """(publisher node, subscriber node, executor spinning both in the test thread)."""
    pub_node = rclpy.create_node('sensor_thread_pub', context=ros_context)
    sub_node = rclpy.create_node('sensor_thread_sub', context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(pub_node)
    executor.add_node(sub_node)
    yield pub_node, sub_node, executor
    executor.shutdown()
    pub_node.destroy_node()
    sub_node.destroy_node()


def matched(executor, *publishers):
    assert spin_until(executor, lambda: all(p.get_subscription_count() for p in publishers))


def wired(pair, on_error, topic, callback, msg_type=Int32, depth=10, **options):
    """(thread, publisher): a SensorThread (not started; ``options`` are its keyword
    arguments) with one subscription of the subscriber node to ``topic``, and a publisher
    of the publisher node to it, matched."""
    pub_node, sub_node, executor = pair
    thread = SensorThread(sub_node, on_error, **options)
    sub_node.create_subscription(msg_type, topic, callback, depth, callback_group=thread.group)
    pub = pub_node.create_publisher(msg_type, topic, depth)
    matched(executor, pub)
    return thread, pub


def test_callbacks_run_on_the_thread_in_order_never_on_the_executor(pair, ready_kind):
    executor = pair[2]
    errors, got = [], []
    thread, pub = wired(pair, lambda sub, exc: errors.append(exc), 'numbers',
                        lambda m: got.append((m.data, threading.current_thread().name,
                                              threading.get_native_id())), depth=100)
    thread.start()
    for k in range(50):
        pub.publish(Int32(data=k))
    assert spin_until(executor, lambda: len(got) == 50)
    assert [k for k, _, _ in got] == list(range(50))
    assert {(name, tid) for _, name, tid in got} == {('sensor_thread_sub_sensors',
                                                      thread.native_id)}
    assert thread.running and not errors
    thread.stop()
    assert not thread.running


class _WaitSetWithoutReady:
    """rclpy's wait set without ``get_ready_entities`` (a rclpy that cannot say which
    subscriptions are ready): the thread then tries every subscription."""

    _WaitSet = sensor_thread._rclpy.WaitSet

    def __init__(self, *args):
        self._real = self._WaitSet(*args)
        for name in SensorThread._WAIT_SET_METHODS:
            setattr(self, name, getattr(self._real, name))


@pytest.fixture(params=['ready entities', 'every subscription tried'])
def ready_kind(request, monkeypatch):
    """The thread reading which subscriptions are ready (rclpy's get_ready_entities), or
    trying each (its fallback); both must take the same messages in the same order."""
    if request.param == 'every subscription tried':
        monkeypatch.setattr(sensor_thread, '_rclpy', SimpleNamespace(
            WaitSet=_WaitSetWithoutReady, Subscription=sensor_thread._rclpy.Subscription))
    return request.param


def test_pending_messages_are_taken_one_per_subscription_per_round(pair, ready_kind):
    """Messages already waiting when the thread starts: one of each subscription per round,
    in the order the subscriptions were created (not the order of publication), so that a
    JointState is never taken before the odometry published with it."""
    pub_node, sub_node, executor = pair
    order = []
    thread = SensorThread(sub_node, lambda sub, exc: None)
    for topic in ('first', 'second'):
        sub_node.create_subscription(Int32, topic, lambda m, t=topic: order.append((t, m.data)),
                                     10, callback_group=thread.group)
    pubs = {t: pub_node.create_publisher(Int32, t, 10) for t in ('first', 'second')}
    matched(executor, *pubs.values())
    for k in range(3):
        pubs['second'].publish(Int32(data=k))
    for k in range(3):
        pubs['first'].publish(Int32(data=k))
    spin_until(executor, lambda: False, timeout_s=1.0)     # delivered, not yet taken
    assert order == []
    thread.start()
    assert spin_until(executor, lambda: len(order) == 6)
    assert order == [(t, k) for k in range(3) for t in ('first', 'second')]
    thread.stop()


def test_the_wait_names_the_ready_subscriptions_only(pair):
    """After a wait, the entries of the subscriptions with a message and only those, in
    creation order (rclpy's ready pointers matched to the handles' pointers); every entry
    where rclpy cannot say."""
    pub_node, sub_node, executor = pair
    thread = SensorThread(sub_node, lambda sub, exc: None)
    topics = ('idle_a', 'busy_b', 'idle_c', 'busy_d')
    subs = [sub_node.create_subscription(Int32, t, lambda m: None, 10,
                                         callback_group=thread.group) for t in topics]
    pubs = {t: pub_node.create_publisher(Int32, t, 10) for t in topics}
    matched(executor, *pubs.values())
    for topic in ('busy_d', 'busy_b'):
        pubs[topic].publish(Int32(data=1))
    spin_until(executor, lambda: False, timeout_s=1.0)     # delivered, not yet taken
    context = sub_node.context
    wait_set = sensor_thread._rclpy.WaitSet(len(subs), 1, 0, 0, 0, 0, context.handle)
    entries = [(s, s.handle, s.handle.pointer, s.msg_type, s.raw, s.callback) for s in subs]
    thread._ready_pointers = sensor_thread._ready_pointers(wait_set)
    held = (context.handle, thread._wake.handle, *(e[1] for e in entries))
    ready = thread._wait(wait_set, held, entries)
    assert [e[0].topic_name for e in ready] == ['/busy_b', '/busy_d']
    thread._ready_pointers = sensor_thread._ready_pointers(_WaitSetWithoutReady(
        len(subs), 1, 0, 0, 0, 0, context.handle))
    assert thread._ready_pointers is None
    assert thread._wait(wait_set, held, entries) is entries
    thread._wake.destroy()


@pytest.mark.parametrize('sweeping', [True, False])
def test_a_message_coming_during_the_drain_is_taken(pair, monkeypatch, sweeping):
    """A message that comes to a subscription the wait did not find ready, while the
    callbacks of the ready ones run: taken in the same drain (before on_idle) while sweeps
    find such messages, else after the next wait; every message either way, in order.
    (IDLE_MAX_S made long: the callback's sleep, which lets the message come, must not
    make on_idle due.)"""
    monkeypatch.setattr(sensor_thread, 'IDLE_MAX_S', 10.0)
    if not sweeping:
        monkeypatch.setattr(sensor_thread, 'SWEEP_CREDIT', 0)
        monkeypatch.setattr(sensor_thread, 'SWEEP_EVERY', 10**9)
    pub_node, sub_node, executor = pair
    events = []
    thread = SensorThread(sub_node, lambda sub, exc: events.append(exc),
                          on_idle=lambda: events.append('idle'))
    echo = pub_node.create_publisher(Int32, 'first_late', 10)

    def second(msg):       # the first topic's message comes while this callback runs
        events.append(('second', msg.data))
        echo.publish(msg)
        time.sleep(0.05)
    sub_node.create_subscription(Int32, 'first_late', lambda m: events.append(('first', m.data)),
                                 10, callback_group=thread.group)
    sub_node.create_subscription(Int32, 'second_late', second, 10, callback_group=thread.group)
    pub = pub_node.create_publisher(Int32, 'second_late', 10)
    matched(executor, pub, echo)
    thread.start()
    try:
        assert spin_until(executor, lambda: events == ['idle'] or events[-1:] == ['idle'])
        for k in range(3):
            pub.publish(Int32(data=k))
            assert spin_until(executor, lambda: ('first', k) in events)
        taken = [e for e in events if e != 'idle']
        assert taken == [(t, k) for k in range(3) for t in ('second', 'first')]
        between = [events.index(('second', k)) + 1 for k in range(3)]
        if sweeping:       # (the first drain sweeps: a fresh thread has its credit)
            assert [events[i] for i in between] == [('first', k) for k in range(3)]
        else:
            assert [events[i] for i in between] == ['idle'] * 3
    finally:
        thread.stop()


def test_on_idle_runs_only_when_no_message_is_pending(pair):
    """on_idle (deferred work) first runs after the whole backlog is taken; an exception
    out of it is reported as 'idle' and the thread goes on."""
    executor = pair[2]
    got, idle_at, errors = [], [], []

    def on_idle():
        idle_at.append(len(got))
        if len(idle_at) == 1:
            raise RuntimeError('deferred work failed')
    thread, pub = wired(pair, lambda sub, exc: errors.append((sub, str(exc))), 'backlog',
                        lambda m: got.append(m.data), on_idle=on_idle)
    for k in range(5):
        pub.publish(Int32(data=k))
    spin_until(executor, lambda: False, timeout_s=1.0)     # delivered, not yet taken
    thread.start()
    assert spin_until(executor, lambda: len(idle_at) >= 2)  # it went on after the error
    assert idle_at[0] == 5 and got == list(range(5))
    assert errors == [('idle', 'deferred work failed')]
    thread.stop()


def test_on_idle_is_not_starved_by_a_stream_it_cannot_keep_up_with(pair):
    """A backlog that takes longer than IDLE_MAX_S to take: on_idle still gets its call
    within it (every IDLE_MAX_S of taking), not only once the backlog is gone."""
    executor = pair[2]
    got, idle_at = [], []

    def slow(msg):
        got.append(msg.data)
        time.sleep(sensor_thread.IDLE_MAX_S / 2)       # two messages per period
    thread, pub = wired(pair, lambda sub, exc: None, 'stream', slow,
                        on_idle=lambda: idle_at.append(len(got)))
    for k in range(10):
        pub.publish(Int32(data=k))
    spin_until(executor, lambda: False, timeout_s=1.0)     # delivered, not yet taken
    thread.start()
    try:
        assert spin_until(executor, lambda: len(got) == 10)
        during = [n for n in idle_at if n < 10]
        assert during and during[0] <= 4         # within two periods, not after the 10th
        assert len(during) >= 3                  # and again in the periods after
    finally:
        thread.stop()


def test_on_idle_with_steps_left_is_called_again_without_waiting(pair, monkeypatch):
    """on_idle returning True (steps left) is called again at once, after taking what came
    meanwhile; returning False, the thread waits for input again. The wait is made 60 s
    long, so only the first kind of call can come without a new message."""
    monkeypatch.setattr(sensor_thread, 'WAIT_NS', 60_000_000_000)
    executor = pair[2]
    got, idle_at = [], []

    def on_idle():
        idle_at.append(len(got))
        return len(idle_at) % 3 != 0         # three steps per batch of work
    thread, pub = wired(pair, lambda sub, exc: None, 'steps', lambda m: got.append(m.data),
                        on_idle=on_idle)
    thread.start()
    try:
        pub.publish(Int32(data=0))
        assert spin_until(executor, lambda: len(idle_at) >= 3)
        spin_until(executor, lambda: False, timeout_s=0.5)
        assert idle_at == [1, 1, 1]              # no fourth call: waiting for input
        pub.publish(Int32(data=1))
        assert spin_until(executor, lambda: len(idle_at) >= 6)
        assert idle_at[3:] == [2, 2, 2]
    finally:
        thread.stop()


def test_with_info_gives_the_reception_time(pair):
    executor = pair[2]
    got = []
    thread, pub = wired(pair, lambda sub, exc: None, 'text',
                        lambda m, info: got.append((m.data, info)), String, with_info=True)
    thread.start()
    before = time.time_ns()
    pub.publish(String(data='hello'))
    assert spin_until(executor, lambda: got)
    data, info = got[0]
    assert data == 'hello' and before <= info['received_timestamp'] <= time.time_ns()
    thread.stop()


def test_a_lock_given_is_held_around_each_callback_and_released_after(pair):
    """``lock``: each callback runs with it held, by the thread (also one that raises); a
    holder elsewhere makes the thread wait before the callback."""
    executor, lock, got, errors = pair[2], threading.Lock(), [], []

    def callback(msg):
        got.append((msg.data, lock.locked()))
        if msg.data == 1:
            raise RuntimeError('bad message')
    thread, pub = wired(pair, lambda sub, exc: errors.append(exc), 'locked', callback,
                        lock=lock)
    thread.start()
    for k in range(2):
        pub.publish(Int32(data=k))
    assert spin_until(executor, lambda: len(got) == 2 and errors)
    assert got == [(0, True), (1, True)] and not lock.locked()
    with lock:                          # (held here: the thread's callback waits for it)
        pub.publish(Int32(data=2))
        time.sleep(0.2)
        assert len(got) == 2
    assert spin_until(executor, lambda: len(got) == 3)
    thread.stop()


def test_a_failing_callback_is_reported_and_the_thread_goes_on(pair):
    executor = pair[2]
    errors, got = [], []

    def callback(msg):
        if msg.data == 1:
            raise RuntimeError('bad message')
        got.append(msg.data)
    thread, pub = wired(pair, lambda sub, exc: errors.append((sub.topic_name, exc)), 'flaky',
                        callback)
    thread.start()
    for k in range(3):
        pub.publish(Int32(data=k))
    assert spin_until(executor, lambda: len(got) == 2)
    assert got == [0, 2]
    assert [(t, str(e)) for t, e in errors] == [('/flaky', 'bad message')]
    thread.stop()


def test_stop_is_prompt_and_later_messages_are_not_taken(pair):
    executor = pair[2]
    got = []
    thread, pub = wired(pair, lambda sub, exc: None, 'late', got.append)
    thread.start()
    start = time.monotonic()
    thread.stop()
    assert time.monotonic() - start < 1.0 and not thread.running
    pub.publish(Int32(data=7))
    spin_until(executor, lambda: False, timeout_s=0.5)    # neither taken by the executor
    assert got == []


def test_the_thread_ends_when_the_context_shuts_down():
    context = next(gen := loopback_context(166, 199))
    node = rclpy.create_node('sensor_thread_shutdown', context=context)
    errors = []
    thread = SensorThread(node, lambda sub, exc: errors.append(exc))
    node.create_subscription(Int32, 'x', lambda m: None, 10, callback_group=thread.group)
    thread.start()
    assert thread.running
    gen.close()                                   # rclpy.try_shutdown of the context
    thread._thread.join(5.0)
    assert not thread.running and not errors
    thread.stop()
    node.destroy_node()


def test_a_callback_failing_after_shutdown_is_not_reported():
    """Ctrl-C shuts the context down while a callback publishes: its error is the
    shutdown's, not a dropped message to report; the thread ends."""
    context = next(gen := loopback_context(166, 199))
    node = rclpy.create_node('sensor_thread_late', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    errors, calls = [], []
    thread = SensorThread(node, lambda sub, exc: errors.append(str(exc)))
    out = node.create_publisher(Int32, 'late_out', 10)

    def callback(msg):
        calls.append(msg.data)
        if msg.data == 0:
            raise ValueError('bad message')   # while the context is up: reported
        context.try_shutdown()
        out.publish(msg)                      # raises: the context is shut down
    node.create_subscription(Int32, 'late_in', callback, 10, callback_group=thread.group)
    pub = node.create_publisher(Int32, 'late_in', 10)
    matched(executor, pub)
    thread.start()
    pub.publish(Int32(data=0))
    assert spin_until(executor, lambda: errors == ['bad message'])
    pub.publish(Int32(data=1))
    thread._thread.join(5.0)
    assert calls == [0, 1] and errors == ['bad message'] and not thread.running
    thread.stop()
    executor.shutdown()
    node.destroy_node()
    gen.close()


@pytest.mark.skipif(not hasattr(os, 'sched_setaffinity'), reason='CPU affinity is Linux-only')
def test_cpus_pin_the_thread_and_a_refused_cpu_leaves_it_unpinned(pair, monkeypatch):
    """``realtime``'s CPUs (cpu_affinity) pin the thread, not the process; a CPU the OS
    refuses leaves the thread on the process's CPUs with one warning, and it still takes
    messages."""
    allowed = os.sched_getaffinity(0)
    cpu = max(allowed)
    warnings = []
    monkeypatch.setattr(pair[1], 'get_logger', lambda: SimpleNamespace(warning=warnings.append))
    for wanted, expected, topic in ((cpu, {cpu}, 'pinned'), (4096, allowed, 'refused')):
        got = []
        thread, pub = wired(pair, lambda sub, exc: None, topic,
                            lambda m: got.append(os.sched_getaffinity(threading.get_native_id())),
                            realtime=(0, (wanted,)))
        thread.start()
        pub.publish(Int32(data=1))
        assert spin_until(pair[2], lambda: got)
        assert got[0] == expected and os.sched_getaffinity(0) == allowed
        thread.stop()
    assert len(warnings) == 1 and 'cpu_affinity [4096]' in warnings[0]


@pytest.mark.skipif(not hasattr(os, 'SCHED_FIFO'), reason='SCHED_FIFO is Linux-only')
def test_a_priority_makes_the_thread_fifo_or_says_why_not(pair, monkeypatch):
    """The thread, not the process, runs SCHED_FIFO at the priority (where permitted; else one
    warning with the cause), with reset-on-fork: a process it starts is not real-time."""
    warnings = []
    monkeypatch.setattr(pair[1], 'get_logger', lambda: SimpleNamespace(warning=warnings.append))
    got = []

    def record(msg):
        tid = threading.get_native_id()
        child = subprocess.run([sys.executable, '-c', 'import os; print(os.sched_getscheduler(0))'],
                               capture_output=True, text=True, check=True)
        got.append((os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority,
                    int(child.stdout)))
    thread, pub = wired(pair, lambda sub, exc: None, 'fifo', record, realtime=(3, ()))
    thread.start()
    pub.publish(Int32(data=1))
    assert spin_until(pair[2], lambda: got)
    thread.stop()
    assert os.sched_getscheduler(0) == os.SCHED_OTHER          # the process's main thread
    policy, priority, child = got[0]
    if warnings:                                              # refused: the cause is named
        assert len(warnings) == 1 and 'thread_priority 3' in warnings[0] \
            and ('rtprio limit' in warnings[0] or 'cgroup' in warnings[0])
        assert policy == os.SCHED_OTHER
    else:
        assert policy & ~os.SCHED_RESET_ON_FORK == os.SCHED_FIFO and priority == 3
        assert child == os.SCHED_OTHER
