"""bench_node.py --tf-rate: /tf on every tick against /tf at the default publish_frequency
(issue 36), for the node and for a tf2 listener (helpers of bench/bench_node.py, not a test).

Each rate is measured twice against the same node, the order alternating from one
repetition to the next: with ``publish_frequency`` 1000 Hz (/tf on every tick of a 1 kHz
stream, as before the parameter existed) and 20 Hz (robot_state_publisher's default, and
ours), set through the node's parameter service before the run. Beside it runs a listener
process (bench_node.py with ``--tf-listener``): a plain rclpy node that subscribes to /tf
with tf2's QoS, deserialises every TFMessage and spins in a thread of its own, as a
tf2_ros.TransformListener does (tf2_ros is not on PyPI; it would also insert each transform
into its buffer): its process CPU time over the run is the cost of /tf to every such
listener of the robot (rviz, navigation, perception).
"""

import json
import sys
import threading
import time

import numpy as np

from line_process import LineProcess

NODE = 'kin_dyn_node'
FREQUENCIES = (1000.0, 20.0)      # /tf on every tick of 1 kHz; the default
MATCH_S = 10.0


def listener_main():
    """The listener process: print "ready"; on "go" subscribe to /tf (deserialised, spun by
    a SingleThreadedExecutor on a thread), wait until matched and print "started"; on
    "stop" drop the subscription and print {"messages", "transforms", "cpu_s", "wall_s"}."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from tf2_msgs.msg import TFMessage
    from kin_dyn_ros.node.outputs import TF_QOS

    rclpy.init()
    print('ready', flush=True)
    node = executor = thread = None
    counts = [0, 0]

    def on_tf(msg):
        counts[0] += 1
        counts[1] += len(msg.transforms)

    for line in sys.stdin:
        if line.split()[:1] == ['go']:
            counts[:] = [0, 0]
            node = rclpy.create_node('kin_dyn_bench_tf_listener')
            sub = node.create_subscription(TFMessage, '/tf', on_tf, TF_QOS)
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            thread = threading.Thread(target=executor.spin, daemon=True)
            thread.start()
            deadline = time.monotonic() + MATCH_S
            while not sub.get_publisher_count() and time.monotonic() < deadline:
                time.sleep(0.01)
            cpu, wall = time.process_time(), time.monotonic()
            print('started', flush=True)
        elif line.strip() == 'stop':
            cpu, wall = time.process_time() - cpu, time.monotonic() - wall
            executor.shutdown()
            thread.join()
            node.destroy_node()
            print(json.dumps({'messages': counts[0], 'transforms': counts[1], 'cpu_s': cpu,
                              'wall_s': wall}), flush=True)
    rclpy.try_shutdown()


class ParameterSetter:
    """Sets ``publish_frequency`` on the node under test through its parameter service."""

    def __init__(self):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rcl_interfaces.srv import SetParameters
        self._node = rclpy.create_node('kin_dyn_bench_tf_rate_setter')
        self._executor = SingleThreadedExecutor()
        self._executor.add_node(self._node)
        self._client = self._node.create_client(SetParameters, f'/{NODE}/set_parameters')

    def set(self, frequency):
        from rclpy.parameter import Parameter
        from rcl_interfaces.srv import SetParameters
        if not self._client.wait_for_service(timeout_sec=MATCH_S):
            raise RuntimeError(f'/{NODE}/set_parameters not available')
        request = SetParameters.Request(parameters=[
            Parameter('publish_frequency', value=float(frequency)).to_parameter_msg()])
        future = self._client.call_async(request)
        self._executor.spin_until_future_complete(future, timeout_sec=MATCH_S)
        result = future.result()
        if result is None or not result.results[0].successful:
            raise RuntimeError(f'publish_frequency {frequency} not set: {result}')

    def close(self):
        self._executor.shutdown()
        self._node.destroy_node()


class TfListenerLoad(LineProcess):
    """A load of bench_node's ``measure``: sets the node's publish_frequency, then runs the
    listener for the run (its figures in the row under "tf_listener")."""

    key = 'tf_listener'

    def __init__(self, script, setter):
        super().__init__([sys.executable, script, '--tf-listener'], 'tf listener')
        self._setter, self.frequency = setter, None

    @property
    def name(self):
        return f'tf{self.frequency:g}'

    def at(self, frequency):
        self.frequency = frequency
        return self

    def start(self, target=''):
        self._setter.set(self.frequency)
        super().start(target)
        if self.proc.stdout.readline().strip() != 'started':
            raise RuntimeError('the tf listener process did not start its subscription')

    def stop(self):
        return {**super().stop(), 'frequency': self.frequency}


def run_tf_rates(measure, receiver, publisher_factory, args, node_pid, load):
    """Each of ``args.rates`` measured at each of FREQUENCIES (``load``: a
    :class:`TfListenerLoad`), the order alternating; the rows."""
    rows, publisher = [], publisher_factory()
    try:
        for i, rate in enumerate(args.rates):
            for frequency in FREQUENCIES[::-1] if i % 2 else FREQUENCIES:
                rows.append(measure(receiver, publisher, int(rate), node_pid, args.probe,
                                    load.at(frequency)))
                print(f'{int(rate)} Hz, publish_frequency {frequency:g}: CPU '
                      f'{rows[-1]["cpu_ms"]:.3f} ms/JS', file=sys.stderr, flush=True)
    finally:
        publisher.close()
    return rows


def print_tf_rate(rows, outputs, duration):
    """Per rate and publish_frequency: the node's CPU per JointState, /tf per JointState (as
    this bench's raw receiver got it), the listener's CPU per JointState and in % of a core
    over its window, the /tf messages it deserialised per second of the ``duration`` s
    stream, and the other per-tick outputs' worst received share; then pooled per rate."""
    print()
    print('/tf on every tick against publish_frequency 20 Hz: the node and a tf2-like /tf '
          'listener (a process of its own, every TFMessage deserialised)')
    print(f"{'rate':>5} {'publish_frequency':>17} {'node [ms/JS]':>13} {'/tf per JS':>10} "
          f"{'listener [ms/JS]':>16} {'listener [% core]':>17} {'its /tf [msg/s]':>15} "
          f"{'other outputs received':>22}")
    pooled = {}
    for row in rows:
        lis = row['tf_listener']
        per_js = 1e3 * lis['cpu_s'] / max(1, row['sent'])
        share = min(row[k]['ratio'] for k in outputs if k != 'tf')
        print(f"{row['rate']:>5} {lis['frequency']:>17g} {row['cpu_ms']:>13.3f} "
              f"{row['tf']['ratio']:>10.3f} {per_js:>16.3f} "
              f"{100 * lis['cpu_s'] / lis['wall_s']:>17.1f} "
              f"{lis['messages'] / duration:>15.1f} {100 * share:>21.1f}%")
        pooled.setdefault((row['rate'], lis['frequency']), []).append(
            (row['cpu_ms'], 100 * lis['cpu_s'] / lis['wall_s']))
    for rate in sorted({r for r, _ in pooled}):
        cells = {f: np.mean(pooled[rate, f], axis=0) for r, f in pooled if r == rate}
        if len(cells) == 2:
            (node_a, lis_a), (node_b, lis_b) = cells[FREQUENCIES[0]], cells[FREQUENCIES[1]]
            print(f'{rate} Hz pooled: node {node_a:.3f} -> {node_b:.3f} ms per JointState '
                  f'({1e3 * (node_a - node_b):.0f} us less), listener {lis_a:.1f} -> '
                  f'{lis_b:.1f} % of a core')
