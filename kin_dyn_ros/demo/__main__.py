"""``python -m kin_dyn_ros.demo``: the live humanoid demo (see ``--help``)."""

import argparse
import math
import os
import re
import sys
from pathlib import Path

DESCRIPTION = """\
Live demo of kin_dyn_node. A humanoid (by default iCubGazeboV2_5 from the icub-models
package, CC BY-SA 4.0; any URDF with --model) squats and sways with both feet fixed flat on
the ground while swinging its arms. The demo publishes what a robot driver would, at --rate
Hz: /joint_states (positions, velocities, efforts = the joint torques of the motion), /odom
(pose and body-fixed twist of the root link) and one WrenchStamped per foot
(/<foot>/wrench in the foot frame, e.g. /l_sole/wrench); it starts kin_dyn_node as a user
would, with the feet as its contacts, records every topic to an MCAP file (Foxglove,
PlotJuggler), checks the node's forward dynamics against the motion's own accelerations,
and plots the run.

The torques and wrenches are exactly those of the motion (inverse dynamics with both feet
in contact), so the node's forward dynamics must give back the motion's accelerations:
the summary reports the largest difference over the ticks that the node computed from
that tick's own odometry and wrenches (checked from its ~/com and ~/markers), and how many
ticks it computed with another tick's inputs. Joints with no inertia moving with them
(e.g. finger links without mass) have no forward dynamics: the node publishes NaN for them,
and the summary names them and compares the others.
"""

EPILOG = """\
Feet: --feet LEFT RIGHT names the two foot links. Without it they are guessed from the link
names: the links whose name contains "sole", else "foot", else "ankle"; left and right by a
word l/left or r/right in the name (l_sole, left_sole_link, LeftFoot); of several on one
side, the one furthest down the leg, then the shortest name. A guess that finds such links
but no clear left/right pair stops with the candidates. Soles: the bottom of the feet's
box/sphere/cylinder collision geometry (a link named *sole* is on the ground at its
origin), else a 16 x 7 cm rectangle under the foot link. The node gets the feet as its
contacts: config/icub.yaml for the default iCub, else <output>/contacts.yaml, written for
this model (copy it as your robot's config).

--model PATH takes any URDF. With feet and at least 6 joints between them the robot
squats and sways on its feet (a hand-made posture for iCub's joint names; for others the
knee, hip and ankle pitch joints found from the leg's kinematics; the right leg by inverse
kinematics). Without links named like feet, or when a guessed pair cannot carry the robot,
the model is held by its root link at the world origin (a "fixed base": the whole base
wrench is published as a contact wrench on the root link) and every joint follows a small
sinusoid inside its limits.

Output (--output DIR, default demo_output/; an earlier run's files there are replaced):
kin_dyn_demo.mcap, com.png, momentum.png, gravity_torques.png, forward_dynamics.png,
latency.png, summary.json, series.npz, node.log and contacts.yaml (other models than the
default). scripts/demo.sh sets up the environment first, then runs this.
Examples:
  python -m kin_dyn_ros.demo --duration 10 --output /tmp/demo_out
  python -m kin_dyn_ros.demo --model talos_reduced.urdf      (example-robot-data)
  python -m kin_dyn_ros.demo --model g1.urdf --feet left_ankle_roll_link right_ankle_roll_link
"""

MAX_RATE = 10000.0   # [Hz] above this the tabulated period would not fit in memory


