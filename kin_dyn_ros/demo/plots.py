"""PNG figures of a demo run (matplotlib, Agg backend; no ROS).

Every function takes a :class:`Series` (arrays of one run, see its docstring) and a path,
writes one PNG and returns the path:

- :func:`plot_com`: CoM ground track over the feet (top view, with the sole outlines, the
  support polygon and each foot's centre of pressure; coloured by the time within the
  motion's period, which repeats), CoM height and CoM velocity.
- :func:`plot_momentum`: linear and angular centroidal momentum (about the CoM, world axes).
- :func:`plot_gravity_torques`: per limb (left/right leg, left/right arm, torso & head), the
  joint part of g(q) (what would hold the posture with the base fixed in space), the
  equilibrium torques (what holds the robot still on its feet, with contact forces) and
  their difference.
- :func:`plot_forward_dynamics`: the node's forward-dynamics joint accelerations against
  the motion's, and the error.
- :func:`plot_latency`: histogram of the node latency with its percentiles.
- :func:`plot_balance`: top view of the CoM ground projection, the ZMP and the capture
  point (node ~/com, ~/zmp, ~/capture_point) and each foot's CoP (~/cop) over the feet and
  the node's ~/support_polygon; their x and y over time; and their margins to the support
  polygon over time (per tick, and the node's ~/stability_margin). Ticks that the node
  computed with another tick's odometry or wrench are marked (grey crosses).

:func:`plot_all` writes them all into a folder.
"""

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from ..dynamics.contacts import convex_hull  # noqa: E402
from .feet import side_of  # noqa: E402

__all__ = ["Series", "plot_all", "plot_com", "plot_momentum", "plot_gravity_torques",
           "plot_forward_dynamics", "plot_latency", "plot_balance", "joint_groups", "joint_label"]

DPI = 120
AXES = "xyz"
COLORS = ("tab:red", "tab:green", "tab:blue")


