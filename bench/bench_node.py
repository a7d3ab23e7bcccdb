#!/usr/bin/env python3
"""End-to-end benchmark of kin_dyn_node with iCub (not a test).

Three processes on loopback DDS:
- the node, started as launch starts it (``kin_dyn_node --ros-args --params-file
  config/kin_dyn.yaml --params-file config/icub.yaml ...``, the latter where it exists)
  with every output on: /tf (joints + base), ~/com,
  ~/centroidal_momentum, ~/gravity_torques, ~/forward_dynamics, ~/markers, /diagnostics;
- a publisher process (this script with ``--publish``): JointState of all 32 joints (with
  velocities and efforts, so forward dynamics runs) at the rate under test, stamped with the
  wall clock at publication (CDR bytes with the stamp patched in, as light as a C++
  publisher), plus odometry of the root link and both foot wrenches at
  ``--aux-rate`` (published just before the JointState that they come with, and stamped
  before their own publication). One process publishes every rate in turn: its
  participant joins the graph once, before the first. With ``--publisher-per-rate`` a new
  one starts for each rate, so that every run begins with a participant joining (with Fast
  DDS that can stall the delivery to a subscriber for ~0.25-0.33 s: see docs/performance.md);
- this process: publishes the description, waits for the node's /tf_static (the model is
  loaded), receives every per-tick output as raw bytes
  (the stamp is read from the CDR header, no deserialisation) and computes, per output,
  the latency from the JointState's publication (its stamp) to reception (the middleware's
  reception time where rclpy gives it, Jazzy; else when the callback runs), and the
  fraction of published JointStates that produced the output. The last column is the
  node process's CPU time (user + system, all its threads; Linux) per JointState sent,
  from just before the rate's first JointState to 0.5 s after its last: less sensitive to
  a busy machine than the latency tail, so the figure to compare versions by.

The first 0.5 s of each rate are left out of the figures. A rate is *sustained* when
every per-tick output arrives for >= 99 % of the JointStates and its p99 latency stays
under 5 periods (no queue building up). ~/markers is limited by the node's markers_rate
(30 Hz by default, for rviz), so its column shows that rate, not a loss, and it is left
out of the criterion. Target: 1 kHz, p99 < 2 ms: the last line says whether the 1 kHz
run met it on every per-tick output.

With ``--contact-outputs`` it also receives the contact mechanics' outputs,
~/support_polygon, ~/stability_margin and ~/equilibrium_torques: they come at the node's
equilibrium_rate (100 Hz by default), so like ~/markers they are left out of the criterion.
``--model URDF`` benchmarks another robot: its description, every joint of it and odometry
of its root link (the foot wrenches are still published on the l_sole and r_sole topics).
``--param NAME:=VALUE`` (repeatable) passes a parameter to the node, e.g.
``--param equilibrium_rate:=0.0``; ``--node-prefix 'chrt -f 10'`` runs the node under that
command (here: a real-time priority).

``--dump FILE.json`` writes every reception (per output and rate: stamp, reception time,
and on Jazzy the write time and the writer's sequence number), to look at the ticks that
make the tail (e.g. by their position among the odometry's every 10th messages).

A rate given more than once is measured again each time against the same node
(``--rates 1000 1000 1000 1000``): how often the target is met says more on a shared
machine than one run. A line counts the runs that met it, and the last lines give, per
rate, each per-tick output's p99 over the JointStates of all its runs together.

A line per rate splits the latency of the worst per-tick output (where the middleware
gives the time the node wrote each message and the writer's sequence numbers; Jazzy): from
the JointState's stamp to the node's write (the input's delivery, the wait and the tick:
the node's part), and from the write to the reception (the output's delivery), with the
count of messages the node wrote that never arrived (gaps in the sequence numbers).

A line per rate gives the node's own tick duration (compute and publish, as its
/diagnostics report it each second): mean and max, and the largest CPU time of its thread
in one tick; a max far above that CPU time is a tick that waited for the CPU. ``--probe``
also measures the machine beside the node, as cyclictest does: one process per CPU, pinned
to it, wakes every 1 ms on absolute deadlines at a real-time priority (SCHED_FIFO) where
that is allowed and records how late each wake-up is. Nothing of ours runs in them, so
their lateness is what the machine itself (kernel, hypervisor, other tenants) adds to any
thread that wants the CPU. A line per rate gives the lateness p50 / p99 / max and, per CPU,
the number of wake-ups more than 0.5 ms late. Each probe costs ~3 % of a core and preempts
the node for a few microseconds per wake-up.

``--service-load`` measures each rate twice against the same node, one run after the other:
without service clients, then with a client process (this script with ``--clients``, started
once before the first run) that calls, during the second run, ~/get_dynamics from two
clients at 100 Hz each (use_measured_state, frames l_sole and r_sole) and
~/check_equilibrium from one at 10 Hz on a non-flat support (a given state: iCub on its left
sole, its right sole on a 4.5 cm step and pitched, so the support polygon takes the non-flat
path, the contact wrench cone's faces, not the flat feet' hull). Each client has its own rclpy node,
executor and thread and calls asynchronously at a fixed rate; a call still pending when the
next is due is skipped and counted. Before the first run the client process times
~/check_equilibrium on the idle node for flat feet and for that support (and ~/get_dynamics
at the flat feet's state), and checks here in
process that the support takes the non-flat path. The table puts, per rate, the two runs side
by side: per-tick outputs' share received and p50/p99/max latency, the node's CPU per
JointState (with clients it includes the services' work), and per service the calls made,
answered, failed (success false), skipped and their latency (call to response, in the client
process, over the whole run) p50/p99/max; and whether the target holds: every per-tick
output's p99 with clients within 0.5 ms of its p99 without, and none later than 5 ms. Needs
iCub's l_sole and r_sole (not for ``--model``).

``--floor [MODE ...]`` (issue 22) also starts, in the same invocation, a minimal rclpy node
per MODE (bench/floor_node.py, in a namespace of its own: its topics are the node's under
/kin_dyn_floor_MODE) that takes the same inputs (odometry, wrenches, JointStates) and
publishes the same five per-tick messages (/tf, ~/com, ~/centroidal_momentum,
~/gravity_torques, ~/forward_dynamics) as bytes prepared at start-up with only the stamps
patched in, and the node's ~/markers array at 30 Hz (this bench reads the node's): no
dynamics. MODE ``thread`` (the default) takes them as the node does (its
sensor thread), ``spin`` with rclpy.spin, ``events`` with rclpy's EventsExecutor. Each rate
is measured on the node and on every floor in turn (the order rotating between repetitions:
node, floor; floor, node; ...), each floor's CPU per JointState measured as the node's, and
after each group compute_tick is timed in this process on the same model and state (thread
CPU time, one call per ms as the node ticks, and back to back), with Pinocchio's crba of
iCub as the machine's speed gauge. bench/floor_bench.py prints every run (received share,
worst output's p50/p99, CPU per JointState, load), then pooled per rate: our CPU, the
floor's, compute_tick's, ours / floor against 1.4 (issue 33) and (ours - floor) /
compute_tick against 1.2 (issue 22).
``--model`` also takes g1, talos or talos_reduced (example-robot-data; bench/models.py).

The node runs with ``publish_frequency`` 1000 Hz: /tf on every tick, as the floor node
publishes it. ``--tf-rate`` (issue 36) measures each rate twice, with that and with the
default 20 Hz, beside a tf2-like /tf listener process, and prints the node's and the
listener's CPU side by side: see bench/tf_rate_cost.py.

``--balance-outputs`` (issue 18) measures each rate twice against the same node, without and
with a reader of ~/zmp, ~/capture_point and ~/cop (the node computes them only while read),
and prints what they add to its CPU per JointState: see bench/balance_cost.py. With
``--floor`` the floor nodes publish the three too (only while read), and their pairs are
measured beside the node's: what the publishing alone adds.

Usage:  source scripts/env.sh && python bench/bench_node.py [--rates 250 500 1000 2000]
        [--duration 3] [--aux-rate 100] [--contact-outputs] [--param NAME:=VALUE ...]
        [--node-prefix COMMAND] [--probe] [--model URDF] [--dump FILE.json]
        [--publisher-per-rate] [--service-load] [--floor [thread spin events]]
        [--balance-outputs] [--tf-rate]
"""

import argparse
import json
import os
import pathlib
import random
import shlex
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np