def _positive(what, maximum=math.inf):
    """An argparse type: a finite number > 0 (and <= maximum), ``what`` it is in the error."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0 or value > maximum:
            bound = f", at most {maximum:g}" if math.isfinite(maximum) else ""
            raise argparse.ArgumentTypeError(f"expected {what}: a number > 0{bound}, got "
                                             f"{text!r}")
        return value
    parse.__name__ = what   # argparse's fallback message names the type
    return parse


def _namespace(text):
    """An argparse type: a ROS namespace (leading/trailing '/' dropped), e.g. robot1/test."""
    name = text.strip("/")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*", name):
        raise argparse.ArgumentTypeError(f"expected a ROS namespace (letters, digits, _ and "
                                         f"/, not starting with a digit), got {text!r}")
    return name


_namespace.__name__ = "namespace"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kin_dyn_ros.demo", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=_positive("a duration in seconds"), default=10.0,
                        metavar="SECONDS",
                        help="how long the robot moves once the node is ready (default: 10)")
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="URDF file of the robot (default: iCubGazeboV2_5 from "
                             "icub-models)")
    parser.add_argument("--feet", nargs=2, metavar=("LEFT", "RIGHT"), default=None,
                        help="the left and right foot links (default: guessed from the link "
                             "names, see below)")
    parser.add_argument("--output", metavar="DIR", default="demo_output",
                        help="folder of the recording, plots and summary "
                             "(default: demo_output)")
    parser.add_argument("--no-plots", action="store_true",
                        help="skip the PNG plots (faster; the MCAP and summary are written)")
    parser.add_argument("--rate", type=_positive("a rate in Hz", MAX_RATE), default=500.0,
                        metavar="HZ",
                        help="rate of joint states, odometry and wrenches [Hz] (default: 500)")
    parser.add_argument("--docs-image", metavar="PNG", default=None,
                        help="also copy the CoM plot to this file (the README uses "
                             "docs/demo_com.png)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--namespace", metavar="NS", type=_namespace, default=None,
                        help="ROS namespace of the node and of the demo's topics (/NS/odom, "
                             "...; /tf and /diagnostics stay absolute); the recording keeps "
                             "the names without it (default: none)")
    args = parser.parse_args(argv)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        parser.error(f"--output {args.output}: is a file, not a folder")
    args.error = parser.error
    return args


def _report(summary):
    lat = summary.latency_ms
    if summary.feet:
        what = f"on its feet {' and '.join(summary.feet)} ({summary.feet_source})"
    else:
        what = "held by its root (fixed base)"
    dropped = (f"; {summary.ticks_dropped} dropped: the timer fell behind"
               if summary.ticks_dropped else "")
    lines = [
        "",
        f"kin_dyn_ros demo: {summary.model} {what}, {summary.duration_s:g} s at "
        f"{summary.rate_hz:g} Hz",
        f"  joint states sent {summary.ticks_published} ({summary.ticks_per_second:.0f}/s"
        f"{dropped}); node outputs received {summary.ticks_answered} "
        f"({summary.answers_per_second:.0f}/s)",
    ]
    if summary.com_height_m:
        above = "above the soles" if summary.feet else "in the world frame"
        lines.append(f"  CoM height        {summary.com_height_m['min']:.3f} to "
                     f"{summary.com_height_m['max']:.3f} m {above} (node ~/com)")
    lines += [
        f"  node latency      p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, "
        f"p99 {lat['p99']:.2f} ms, max {lat['max']:.2f} ms (CPU: node "
        f"{summary.cpu_percent['node']:.0f} %, demo {summary.cpu_percent['demo']:.0f} %, "
        f"{os.cpu_count()} cores)",
        f"  forward dynamics  max |node - motion| = {summary.fd_error_max:.2e} over the "
        f"{summary.ticks_in_sync} ticks computed from their own inputs "
        f"(all ticks: {summary.fd_error_all_ticks_max:.2e})",
    ]
    undefined = summary.fd_undefined_joints
    if undefined:
        from .analysis import NO_INERTIA   # noqa: PLC0415 (--help works without NumPy)
        lines[-1] += ", base and the joints that have it"
        count = f"{len(undefined)} joint{'s' if len(undefined) > 1 else ''}"
        lines.append(f"                    none for {count}, NaN from the node ({NO_INERTIA}): "
                     f"{', '.join(undefined)}")
    lines.append("  files:")
    lines += [f"    {name:17s} {path}" for name, path in summary.files.items()]
    lines += [f"  warning: {w}" for w in summary.warnings]
    print("\n".join(lines), flush=True)


def main(argv=None):
    args = parse_args(argv)
    from .feet import FeetError   # noqa: PLC0415
    from .robot import ModelError   # noqa: PLC0415
    from .runner import Options, UsageError, prepare_robot, run   # noqa: PLC0415 (--help
    # works without ROS)
    options = Options(duration=args.duration, model=args.model, output=args.output,
                      plots=not args.no_plots, rate=args.rate, progress=not args.quiet,
                      docs_image=args.docs_image,
                      feet=tuple(args.feet) if args.feet else None,
                      namespace=args.namespace)
    try:
        robot = prepare_robot(options)
        try:
            Path(args.output).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            args.error(f"--output {args.output}: cannot create the folder "
                       f"({exc.strerror or exc})")
        summary = run(options, robot)
    except (ModelError, FeetError, UsageError) as exc:
        args.error(str(exc))     # usage error: one line, exit code 2
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