@dataclass
class Series:
    """The arrays of one run, one row per tick that the node answered (k ticks, n joints).

    - ``t`` (k,): motion time [s]; ``joint_names`` (n,).
    - ``com`` (k, 3), ``momentum`` (k, 6) [m v_com; angular about the CoM], world axes,
      ``gravity_torques`` (k, n): the node's outputs. ``mass`` [kg].
    - ``motion_com`` (k, 3): the CoM of the motion (computed by the demo itself).
    - ``fd_joint_acc`` and ``motion_joint_acc`` (k, n), ``fd_base_acc`` and
      ``motion_base_acc`` (k, 6): forward dynamics of the node and the motion's own
      accelerations (NaN where the node published no forward dynamics, and for the joints
      with no inertia moving with them, which the node publishes as NaN:
      :meth:`fd_undefined`).
    - ``feet``: {frame: (m, 2) outline polygon in the world xy plane [m]};
      ``cop``: {frame: (k, 2) centre of pressure in the world xy plane [m]}.
    - ``latency_ms`` (j,): publish-to-output latencies [ms].
    - ``in_sync`` (k,) bool: the node used the tick's own odometry and wrenches (see
      :mod:`.analysis`); forward dynamics can match the motion only on those ticks.
    - ``title``: model name shown in the figures.
    - ``eq_t`` (j,), ``equilibrium_torques`` and ``eq_gravity_torques`` (j, n): the node's
      ~/equilibrium_torques (published at its equilibrium_rate, not every tick) and its
      ~/gravity_torques of the same ticks; ``equilibrium_report``: what the node's
      /diagnostics said of them last (due, published, why not).
    - ``period``: of the motion [s] (None: not periodic).
    - balance (issue 18), all optional: ``zmp`` and ``capture_point`` (k, 3) the node's
      ~/zmp and ~/capture_point (NaN where not published); ``node_cop``: {contact: (k, 3)}
      its ~/cop (NaN where undefined); ``motion_zmp`` (k, 2) the motion's own ZMP;
      ``support_t`` (p,) and ``support_polygons`` [(m, 2)] its ~/support_polygon (world
      xy); ``margin_t`` (j,), ``stability_margins`` (j, 3) its ~/stability_margin
      [margin (CoM), zmp_margin, capture_point_margin] [m] and ``margin_in_sync`` (j,);
      ``tick_margins`` (k, 3) the same three margins per tick, against the latest
      ~/support_polygon (:func:`.analysis.polygon_margins`).
    """

    t: np.ndarray
    joint_names: list
    com: np.ndarray
    momentum: np.ndarray
    gravity_torques: np.ndarray
    mass: float
    motion_com: np.ndarray
    fd_joint_acc: np.ndarray
    motion_joint_acc: np.ndarray
    fd_base_acc: np.ndarray
    motion_base_acc: np.ndarray
    feet: dict = field(default_factory=dict)
    cop: dict = field(default_factory=dict)
    latency_ms: np.ndarray = field(default_factory=lambda: np.zeros(0))
    in_sync: np.ndarray = None
    title: str = ""
    eq_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    equilibrium_torques: np.ndarray = None
    eq_gravity_torques: np.ndarray = None
    equilibrium_report: str = ""
    period: float = None
    zmp: np.ndarray = None
    capture_point: np.ndarray = None
    node_cop: dict = field(default_factory=dict)
    motion_zmp: np.ndarray = None
    support_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    support_polygons: list = field(default_factory=list)
    margin_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stability_margins: np.ndarray = None
    margin_in_sync: np.ndarray = None
    tick_margins: np.ndarray = None

    def __post_init__(self):
        if self.in_sync is None:
            self.in_sync = np.ones(len(self.t), dtype=bool)
        k = len(self.t)
        for name, width in (("zmp", 3), ("capture_point", 3), ("motion_zmp", 2),
                            ("tick_margins", 3)):
            if getattr(self, name) is None:
                setattr(self, name, np.full((k, width), np.nan))
        if self.stability_margins is None:
            self.stability_margins = np.zeros((len(self.margin_t), 3))
        if self.margin_in_sync is None:
            self.margin_in_sync = np.ones(len(self.margin_t), dtype=bool)
        n = len(self.joint_names)
        if self.equilibrium_torques is None:
            self.equilibrium_torques = np.zeros((len(self.eq_t), n))
        if self.eq_gravity_torques is None:
            self.eq_gravity_torques = np.zeros((len(self.eq_t), n))

    def fd_undefined(self):
        """(n,) bool: the joints without forward dynamics, NaN in the node's
        ~/forward_dynamics of a tick that has it (its base acceleration): no inertia moves
        with them (a massless subtree, e.g. finger links without inertia)."""
        answered = np.isfinite(self.fd_base_acc).all(axis=1)
        return np.isnan(self.fd_joint_acc[answered]).any(axis=0)

    def fd_error(self):
        """(k,) max |FD - motion| per tick over the base and the joints that have forward
        dynamics (:meth:`fd_undefined` left out), NaN without FD; see ``in_sync`` for the
        ticks where they can agree."""
        defined = ~self.fd_undefined()
        err = np.abs(np.concatenate([self.fd_joint_acc[:, defined]
                                     - self.motion_joint_acc[:, defined],
                                     self.fd_base_acc - self.motion_base_acc], axis=1))
        out = np.full(len(self.t), np.nan)
        ok = np.isfinite(err).all(axis=1)
        out[ok] = err[ok].max(axis=1)
        return out


LIMB_WORDS = (("leg", ("hip", "knee", "ankle", "leg", "foot", "toe")),
              ("arm", ("shoulder", "elbow", "wrist", "arm", "hand", "gripper", "finger",
                       "thumb")),
              ("torso & head", ("torso", "neck", "head", "waist", "chest", "spine", "trunk")))
GROUP_ORDER = ("left leg", "right leg", "legs", "left arm", "right arm", "arms",
               "torso & head", "other")


