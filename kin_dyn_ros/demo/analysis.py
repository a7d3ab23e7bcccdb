"""Line the node's outputs up with the motion, tick by tick (no rclpy.init() needed).

Every output of the node carries the stamp of the JointState that triggered it, and the
demo knows which motion sample it published with each stamp. :func:`align` builds the
:class:`~kin_dyn_ros.demo.plots.Series` of a run from the decoded messages.

It also checks which inputs the node actually used at each tick, from what the node
publishes: its ~/com is the motion's CoM only with the tick's own odometry (the base
moves), and the contact-force arrows on ~/markers are the wrench forces it used. A tick is
*in sync* when both are those of the tick's own sample (with a fixed base the odometry
never changes, so only the wrenches tell). Forward dynamics can only match the motion on
ticks in sync: a node that combines a JointState with another tick's odometry or wrench
computes the dynamics of a state that never existed (a wrench one tick (2 ms) old already
gives joint-acceleration errors of ~1 rad/s^2 on iCub: the torques balance the new wrench).
The node's ~/forward_dynamics also says how old the inputs it combined were
(``odometry_age``, ``wrench_ages``): a tick whose ages are not all 0 is not in sync either.

Balance outputs (issue 18): the node's ~/zmp, ~/capture_point and ~/cop per tick, its
~/support_polygon and ~/stability_margin (at its equilibrium_rate), and, per tick, the
margins of the CoM, ZMP and capture point to the latest support polygon (computed here, as
the node does, so that the margins read at every tick and not only at equilibrium_rate).
The motion's own ZMP (:func:`motion_zmp`: its contact wrenches summed, on the ground plane
z = 0 where the soles stand) is what the node's ~/zmp must be on the ticks in sync.

Joints with no inertia moving with them (a massless subtree, e.g. finger links without
inertia) have no forward dynamics: the node publishes NaN for them. They are left out of
the comparison (:meth:`.plots.Series.fd_undefined`), and :func:`forward_dynamics_figures`
names them.
"""

import numpy as np

from ..dynamics.contacts import SupportPolygon, convex_hull
from ..dynamics.representations import parse_representation
from .feet import sole_geometry
from .motion import base_acceleration_in, wrench_in_frame
from .plots import Series

__all__ = ["align", "stamp_ns", "centre_of_pressure", "motion_zmp", "polygon_margins",
           "forward_dynamics_figures", "COM_TOLERANCE", "FORCE_TOLERANCE", "NO_INERTIA"]

COM_TOLERANCE = 1e-9      # [m]: the CoM of the same odometry sample
FORCE_TOLERANCE = 1e-6    # [N]: same wrench sample
# why a joint has no forward dynamics (the node's NaN)
NO_INERTIA = "no inertia moves with them: massless subtree"


def stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def _vec(v):
    return [v.x, v.y, v.z]


def _contact_forces(marker_messages, scale):
    """{stamp: {marker id: world force (3,) or None (deleted)}} of ns 'contact_forces'."""
    out = {}
    for msg in marker_messages:
        for m in msg.markers:
            if m.ns != "contact_forces":
                continue
            entry = out.setdefault(stamp_ns(m.header.stamp), {})
            if m.action != 0 or len(m.points) != 2:      # 0 = ADD
                entry[m.id] = None
            else:
                entry[m.id] = (np.array(_vec(m.points[1])) - _vec(m.points[0])) / scale
    return out


def centre_of_pressure(wrench, height=0.0):
    """(k, 2) centre of pressure [m] in a foot frame's xy axes of wrenches (k, 6) [force;
    torque about the frame origin] in that frame, on the sole plane ``height`` below the
    origin (where the moment of the wrench has no x or y part)."""
    w = np.asarray(wrench, dtype=float).reshape(-1, 6)
    return np.stack([-(w[:, 4] + height * w[:, 0]), w[:, 3] - height * w[:, 1]],
                    axis=1) / w[:, 2:3]