from balance_cost import BalanceReaders, print_balance_cost, reader_main    # bench/
from floor_bench import FloorProcess, TickTimer, floor_topic, print_floor    # bench/
from floor_node import MODES as FLOOR_MODES, input_messages
from line_process import LineProcess
from machine_speed import SpeedWitness, covered_ns, in_intervals, set_aside
from models import model_label, model_text
from receptions import stamp_recorder
from tf_rate_cost import (ParameterSetter, TfListenerLoad, listener_main,  # bench/
                          print_tf_rate, run_tf_rates)

REPO = pathlib.Path(__file__).resolve().parents[1]
NODE = 'kin_dyn_node'
WARMUP_S = 0.5
MODEL_WAIT_S = 60.0     # for the node to load the model (its /tf_static) before measuring
# output key -> (topic, byte offset of header.stamp in the CDR data incl. the 4-byte
# encapsulation header: arrays have a 4-byte length first)
OUTPUTS = {'tf': ('/tf', 8), 'com': (f'/{NODE}/com', 4),
           'momentum': (f'/{NODE}/centroidal_momentum', 4),
           'gravity': (f'/{NODE}/gravity_torques', 4),
           'forward_dynamics': (f'/{NODE}/forward_dynamics', 4),
           'markers': (f'/{NODE}/markers', 8)}
CONTACT_OUTPUTS = {'support_polygon': (f'/{NODE}/support_polygon', 4),
                   'stability_margin': (f'/{NODE}/stability_margin', 4),
                   'equilibrium_torques': (f'/{NODE}/equilibrium_torques', 4)}
# left out of the sustained criterion: published at their own rates, not per tick
RATE_LIMITED = ('markers', 'support_polygon', 'stability_margin', 'equilibrium_torques')
TARGET_HZ, TARGET_P99_MS = 1000, 2.0
PROBE_PERIOD_S, PROBE_PRIORITY, PROBE_STALL_MS = 1e-3, 10, 0.5
# --service-load: 2 clients of ~/get_dynamics at 100 Hz, 1 of ~/check_equilibrium at 10 Hz
DYNAMICS_CLIENTS, DYNAMICS_HZ, EQUILIBRIUM_HZ = 2, 100.0, 10.0
SERVICE_FRAMES = ['l_sole', 'r_sole']
# iCub on its left sole (flat on z = 0), the right sole on a 4.5 cm step and pitched: a
# non-flat support (the support polygon from the contact wrench cone, not the hull)
STEP_POSTURE = {'r_hip_pitch': 0.4, 'r_knee': -0.8, 'r_ankle_pitch': 0.2}
LOAD_P99_MS, LOAD_MAX_MS = 0.5, 5.0     # target: p99 within 0.5 ms of no clients, max 5 ms
DRAIN_S = 3.0        # at the end of a run, how long a client waits for its pending call


def per_tick_outputs():
    """The keys of OUTPUTS published every tick (not the rate-limited ones)."""
    return [k for k in OUTPUTS if k not in RATE_LIMITED]


def loopback_env():
    from kin_dyn_ros.loopback import set_loopback_environment   # the distribution's variables
    set_loopback_environment()
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))


def model_urdf(path=None):
    """The URDF text of ``path`` (or a name of bench/models.py: g1, talos, ...), or of
    iCubGazeboV2_5 (icub-models) when None."""
    return model_text(path)