def joint_groups(names):
    """{group: [joint indices]} per limb, by joint name: 'left leg', 'right leg', 'left arm',
    'right arm' (side by the words l/left, r/right of the name, as the feet), 'legs' and
    'arms' (no side), 'torso & head', 'other'; one group 'joints' when no name matches."""
    groups = {}
    for i, name in enumerate(names):
        low = name.lower()
        for limb, keys in LIMB_WORDS:
            if any(k in low for k in keys):
                side = side_of(name) if limb != "torso & head" else None
                group = f"{side} {limb}" if side else (limb if limb == "torso & head"
                                                       else limb + "s")
                break
        else:
            group = "other"
        groups.setdefault(group, []).append(i)
    if set(groups) == {"other"}:
        return {"joints": groups["other"]}
    return {g: groups[g] for g in GROUP_ORDER if g in groups}


def joint_label(name):
    """A joint's name for a legend: without a trailing '_joint'."""
    return name[:-6] if name.endswith("_joint") and len(name) > 6 else name


def _finish(fig, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _suptitle(fig, text, series):
    fig.suptitle(f"{text} — {series.title}" if series.title else text, fontsize=13)


def plot_com(series, path):
    """Top view of the CoM over the feet, CoM height and velocity."""
    fig = plt.figure(figsize=(12, 6), layout="constrained")
    grid = fig.add_gridspec(2, 2, width_ratios=(1.15, 1))
    top = fig.add_subplot(grid[:, 0])
    outline = [np.asarray(p) for p in series.feet.values()]
    if outline:
        hull = convex_hull(np.vstack(outline))
        top.fill(*np.vstack([hull, hull[:1]]).T, color="0.93", zorder=0,
                 label="support polygon")
        top.plot(*np.vstack([hull, hull[:1]]).T, "--", color="0.6", lw=1, zorder=1)
    for (name, poly), color in zip(series.feet.items(), ("0.45", "0.3")):
        poly = np.vstack([poly, poly[:1]])
        top.fill(*poly.T, color="0.82", zorder=1)
        top.plot(*poly.T, color=color, lw=1.5, zorder=2)
        top.annotate(name, poly[:-1].mean(axis=0), ha="center", va="center", fontsize=9,
                     color="0.35", xytext=(0, -38), textcoords="offset points")
    for (name, cop), color in zip(series.cop.items(), ("tab:purple", "tab:olive")):
        top.plot(cop[:, 0], cop[:, 1], color=color, lw=1.2, alpha=0.8,
                 label=f"centre of pressure {name}", zorder=3)
    xy = series.com[:, :2]
    if len(xy) > 1:
        segments = np.stack([xy[:-1], xy[1:]], axis=1)
        period = series.period
        cyclic = period is not None and series.t[-1] - series.t[0] > period
        lines = LineCollection(segments, cmap="viridis", lw=2.5, zorder=4)
        if cyclic:   # the track repeats: colour by the time within the period
            lines.set_array(np.mod(series.t[:-1], period))
            lines.set_clim(0.0, period)
            label = f"time within the {period:g} s period [s] (the track repeats)"
        else:
            lines.set_array(series.t[:-1])
            label = "time [s]"
        top.add_collection(lines)
        fig.colorbar(lines, ax=top, label=label, shrink=0.7, pad=0.01)
        top.plot(*xy[0], "o", color="k", ms=5, zorder=5, label="CoM at start")
        _time_marks(top, series.t, xy, period if cyclic else None)
    top.plot([], [], color=plt.get_cmap("viridis")(0.6), lw=2.5,
             label="CoM ground track (node ~/com)")
    top.set_aspect("equal", adjustable="datalim")
    top.autoscale_view()
    top.margins(0.15)
    top.set_xlabel("x [m] (forward)")
    top.set_ylabel("y [m] (left)")
    top.set_title("Top view")
    top.legend(loc="upper left", fontsize=8, framealpha=0.9)
    top.grid(alpha=0.3)

    height = fig.add_subplot(grid[0, 1])
    height.plot(series.t, series.com[:, 2], color="tab:blue", lw=2, label="node ~/com")
    height.plot(series.t, series.motion_com[:, 2], "--", color="k", lw=1, label="motion")
    height.set_ylabel("CoM height [m]")
    height.legend(fontsize=8)
    height.grid(alpha=0.3)
    velocity = fig.add_subplot(grid[1, 1], sharex=height)
    v = series.momentum[:, :3] / series.mass
    for i in range(3):
        velocity.plot(series.t, v[:, i], color=COLORS[i], lw=1.5, label=f"v{AXES[i]}")
    velocity.set_ylabel("CoM velocity [m/s]")
    velocity.set_xlabel("time [s]")
    velocity.legend(fontsize=8, ncol=3)
    velocity.grid(alpha=0.3)
    _suptitle(fig, "Centre of mass", series)
    return _finish(fig, path)


def _time_marks(ax, t, xy, period):
    """Small labelled dots on the track at whole seconds (of the period when cyclic), so the
    direction and speed along it read without the colour bar."""
    span = period if period is not None else t[-1] - t[0]
    step = 1.0 if span <= 8 else float(np.ceil(span / 8))
    phase = np.mod(t, period) if period is not None else t
    marks = []   # [(position, [times])]: marks closer than 3 mm share a label
    for mark in np.arange(0.0, span - 1e-9, step):
        if period is None and mark < t[0]:
            continue
        i = int(np.argmin(np.abs(phase - mark)))
        if abs(phase[i] - mark) > 0.05:
            continue
        for position, times in marks:
            if np.linalg.norm(position - xy[i]) < 0.003:
                times.append(mark)
                break
        else:
            marks.append((xy[i], [mark]))
    for position, times in marks:
        ax.plot(*position, "o", ms=3.5, color="white", mec="k", mew=0.8, zorder=6)
        ax.annotate(", ".join(f"{m:g}" for m in times) + " s", position, xytext=(5, 4),
                    textcoords="offset points", fontsize=7.5, color="0.15", zorder=6)


def plot_momentum(series, path):
    """Linear (m v_com) and angular (about the CoM) centroidal momentum, world axes."""
    fig, axes = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True, layout="constrained")
    rows = (("linear momentum m·v_CoM", "kg m/s"),
            ("angular momentum about the CoM", "kg m²/s"))
    for row, (label, unit) in enumerate(rows):
        for i in range(3):
            axes[row].plot(series.t, series.momentum[:, 3 * row + i], color=COLORS[i],
                           lw=1.5, label=f"{AXES[i]} (world)")
        axes[row].set_ylabel(f"[{unit}]")
        axes[row].set_title(label, fontsize=10, loc="left")
        axes[row].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))
        axes[row].grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    _suptitle(fig, "Centroidal momentum: about the CoM, world axes "
                   "(node ~/centroidal_momentum)", series)
    return _finish(fig, path)


