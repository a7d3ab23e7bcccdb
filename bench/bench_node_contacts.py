#!/usr/bin/env python3
"""Per-tick cost of the node's contact mechanics, in-process (not a test).

One kin_dyn_node (real rclpy, loopback DDS) with iCub and the contact geometry of
config/kin_dyn.yaml; a helper node subscribes to every output, so publishing does the real
work. The script feeds the node's callbacks directly (odometry of the root link, two sole
wrenches carrying the weight, a JointState with efforts, stamps 1 ms apart as at 1 kHz) and
times each JointState callback, i.e. the whole tick: compute_tick, every publication and the
contact mechanics. Modes, interleaved in rounds so that a busy spell of the machine spreads
over all of them:

- ``off``: the contact mechanics' steps replaced by no-ops and equilibrium_rate 0 (no
  support markers either: the node before this feature);
- ``rate``: support polygon, margin and equilibrium torques at ``--equilibrium-rate``
  (default 100 Hz, the node's default: every 10th tick);
- ``every``: all of them every tick (equilibrium_rate 1e6);
- ``markers``: ``rate`` with ~/markers published every tick (markers_rate 1e6), for scale;
- ``no_balance``: ``rate`` without the per-tick balance outputs (~/zmp, ~/capture_point,
  ~/cop: their computation, rendering and publication), so that ``rate`` minus
  ``no_balance`` is their cost per tick.

Usage:  source scripts/env.sh && python bench/bench_node_contacts.py [--ticks 200]
        [--rounds 30] [--equilibrium-rate 100]
"""

import argparse
import gc
import os
import pathlib
import random
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")     # before NumPy is imported (as the node does)

import numpy as np  # noqa: E402
import yaml  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
MODES = ("off", "rate", "every", "markers", "no_balance")


def loopback_env():
    from kin_dyn_ros.loopback import set_loopback_environment   # the distribution's variables
    set_loopback_environment()
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))