# -- the publisher process ---------------------------------------------------------------------
def publish(duration, aux_rate, model=None, namespaces=('',), priority=0):
    """The publisher process. Wait for the node's joint_states subscription and 1 s more of
    discovery, print "ready"; then for each line "RATE [TARGET]" read from stdin, publish
    JointStates of every joint of ``model`` (a URDF path, None: iCub) at RATE [Hz] for
    ``duration`` s, and odometry of its root link and both foot wrenches at ``aux_rate``,
    and print {"sent", "first_ns", "last_ns"} as JSON. ``namespaces``: one set of topics
    per namespace ('': the node's; others: --floor nodes'), TARGET the index of the one to
    publish on (default 0). ``priority``: SCHED_FIFO of the publishing thread (a robot's
    driver), 0: normal. Ends with stdin."""
    import rclpy
    from kin_dyn_ros.node.realtime import configure_thread
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from kin_dyn_ros.dynamics import KinDynComputations

    for warning in configure_thread(priority):
        print(f'publisher: {warning}', file=sys.stderr)
    rclpy.init()
    node = rclpy.create_node('kin_dyn_bench_publisher', start_parameter_services=False)
    kd = KinDynComputations(model_urdf(model))
    sets = []       # (joint_states, odometry, [wrenches]) per namespace
    for ns in namespaces:
        base = f'/{ns.strip("/")}/' if ns.strip('/') else ''
        sets.append((
            node.create_publisher(JointState, base + 'joint_states', qos_profile_sensor_data),
            node.create_publisher(Odometry, base + 'odom', qos_profile_sensor_data),
            [node.create_publisher(WrenchStamped, f'{base}{c}/wrench', qos_profile_sensor_data)
             for c in ('l_sole', 'r_sole')]))
    deadline = time.monotonic() + 10.0
    while (any(js.get_subscription_count() == 0 for js, _, _ in sets)
           and time.monotonic() < deadline):
        time.sleep(0.01)
    time.sleep(1.0)    # let the rest of discovery settle
    msg, odom, wrench = input_messages(kd)

    target = [0]

    def publish_aux():
        _, odom_pub, wrench_pubs = sets[target[0]]
        stamp = odom.header.stamp
        stamp.sec, stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        wrench.header.stamp = stamp
        odom_pub.publish(odom)
        for pub in wrench_pubs:
            pub.publish(wrench)
    # published as CDR bytes with the stamp patched in (header.stamp first in the payload),
    # as a C++ joint state broadcaster costs: rclpy's conversion of the message object
    # would cost this process ~50 us per message, CPU the node under test competes for
    data = bytearray(serialize_message(msg))
    print('ready', flush=True)
    for line in sys.stdin:
        rate, *which = line.split()
        target[0] = int(which[0]) if which else 0
        sent = publish_at(float(rate), duration, aux_rate, sets[target[0]][0], data,
                          publish_aux)
        print(json.dumps(sent), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


def publish_at(rate, duration, aux_rate, js_pub, data, publish_aux):
    """Publish the JointState ``data`` (CDR bytes) at ``rate`` for ``duration`` s, each
    stamped with the wall clock right before its publication, and call ``publish_aux()``
    before every one due at ``aux_rate`` (their publication is not the JointState's);
    {"sent", "first_ns", "last_ns"}."""
    set_stamp = struct.Struct('<iI').pack_into
    period, aux_every = 1.0 / rate, max(1, round(rate / aux_rate))
    start = time.monotonic() + 0.01
    count, first, last = 0, None, None
    while (now := time.monotonic()) < start + duration:
        target = start + count * period
        if target > now:
            time.sleep(target - now)
        if count % aux_every == 0:
            publish_aux()
        stamp_ns = time.time_ns()
        set_stamp(data, 4, *divmod(stamp_ns, 1_000_000_000))
        js_pub.publish(bytes(data))
        first = stamp_ns if first is None else first
        last, count = stamp_ns, count + 1
    return {'sent': count, 'first_ns': first, 'last_ns': last}


class Publisher:
    """A publisher process (this script with ``--publish``); :meth:`run` one rate."""

    def __init__(self, duration, aux_rate, model=None, namespaces=('',), priority=0):
        self.namespaces = list(namespaces)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, '--publish', '--duration', str(duration),
             '--aux-rate', str(aux_rate), *(['--model', model] if model else []),
             '--namespaces', ','.join(self.namespaces), '--thread-priority', str(priority)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
        if self.proc.stdout.readline().strip() != 'ready':     # discovery: >= 1 s
            raise RuntimeError(f'the publisher process ended (exit {self.proc.wait()})')

    def run(self, rate, namespace=''):
        """Publish at ``rate`` for the duration on the topics of ``namespace`` (one given at
        construction; '': the node's); {"sent", "first_ns", "last_ns"}."""
        self.proc.stdin.write(f'{rate} {self.namespaces.index(namespace)}\n')
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


# -- the machine probe process -----------------------------------------------------------------
def probe(duration, cpu):
    """On CPU ``cpu`` (None: any), wake every PROBE_PERIOD_S on absolute deadlines
    (SCHED_FIFO where allowed) until SIGINT or for at most ``duration`` s; print {"policy",
    "samples": [[wall ns, lateness ns], ...]} as JSON. A wake-up later than a whole period
    skips the deadlines it missed: a stall counts once."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PROBE_PRIORITY))
        policy = f'SCHED_FIFO {PROBE_PRIORITY}'
    except (AttributeError, OSError):      # not Linux, or no privilege
        policy = 'normal priority'
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    period = int(PROBE_PERIOD_S * 1e9)
    target = time.monotonic_ns() + period
    end = target + int(duration * 1e9)
    samples = []
    try:
        while target < end:
            time.sleep(max(0, target - time.monotonic_ns()) * 1e-9)
            now = time.monotonic_ns()
            samples.append((time.time_ns(), now - target))
            target += period * (1 + (now - target) // period)
    except KeyboardInterrupt:
        pass
    print(json.dumps({'policy': policy, 'samples': samples}), flush=True)


def probe_cpus():
    """The CPUs to probe, one probe each (a stall of one CPU is invisible from another):
    those this process may run on, or [None] where that is unknown."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else [None]


def start_probes(cpus):
    return [subprocess.Popen([sys.executable, __file__, '--probe-run', '--duration', '600',
                              *([] if cpu is None else ['--probe-cpu', str(cpu)])],
                             stdout=subprocess.PIPE, text=True) for cpu in cpus]


def probe_summary(probes, first_ns, last_ns):
    """Stop the probes; {"policy", "p50", "p99", "max" [ms], "stalls" (wake-ups later than
    PROBE_STALL_MS, per CPU)} of their samples between ``first_ns`` and ``last_ns`` (wall
    clock), or None if a probe gave no result."""
    results = []
    for proc in probes:
        proc.send_signal(signal.SIGINT)
        out = proc.communicate()[0].strip().splitlines()
        if not out:
            return None
        results.append(json.loads(out[-1]))
    late = [np.array([lateness for wall, lateness in r['samples']
                      if first_ns <= wall <= last_ns] or [np.nan]) * 1e-6 for r in results]
    every = np.concatenate(late)
    return {'policy': results[0]['policy'], 'p50': float(np.percentile(every, 50)),
            'p99': float(np.percentile(every, 99)), 'max': float(np.max(every)),
            'stalls': [int(np.sum(x > PROBE_STALL_MS)) for x in late]}


# -- the service-load process ------------------------------------------------------------------
def support_state(kd, posture):
    """FloatingBaseState of ``kd`` with the joints of ``posture`` (others at zero) and the base
    placed so that l_sole lies flat on z = 0 (rotated by pi about z); (state, w_H_b, s)."""
    from kin_dyn_ros.node.conversions import matrix_to_pose
    from kin_dyn_ros_interfaces.msg import FloatingBaseState
    s = np.zeros(kd.NDoF)
    for name, value in posture.items():
        s[kd.joints_name_list.index(name)] = value
    w_H_b = np.diag([-1.0, -1.0, 1.0, 1.0]) @ np.linalg.inv(
        kd.forward_kinematics('l_sole', np.eye(4), s))
    state = FloatingBaseState(joint_names=kd.joints_name_list, positions=s.tolist(),
                              base_pose=matrix_to_pose(w_H_b))
    return state, w_H_b, s


def local_support(kd, w_H_b, s):
    """(method, ms): how our core computes the support polygon of the node's contacts (of
    :func:`node_config_files`) at this state, in this process, and how long
    check_equilibrium's work takes here (best of 3)."""
    import yaml
    from kin_dyn_ros.dynamics.contacts import Contact, contact_poses, support_polygon
    from kin_dyn_ros.dynamics.equilibrium import com_equilibrium, equilibrium_torques
    params = {}
    for path in node_config_files():
        params.update(yaml.safe_load(path.read_text())['kin_dyn_node']['ros__parameters'])
    contacts = [Contact(c, np.reshape(params['contact'][c]['points'], (-1, 3)),
                        params['contact'][c]['normal'], params['contact'][c]['friction'])
                for c in params['contacts']]
    best = float('inf')
    for _ in range(3):
        t0 = time.perf_counter()
        poses = contact_poses(kd, w_H_b, s, contacts)
        polygon = support_polygon(contacts, poses, kd.gravity)
        com_equilibrium(contacts, kd.CoM_position(w_H_b, s), kd.get_total_mass(), kd.gravity,
                        poses, polygon=polygon)
        equilibrium_torques(kd, w_H_b, s, contacts)
        best = min(best, time.perf_counter() - t0)
    return polygon.method, 1e3 * best


class ClientLoop:
    """One service client with its own rclpy node and executor. :meth:`start` runs it on a
    thread of its own: it calls asynchronously every 1 / ``rate`` s (absolute deadlines); a
    call still pending when the next is due is skipped (counted). :meth:`stop` ends it and
    returns its counts and latencies (call to response, ms)."""

    def __init__(self, name, srv, service, request, rate):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.node = rclpy.create_node(name, start_parameter_services=False)
        self.client = self.node.create_client(srv, service)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.request, self.period = request, 1.0 / rate
        self.thread, self.stats, self._stop = None, None, threading.Event()

    def call(self, request, timeout=30.0):
        """One call, waited for on the caller's thread (not while running): (response or
        None, ms)."""
        t0 = time.perf_counter()
        future = self.client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout)
        return future.result() if future.done() else None, 1e3 * (time.perf_counter() - t0)

    def start(self):
        self.stats = {'made': 0, 'answered': 0, 'failed': 0, 'skipped': 0, 'message': '',
                      'latency': []}
        self._stop.clear()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def stop(self):
        self._stop.set()
        self.thread.join()
        return self.stats

    def _run(self):
        st, pending, sent_at, drain_end = self.stats, None, 0.0, None
        due = time.perf_counter()
        while True:
            now = time.perf_counter()
            if pending is not None and pending.done():     # right after the spin that took it
                st['answered'] += 1
                st['latency'].append(1e3 * (now - sent_at))
                response = pending.result()
                if not response.success:
                    st['failed'] += 1
                    st['message'] = st['message'] or response.message
                pending = None
            if self._stop.is_set():
                drain_end = drain_end or now + DRAIN_S
                if pending is None or now > drain_end:
                    return
            elif now >= due:
                if pending is None:
                    sent_at, pending = now, self.client.call_async(self.request)
                    st['made'] += 1
                else:
                    st['skipped'] += 1
                due += self.period
                continue
            self.executor.spin_once(timeout_sec=0.02 if self._stop.is_set()
                                    else min(0.02, due - now))


def service_clients(model=None, horizon=False):
    """The service-load process. Make the clients (:class:`ClientLoop`): DYNAMICS_CLIENTS of
    ~/get_dynamics at DYNAMICS_HZ and one of ~/check_equilibrium at EQUILIBRIUM_HZ on the
    STEP_POSTURE support (``horizon``: one of ~/get_dynamics_horizon instead, see
    bench/horizon_load.py); wait for the services, time check_equilibrium on the idle node for
    flat feet and for that support and get_dynamics (flat feet's state), print "ready {...}"
    (JSON); then on "go" (stdin) start
    every client, on "stop" stop them and print {service: {"clients", "made", "answered",
    "failed", "skipped", "message", "latency": [ms, ...]}} as JSON. Ends with stdin."""
    import rclpy
    from kin_dyn_ros.dynamics import KinDynComputations
    from kin_dyn_ros_interfaces.srv import CheckEquilibrium, GetDynamics

    rclpy.init()
    kd = KinDynComputations(model_urdf(model))
    flat = support_state(kd, {})[0]
    if horizon:
        return horizon_clients(kd, *support_state(kd, {})[1:])
    step, w_H_b, s = support_state(kd, STEP_POSTURE)
    loops = {'get_dynamics': [
        ClientLoop(f'kin_dyn_bench_dynamics_client_{i}', GetDynamics, f'/{NODE}/get_dynamics',
                   GetDynamics.Request(use_measured_state=True, frames=SERVICE_FRAMES),
                   DYNAMICS_HZ) for i in range(DYNAMICS_CLIENTS)],
        'check_equilibrium': [
        ClientLoop('kin_dyn_bench_equilibrium_client', CheckEquilibrium,
                   f'/{NODE}/check_equilibrium',
                   CheckEquilibrium.Request(use_measured_state=False, state=step),
                   EQUILIBRIUM_HZ)]}
    every = [loop for group in loops.values() for loop in group]
    for loop in every:
        if not loop.client.wait_for_service(timeout_sec=30.0):
            raise RuntimeError(f'no service {loop.client.srv_name}')
    checker = loops['check_equilibrium'][0]
    idle = {}
    for key, state in (('flat', flat), ('step', step)):
        times, response = [], None
        for _ in range(3):
            response, ms = checker.call(CheckEquilibrium.Request(use_measured_state=False,
                                                                 state=state))
            times.append(ms)
        idle[key] = {'ms': float(np.median(times)), 'success': bool(response and
                                                                    response.success),
                     'feasible': bool(response and response.feasible),
                     'message': response.message if response else 'no answer'}
    dynamics = loops['get_dynamics'][0]     # (no measured state yet: the flat feet's)
    answers = [dynamics.call(GetDynamics.Request(state=flat, frames=SERVICE_FRAMES))
               for _ in range(10)]
    idle['get_dynamics'] = {'ms': float(np.median([ms for _, ms in answers])),
                            'success': all(r is not None and r.success for r, _ in answers)}
    method, local_ms = local_support(kd, w_H_b, s)
    print('ready ' + json.dumps({'idle': idle, 'method': method, 'local_ms': local_ms}),
          flush=True)
    serve_loads(loops)