def _with_gaps(t, values, factor=5.0, minimum=0.25):
    """(t, values) with a NaN row wherever samples are more than ``factor`` times their
    median spacing and ``minimum`` [s] apart, so that lines break there instead of
    bridging the gap."""
    if len(t) < 3:
        return t, values
    dt = np.diff(t)
    gaps = np.flatnonzero(dt > max(factor * np.median(dt), minimum))
    t = np.insert(np.asarray(t, dtype=float), gaps + 1, np.nan)
    values = np.insert(np.asarray(values, dtype=float), gaps + 1, np.nan, axis=0)
    return t, values


GRAVITY_TITLES = (
    "g(q), joint part (~/gravity_torques):\nholds this posture if the base were fixed in space",
    "equilibrium torques (~/equilibrium_torques):\nhold the robot still on its feet, "
    "with contact forces",
    "equilibrium − g(q):\nwhat the contact forces take over (−J_cᵀ f, joint rows)")


def plot_gravity_torques(series, path):
    """Per limb (rows): g(q)'s joint part, the equilibrium torques and their difference."""
    groups = joint_groups(series.joint_names)
    has_eq = len(series.eq_t) > 0 and np.isfinite(series.equilibrium_torques).any()
    cols = 3 if has_eq else 1
    fig, axes = plt.subplots(len(groups), cols, figsize=(6 + 4.6 * cols, 1.0 + 2.5 * len(groups)),
                             sharex=True, sharey="row", layout="constrained", squeeze=False)
    panels = [(series.t, series.gravity_torques)]
    if has_eq:
        panels += [_with_gaps(series.eq_t, series.equilibrium_torques),
                   _with_gaps(series.eq_t,
                              series.equilibrium_torques - series.eq_gravity_torques)]
    for row, (group, idx) in enumerate(groups.items()):
        cmap = plt.get_cmap("tab10" if len(idx) <= 10 else "tab20")
        for col, (t, values) in enumerate(panels):
            ax = axes[row, col]
            for c, i in enumerate(idx):
                ax.plot(t, values[:, i], color=cmap(c % cmap.N), lw=1.4,
                        label=joint_label(series.joint_names[i]))
            ax.axhline(0.0, color="0.5", lw=0.6, zorder=0)
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(GRAVITY_TITLES[col], fontsize=9.5)
        axes[row, 0].set_ylabel(f"{group} [N m]")
        axes[row, -1].legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                             ncol=1 + len(idx) // 9, title=group, title_fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    note = torques_note(series, has_eq)
    _suptitle(fig, "Joint torques against gravity", series)
    fig.text(0.5, 0.0, note, ha="center", va="bottom", fontsize=9, color="0.25")
    fig.get_layout_engine().set(rect=(0, 0.025, 1, 0.975))
    return _finish(fig, path)


