#!/usr/bin/env python3
"""Where kin_dyn_node's CPU per JointState goes, in-process (not a test).

One real KinDynNode (rclpy, loopback DDS, iCub with config/icub.yaml's contacts, every
output on) with a helper node subscribed (raw) to every per-tick output, so that publishing
does the real work. The script feeds the node's callbacks as its sensor thread does
(odometry and two sole wrenches every 10th JointState, as bench_node's publisher, or every
Nth with ``--aux-every N``; CDR bytes; under the node's lock; the deferred contact mechanics
run after each tick), one JointState per ms, and accumulates the thread CPU time of the
pieces by wrapping them on the instance (the node's code is not changed): reading and
merging the JointState, the tick's state and compute_tick, each output's rendering and its
publish, the contact mechanics. Prints microseconds per JointState per piece; ``--total``
the total alone (no wrapper); ``--calls`` the Python functions and C calls made per
JointState (a count: the machine's speed does not change it; each costs ~2 us of CPU in the
running node, where the caches are cold).

Usage:  source scripts/env.sh && python bench/profile_node_tick.py [--ticks 3000]
"""

import argparse
import collections
import gc
import os
import pathlib
import random
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ticks', type=int, default=3000)
    parser.add_argument('--model', help='URDF path or a name of bench/models.py')
    parser.add_argument('--outputs', nargs='+', metavar='ATTR',
                        help="only these of the node's publishers subscribed (Publishers' "
                        "attributes, e.g. tf com momentum gravity forward_dynamics: "
                        "bench_node's set); default every one")
    parser.add_argument('--total', action='store_true',
                        help='the total alone: no piece wrapped (each wrapper costs ~1-2 us)')
    parser.add_argument('--aux-every', type=int, default=10, metavar='N',
                        help='odometry and two wrenches with every Nth JointState (default 10: '
                        'bench_node\'s 100 Hz; 1: at 1 kHz, as from a robot\'s estimator and '
                        'F/T sensors)')
    parser.add_argument('--calls', action='store_true',
                        help='count the Python and C calls per JointState (sys.setprofile, no '
                        'piece wrapped) instead of timing: a figure the machine\'s speed does '
                        'not change; prints the 30 most frequent')
    args = parser.parse_args()
    from kin_dyn_ros.loopback import set_loopback_environment
    set_loopback_environment()
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from bench_node_contacts import config_parameters
    from floor_node import input_messages
    from models import model_text
    from kin_dyn_ros.dynamics import KinDynComputations
    from kin_dyn_ros.node import KinDynNode

    urdf = model_text(args.model)
    kd0 = KinDynComputations(urdf)
    rclpy.init()
    params = {**config_parameters(), 'robot_description': urdf, 'rate': 0.0,
              'use_odometry': True, 'publish_tf': True, 'publish_base_tf': True,
              'publish_markers': True, 'publish_forward_dynamics': True,
              'publish_frequency': 1000.0}     # /tf on every tick, rendered and published
    node = KinDynNode(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    helper = rclpy.create_node('profile_helper', start_parameter_services=False)
    for attr, pub in vars(node.loop.publishers).items():
        if hasattr(pub, 'topic_name') and 'description' not in pub.topic_name \
                and (args.outputs is None or attr in args.outputs):
            helper.create_subscription(pub.msg_type, pub.topic_name, lambda m: None, 10, raw=True)
    executor = SingleThreadedExecutor()
    executor.add_node(helper)
    executor.add_node(node)
    deadline = time.monotonic() + 5.0
    while not node.loop.publishers.forward_dynamics.get_subscription_count() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)

    spent = collections.defaultdict(float)
    clock = time.thread_time

    def wrap(obj, attr, label):
        inner = getattr(obj, attr)

        def timed(*a, **k):
            t0 = clock()
            try:
                return inner(*a, **k)
            finally:
                spent[label] += clock() - t0
        if not (args.total or args.calls):
            setattr(obj, attr, timed)

    m = node.loop.model
    wrap(node.loop.inputs, 'take_joint_state', 'JointState: CDR read + merge')
    every = args.aux_every
    wrap(node.loop.inputs, 'take_odometry', f'odometry (every {every}th)')
    wrap(node.loop.inputs, 'take_wrench', f'wrenches (2, every {every}th)')
    wrap(node.loop.ticker, 'compute', 'tick: state + compute_tick')
    wrap(m.kd, 'compute_tick', '  of which compute_tick')
    wrap(node.loop, 'publish', 'publish: all outputs')
    for attr in ('per_tick', 'marker_array', 'contact_forces'):
        wrap(m.messages, attr, f'  render {attr}')
    for attr, pub in vars(node.loop.publishers).items():
        if hasattr(pub, 'publish'):
            wrap(pub, 'publish', f'  publish {attr}')
    wrap(node.loop.mechanics, 'steps', 'contact mechanics: a due tick\'s steps')
    wrap(node.loop, 'run_step', 'contact mechanics: deferred steps')
    for attr in ('render', 'balance_messages'):
        wrap(node.loop, attr, f'{attr}')
    wrap(m.kd, '_balance', '  balance, NumPy (contact poses, CoPs, ZMP, DCM)')
    wrap(m.kd, '_balance_vector', '  balance, compiled (its vector)')
    wrap(m.kd._jit, 'balance', '    of which the balance kernel')
    wrap(m.balance_messages, 'render', '  render zmp, capture_point, cop')
    gc.freeze()

    js, odom, wrench = input_messages(kd0)
    t_ns = time.time_ns()

    def feed(count):
        total = 0.0
        for k, (aux, data) in enumerate(messages(count)):
            t0 = clock()
            take(aux, data)
            total += clock() - t0
            if k % 50 == 0:
                executor.spin_once(timeout_sec=0.0)
            time.sleep(0.001)      # one JointState per ms, as at 1 kHz
        return total

    def messages(count):
        """(odometry and wrench bytes every ``--aux-every``th, else None; JointState bytes) x
        count, made one at a time (between the timed calls, as a publisher's would be)."""
        nonlocal t_ns
        for k in range(count):
            t_ns += 1_000_000
            sec, nsec = divmod(t_ns, 1_000_000_000)
            for msg in (js, odom, wrench):
                msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nsec
            aux = [serialize_message(odom), serialize_message(wrench)] \
                if k % every == 0 else None
            yield aux, serialize_message(js)

    def take(aux, data):
        """What the node's sensor thread calls for these messages."""
        with node.loop.lock:
            if aux:
                node.loop.take_odometry(aux[0])
                node.loop.take_wrench('l_sole', aux[1])
                node.loop.take_wrench('r_sole', aux[1])
            node.loop.take_joint_state(data)
            while node.loop.run_step():
                pass

    feed(300)
    if args.calls:
        count_calls(take, list(messages(min(args.ticks, 500))))
        return
    spent.clear()
    total = feed(args.ticks)
    print(f'{args.ticks} JointStates, one per ms; thread CPU per JointState [us] '
          f'(load {os.getloadavg()[0]:.2f}):')
    print(f"  {'everything the callbacks did':<40} {1e6 * total / args.ticks:8.1f}")
    for label, sec in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f'  {label:<40} {1e6 * sec / args.ticks:8.1f}')
    node.destroy_node()
    helper.destroy_node()
    rclpy.try_shutdown()


def count_calls(take, messages):
    """Print the calls per JointState of ``take(*m)`` for each of ``messages`` (the
    bench's own calls left out: its frame and the C calls it makes)."""
    counts = collections.Counter()
    mine = {take.__code__, count_calls.__code__}

    def profile(frame, event, arg):
        if frame.f_code in mine:       # the bench's own: its frame and the C calls it makes
            return
        if event == 'call':
            code = frame.f_code
            counts[f'{pathlib.Path(code.co_filename).name}:{code.co_name}'] += 1
        elif event == 'c_call':
            counts[f'(C) {getattr(arg, "__qualname__", arg)}'] += 1
    ticks = len(messages)
    sys.setprofile(profile)
    try:
        for aux, data in messages:
            take(aux, data)
    finally:
        sys.setprofile(None)
    python = sum(v for k, v in counts.items() if not k.startswith('(C)'))
    print(f'{ticks} JointStates: {sum(counts.values()) / ticks:.1f} calls per JointState, '
          f'{python / ticks:.1f} of them Python functions; the most frequent:')
    for key, count in counts.most_common(int(os.environ.get("KIN_DYN_PROFILE_TOP", "30"))):
        print(f'  {count / ticks:6.2f}  {key}')


if __name__ == '__main__':
    main()