def horizon_clients(kd, w_H_b, s):
    """The service-load process with ``--horizon``: one client of ~/get_dynamics_horizon at
    HORIZON_HZ; the idle node's horizon figures (bench/horizon_load.py) in its ready line."""
    from kin_dyn_ros_interfaces.srv import GetDynamics, GetDynamicsHorizon
    from horizon_load import HORIZON_HZ, horizon_request, horizon_states, idle_horizon
    states = horizon_states(kd, w_H_b, s)
    loops = {'get_dynamics_horizon': [
        ClientLoop('kin_dyn_bench_horizon_client', GetDynamicsHorizon,
                   f'/{NODE}/get_dynamics_horizon', horizon_request(kd, states), HORIZON_HZ)]}
    single = ClientLoop('kin_dyn_bench_dynamics_client', GetDynamics, f'/{NODE}/get_dynamics',
                        None, 1.0)
    for loop in (*loops['get_dynamics_horizon'], single):
        if not loop.client.wait_for_service(timeout_sec=30.0):
            raise RuntimeError(f'no service {loop.client.srv_name}')
    idle = idle_horizon(kd, loops['get_dynamics_horizon'][0], single, states)
    single.node.destroy_node()
    print('ready ' + json.dumps({'horizon': idle}), flush=True)
    serve_loads(loops)


def serve_loads(loops):
    """The service-load process's loop: "go" starts every client of ``loops`` ({service:
    [ClientLoop]}), "stop" stops them and prints their figures (JSON); ends with stdin."""
    import rclpy
    every = [loop for group in loops.values() for loop in group]
    for line in sys.stdin:
        if line.strip() == 'go':
            for loop in every:
                loop.start()
        elif line.strip() == 'stop':
            result = {}
            for name, group in loops.items():
                stats = [loop.stop() for loop in group]
                result[name] = {k: sum(st[k] for st in stats)
                                for k in ('made', 'answered', 'failed', 'skipped')}
                result[name].update(clients=len(group), latency=[
                    x for st in stats for x in st['latency']], message=next(
                    (st['message'] for st in stats if st['message']), ''))
            print(json.dumps(result), flush=True)
    for loop in every:
        loop.node.destroy_node()
    rclpy.try_shutdown()


class ServiceLoad(LineProcess):
    """A service-load process (this script with ``--clients``): :attr:`check` is its idle
    check; :meth:`start` and :meth:`stop` one run's load (stop: its figures, row["services"])."""

    key, name = 'services', 'clients'       # its figures in a run's row; its runs' label

    def __init__(self, model=None, horizon=False):
        super().__init__([sys.executable, __file__, '--clients',
                          *(['--model', model] if model else []),
                          *(['--horizon'] if horizon else [])], 'service-load')
        self.check = json.loads(self.ready[len('ready '):])

    def start(self, target=''):
        """Start the clients on the node's services, whichever process a run measures
        (``target``: beside a --floor node, which has no services, the machine carries the
        same clients and services' process as beside the node)."""
        super().start()


def print_service_load_floors(rows, check, floors):
    """--service-load --floor: :func:`print_service_load` of the node's runs, then of each
    floor's (``floors``: {namespace: label}), each rate's pair ordered without, with."""
    for namespace, label in {'': 'ours (node)', **floors}.items():
        mine = [r for r in rows if r['target'] == namespace]
        ordered = []
        for first, second in zip(mine[::2], mine[1::2]):
            ordered += [first, second] if 'services' in second else [second, first]
        print(f"\n== {label}: without and with the service clients (on the node's services "
              f"in every run) ==")
        print_service_load(ordered, check)


