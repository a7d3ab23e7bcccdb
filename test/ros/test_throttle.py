"""ThrottledLogger: one line per key and period, nothing in between (pure, no rclpy)."""

from kin_dyn_ros.node.throttle import ThrottledLogger


class _Recorder:
    def __init__(self):
        self.lines = []

    def warning(self, text):
        self.lines.append(('warning', text))

    def info(self, text):
        self.lines.append(('info', text))


def test_each_key_is_logged_once_per_period():
    now = [100.0]
    rec = _Recorder()
    log = ThrottledLogger(rec, 5.0, clock=lambda: now[0])
    for _ in range(3):
        log.warning('a', 'first a')
        log.info('b', 'first b')
    now[0] += 4.9
    log.warning('a', 'too early')
    now[0] += 0.2
    log.warning('a', 'second a')
    assert rec.lines == [('warning', 'first a'), ('info', 'first b'), ('warning', 'second a')]