def motion_zmp(samples):
    """(k, 2) ZMP [m] of motion samples: the CoP of the sum of their contact wrenches
    (MIXED: at each contact frame's origin, world axes) on the ground plane z = 0 (where the
    motion's soles stand), world xy; NaN where the total normal force is not positive."""
    out = np.full((len(samples), 2), np.nan)
    for i, x in enumerate(samples):
        force, moment = np.zeros(3), np.zeros(3)
        for frame, w in x.wrenches.items():
            p = x.contact_poses[frame][:3, 3]
            force += w[:3]
            moment += w[3:] + np.cross(p, w[:3])     # about the world origin
        if force[2] > 0.0:
            out[i] = [-moment[1] / force[2], moment[0] / force[2]]
    return out


def _polygon(vertices):
    """SupportPolygon of (m, 2) world xy vertices (world z up: ground axes x, y)."""
    v = np.asarray(vertices, dtype=float).reshape(-1, 2)
    return SupportPolygon(convex_hull(v) if len(v) else v, np.eye(3)[:2])


def polygon_margins(t, points, support_t, polygons):
    """(k, len(points)) signed distances [m] (> 0 inside) of world points at times ``t``
    (k,) to the latest support polygon at or before each time (the first one before it):
    ``points`` a list of (k, 2 or 3) arrays (xy used), ``polygons`` (m, 2) xy vertices at
    ``support_t``; NaN where a point is NaN or there is no polygon, -inf for an empty one."""
    out = np.full((len(t), len(points)), np.nan)
    if not len(polygons):
        return out
    shapes = [_polygon(p) for p in polygons]
    index = np.clip(np.searchsorted(support_t, t, side="right") - 1, 0, len(shapes) - 1)
    for i, k in enumerate(index):
        for j, p in enumerate(points):
            xy = np.asarray(p[i][:2], dtype=float)
            if np.isfinite(xy).all():
                out[i, j] = shapes[k].margin(xy)
    return out


def _joint_rows(messages, stamps, names):
    """(k, n) efforts of JointState messages at ``stamps``, columns in ``names`` order."""
    out = np.full((len(stamps), len(names)), np.nan)
    for row, stamp in enumerate(stamps):
        msg = messages[stamp]
        column = {name: i for i, name in enumerate(msg.name)} if msg.name else None
        for j, name in enumerate(names):
            i = j if column is None else column.get(name)
            if i is not None and i < len(msg.effort):
                out[row, j] = msg.effort[i]
    return out