# -- the measuring process ---------------------------------------------------------------------
def output_types():
    """Message type of each output (a raw subscription still needs its type)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PointStamped, PolygonStamped, TwistStamped
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray
    from kin_dyn_ros_interfaces.msg import ForwardDynamics, StabilityMargin
    return {'tf': TFMessage, 'com': PointStamped, 'momentum': TwistStamped,
            'gravity': JointState, 'forward_dynamics': ForwardDynamics, 'markers': MarkerArray,
            'support_polygon': PolygonStamped, 'stability_margin': StabilityMargin,
            'equilibrium_torques': JointState, 'diagnostics': DiagnosticArray}


class Receiver:
    """Raw subscriptions to every per-tick output; records (stamp, arrival) in ns, and where
    the middleware gives them (Jazzy) the time the node wrote the message and the writer's
    sequence number: ``(stamp, arrival, written, sequence)``.

    The messages are taken on a :class:`kin_dyn_ros.node.sensor_thread.SensorThread`, as the node
    takes its inputs: at 5 outputs per tick, rclpy's executor would cost this process ~40 %
    of a core at 1 kHz, CPU the node under test then competes for.
    """

    def __init__(self, node, floors=(), priority=0):
        from rclpy.qos import QoSProfile
        from rclpy.subscription import Subscription
        from kin_dyn_ros.node.outputs import LATCHED_QOS, NO_SUBSCRIPTION_EVENTS, TF_QOS
        from kin_dyn_ros.node.sensor_thread import SensorThread
        # the message info holds the middleware's reception time on Jazzy and newer
        self.with_info = hasattr(Subscription, 'CallbackType')
        self.thread = SensorThread(node, self._on_error, with_info=self.with_info,
                                   realtime=(priority, ()))
        # per target ('': the node; a namespace: a --floor node's per-tick outputs)
        self.all_records = {'': {key: [] for key in OUTPUTS}}
        # (and its ~/markers, which the floor publishes while read, as the node does)
        self.all_records.update({ns: {key: [] for key in [*per_tick_outputs(), 'markers']}
                                 for ns in floors})
        self.target = ''
        # (stamp ns, ticks, mean [ms], max [ms], CPU max [ms]) from the node's diagnostics
        self.ticks = []
        node.create_subscription(output_types()['diagnostics'], '/diagnostics',
                                 self._on_diagnostics, 10, callback_group=self.thread.group)
        # the node publishes /tf_static (latched) when it has loaded the model
        self.model_loaded = threading.Event()
        node.create_subscription(output_types()['tf'], '/tf_static',
                                 lambda *_: self.model_loaded.set(), LATCHED_QOS, raw=True,
                                 event_callbacks=NO_SUBSCRIPTION_EVENTS,
                                 callback_group=self.thread.group)
        for ns, records in self.all_records.items():
            for key in records:
                topic, offset = OUTPUTS[key]
                qos = TF_QOS if key == 'tf' else QoSProfile(depth=1000)
                node.create_subscription(output_types()[key], floor_topic(ns, topic),
                                         stamp_recorder(records[key], offset, self.with_info),
                                         qos, raw=True, event_callbacks=NO_SUBSCRIPTION_EVENTS,
                                         callback_group=self.thread.group)
        self.thread.start()

    @property
    def records(self):
        """{output key: [record, ...]} of the target measured now (:attr:`target`)."""
        return self.all_records[self.target]

    @staticmethod
    def _on_error(sub, exc):
        print(f'receiver: {getattr(sub, "topic_name", "wait")}: {exc!r}', file=sys.stderr)

    def _on_diagnostics(self, msg, *_):
        """Keep the node's own tick durations (its "<node>: tick" status: compute and
        publish, over the last second)."""
        for status in msg.status:
            if status.name == f'{NODE}: tick':
                values = {kv.key: kv.value for kv in status.values}
                stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
                self.ticks.append((stamp, int(values['ticks']), float(values['mean [ms]']),
                                   float(values['max [ms]']), float(values['CPU max [ms]'])))

    def tick_summary(self, first_ns, last_ns):
        """(mean, max, CPU max) [ms] of the node's tick durations (wall clock) and of their
        thread CPU times over the diagnostics whose one-second window lies in
        [first_ns, last_ns], or None."""
        inside = [t for t in self.ticks if first_ns + 1_000_000_000 <= t[0] <= last_ns and t[1]]
        if not inside:
            return None
        count = sum(t[1] for t in inside)
        return (sum(t[1] * t[2] for t in inside) / count, max(t[3] for t in inside),
                max(t[4] for t in inside))

    def clear(self):
        for records in self.all_records.values():
            for r in records.values():
                r.clear()
        self.ticks.clear()


def measure(receiver, publisher, rate, node_pid=None, with_probe=False, load=None,
            namespace=''):
    """One run of ``publisher`` (a :class:`Publisher`) at ``rate``: a row of the table. With
    ``load`` (a :class:`ServiceLoad` or a :class:`balance_cost.BalanceReaders`) runs during
    the run (its figures in row[load.key]).
    ``namespace``: '' measures the node; a --floor node's namespace measures that node
    (``node_pid`` is then its process)."""
    from kin_dyn_ros.process_time import cpu_seconds    # of the node process
    receiver.target = namespace
    receiver.clear()
    probes = start_probes(probe_cpus()) if with_probe else None
    witness = SpeedWitness()
    if load is not None:
        load.start(namespace)
    cpu_before = cpu_seconds(node_pid)
    sent = publisher.run(rate, namespace)
    time.sleep(0.5)              # what is still in flight
    cpu_after = cpu_seconds(node_pid)
    loaded = load.stop() if load is not None else None
    witness.stop()
    # the first WARMUP_S of each run are left out (the rate's first ticks)
    first = sent['first_ns'] + int(WARMUP_S * 1e9)
    span = max(1, sent['last_ns'] - sent['first_ns'])
    expected = sent['sent'] * (sent['last_ns'] - first) / span
    row = {'rate': rate, 'sent': round(expected),
           'cpu_ms': (None if node_pid is None or np.isnan(cpu_after - cpu_before)
                      else 1e3 * (cpu_after - cpu_before) / max(1, sent['sent']))}
    for key, records in receiver.records.items():
        inside = [r for r in records if first <= r[0] <= sent['last_ns']]
        latency = np.array([r[1] - r[0] for r in inside]) * 1e-6
        row[key] = {'ratio': len({r[0] for r in inside}) / max(1.0, expected),
                    'p50': float(np.percentile(latency, 50)) if len(latency) else float('nan'),
                    'p99': float(np.percentile(latency, 99)) if len(latency) else float('nan'),
                    'split': latency_split(inside), 'latency': latency}
    row['node_tick'] = (receiver.tick_summary(first, sent['last_ns'] + int(0.5e9))
                        if not namespace else None)
    last = sent['last_ns']
    row['machine'] = steady_figures(row, receiver.records, witness.spells(first, last), first,
                                    last, expected, rate)
    period_ms = 1e3 / rate
    row['sustained'] = all(row[k]['ratio'] >= 0.99 and row[k]['p99'] < 5 * period_ms
                           for k in per_tick_outputs())
    row['target'], row['load'] = namespace, os.getloadavg()[0]
    row['window'] = (first, sent['last_ns'])
    if probes is not None:
        row['probe'] = probe_summary(probes, first, sent['last_ns'])
    if loaded is not None:
        row[load.key] = loaded
    return row


def steady_figures(row, records, spells, first, last, expected, rate):
    """The machine's slow ``spells`` over [first, last] (bench/machine_speed.py) and, per
    per-tick output, its share received and p99 latency [ms] over the JointStates outside
    what they disturb (machine_speed.set_aside at 5 periods; the JointStates expected
    there in proportion to the time): {"spells", "slow_ms", "aside_share", "worst_ratio",
    "worst_p99"}, each output's in row[key]["steady"]."""
    aside = set_aside(spells, int(5e9 / rate))
    share = covered_ns(aside, first, last) / max(1, last - first)
    for key in per_tick_outputs():
        kept = [r for r in records[key] if first <= r[0] <= last]
        stamps = np.array([r[0] for r in kept], dtype=np.int64)
        out = ~in_intervals(stamps, aside)
        latency = (np.array([r[1] for r in kept], dtype=np.int64) - stamps)[out] * 1e-6
        row[key]['steady'] = (len(set(stamps[out].tolist())) / max(1.0, expected * (1 - share)),
                              float(np.percentile(latency, 99)) if len(latency) else float('nan'))
        row[key]['steady_latency'] = latency
    steady = [row[k]['steady'] for k in per_tick_outputs()]
    return {'spells': len(spells), 'slow_ms': sum(e - s for s, e, _ in spells) * 1e-6,
            'aside_share': share, 'worst_ratio': min(r for r, _ in steady),
            'worst_p99': max(p for _, p in steady)}


def latency_split(records):
    """Where the latency of one output's ``records`` (stamp, arrival, written, sequence)
    went: {"node_p99": p99 of JointState stamp -> written by the node (its input's delivery,
    the wait and the tick), "delivery_p99", "delivery_max": of written -> received [ms],
    "lost": messages the node wrote that never arrived (gaps in the writer's sequence
    numbers)}, or None where the middleware gives no write time (Humble)."""
    if not records or len(records[0]) < 4 or records[0][2] is None:
        return None
    stamp, arrival, written = (np.array([r[i] for r in records], dtype=np.int64)
                               for i in range(3))
    delivery = (arrival - written) * 1e-6
    sequence = sorted({r[3] for r in records if r[3] is not None})
    return {'node_p99': float(np.percentile((written - stamp) * 1e-6, 99)),
            'delivery_p99': float(np.percentile(delivery, 99)),
            'delivery_max': float(delivery.max()),
            'lost': sequence[-1] - sequence[0] + 1 - len(sequence) if sequence else None}


def print_table(rows):
    keys = list(OUTPUTS)
    print(f"{'rate [Hz]':>9} {'sent':>6}  " + '  '.join(f'{k:>22}' for k in keys)
          + '  sustained  node CPU')
    print(f"{'':>9} {'':>6}  " + '  '.join(f"{'recv% p50/p99 [ms]':>22}" for _ in keys)
          + f"{'':11s}  [ms/JS]")
    for row in rows:
        cells = [f"{100 * row[k]['ratio']:5.1f}% {row[k]['p50']:6.2f}/{row[k]['p99']:6.2f}"
                 for k in keys]
        cpu = 'n/a' if row['cpu_ms'] is None else f"{row['cpu_ms']:.3f}"
        print(f"{row['rate']:>9} {row['sent']:>6}  " + '  '.join(f'{c:>22}' for c in cells)
              + f"  {'yes' if row['sustained'] else 'NO':>9}  {cpu:>8}")
    for row in rows:
        tick = row['node_tick']
        print(f"{row['rate']:>9} node's own tick (compute + publish, from /diagnostics): " + (
            'n/a' if tick is None else f'mean {tick[0]:.3f} / max {tick[1]:.2f} ms '
            f'(thread CPU max {tick[2]:.2f} ms)'))
        print_split(row)
        m = row['machine']
        print(f"{row['rate']:>9} machine's slow spells (both CPUs >= 3x slower; "
              f"bench/machine_speed.py): {m['spells']}, {m['slow_ms']:.0f} ms; outside what "
              f"they disturb ({100 * m['aside_share']:.1f} % of the run set aside): worst "
              f"received {100 * m['worst_ratio']:.2f} %, worst p99 {m['worst_p99']:.2f} ms")
        if 'probe' in row:
            m = row['probe']
            print(f"{row['rate']:>9} machine probe: " + (
                'no result' if m is None else
                f"wake-up lateness p50 {m['p50']:.3f} / p99 {m['p99']:.3f} / max "
                f"{m['max']:.2f} ms; wake-ups > {PROBE_STALL_MS} ms late per CPU: "
                f"{'/'.join(map(str, m['stalls']))} ({m['policy']}, every "
                f"{PROBE_PERIOD_S * 1e3:g} ms)"))
    ok = [r['rate'] for r in rows if r['sustained']]
    print(f"highest sustained rate: {max(ok) if ok else 'none'} Hz")
    runs = [row for row in rows if row['rate'] == TARGET_HZ]
    for row in runs:
        worst = worst_p99(row)
        m = row['machine']
        steady = m['worst_ratio'] >= 0.999 and m['worst_p99'] < TARGET_P99_MS
        print(f"target ({TARGET_HZ} Hz, p99 < {TARGET_P99_MS} ms on every per-tick "
              f"output): {'met' if target_met(row) else 'not met'} (worst p99 {worst:.2f} ms); "
              f"outside the machine's slow spells (99.9 % received, p99 < {TARGET_P99_MS} ms): "
              f"{'met' if steady else 'not met'}")
    if len(runs) > 1:
        print(f"target met in {sum(map(target_met, runs))} of {len(runs)} runs at "
              f"{TARGET_HZ} Hz")
    print_pooled(rows)