def config_parameters():
    """The contact parameters of config/icub.yaml (iCub's), flattened to parameter names."""
    params = yaml.safe_load((REPO / 'config' / 'icub.yaml').read_text())
    params = params['kin_dyn_node']['ros__parameters']
    out = {'contacts': params['contacts']}
    for contact, values in params.get('contact', {}).items():
        out.update({f'contact.{contact}.{k}': v for k, v in values.items()})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ticks', type=int, default=200, help='ticks per mode and round')
    parser.add_argument('--rounds', type=int, default=30)
    parser.add_argument('--equilibrium-rate', type=float, default=100.0)
    args = parser.parse_args()
    loopback_env()

    import icub_models
    import rclpy
    from geometry_msgs.msg import PointStamped, PolygonStamped, TwistStamped
    from tf2_msgs.msg import TFMessage
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from visualization_msgs.msg import MarkerArray

    from kin_dyn_ros.dynamics import KinDynComputations
    from kin_dyn_ros.node import KinDynNode
    from kin_dyn_ros_interfaces.msg import CentresOfPressure, ForwardDynamics, StabilityMargin
    sys.path.insert(0, str(REPO / 'test' / 'ros'))
    from ros_helpers import joint_state_msg, odometry_msg, wrench_msg

    urdf = pathlib.Path(icub_models.get_model_file('iCubGazeboV2_5')).read_text()
    kd = KinDynComputations(urdf)
    n = kd.NDoF
    s = np.zeros(n)
    w_H_b = np.diag([-1.0, -1.0, 1.0, 1.0]) @ np.linalg.inv(
        kd.forward_kinematics('l_sole', np.eye(4), s))
    weight = kd.get_total_mass() * 9.80665

    rclpy.init()
    params = {**config_parameters(), 'robot_description': urdf, 'rate': 0.0,
              'equilibrium_rate': args.equilibrium_rate, 'markers_rate': 30.0}
    node = KinDynNode(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    helper = rclpy.create_node('bench_contacts_helper')
    for msg_type, topic in ((PolygonStamped, 'support_polygon'),
                            (StabilityMargin, 'stability_margin'),
                            (JointState, 'equilibrium_torques'), (MarkerArray, 'markers'),
                            (JointState, 'gravity_torques'), (PointStamped, 'zmp'),
                            (PointStamped, 'capture_point'), (CentresOfPressure, 'cop'),
                            (PointStamped, 'com'), (TwistStamped, 'centroidal_momentum'),
                            (ForwardDynamics, 'forward_dynamics'), (TFMessage, '/tf')):
        name = topic if topic.startswith('/') else f'/kin_dyn_node/{topic}'
        helper.create_subscription(msg_type, name, lambda m: None, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(helper)
    executor.add_node(node)
    deadline = time.monotonic() + 5.0
    while (not all(p.get_subscription_count() for p in (node.loop.publishers.markers, node.loop.publishers.tf,
                                                         node.loop.publishers.forward_dynamics))
           and time.monotonic() < deadline):
        executor.spin_once(timeout_sec=0.05)
    gc.freeze()         # as the node's main() does: the model's objects out of collections
    mech = node.loop.mechanics
    steps = mech.steps
    balance_hook = node.loop.balance_messages
    spent = []          # [s] each balance publication of the modes with it

    def timed_balance(*a):
        t0 = time.perf_counter()
        out = balance_hook(*a)
        spent.append(time.perf_counter() - t0)
        return out

    def no_steps(*_):       # a generator with no step, as ContactMechanics.steps
        yield from ()

    def set_mode(mode):
        off = mode == 'off'
        mech.steps = no_steps if off else steps
        node.loop.balance_messages = (lambda *_: []) if mode in ('off', 'no_balance') \
            else timed_balance
        rate = 1e6 if mode == 'every' else 0.0 if off else args.equilibrium_rate
        node.set_parameters([Parameter('equilibrium_rate', value=rate),
                             Parameter('markers_rate', value=1e6 if mode == 'markers' else 30.0)])

    t_ns = time.time_ns()
    js = joint_state_msg(kd.joints_name_list, s, np.zeros(n), np.zeros(n))
    odom = odometry_msg('odom', 'root_link', w_H_b, np.zeros(6), js.header.stamp)
    wrenches = {c: wrench_msg('', [0.0, 0.0, 0.5 * weight, 0.0, 0.0, 0.0], js.header.stamp)
                for c in ('l_sole', 'r_sole')}

    def run(count):
        nonlocal t_ns
        out = np.empty(count)
        for k in range(count):
            t_ns += 1_000_000
            sec, nsec = divmod(t_ns, 1_000_000_000)
            for msg in (js, odom, *wrenches.values()):
                msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nsec
            data = serialize_message(js)
            with node.loop.lock:     # as the node's sensor thread calls them (raw messages)
                node.loop.take_odometry(serialize_message(odom))
                for c, msg in wrenches.items():
                    node.loop.take_wrench(c, serialize_message(msg))
                t0 = time.perf_counter()
                node.loop.take_joint_state(data)
                out[k] = time.perf_counter() - t0
            if k % 50 == 0:
                executor.spin_once(timeout_sec=0.0)     # let the helper drain
        return out

    samples = {m: [] for m in MODES}
    try:
        run(200)                                     # warm-up
        for _ in range(args.rounds):
            for mode in MODES:
                set_mode(mode)
                samples[mode].append(run(args.ticks))
    finally:
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()
        rclpy.try_shutdown()

    print(f"iCubGazeboV2_5, two soles x {len(mech._contacts.get('l_sole').points)} points, "
          f"both loaded; {args.rounds} x {args.ticks} ticks per mode; per JointState callback "
          f"(whole tick) [us]")
    print(f"balance outputs (~/zmp, ~/capture_point, ~/cop, subscribed), their computation "
          f"and rendering in the tick: "
          f"median {np.median(spent) * 1e6:.1f} us, mean {np.mean(spent) * 1e6:.1f} us")
    print(f"{'mode':10s} {'min':>8s} {'median':>8s} {'mean':>8s} {'p99':>8s} {'max':>8s}"
          f"  {'mean - off':>10s}")
    base = np.mean(np.concatenate(samples['off'])) * 1e6
    for mode in MODES:
        t = np.concatenate(samples[mode]) * 1e6
        print(f"{mode:10s} {t.min():8.1f} {np.median(t):8.1f} {t.mean():8.1f} "
              f"{np.percentile(t, 99):8.1f} {t.max():8.1f}  {t.mean() - base:+10.1f}")


if __name__ == '__main__':
    sys.exit(main())