def align(motion, samples, rate, stamp_tick, outputs, marker_messages=(), urdf=None,
          latencies=(), title="", force_scale=None, soles=None):
    """The :class:`Series` of a run.

    Parameters
    ----------
    motion : Motion
    samples : sequence of MotionSample
        The tabulated period; tick k used ``samples[k % len(samples)]``.
    rate : float
        Tick rate [Hz] (tick k is at motion time k / rate).
    stamp_tick : dict
        {stamp [ns]: tick index} of what the demo published.
    outputs : dict
        {'com' | 'momentum' | 'gravity' | 'forward_dynamics' | 'equilibrium' | 'zmp' |
        'capture_point' | 'cop' | 'support_polygon' | 'stability_margin':
        {stamp [ns]: message}} ('equilibrium', 'support_polygon', 'stability_margin': at
        the node's equilibrium_rate, not every tick; any kind may be missing).
    marker_messages : sequence of MarkerArray
        The node's ~/markers, for the check of the wrenches it used.
    urdf : str
        URDF text, for the feet outlines (biped mode) when ``soles`` is not given.
    soles : dict
        {foot: :class:`~.feet.Sole`}: the soles' outlines (biped mode).
    force_scale : float
        Metres of marker arrow per newton (the node's ``markers.FORCE_SCALE``).
    """
    kd = motion.kd
    n = kd.NDoF
    stamps = sorted(s for s in outputs.get("com", {}) if s in stamp_tick)
    ticks = [stamp_tick[s] for s in stamps]
    chosen = [samples[k % len(samples)] for k in ticks]

    def rows(kind, fn, width):
        data = outputs.get(kind, {})
        return np.array([fn(data[s]) if s in data else [np.nan] * width for s in stamps],
                        dtype=float).reshape(len(stamps), width)

    fd = outputs.get("forward_dynamics", {})
    reps = {m.representation for m in fd.values()}
    rep = parse_representation(reps.pop() if len(reps) == 1 else "MIXED")
    motion_base = np.array([base_acceleration_in(rep, x.w_H_b, x.base_velocity,
                                                 x.base_acceleration) for x in chosen])
    com = rows("com", lambda m: _vec(m.point), 3)
    in_sync = _in_sync(motion, chosen, stamps, com, marker_messages, force_scale)
    in_sync &= _fresh_inputs(fd, stamps)
    feet, cop = {}, {}
    if motion.mode == "biped" and (soles is not None or urdf is not None):
        for f in motion.contacts:
            sole = soles[f] if soles is not None else sole_geometry(kd, urdf, f)
            pose = motion.w_H_left if f == motion.left else motion.w_H_right
            feet[f] = sole.outline @ pose[:2, :2].T + pose[:2, 3]
            w = np.array([wrench_in_frame(x.contact_poses[f], x.wrenches[f]) for x in chosen])
            local = (centre_of_pressure(w, motion.sole_heights.get(f, 0.0)) if len(w)
                     else np.zeros((0, 2)))
            cop[f] = local @ pose[:2, :2].T + pose[:2, 3]
    t = np.array(ticks, dtype=float) / rate
    balance = _balance(outputs, stamps, stamp_tick, rate, motion.contacts, t, in_sync)
    balance["tick_margins"] = polygon_margins(
        t, [com, balance["zmp"], balance["capture_point"]], balance["support_t"],
        balance["support_polygons"])
    balance["motion_zmp"] = (motion_zmp(chosen) if motion.mode == "biped"
                             else np.full((len(stamps), 2), np.nan))
    names = list(kd.joints_name_list)
    equilibrium = outputs.get("equilibrium", {})
    gravity = outputs.get("gravity", {})
    eq_stamps = sorted(s for s in equilibrium if s in stamp_tick and s in gravity)
    return Series(
        t=t, joint_names=kd.joints_name_list,
        com=com,
        momentum=rows("momentum", lambda m: _vec(m.twist.linear) + _vec(m.twist.angular), 6),
        gravity_torques=rows("gravity", lambda m: list(m.effort), n),
        mass=kd.get_total_mass(),
        motion_com=np.array([x.com for x in chosen]).reshape(-1, 3),
        fd_joint_acc=rows("forward_dynamics", lambda m: list(m.joint_accelerations), n),
        motion_joint_acc=np.array([x.s_ddot for x in chosen]).reshape(-1, n),
        fd_base_acc=rows("forward_dynamics", lambda m: _vec(m.base_acceleration.linear)
                         + _vec(m.base_acceleration.angular), 6),
        motion_base_acc=motion_base.reshape(-1, 6), feet=feet, cop=cop,
        latency_ms=np.asarray(latencies, dtype=float), in_sync=in_sync, title=title,
        eq_t=np.array([stamp_tick[s] for s in eq_stamps], dtype=float) / rate,
        equilibrium_torques=_joint_rows(equilibrium, eq_stamps, names),
        eq_gravity_torques=_joint_rows(gravity, eq_stamps, names),
        period=motion.period, **balance)