def torques_note(series, has_eq):
    """The note under the torques figure: why the equilibrium torques matter, or, without
    them, why there are none (the node's own /diagnostics, ``series.equilibrium_report``)."""
    if has_eq:
        return ("On a floating base the weight goes through the feet: g(q)'s joint part is "
                "not what a standing robot's joints carry; the equilibrium torques are.")
    return ("No ~/equilibrium_torques received; the node's /diagnostics: "
            f"{series.equilibrium_report or 'none received'}.")


def _busiest_joints(series, count=4):
    """The ``count`` joints whose accelerations vary most, one of each set of joints that
    move alike (a squat moves hip and ankle pitch the same), among those with forward
    dynamics (:meth:`Series.fd_undefined`)."""
    acc = series.motion_joint_acc
    spread = np.nanstd(acc, axis=0)
    undefined = series.fd_undefined()
    chosen = []
    for i in np.argsort(-spread):
        if len(chosen) == count:
            break
        if undefined[i]:
            continue
        if all(np.nanmax(np.abs(acc[:, i] - acc[:, j])) > 1e-6 * max(spread[j], 1e-12)
               for j in chosen):
            chosen.append(int(i))
    return chosen


def plot_forward_dynamics(series, path):
    """The node's forward dynamics against the motion's accelerations, and the error."""
    fig, axes = plt.subplots(2, 1, figsize=(13, 7), sharex=True, layout="constrained",
                             gridspec_kw={"height_ratios": (1.6, 1)})
    cmap = plt.get_cmap("tab10")
    sync = np.asarray(series.in_sync, dtype=bool)
    shown = np.flatnonzero(sync)[::max(1, int(sync.sum()) // 150)]
    for c, i in enumerate(_busiest_joints(series)):
        name = series.joint_names[i]
        axes[0].plot(series.t, series.motion_joint_acc[:, i], color=cmap(c), lw=1.5,
                     label=f"{joint_label(name)}: motion")
        axes[0].plot(series.t[shown], series.fd_joint_acc[shown, i], "o", color=cmap(c),
                     ms=3.5, mfc="none", label=f"{joint_label(name)}: node")
    axes[0].set_ylabel("joint acceleration [rad/s²]")
    axes[0].set_title("the 4 joints that accelerate most: line = motion, "
                      "circles = node", fontsize=9.5, loc="left")
    axes[0].legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[0].grid(alpha=0.3)
    floor = 1e-16
    defined = ~series.fd_undefined()
    joints = "joints [rad/s²]" if defined.all() else \
        f"the {defined.sum()} joints with forward dynamics [rad/s²]"
    err = {joints: np.abs(series.fd_joint_acc[:, defined] - series.motion_joint_acc[:, defined]),
           "base [m/s², rad/s²]": np.abs(series.fd_base_acc - series.motion_base_acc)}
    for (label, e), color in zip(err.items(), ("tab:red", "tab:blue")):
        worst = np.full(len(series.t), np.nan)
        ok = np.isfinite(e).all(axis=1)
        worst[ok] = np.maximum(e[ok].max(axis=1), floor)
        axes[1].semilogy(series.t[sync], worst[sync], ".", color=color, ms=3,
                         label=f"max over {label}")
        if (~sync).any():
            axes[1].semilogy(series.t[~sync], worst[~sync], "x", color=color, ms=4, alpha=0.35)
    if (~sync).any():
        axes[1].plot([], [], "x", color="0.4",
                     label=f"{(~sync).sum()} ticks computed with\nanother tick's odometry "
                           "or wrench")
    axes[1].set_ylabel("|node FD − motion|")
    axes[1].set_xlabel("time [s]")
    axes[1].legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[1].grid(alpha=0.3, which="both")
    _suptitle(fig, "Forward dynamics from measured torques and contact wrenches", series)
    if not defined.all():
        fig.text(0.5, 0.0, f"{(~defined).sum()} joints have no forward dynamics (NaN from "
                 f"the node): no inertia moves with them (massless subtree).", ha="center",
                 va="bottom", fontsize=9, color="0.25")
        fig.get_layout_engine().set(rect=(0, 0.025, 1, 0.975))
    return _finish(fig, path)


def plot_latency(series, path):
    """Histogram of the publish-to-output latency with p50 / p95 / p99."""
    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    lat = np.asarray(series.latency_ms, dtype=float)
    if len(lat):
        ax.hist(lat, bins=60, color="tab:blue", alpha=0.8)
        for q, style in ((50, "-"), (95, "--"), (99, ":")):
            value = np.percentile(lat, q)
            ax.axvline(value, color="k", ls=style, lw=1, label=f"p{q} = {value:.2f} ms")
        ax.legend()
    ax.set_xlabel("latency: JointState published -> matching output received [ms]")
    ax.set_ylabel("ticks")
    ax.grid(alpha=0.3)
    _suptitle(fig, "Node latency", series)
    return _finish(fig, path)


BALANCE_POINTS = (   # (Series field, label, colour, marker of the node's ~/stability_margin)
    ("com", "CoM ground projection (~/com)", "tab:blue", "o"),
    ("zmp", "ZMP (~/zmp)", "tab:orange", "s"),
    ("capture_point", "capture point (~/capture_point)", "tab:green", "^"))
STALE = "0.45"   # colour of the ticks computed with another tick's inputs


def _same_polygons(polygons, tol=1e-4):
    """All ``polygons`` have the same vertices to ``tol`` [m] (any starting vertex)."""
    def key(p):
        return p[np.lexsort(np.round(p / tol).T[::-1])]
    first = key(polygons[0])
    return all(p.shape == first.shape and np.allclose(key(p), first, atol=tol, rtol=0.0)
               for p in polygons[1:])


def _instants(count, wanted=3):
    """Indices of up to ``wanted`` instants spread over ``count`` (first, middle, last)."""
    return sorted({0, count // 2, count - 1})[:wanted] if count else []


def _balance_top(ax, series, sync):
    """Top view: feet, support polygon(s), CoPs, CoM projection, ZMP, capture point."""
    for name, poly in series.feet.items():
        poly = np.vstack([poly, poly[:1]])
        ax.fill(*poly.T, color="0.88", zorder=0)
        ax.plot(*poly.T, color="0.55", lw=1.0, zorder=1)
        ax.annotate(name, poly[:-1].mean(axis=0), ha="center", va="center", fontsize=9,
                    color="0.35", xytext=(0, -42), textcoords="offset points")
    if series.feet:
        ax.fill([], [], color="0.88", ec="0.55", label="feet (sole outlines, model)")
    polygons = [p for p in series.support_polygons if len(p)]
    times = [t for t, p in zip(series.support_t, series.support_polygons) if len(p)]
    if polygons and _same_polygons(polygons):
        poly = np.vstack([polygons[0], polygons[0][:1]])
        ax.plot(*poly.T, "--", color="k", lw=1.3, zorder=2,
                label=f"support polygon (~/support_polygon: {len(polygons)} "
                      f"message{'s' if len(polygons) > 1 else ''}, alike to 0.1 mm)")
    elif polygons:
        for i, style in zip(_instants(len(polygons)), ("--", ":", "-.")):
            poly = np.vstack([polygons[i], polygons[i][:1]])
            ax.plot(*poly.T, style, color="k", lw=1.2, zorder=2,
                    label=f"support polygon at {times[i]:.2f} s (~/support_polygon)")
    elif series.feet:
        hull = convex_hull(np.vstack(list(series.feet.values())))
        hull = np.vstack([hull, hull[:1]])
        ax.plot(*hull.T, "--", color="0.3", lw=1.0, zorder=2,
                label="hull of the feet (no ~/support_polygon received)")
    for (name, cop), color in zip(series.node_cop.items(), ("tab:purple", "tab:olive")):
        if np.isfinite(cop).any():
            ax.plot(cop[:, 0], cop[:, 1], color=color, lw=0.9, alpha=0.6, zorder=3,
                    label=f"CoP {name} (~/cop)")
    for key, label, color, _ in BALANCE_POINTS:
        xy = getattr(series, key)[:, :2]
        if not np.isfinite(xy).any():
            ax.plot([], [], color=color, label=f"{label}: none received")
            continue
        if (~sync).any():
            ax.plot(*xy[~sync].T, "x", color=STALE, ms=3, mew=0.6, alpha=0.4, zorder=3)
        ax.plot(*xy[sync].T, color=color, lw=1.8, zorder=4, label=label)
        first = np.flatnonzero(np.isfinite(xy).all(axis=1))[0]
        ax.plot(*xy[first], "o", color=color, mec="k", ms=5, zorder=5)
    if (~sync).any():
        ax.plot([], [], "x", color=STALE, label=f"{(~sync).sum()} ticks computed with "
                                               "another tick's\nodometry or wrench")
    ax.plot([], [], "o", color="w", mec="k", ms=5, label="at the first tick")
    ax.set_aspect("equal", adjustable="datalim")
    ax.autoscale_view()
    ax.margins(0.12)
    ax.set_xlabel("x [m] (forward, world frame)")
    ax.set_ylabel("y [m] (left, world frame)")
    ax.set_title("Top view (world frame)")
    ax.grid(alpha=0.3)


def _no_data(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9,
            color="0.3")


def plot_balance(series, path):
    """Balance outputs: top view, x and y over time, margins to the support polygon."""
    fig = plt.figure(figsize=(16, 9), layout="constrained")
    grid = fig.add_gridspec(3, 2, width_ratios=(1.0, 1.2), height_ratios=(1, 1, 1.4))
    sync = np.asarray(series.in_sync, dtype=bool)
    top = fig.add_subplot(grid[:2, 0])
    _balance_top(top, series, sync)
    legend = fig.add_subplot(grid[2, 0])      # the top view's legend, below it
    legend.axis("off")
    legend.legend(*top.get_legend_handles_labels(), loc="upper center", fontsize=8, ncol=1,
                  framealpha=0.9)

    axes = [fig.add_subplot(grid[0, 1])]
    axes += [fig.add_subplot(grid[r, 1], sharex=axes[0]) for r in (1, 2)]
    for a, (ax, word) in enumerate(zip(axes[:2], ("x (forward)", "y (left)"))):
        for key, label, color, _ in BALANCE_POINTS:
            values = getattr(series, key)[:, a]
            ax.plot(series.t[sync], values[sync], color=color, lw=1.4,
                    label=label.split(" (")[0])
        motion = series.motion_zmp[:, a]
        if np.isfinite(motion).any():
            ax.plot(series.t, motion, ":", color="k", lw=1.1, label="ZMP of the motion")
        ax.set_ylabel(f"{word} [m]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[0].set_title("world position over time (node outputs of the ticks computed from "
                      "their own inputs)", fontsize=9.5, loc="left")

    ax = axes[2]
    tick = np.where(np.isfinite(series.tick_margins), series.tick_margins, np.nan) * 1e3
    node = np.where(np.isfinite(series.stability_margins), series.stability_margins,
                    np.nan) * 1e3
    msync = np.asarray(series.margin_in_sync, dtype=bool)
    shown = False
    for j, (key, label, color, marker) in enumerate(BALANCE_POINTS):
        name = label.split(" (")[0]
        if np.isfinite(tick[:, j]).any():
            if (~sync).any():
                ax.plot(series.t[~sync], tick[~sync, j], "x", color=STALE, ms=3, mew=0.6,
                        alpha=0.4, zorder=1)
            ax.plot(series.t[sync], tick[sync, j], color=color, lw=1.3, zorder=2,
                    label=f"{name}: per tick")
            shown = True
        if np.isfinite(node[:, j]).any():
            ax.plot(series.margin_t[msync], node[msync, j], marker, color=color, ms=5,
                    mfc="none", mew=1.1, label=f"{name}: ~/stability_margin")
            if (~msync).any():
                ax.plot(series.margin_t[~msync], node[~msync, j], marker, color=STALE, ms=5,
                        mfc="none")
            shown = True
    if (~sync).any() or (~msync).any():
        ax.plot([], [], "x", color=STALE, label="ticks with another\ntick's odometry or wrench")
    if shown:
        ax.axhline(0.0, color="k", lw=0.8, zorder=0)
        ax.annotate("polygon edge (below: outside)", (0.0, 0.0), xycoords=("axes fraction",
                    "data"), xytext=(3, 3), textcoords="offset points", fontsize=7.5,
                    color="0.3")
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        _no_data(ax, "no ~/support_polygon or ~/stability_margin received "
                     "(no loaded contact, or equilibrium_rate 0)")
    ax.set_ylabel("margin [mm] (> 0: inside)")
    ax.set_xlabel("time [s]")
    ax.set_title(f"signed distance to the support polygon's edge: per tick (lines: against "
                 f"the latest ~/support_polygon)\nand the node's ~/stability_margin "
                 f"(markers: {len(series.margin_t)} messages, at its equilibrium_rate)",
                 fontsize=9, loc="left")
    ax.grid(alpha=0.3)
    for a in axes[:2]:
        if not any(np.isfinite(getattr(series, k)).any() for k, *_ in BALANCE_POINTS):
            _no_data(a, "no ~/com, ~/zmp or ~/capture_point received")
        a.tick_params(labelbottom=False)
    _suptitle(fig, "Balance: CoM, ZMP and capture point against the support polygon", series)
    return _finish(fig, path)


def plot_all(series, folder):
    """Write every figure into ``folder``; returns {name: path}."""
    folder = Path(folder)
    return {name: fn(series, folder / f"{name}.png") for name, fn in (
        ("com", plot_com), ("momentum", plot_momentum),
        ("gravity_torques", plot_gravity_torques),
        ("forward_dynamics", plot_forward_dynamics), ("latency", plot_latency),
        ("balance", plot_balance))}
