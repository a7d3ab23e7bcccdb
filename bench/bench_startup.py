#!/usr/bin/env python3
"""Start-up of kin_dyn_node: process start to the first output, per dynamics path.

Three starts of a fresh node process each, on iCub (or ``--model``), in one run:

- ``compiled, cold``: an empty numba cache (a new ``NUMBA_CACHE_DIR``): the kernels compile;
- ``compiled, warm``: the same cache again: the kernels load from it;
- ``NumPy core``: ``KIN_DYN_JIT=0`` (no numba imported: the start-up of before the kernels).

A JointState (every joint at zero, with efforts) is published at 100 Hz from before the
node starts; the node gets its model from the ``robot_description`` parameter. For each
start the script prints the seconds from the process's start to its log lines "dynamics:
... ready" and "loaded model", to the first ``~/com`` received and to the first
``~/forward_dynamics``, and the node process's resident memory then (``/proc``). A cold
start also prints when the queries' kernels, compiled beside the node, are in (their log
line; the memory is read after it); the other starts load them before the first output.
Each start is a separate node process; DDS stays on loopback with this script's own domain.

Usage:  source scripts/env.sh && python bench/bench_startup.py [--model talos] [--repeat 2]
"""

import argparse
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

TIMEOUT_S = 180.0


def _start_node(description_file, env):
    exe = [sys.executable, '-m', 'kin_dyn_ros.node']
    params = ['use_odometry:=false', 'publish_forward_dynamics:=true', 'rate:=0.0']
    files = ['--params-file', str(REPO / 'config' / 'kin_dyn.yaml'),
             '--params-file', str(description_file)]
    return subprocess.Popen([*exe, '--ros-args', *files] + [a for p in params for a in ('-p', p)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _rss_mb(pid):
    try:
        with open(f'/proc/{pid}/status', encoding='ascii') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float('nan')


def _worker_rss_mb(pid):
    """Resident memory [MB] of the node's child processes (its workers)."""
    total = 0.0
    for child in pathlib.Path(f'/proc/{pid}/task').glob('*/children'):
        for cpid in child.read_text().split():
            total += _rss_mb(int(cpid))
    return total


def measure(label, env, node, urdf_path, got):
    """One start: {event: seconds from the process's start}, node RSS, workers' RSS."""
    for event in got.values():
        event.clear()
    t0 = time.monotonic()
    proc = _start_node(urdf_path, env)
    marks = {}

    def read_log():
        for line in proc.stdout:
            now = time.monotonic() - t0
            if re.search(r'dynamics: .*(ready|NumPy core)', line):
                marks.setdefault('dynamics ready', now)
            if 'loaded model' in line:
                marks.setdefault('model loaded', now)
            if "queries' kernels are ready" in line:
                marks.setdefault("queries' kernels", now)

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        for name, event in got.items():
            if not event.wait(TIMEOUT_S - (time.monotonic() - t0)):
                marks[name] = float('nan')
            else:
                marks[name] = event.time - t0
        while time.monotonic() - t0 < TIMEOUT_S and not (       # a cold start: until the
                "queries' kernels" in marks or proc.poll() is not None  # queries' kernels are
                or 'cold' not in label):                            # in (the compiling
            time.sleep(0.1)                                         # processes ended)
        time.sleep(2.0)                    # the workers start once the model is in
        rss, workers = _rss_mb(proc.pid), _worker_rss_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return label, marks, rss, workers


class _Event(threading.Event):
    time = None

    def set_at(self):
        if not self.is_set():
            self.time = time.monotonic()
            self.set()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', help='URDF path or a name of bench/models.py (default iCub)')
    parser.add_argument('--repeat', type=int, default=1, help='warm and NumPy starts each')
    args = parser.parse_args()

    from bench_node import loopback_env
    loopback_env()
    import rclpy
    import rclpy.executors
    from geometry_msgs.msg import PointStamped
    from kin_dyn_ros_interfaces.msg import ForwardDynamics
    from models import model_path
    from sensor_msgs.msg import JointState

    import yaml

    from kin_dyn_ros.dynamics import KinDynComputations

    urdf_path = pathlib.Path(model_path(args.model))
    joints = KinDynComputations(urdf_path.read_text(), compiled=False).joints_name_list
    rclpy.init()
    node = rclpy.create_node(f'bench_startup_{random.randint(0, 99999)}')
    got = {'first ~/com': _Event(), 'first ~/forward_dynamics': _Event()}
    node.create_subscription(PointStamped, '/kin_dyn_node/com',
                             lambda _: got['first ~/com'].set_at(), 10)
    node.create_subscription(ForwardDynamics, '/kin_dyn_node/forward_dynamics',
                             lambda _: got['first ~/forward_dynamics'].set_at(), 10)
    pub = node.create_publisher(JointState, 'joint_states', 10)
    msg = JointState(name=list(joints), position=[0.0] * len(joints),
                     velocity=[0.0] * len(joints), effort=[0.0] * len(joints))

    def tick():
        msg.header.stamp = node.get_clock().now().to_msg()
        pub.publish(msg)

    node.create_timer(0.01, tick)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    rows = []
    with tempfile.TemporaryDirectory(prefix='kin_dyn_numba_') as cache:
        description = pathlib.Path(cache) / 'description.yaml'    # too long for a -p argument
        description.write_text(yaml.safe_dump(
            {'kin_dyn_node': {'ros__parameters': {'robot_description': urdf_path.read_text()}}}))
        urdf_path = description
        base = dict(os.environ, NUMBA_CACHE_DIR=cache)
        rows.append(measure('compiled, cold cache', base, node, urdf_path, got))
        for _ in range(args.repeat):
            rows.append(measure('compiled, warm cache', base, node, urdf_path, got))
            rows.append(measure('NumPy core (KIN_DYN_JIT=0)', dict(base, KIN_DYN_JIT='0'),
                                node, urdf_path, got))
    print(f'start-up of kin_dyn_node on {args.model or "icub"} ({len(joints)} joints), seconds '
          f'from the process start; load {os.getloadavg()[0]:.2f}')
    events = ['dynamics ready', 'model loaded', 'first ~/com', 'first ~/forward_dynamics',
              "queries' kernels"]
    print(f"{'start':30s}" + ''.join(f'{e:>26s}' for e in events)
          + f"{'node RSS MB':>13s}{'workers MB':>12s}")
    for label, marks, rss, workers in rows:
        print(f'{label:30s}' + ''.join(f'{marks.get(e, float("nan")):26.2f}' for e in events)
              + f'{rss:13.0f}{workers:12.0f}')
    executor.shutdown()
    spinner.join(5.0)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
