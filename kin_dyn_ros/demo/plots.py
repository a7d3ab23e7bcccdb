"""PNG figures of a demo run (matplotlib, Agg backend; no ROS).

Every function takes a :class:`Series` (arrays of one run, see its docstring) and a path,
writes one PNG and returns the path:

- :func:`plot_com`: CoM ground track over the feet (top view, with the sole outlines, the
  support polygon and each foot's centre of pressure), CoM height and CoM velocity.
- :func:`plot_momentum`: linear and angular centroidal momentum.
- :func:`plot_gravity_torques`: gravity torques, legs and arms (and torso/head).
- :func:`plot_forward_dynamics`: the node's forward-dynamics joint accelerations against
  the motion's, and the error.
- :func:`plot_latency`: histogram of the node latency with its percentiles.

:func:`plot_all` writes them all into a folder.
"""

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from .motion import convex_hull  # noqa: E402

__all__ = ["Series", "plot_all", "plot_com", "plot_momentum", "plot_gravity_torques",
           "plot_forward_dynamics", "plot_latency", "joint_groups"]

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
      accelerations (NaN where the node published no forward dynamics).
    - ``feet``: {frame: (m, 2) outline polygon in the world xy plane [m]};
      ``cop``: {frame: (k, 2) centre of pressure in the world xy plane [m]}.
    - ``latency_ms`` (j,): publish-to-output latencies [ms].
    - ``in_sync`` (k,) bool: the node used the tick's own odometry and wrenches (see
      :mod:`.analysis`); forward dynamics can match the motion only on those ticks.
    - ``title``: model name shown in the figures.
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

    def __post_init__(self):
        if self.in_sync is None:
            self.in_sync = np.ones(len(self.t), dtype=bool)

    def fd_error(self):
        """(k,) max |FD - motion| over joints and base per tick (NaN without FD); see
        ``in_sync`` for the ticks where they can agree."""
        err = np.abs(np.concatenate([self.fd_joint_acc - self.motion_joint_acc,
                                     self.fd_base_acc - self.motion_base_acc], axis=1))
        out = np.full(len(self.t), np.nan)
        ok = np.isfinite(err).all(axis=1)
        out[ok] = err[ok].max(axis=1)
        return out


def joint_groups(names):
    """{group: [joint indices]}: legs, arms, torso & head (by the usual joint names), or
    one group 'joints' when no name matches."""
    rules = (("legs", ("hip", "knee", "ankle", "leg", "foot")),
             ("arms", ("shoulder", "elbow", "wrist", "arm", "hand")),
             ("torso & head", ("torso", "neck", "head", "waist", "chest")))
    groups = {}
    for i, name in enumerate(names):
        for group, keys in rules:
            if any(k in name.lower() for k in keys):
                groups.setdefault(group, []).append(i)
                break
        else:
            groups.setdefault("other", []).append(i)
    if set(groups) == {"other"}:
        return {"joints": groups["other"]}
    return {g: groups[g] for g in ("legs", "arms", "torso & head", "other") if g in groups}


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
        lines = LineCollection(segments, cmap="viridis", lw=2.5, zorder=4)
        lines.set_array(series.t[:-1])
        top.add_collection(lines)
        fig.colorbar(lines, ax=top, label="time [s]", shrink=0.7, pad=0.01)
        top.plot(*xy[0], "o", color="k", ms=5, zorder=5, label="CoM at start")
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


def plot_momentum(series, path):
    """Linear (m v_com) and angular (about the CoM) centroidal momentum, world axes."""
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True, layout="constrained")
    for row, (label, unit) in enumerate((("linear", "kg m/s"), ("angular", "kg m²/s"))):
        for i in range(3):
            axes[row].plot(series.t, series.momentum[:, 3 * row + i], color=COLORS[i],
                           lw=1.5, label=AXES[i])
        axes[row].set_ylabel(f"{label} [{unit}]")
        axes[row].legend(fontsize=8, ncol=3, loc="upper right")
        axes[row].grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    _suptitle(fig, "Centroidal momentum (node ~/centroidal_momentum)", series)
    return _finish(fig, path)


def plot_gravity_torques(series, path):
    """Gravity torques of each joint group, one panel per group."""
    groups = joint_groups(series.joint_names)
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.2 * len(groups)), sharex=True,
                             layout="constrained", squeeze=False)
    for ax, (group, idx) in zip(axes[:, 0], groups.items()):
        cmap = plt.get_cmap("tab20")
        for c, i in enumerate(idx):
            ax.plot(series.t, series.gravity_torques[:, i], color=cmap(c % 20), lw=1.3,
                    label=series.joint_names[i])
        ax.set_ylabel(f"{group} [N m]")
        ax.legend(fontsize=7, ncol=1 + len(idx) // 8, loc="center left",
                  bbox_to_anchor=(1.0, 0.5))
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    _suptitle(fig, "Gravity torques (node ~/gravity_torques)", series)
    return _finish(fig, path)


def _busiest_joints(series, count=4):
    spread = np.nanstd(series.motion_joint_acc, axis=0)
    return list(np.argsort(-spread)[:count])


def plot_forward_dynamics(series, path):
    """The node's forward dynamics against the motion's accelerations, and the error."""
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True, layout="constrained",
                             gridspec_kw={"height_ratios": (1.6, 1)})
    cmap = plt.get_cmap("tab10")
    sync = np.asarray(series.in_sync, dtype=bool)
    shown = np.flatnonzero(sync)[::max(1, int(sync.sum()) // 150)]
    for c, i in enumerate(_busiest_joints(series)):
        name = series.joint_names[i]
        axes[0].plot(series.t, series.motion_joint_acc[:, i], color=cmap(c), lw=1.5,
                     label=f"{name}: motion")
        axes[0].plot(series.t[shown], series.fd_joint_acc[shown, i], "o", color=cmap(c),
                     ms=3.5, mfc="none", label=f"{name}: node forward dynamics")
    axes[0].set_ylabel("joint acceleration [rad/s²]")
    axes[0].legend(fontsize=7, ncol=2, loc="upper right")
    axes[0].grid(alpha=0.3)
    floor = 1e-16
    err = {"joints [rad/s²]": np.abs(series.fd_joint_acc - series.motion_joint_acc),
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
                     label=f"{(~sync).sum()} ticks computed with another tick's odometry or "
                           "wrench")
    axes[1].set_ylabel("|node FD − motion|")
    axes[1].set_xlabel("time [s]")
    axes[1].legend(fontsize=8, loc="upper right", framealpha=0.9)
    axes[1].grid(alpha=0.3, which="both")
    _suptitle(fig, "Forward dynamics from measured torques and contact wrenches", series)
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


def plot_all(series, folder):
    """Write every figure into ``folder``; returns {name: path}."""
    folder = Path(folder)
    return {name: fn(series, folder / f"{name}.png") for name, fn in (
        ("com", plot_com), ("momentum", plot_momentum),
        ("gravity_torques", plot_gravity_torques),
        ("forward_dynamics", plot_forward_dynamics), ("latency", plot_latency))}