def print_service_load(rows, check):
    """The --service-load report: the idle check, then per rate its run without clients and
    its run with them side by side (``rows`` in pairs: without, with), and the target."""
    if 'horizon' in check:
        from horizon_load import HORIZON_HZ, HORIZON_STATES, print_idle_horizon
        print(f"service load: 1 client of ~/get_dynamics_horizon at {HORIZON_HZ:g} Hz "
              f"({HORIZON_STATES} states, every quantity)")
        print_idle_horizon(check['horizon'])
    else:
        print_idle_load(check)
    print_load_runs(rows)


def print_idle_load(check):
    """The idle node's figures of the default load (its check_equilibrium and get_dynamics)."""
    idle = check['idle']
    print(f"service load: {DYNAMICS_CLIENTS} clients of ~/get_dynamics at {DYNAMICS_HZ:g} Hz "
          f"each (use_measured_state, frames {' '.join(SERVICE_FRAMES)}), 1 of "
          f"~/check_equilibrium at {EQUILIBRIUM_HZ:g} Hz (given state: left sole flat, right "
          f"sole on a 4.5 cm step, pitched)")
    nonflat = check['method'] != 'hull'
    print(f"check_equilibrium on the idle node (median of 3): flat feet "
          f"{idle['flat']['ms']:.1f} ms, the load's support {idle['step']['ms']:.1f} ms "
          f"(success {idle['step']['success']}, feasible {idle['step']['feasible']}); support "
          f"polygon here: {check['method']}, {check['local_ms']:.1f} ms in process; non-flat "
          f"path: {'yes' if nonflat else 'NO'}; get_dynamics on the idle node (median of 10): "
          f"{idle['get_dynamics']['ms']:.1f} ms (success {idle['get_dynamics']['success']})")


def print_load_runs(rows):
    """Per rate, its run without clients and its run with them side by side (``rows`` in
    pairs: without, with), and the target."""
    verdicts = []
    for base, loaded in zip(rows[::2], rows[1::2]):
        rate = base['rate']
        print()
        print(f"{f'{rate} Hz':<41}  {'no clients':>24}  {'with clients':>24}  {'p99 diff':>8}")
        print(f"  {'per-tick output':<39}" + f"  {'recv% p50/p99/max [ms]':>24}" * 2
              + f"  {'[ms]':>8}")
        for key in per_tick_outputs():
            cells = []
            for row in (base, loaded):
                lat = row[key]['latency']
                top = float(lat.max()) if len(lat) else float('nan')
                cells.append(f"{100 * row[key]['ratio']:5.1f}% {row[key]['p50']:5.2f}/"
                             f"{row[key]['p99']:5.2f}/{top:6.2f}")
            diff = loaded[key]['p99'] - base[key]['p99']
            print(f"  {key:<24}{'':15s}" + ''.join(f'  {c:>24}' for c in cells)
                  + f"  {diff:+8.2f}")
        print(f"  {'JointStates measured':<39}" + ''.join(f"  {r['sent']:>24}"
                                                          for r in (base, loaded)))
        cpu = ['n/a' if r['cpu_ms'] is None else f"{r['cpu_ms']:.3f}" for r in (base, loaded)]
        print(f"  {'node CPU [ms/JointState]':<39}" + ''.join(f'  {c:>24}' for c in cpu))
        ticks = ['n/a' if r['node_tick'] is None else
                 f"{r['node_tick'][0]:.3f} / {r['node_tick'][1]:.2f}" for r in (base, loaded)]
        print(f"  {'node tick mean / max [ms]':<39}" + ''.join(f'  {c:>24}' for c in ticks))
        spells = [f"{r['machine']['spells']}, {r['machine']['slow_ms']:.0f} ms, "
                  f"{100 * r['machine']['aside_share']:.1f} %" for r in (base, loaded)]
        print(f"  {'slow spells, ms, share set aside':<39}" + ''.join(f'  {c:>24}'
                                                                      for c in spells))
        for label, row in (('no clients', base), ('with clients', loaded)):
            print(f"  {label}:", end='')
            print_split(row)
        print(f"  {'service (with clients)':<24} {'made':>6} {'answered':>8} {'failed':>6} "
              f"{'skipped':>7}  latency p50/p99/max [ms]")
        for name, st in loaded['services'].items():
            lat = np.array(st['latency'])
            figures = ('n/a' if not len(lat) else
                       f"{np.percentile(lat, 50):.2f}/{np.percentile(lat, 99):.2f}/"
                       f"{lat.max():.2f}")
            label = f"{name} x{st['clients']}"
            print(f"  {label:<24} "
                  f"{st['made']:>6} {st['answered']:>8} {st['failed']:>6} {st['skipped']:>7}  "
                  f"{figures}" + (f"  (failed: {st['message']})" if st['message'] else ''))
        for steady in (False, True):
            verdicts.append((steady, *print_load_target(f'{rate} Hz', [base], [loaded], steady)))
    for rate in sorted({row['rate'] for row in rows}):
        pairs = [(b, w) for b, w in zip(rows[::2], rows[1::2]) if b['rate'] == rate]
        if len(pairs) > 1:
            print()
            for steady in (False, True):
                ok = sum(v for (st, r, v) in verdicts if r == rate and st == steady)
                print(f"{rate} Hz: target met in {ok} of {len(pairs)} pairs of runs"
                      + (" outside the machine's slow spells" if steady else ''))
            for steady in (False, True):
                print_load_target(f'{rate} Hz, all {len(pairs)} pairs together',
                                  [b for b, _ in pairs], [w for _, w in pairs], steady)


def print_load_target(label, bases, loadeds, steady=False):
    """A line: whether every per-tick output's p99 with clients (over the JointStates of
    ``loadeds`` together) is within LOAD_P99_MS of its p99 without (``bases``) and none came
    later than LOAD_MAX_MS; (rate, met). ``steady``: over the JointStates outside what the
    machine's slow spells disturb (:func:`steady_figures`)."""
    diff, top = {}, {}
    field = 'steady_latency' if steady else 'latency'
    for key in per_tick_outputs():
        without = np.concatenate([r[key][field] for r in bases])
        with_ = np.concatenate([r[key][field] for r in loadeds])
        if not len(without) or not len(with_):
            diff[key] = top[key] = float('nan')
            continue
        diff[key] = float(np.percentile(with_, 99) - np.percentile(without, 99))
        top[key] = float(with_.max())
    worst_diff = max(diff, key=lambda k: diff[k])
    worst_max = max(top, key=lambda k: top[k])
    met = all(diff[k] <= LOAD_P99_MS and top[k] <= LOAD_MAX_MS for k in diff)
    received = all((r[k]['steady'][0] if steady else r[k]['ratio']) >= 0.99
                   for r in loadeds for k in per_tick_outputs())
    if steady:
        label += " outside the machine's slow spells"
    print(f"  {label}: target (with clients: p99 within {LOAD_P99_MS} ms of without, max <= "
          f"{LOAD_MAX_MS:g} ms, every per-tick output): {'met' if met else 'NOT met'} "
          f"(largest p99 diff {diff[worst_diff]:+.2f} ms, {worst_diff}; largest max "
          f"{top[worst_max]:.2f} ms, {worst_max})"
          + ('' if received else '; some output received for < 99 % of JointStates'))
    return bases[0]['rate'], met


