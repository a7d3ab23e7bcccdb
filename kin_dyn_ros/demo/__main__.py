"""``python -m kin_dyn_ros.demo``: the live humanoid demo (see ``--help``)."""

import argparse
import math
import os
import sys
from pathlib import Path

DESCRIPTION = """\
Live demo of kin_dyn_node. A humanoid (by default iCubGazeboV2_5 from the icub-models
package, CC BY-SA 4.0) squats and sways with both feet fixed flat on the ground while
swinging its arms. The demo publishes what a robot driver would, at --rate Hz:
/joint_states (positions, velocities, efforts = the joint torques of the motion), /odom
(pose and body-fixed twist of the root link) and one WrenchStamped per foot
(/l_sole/wrench, /r_sole/wrench, in the sole frame); it starts kin_dyn_node as a user
would, records every topic to an MCAP file (Foxglove, PlotJuggler), checks the node's
forward dynamics against the motion's own accelerations, and plots the run.

The torques and wrenches are exactly those of the motion (inverse dynamics with both feet
in contact), so the node's forward dynamics must give back the motion's accelerations:
the summary reports the largest difference over the ticks that the node computed from
that tick's own odometry and wrenches (checked from its ~/com and ~/markers), and how many
ticks it computed with another tick's inputs.
"""

EPILOG = """\
--model PATH takes any URDF. With l_sole and r_sole frames and at least 6 joints between
them the same squat-and-sway is made (hand-made posture for iCub joint names, small
sinusoids for other names, the right leg by inverse kinematics). Otherwise, or when that
inverse kinematics fails, the model is held by its root link at the world origin (a
"fixed base": the whole base wrench is published as a contact wrench on the root link)
and every joint follows a small sinusoid inside its limits.

Output (--output DIR, default demo_output/): kin_dyn_demo.mcap, com.png, momentum.png,
gravity_torques.png, forward_dynamics.png, latency.png, summary.json, series.npz and
node.log. scripts/demo.sh sets up the environment first, then runs this.
"""


def _positive(text):
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kin_dyn_ros.demo", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=_positive, default=10.0, metavar="SECONDS",
                        help="how long the robot moves once the node is ready (default: 10)")
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="URDF file of the robot (default: iCubGazeboV2_5 from "
                             "icub-models)")
    parser.add_argument("--output", metavar="DIR", default="demo_output",
                        help="folder of the recording, plots and summary "
                             "(default: demo_output)")
    parser.add_argument("--no-plots", action="store_true",
                        help="skip the PNG plots (faster; the MCAP and summary are written)")
    parser.add_argument("--rate", type=_positive, default=500.0, metavar="HZ",
                        help="rate of joint states, odometry and wrenches (default: 500)")
    parser.add_argument("--docs-image", metavar="PNG", default=None,
                        help="also copy the CoM plot to this file (the README uses "
                             "docs/demo_com.png)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    if args.model is not None and not Path(args.model).is_file():
        parser.error(f"--model: no such file: {args.model}")
    return args


def _report(summary):
    lat = summary.latency_ms
    lines = [
        "",
        f"kin_dyn_ros demo: {summary.model} ({summary.mode}), {summary.duration_s:g} s at "
        f"{summary.rate_hz:g} Hz",
        f"  ticks published   {summary.ticks_published} ({summary.ticks_per_second:.0f}/s), "
        f"answered by the node {summary.ticks_answered}",
        f"  node latency      p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, "
        f"p99 {lat['p99']:.2f} ms, max {lat['max']:.2f} ms (CPU: node "
        f"{summary.cpu_percent['node']:.0f} %, demo {summary.cpu_percent['demo']:.0f} %, "
        f"{os.cpu_count()} cores)",
        f"  forward dynamics  max |node - motion| = {summary.fd_error_max:.2e} over the "
        f"{summary.ticks_in_sync} ticks computed from their own inputs "
        f"(all ticks: {summary.fd_error_all_ticks_max:.2e})",
        "  files:",
    ]
    lines += [f"    {name:17s} {path}" for name, path in summary.files.items()]
    lines += [f"  warning: {w}" for w in summary.warnings]
    print("\n".join(lines), flush=True)


def main(argv=None):
    args = parse_args(argv)
    from .runner import Options, run   # noqa: PLC0415 (--help works without ROS)
    options = Options(duration=args.duration, model=args.model, output=args.output,
                      plots=not args.no_plots, rate=args.rate, progress=not args.quiet,
                      docs_image=args.docs_image)
    try:
        summary = run(options)
    except RuntimeError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ndemo interrupted", file=sys.stderr)
        return 130
    _report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
