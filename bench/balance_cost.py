"""bench_node.py --balance-outputs: what the balance outputs (issue 18: ~/zmp,
~/capture_point, ~/cop) add to the node's CPU per JointState, both feet in contact (helpers
of bench/bench_node.py, not a test).

The node computes and publishes them only while something subscribes. Each rate is measured
twice against the same node: without a reader of them and with one, a process of its own
(bench_node.py with ``--balance-readers``) that subscribes to the three topics for the run
and records, per message, the stamp and the reception time. The pair's order alternates
from one repetition of a rate to the next. The difference of the node's CPU per JointState,
pooled over the pairs, is the added cost per tick; the target is 20 us.

With ``--floor``, the floor node (bench/floor_node.py ``--balance``) publishes the three
messages too, as prepared bytes and only while read, and its pairs are measured the same
way, alternating with the node's: what it adds is what publishing the three messages to a
reader costs any rclpy node, with no computation at all.
"""

import json
import sys
import time

import numpy as np

from floor_bench import floor_topic
from line_process import LineProcess
from receptions import stamp_recorder

NODE = 'kin_dyn_node'
# output -> (topic, byte offset of header.stamp in the CDR data incl. the 4-byte header)
BALANCE_OUTPUTS = {'zmp': (f'/{NODE}/zmp', 4), 'capture_point': (f'/{NODE}/capture_point', 4),
                   'cop': (f'/{NODE}/cop', 4)}
TARGET_US = 20.0          # issue 18: the added cost per tick inside the node
MATCH_S = 10.0            # for the readers to be matched with the node's publishers


def _types():
    from geometry_msgs.msg import PointStamped
    from kin_dyn_ros_interfaces.msg import CentresOfPressure
    return {'zmp': PointStamped, 'capture_point': PointStamped, 'cop': CentresOfPressure}


def reader_main(priority=0):
    """The reader process: print "ready"; on "go [NAMESPACE]" (stdin) subscribe to
    BALANCE_OUTPUTS (raw, on a sensor thread as bench_node's receiver, at SCHED_FIFO
    ``priority`` with its middleware's threads when > 0, as that receiver) of the node, or of
    the --floor node in NAMESPACE, wait until each is matched with its publisher and print
    "started"; on "stop" drop the subscriptions and print {output: [[stamp ns, received ns],
    ...]} as JSON. Ends with stdin. Its node (and so its DDS participant) lives as long as
    the process: one made per run joined the graph during the run, and a participant
    joining can hold the receptions for ~0.3 s (docs/performance.md, "A participant
    joining")."""
    import rclpy
    from rclpy.qos import QoSProfile
    from kin_dyn_ros.node.outputs import NO_SUBSCRIPTION_EVENTS
    from kin_dyn_ros.node.realtime import configure_native_threads
    from kin_dyn_ros.node.sensor_thread import SensorThread

    rclpy.init()
    node = rclpy.create_node('kin_dyn_bench_balance_reader', start_parameter_services=False)
    print('ready', flush=True)
    thread = records = None
    subs = []
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ['go']:
            namespace = words[1] if len(words) > 1 else ''
            thread = SensorThread(node, lambda sub, exc: print(repr(exc), file=sys.stderr),
                                  realtime=(priority, ()))
            records = {key: [] for key in BALANCE_OUTPUTS}
            subs = [node.create_subscription(
                _types()[key], floor_topic(namespace, topic),
                stamp_recorder(records[key], offset, False), QoSProfile(depth=1000), raw=True,
                event_callbacks=NO_SUBSCRIPTION_EVENTS, callback_group=thread.group)
                for key, (topic, offset) in BALANCE_OUTPUTS.items()]
            thread.start()
            for warning in configure_native_threads(priority):
                print(f'balance reader: {warning}', file=sys.stderr)
            deadline = time.monotonic() + MATCH_S
            while (not all(s.get_publisher_count() for s in subs)
                   and time.monotonic() < deadline):
                time.sleep(0.01)
            print('started', flush=True)
        elif line.strip() == 'stop':
            thread.stop()
            for sub in subs:
                node.destroy_subscription(sub)
            print(json.dumps(records), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


class BalanceReaders(LineProcess):
    """The reader process (bench_node.py with ``--balance-readers``), a load of
    bench_node's ``measure``: :meth:`start` subscribes (returns once matched), :meth:`stop`
    unsubscribes and gives the run's receptions."""

    key = name = 'balance'      # its figures in a run's row; its runs' label

    def __init__(self, script, priority=0):
        super().__init__([sys.executable, script, '--balance-readers', '--thread-priority',
                          str(priority)], 'balance reader')

    def start(self, target=''):
        """Subscribe to the outputs of the node ('') or of the --floor node in ``target``."""
        super().start(target)
        if self.proc.stdout.readline().strip() != 'started':
            raise RuntimeError('the balance reader process did not start its subscriptions')


def _received(row):
    """{output: (share of the run's JointStates received, p99 latency [ms])} of a run with
    the readers."""
    first, last = row['window']
    out = {}
    for key, records in row['balance'].items():
        inside = [r for r in records if first <= r[0] <= last]
        latency = np.array([r[1] - r[0] for r in inside]) * 1e-6
        out[key] = (len({r[0] for r in inside}) / max(1, row['sent']),
                    float(np.percentile(latency, 99)) if len(latency) else float('nan'))
    return out


def print_balance_cost(rows, floors=None):
    """Per target (the node; each --floor node of ``floors``, {namespace: label}) and rate:
    each pair of runs (without, with the readers), then the pooled added cost against
    TARGET_US."""
    print()
    print('balance outputs (~/zmp, ~/capture_point, ~/cop; both soles in contact): CPU per '
          'JointState without and with a reader of them')
    print(f"{'process':<16} {'rate':>5} {'pair':>4} {'without [ms/JS]':>16} "
          f"{'with [ms/JS]':>13} {'added [us]':>10}  with: received % / p99 [ms] per output")
    labels = {'': 'ours (node)', **(floors or {})}
    pooled = []
    for target, label in labels.items():
        for rate in sorted({row['rate'] for row in rows}):
            runs = [row for row in rows if row['rate'] == rate and row['cpu_ms'] is not None
                    and row.get('target', '') == target]
            without = [r for r in runs if 'balance' not in r]
            with_ = [r for r in runs if 'balance' in r]
            for k, (a, b) in enumerate(zip(without, with_), 1):
                print(f"{label:<16} {rate:>5} {k:>4} {a['cpu_ms']:>16.3f} {b['cpu_ms']:>13.3f} "
                      f"{1e3 * (b['cpu_ms'] - a['cpu_ms']):>10.1f}  " + ', '.join(
                          f'{key} {100 * share:.1f} % / {p99:.2f}'
                          for key, (share, p99) in _received(b).items()))
            if without and with_:
                base = np.mean([r['cpu_ms'] for r in without])
                loaded = np.mean([r['cpu_ms'] for r in with_])
                pooled.append((label, rate, len(with_), base, loaded, 1e3 * (loaded - base)))
    for label, rate, pairs, base, loaded, added in pooled:
        print(f"{label}, {rate} Hz, pooled over {pairs} pairs: {base:.3f} -> {loaded:.3f} ms "
              f"per JointState: the balance outputs add {added:.1f} us per tick" + (
                  f" (target < {TARGET_US:g} us: {'met' if added < TARGET_US else 'NOT met'})"
                  if label == labels[''] else ' (publishing them alone, no computation)'))