def print_pooled(rows):
    """A line per rate measured more than once: each per-tick output's p99 latency over the
    JointStates of all its runs together."""
    for rate in sorted({row['rate'] for row in rows}):
        runs = [row for row in rows if row['rate'] == rate]
        if len(runs) < 2:
            continue
        pooled = {k: np.concatenate([row[k]['latency'] for row in runs])
                  for k in per_tick_outputs()}
        if not all(len(v) for v in pooled.values()):
            continue
        p99 = {k: np.percentile(v, 99) for k, v in pooled.items()}
        print(f"{rate} Hz, all {len(runs)} runs together: p99 " + ', '.join(
            f'{k} {v:.2f}' for k, v in p99.items()) + ' ms' + (
            f" (target: {'met' if max(p99.values()) < TARGET_P99_MS else 'not met'})"
            if rate == TARGET_HZ else ''))


def print_split(row):
    """One line: where the latency of the row's worst per-tick output went."""
    per_tick = per_tick_outputs()
    key = max(per_tick, key=lambda k: row[k]['p99'])
    split = row[key]['split']
    losses = [(row[k]['split'] or {}).get('lost') for k in per_tick]
    lost = 'n/a' if None in losses else sum(losses)
    print(f"{row['rate']:>9} worst output {key}: " + (
        'n/a (no write time from the middleware)' if split is None else
        f"JointState -> written by the node p99 {split['node_p99']:.2f} ms, written -> "
        f"received p99 {split['delivery_p99']:.2f} / max {split['delivery_max']:.2f} ms; "
        f"written but never received (all per-tick outputs): {lost}"))


def worst_p99(row):
    """The highest p99 latency [ms] of the per-tick outputs (not the rate-limited ones)."""
    return max(row[k]['p99'] for k in per_tick_outputs())


def target_met(row):
    """The row (of the target rate) is sustained with every per-tick p99 under target."""
    return row['sustained'] and worst_p99(row) < TARGET_P99_MS


def node_config_files():
    """The parameter files the node is started with, in order: config/kin_dyn.yaml, then
    iCub's contacts, config/icub.yaml, where that file exists (they were in kin_dyn.yaml
    before it had a file of its own)."""
    return [f for f in (REPO / 'config' / 'kin_dyn.yaml', REPO / 'config' / 'icub.yaml')
            if f.exists()]


def start_node(extra_params=(), prefix=()):
    exe = [str(pathlib.Path(sys.prefix) / 'bin' / 'kin_dyn_node')]
    if not os.access(exe[0], os.X_OK):
        exe = [sys.executable, '-m', 'kin_dyn_ros.node']
    # /tf on every tick (publish_frequency 1000: every stamp of <= 1 kHz), as the floor node
    # publishes it and as every figure before the parameter existed; --tf-rate compares
    params = ['use_odometry:=true', 'publish_tf:=true', 'publish_base_tf:=true',
              'publish_markers:=true', 'publish_forward_dynamics:=true', 'rate:=0.0',
              'publish_frequency:=1000.0', *extra_params]
    files = [a for f in node_config_files() for a in ('--params-file', str(f))]
    return subprocess.Popen([*prefix, *exe, '--ros-args', *files]
                            + [a for p in params for a in ('-p', p)], cwd=REPO,
                            env=dict(os.environ))


def run_rates(receiver, args, node_pid, load=None, alternate=False):
    """Measure each of ``args.rates`` in turn: (table rows, {rate key: records}). One
    publisher process serves every rate (its participant joins the graph once, before the
    first), or a new one each rate with ``args.publisher_per_rate``. With ``load`` (a
    :class:`ServiceLoad` or a :class:`balance_cost.BalanceReaders`) each rate is measured
    twice: without the load, then with it (rows in that order; records keyed "1000" and
    "1000+clients" or "1000+balance": the load's ``name``), or with ``alternate`` in the
    other order every other rate."""
    rows, records = [], {}
    publisher = None
    try:
        for i, rate in enumerate(args.rates):
            order = (None,) if load is None else (
                (load, None) if alternate and i % 2 else (None, load))
            for run_load in order:
                if publisher is None:
                    publisher = Publisher(args.duration, args.aux_rate, args.model,
                                          priority=args.thread_priority)
                rows.append(measure(receiver, publisher, int(rate), node_pid, args.probe,
                                    run_load))
                if args.publisher_per_rate:
                    publisher.close()
                    publisher = None
                # a repeated rate: "1000#2", "1000#3", ...
                key = str(int(rate)) + (f'+{run_load.name}' if run_load is not None else '')
                runs = sum(k == key or k.startswith(key + '#') for k in records)
                key += f'#{runs + 1}' if runs else ''
                records[key] = {k: list(v) for k, v in receiver.records.items()}
                if run_load is not None:
                    records[key][run_load.key] = rows[-1][run_load.key]
                print(f'{int(rate)} Hz{" with " + run_load.name if run_load is not None else ""}'
                      f' done (CPU {rows[-1]["cpu_ms"]:.3f} ms/JS)', file=sys.stderr, flush=True)
    finally:
        if publisher is not None:
            publisher.close()
    return rows, records


