"""CPU time of a process, for the demo's report and the end-to-end benchmark (no ROS)."""

import os

__all__ = ["cpu_seconds"]


def cpu_seconds(pid=None):
    """User + system CPU time [s] of a process, all its threads (this one when pid is None;
    another one from Linux /proc; NaN where it cannot be read)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")
