"""A bench child process driven by lines (not a test): it prints a line starting with
``ready`` once set up, then on its stdin takes ``go`` (start its load) and ``stop`` (answer
one JSON line of figures); closing its stdin ends it. bench_node.py's service load and
soak.py's service clients are such processes (the same script with ``--clients``)."""

import json
import os
import subprocess

__all__ = ["LineProcess"]


class LineProcess:
    """The child ``argv``; :attr:`ready` is its first line (``what`` names it in the error
    raised when it ends before that)."""

    def __init__(self, argv, what):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=dict(os.environ))
        self.ready = self.proc.stdout.readline()
        if not self.ready.startswith('ready'):
            raise RuntimeError(f'the {what} process ended (exit {self.proc.wait()})')

    def start(self, target=''):
        """Start the load (on ``target``, a word the child reads after ``go``)."""
        self.proc.stdin.write(f'go {target}'.rstrip() + '\n')
        self.proc.stdin.flush()

    def stop(self):
        """The figures the child answers for the load since :meth:`start`."""
        self.proc.stdin.write('stop\n')
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        """End the child (killed when it does not end within 20 s of its stdin closing)."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