def forward_dynamics_figures(series):
    """(figures, warnings) of the node's forward dynamics against the motion in ``series``
    (:class:`.plots.Series`): ``ticks_in_sync`` (ticks with forward dynamics computed from
    their own inputs), ``fd_error_max`` (max |node - motion| over those ticks, base and the
    joints that have forward dynamics), ``fd_error_joints_max`` (the same, joints only),
    ``fd_error_all_ticks_max`` (over every tick with forward dynamics), NaN where there is
    nothing to compare, and ``fd_undefined_joints`` (the joints without forward dynamics,
    left out: :data:`NO_INERTIA`); a warning when ticks were computed with another tick's
    inputs."""
    err = series.fd_error()
    sync = series.in_sync & np.isfinite(err)
    synced = err[sync]
    undefined = series.fd_undefined()
    joint_err = np.abs(series.fd_joint_acc[:, ~undefined]
                       - series.motion_joint_acc[:, ~undefined])[sync]
    warnings = []
    stale = int((~series.in_sync).sum())
    if stale:
        worst = err[~series.in_sync]
        worst = float(np.nanmax(worst)) if np.isfinite(worst).any() else float("nan")
        warnings.append(
            f"{stale} of {len(series.t)} answered ticks were computed with another tick's "
            f"odometry or wrench (the node matches inputs by stamp; one whose message was "
            f"dropped is replaced by the newest older one): max forward-dynamics error over "
            f"those ticks {worst:.2e}")
    figures = dict(
        ticks_in_sync=int(sync.sum()),
        fd_error_max=float(synced.max()) if len(synced) else float("nan"),
        fd_error_joints_max=float(joint_err.max()) if joint_err.size else float("nan"),
        fd_error_all_ticks_max=(float(np.nanmax(err)) if np.isfinite(err).any()
                                else float("nan")),
        fd_undefined_joints=[series.joint_names[k] for k in np.flatnonzero(undefined)])
    return figures, warnings


def _fresh_inputs(fd, stamps):
    """(k,) bool: the tick's ~/forward_dynamics (when there is one) combined the odometry
    and wrenches of its own stamp (ages 0)."""
    ok = np.ones(len(stamps), dtype=bool)
    for i, s in enumerate(stamps):
        m = fd.get(s)
        if m is not None:
            ok[i] = m.odometry_age == 0.0 and all(a == 0.0 for a in m.wrench_ages)
    return ok


def _balance(outputs, stamps, stamp_tick, rate, contacts, t, in_sync):
    """The balance fields of :class:`Series` (but ``tick_margins``, ``motion_zmp``)."""
    k = len(stamps)

    def points(kind):
        data = outputs.get(kind, {})
        return np.array([_vec(data[s].point) if s in data else [np.nan] * 3 for s in stamps],
                        dtype=float).reshape(k, 3)

    cops = outputs.get("cop", {})
    node_cop = {c: np.full((k, 3), np.nan) for c in contacts}
    for i, s in enumerate(stamps):
        m = cops.get(s)
        if m is None:
            continue
        for name, point, defined in zip(m.contacts, m.points, m.defined):
            if defined and name in node_cop:
                node_cop[name][i] = _vec(point)
    polygons = outputs.get("support_polygon", {})
    poly_stamps = sorted(s for s in polygons if s in stamp_tick)
    margins = outputs.get("stability_margin", {})
    margin_stamps = sorted(s for s in margins if s in stamp_tick)
    sync = dict(zip(stamps, in_sync))
    return dict(
        zmp=points("zmp"), capture_point=points("capture_point"), node_cop=node_cop,
        support_t=np.array([stamp_tick[s] for s in poly_stamps], dtype=float) / rate,
        support_polygons=[np.array([[p.x, p.y] for p in polygons[s].polygon.points],
                                   dtype=float).reshape(-1, 2) for s in poly_stamps],
        margin_t=np.array([stamp_tick[s] for s in margin_stamps], dtype=float) / rate,
        stability_margins=np.array([[margins[s].margin, margins[s].zmp_margin,
                                     margins[s].capture_point_margin] for s in margin_stamps],
                                   dtype=float).reshape(-1, 3),
        margin_in_sync=np.array([bool(sync.get(s, True)) for s in margin_stamps], dtype=bool))


def _in_sync(motion, chosen, stamps, com, marker_messages, force_scale):
    """(k,) bool: the node used this tick's odometry and wrenches (wrenches unchecked
    without markers)."""
    motion_com = np.array([x.com for x in chosen]).reshape(-1, 3)
    ok = np.abs(com - motion_com).max(axis=1) < COM_TOLERANCE if len(com) else np.ones(0, bool)
    forces = _contact_forces(marker_messages, force_scale) if force_scale else {}
    if forces:
        for i, (s, x) in enumerate(zip(stamps, chosen)):
            entry = forces.get(s, {})
            for k, contact in enumerate(motion.contacts):
                f = entry.get(k)
                ok[i] &= f is not None and np.abs(f - x.wrenches[contact][:3]).max() \
                    < FORCE_TOLERANCE
    return ok