def run_floor_rates(receiver, args, node_pid, floors, timer, load=None):
    """--floor: each of ``args.rates`` measured on the node and on every floor
    (:class:`floor_bench.FloorProcess`) in turn, the order rotating from one repetition of a
    rate to the next (node, floor; then floor, node; ...), and compute_tick timed in this
    process after each group (``timer``: :class:`floor_bench.TickTimer`; None: not timed).
    One publisher process for all, with a set of topics per floor. With ``load`` (a
    :class:`balance_cost.BalanceReaders`) each target's run is a pair, without and with the
    load on that target, the order alternating from one repetition to the next. (rows,
    records); the floors' records are keyed "1000@<namespace>" ("1000+balance@...")."""
    targets = [('', node_pid)] + [(f.namespace, f.pid) for f in floors]
    rows, records = [], {}
    publisher = Publisher(args.duration, args.aux_rate, args.model,
                          [ns for ns, _ in targets], args.thread_priority)
    try:
        for i, rate in enumerate(args.rates):
            k = i % len(targets)
            loads = (None,) if load is None else (load, None) if i % 2 else (None, load)
            for namespace, pid, run_load in [(ns, pid, run) for ns, pid in
                                             targets[k:] + targets[:k] for run in loads]:
                rows.append(measure(receiver, publisher, int(rate), pid, args.probe,
                                    run_load, namespace))
                key = str(int(rate)) + (f'+{run_load.name}' if run_load is not None else '') \
                    + (f'@{namespace}' if namespace else '')
                runs = sum(r == key or r.startswith(key + '#') for r in records)
                key += f'#{runs + 1}' if runs else ''
                records[key] = {k2: list(v) for k2, v in receiver.records.items()}
                if run_load is not None:
                    records[key][run_load.key] = rows[-1][run_load.key]
                print(f'{int(rate)} Hz {namespace or "node"}'
                      f'{" with " + run_load.name if run_load is not None else ""} done (CPU '
                      f'{rows[-1]["cpu_ms"]:.3f} ms/JS, load {rows[-1]["load"]:.2f})',
                      file=sys.stderr, flush=True)
            if timer is not None:
                timer.sample()
    finally:
        publisher.close()
    return rows, records


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rates', type=float, nargs='+', default=[250, 500, 1000, 2000])
    parser.add_argument('--duration', type=float, default=3.0, help='s per rate')
    parser.add_argument('--aux-rate', type=float, default=100.0,
                        help='Hz of odometry and wrenches')
    parser.add_argument('--contact-outputs', action='store_true',
                        help='also receive ~/support_polygon, ~/stability_margin and '
                        '~/equilibrium_torques')
    parser.add_argument('--param', action='append', default=[], metavar='NAME:=VALUE',
                        help='a node parameter (repeatable)')
    parser.add_argument('--node-prefix', default='', metavar='COMMAND',
                        help="run the node under this command, e.g. 'chrt -f 10' (a real-time "
                        "priority, as on a robot's control computer; needs the privilege)")
    parser.add_argument('--model', metavar='URDF',
                        help='benchmark this robot instead of iCub: a URDF path, or g1, talos, '
                        'talos_reduced (example-robot-data, bench/models.py); contacts that '
                        'are not its links are ignored by the node: set them with --param')
    parser.add_argument('--probe', action='store_true',
                        help="also measure the machine's own wake-up latency during each rate "
                        "(a cyclictest-like process per CPU beside the node)")
    parser.add_argument('--dump', metavar='FILE.json',
                        help='write every reception: {rate: {output: [[stamp ns, received '
                        'ns, written ns, sequence], ...]}} (Humble: [stamp ns, received ns]; '
                        'e.g. to find which ticks make the tail); a repeated rate is keyed '
                        '"1000#2", "1000#3", ...; with --service-load the runs with clients '
                        'are keyed "1000+clients" and also hold "services": {service: '
                        '{"made", "answered", "failed", "skipped", "latency": [ms, ...]}}')
    parser.add_argument('--publisher-per-rate', action='store_true',
                        help='start a new publisher process for each rate (a participant '
                        'joining the graph as each run starts) instead of one for all')
    parser.add_argument('--service-load', action='store_true',
                        help='measure each rate twice, without and then with service clients '
                        f'({DYNAMICS_CLIENTS} x ~/get_dynamics at {DYNAMICS_HZ:g} Hz, 1 x '
                        f'~/check_equilibrium at {EQUILIBRIUM_HZ:g} Hz on a non-flat support, '
                        'in a process of their own), and print the two side by side (iCub); '
                        'with --floor, each floor node too, beside the same clients of the '
                        'node\'s services (what a plain node keeps under that load)')
    parser.add_argument('--balance-outputs', action='store_true',
                        help='measure each rate twice, without and with a reader of ~/zmp, '
                        '~/capture_point and ~/cop (a process of its own; the order '
                        "alternating), and print what they add to the node's CPU per "
                        'JointState (issue 18: < 20 us)')
    parser.add_argument('--floor', nargs='*', choices=FLOOR_MODES, metavar='MODE',
                        help='also measure, alternating with the node, a minimal rclpy node '
                        'per MODE (bench/floor_node.py, default: thread) that takes the same '
                        'inputs and publishes the same per-tick messages as prepared bytes, '
                        'no dynamics; and compute_tick in this process; print the CPU per '
                        'JointState side by side and (ours - floor) / compute_tick. MODE: '
                        'thread (the node\'s sensor thread), spin (rclpy.spin), events '
                        '(rclpy\'s EventsExecutor), core (thread + the merge, compute_tick '
                        'and the rendering through the node\'s classes), kernel (thread + one '
                        'call of the compiled tick kernel, no Python around it), calls (thread + the JointState\'s '
                        'bytes to the outputs\' bytes in three compiled calls)')
    parser.add_argument('--thread-priority', type=int, default=0, metavar='N',
                        help='start the node with thread_priority N (SCHED_FIFO of its '
                        'ticking thread) and run the bench\'s publisher and receiver threads '
                        'at the same priority (a robot\'s driver and controller); 0: off')
    parser.add_argument('--tf-rate', action='store_true',
                        help='measure each rate twice, with /tf on every tick '
                        '(publish_frequency 1000) and at the default 20 Hz (the order '
                        'alternating), beside a tf2-like /tf listener process, and print '
                        "the node's and the listener's CPU side by side (issue 36)")
    parser.add_argument('--tf-listener', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--namespaces', default='', help=argparse.SUPPRESS)
    parser.add_argument('--horizon', action='store_true',
                        help='with --service-load: the load is one client of '
                             '~/get_dynamics_horizon at 20 Hz (50 states; issue 35), and the '
                             'idle node\'s horizon end to end against the core\'s batch')
    parser.add_argument('--clients', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--balance-readers', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--probe-run', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--probe-cpu', type=int, help=argparse.SUPPRESS)
    parser.add_argument('--publish', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    loopback_env()
    if args.publish:
        return publish(args.duration, args.aux_rate, args.model,
                       args.namespaces.split(',') if args.namespaces else ('',),
                       args.thread_priority)
    if args.probe_run:
        return probe(args.duration, args.probe_cpu)
    if args.clients:
        return service_clients(args.model, args.horizon)
    if args.balance_readers:
        return reader_main(args.thread_priority)
    if args.tf_listener:
        return listener_main()

    import rclpy
    from std_msgs.msg import String
    from kin_dyn_ros.node.outputs import LATCHED_QOS

    if args.contact_outputs:
        OUTPUTS.update(CONTACT_OUTPUTS)
    if args.horizon and not args.service_load:
        parser.error('--horizon is a load of --service-load')
    if sum((args.service_load, args.tf_rate, args.balance_outputs)) > 1 or \
            args.tf_rate and args.floor is not None:
        parser.error('--service-load, --tf-rate and --balance-outputs are benches of their '
                     'own (not with each other; --tf-rate not with --floor)')
    floor_modes = list(dict.fromkeys(args.floor or ['thread'])) if args.floor is not None \
        else []
    params = args.param + ([f'thread_priority:={args.thread_priority}']
                           if args.thread_priority else [])
    node_proc = start_node(params, shlex.split(args.node_prefix))
    floors = [FloorProcess(mode, args.model, args.balance_outputs, args.thread_priority)
              for mode in floor_modes]
    rclpy.init()
    # a lean receiver: no parameter services, no QoS event handlers (fewer waitables per wake)
    node = rclpy.create_node('kin_dyn_bench_receiver', start_parameter_services=False)
    receiver = None
    try:
        description = node.create_publisher(String, 'robot_description', LATCHED_QOS)
        description.publish(String(data=model_urdf(args.model)))
        receiver = Receiver(node, [f.namespace for f in floors], args.thread_priority)
        if args.thread_priority:    # its middleware threads too, as the node's
            from kin_dyn_ros.node.realtime import configure_native_threads
            for warning in configure_native_threads(args.thread_priority):
                print(f'receiver: {warning}', file=sys.stderr)
        for floor in floors:
            floor.wait_ready()
        if receiver.with_info and not args.thread_priority:
            # Lower the priority of the receiving thread only (Linux nice is per thread):
            # the middleware threads that stamp the reception keep theirs, and the node
            # under test wins the CPU when the two cores are contended.
            os.setpriority(os.PRIO_PROCESS, receiver.thread.native_id, 10)
        if not receiver.model_loaded.wait(MODEL_WAIT_S):
            print(f'the node published no /tf_static in {MODEL_WAIT_S} s: no model loaded',
                  file=sys.stderr)
            return 1
        if args.service_load:
            load = ServiceLoad(args.model, args.horizon)
            try:
                rows, records = run_floor_rates(receiver, args, node_proc.pid, floors, None,
                                                load) \
                    if floors else run_rates(receiver, args, node_proc.pid, load)
            finally:
                load.close()
            if floors:
                print_service_load_floors(rows, load.check,
                                          {f.namespace: f.label for f in floors})
            else:
                print_service_load(rows, load.check)
        elif args.tf_rate:
            setter = ParameterSetter()
            load = TfListenerLoad(__file__, setter)
            try:
                rows = run_tf_rates(measure, receiver, lambda: Publisher(
                    args.duration, args.aux_rate, args.model), args, node_proc.pid, load)
            finally:
                load.close()
                setter.close()
            records = {}
            print_tf_rate(rows, per_tick_outputs(), args.duration)
        elif args.balance_outputs:
            readers = BalanceReaders(__file__, args.thread_priority)
            try:
                rows, records = run_floor_rates(receiver, args, node_proc.pid, floors, None,
                                                readers) \
                    if floors else run_rates(receiver, args, node_proc.pid, readers,
                                             alternate=True)
            finally:
                readers.close()
            print_table([r for r in rows if not r['target']])
            print_balance_cost(rows, {f.namespace: f.label for f in floors})
        elif floors:
            timer = TickTimer(model_urdf(args.model))
            rows, records = run_floor_rates(receiver, args, node_proc.pid, floors, timer)
            print_table([r for r in rows if not r['target']])
            print_floor(rows, timer, {'': 'ours (node)', **{f.namespace: f.label
                                                            for f in floors}},
                        per_tick_outputs(), model_label(args.model))
        else:
            rows, records = run_rates(receiver, args, node_proc.pid)
            print_table(rows)
        if args.dump:
            pathlib.Path(args.dump).write_text(json.dumps(records))
    finally:
        if receiver is not None:
            receiver.thread.stop()
        node.destroy_node()
        rclpy.try_shutdown()
        node_proc.send_signal(signal.SIGINT)
        for floor in floors:
            floor.close()
        node_proc.wait(timeout=20)

if __name__ == '__main__':
    sys.exit(main())
