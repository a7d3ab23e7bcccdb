"""Static equilibrium with contacts: CoM equilibrium and contact-consistent equilibrium torques.

Contacts, friction cones (inscribed K-facet pyramids) and support polygons are in
:mod:`.contacts`. Both problems here are least-squares problems with linear equality and
inequality constraints (LSEI),

    min ||E x - e||^2   s.t.   A x = b,   G x <= h,

solved exactly (no iterations to tune) by Lawson and Hanson's reduction ("Solving Least
Squares Problems", 1974, ch. 20-23 -- the same reduction SLSQP uses for its sub-problems):
the equalities are eliminated with an SVD (x = x0 + N z), the remaining least-squares problem
with inequalities becomes a least-distance problem, and that one is one non-negative least
squares problem, solved by ``scipy.optimize.nnls``. Infeasibility is detected by the NNLS
residual vanishing; the equality rows hold to rounding (~1e-12 relative).

- :func:`com_equilibrium`: contact forces f (one 3-vector per contact point, world) with
  ``sum f + m g = 0``, ``sum (p - c) x f = 0``, f in the cones, of minimum norm; plus the
  stability margin: the signed distance [m] from the CoM's ground projection to the support
  polygon (positive inside), which is what a balance controller can act on.
- :func:`equilibrium_torques`: joint torques and contact forces that satisfy the floating-base
  equations of motion ``M nu_dot + h = [0; tau] + sum_p J_p^T f_p`` with f_p in the cones and
  |tau| within the URDF effort limits, minimising ``||tau||^2 + eps ||f||^2``.
"""

from dataclasses import dataclass

import numpy as np

from .contacts import (DEFAULT_FACETS, SupportPolygon, contact_poses, support_polygon,
                       world_contacts)
from .representations import Representations, frame_transform
from .spatial import cross3, skew

__all__ = ["ComEquilibrium", "EquilibriumTorques", "com_equilibrium", "equilibrium_torques",
           "lsei"]

_GRAVITY = np.array([0.0, 0.0, -9.80665])
_INFEASIBLE_TOL = 1e-10   # NNLS residual below which the least-distance problem is infeasible
_RANK_TOL = 1e-10         # relative singular value below which an equality row is dependent
_EQ_TOL = 1e-9            # relative residual of inconsistent equalities


def lsei(e_mat, e_vec, a_eq, b_eq, g_ub, h_ub):
    """Solve ``min ||E x - e||^2 s.t. A x = b, G x <= h`` (E full column rank on null(A)).

    Parameters
    ----------
    e_mat : ndarray, shape (r, n)
    e_vec : ndarray, shape (r,)
    a_eq : ndarray, shape (m, n)
    b_eq : ndarray, shape (m,)
    g_ub : ndarray, shape (l, n)
    h_ub : ndarray, shape (l,)

    Returns
    -------
    x : ndarray, shape (n,), or None when infeasible
    status : str
        'ok', 'equality' (A x = b inconsistent), 'inequality' (no x in the polyhedron) or
        'solver' (NNLS hit its iteration limit).
    """
    u, sig, vt = np.linalg.svd(a_eq, full_matrices=True)
    rank = int(np.sum(sig > _RANK_TOL * max(sig[0] if len(sig) else 0.0, 1e-300)))
    x0 = vt[:rank].T @ ((u[:, :rank].T @ b_eq) / sig[:rank])
    if np.linalg.norm(a_eq @ x0 - b_eq) > _EQ_TOL * max(1.0, np.linalg.norm(b_eq)):
        return None, "equality"
    null = vt[rank:].T                                          # (n, n - rank)
    if null.shape[1] == 0:
        ok = (g_ub @ x0 <= h_ub + _EQ_TOL * max(1.0, np.abs(h_ub).max(initial=0.0))).all()
        return (x0, "ok") if ok else (None, "inequality")
    # LSI in z: min ||E N z - (e - E x0)||, G N z <= h - G x0
    q, r = np.linalg.qr(e_mat @ null)
    e2 = q.T @ (e_vec - e_mat @ x0)
    g2 = g_ub @ null
    h2 = h_ub - g_ub @ x0
    # z = R^-1 (y + e2): LDP  min ||y||  s.t.  (-G2 R^-1) y >= -(h2 - G2 R^-1 e2)
    g_rinv = np.linalg.solve(r.T, g2.T).T
    g_ldp = -g_rinv
    h_ldp = -(h2 - g_rinv @ e2)
    if len(h_ldp) == 0:
        return x0 + null @ np.linalg.solve(r, e2), "ok"
    # LDP by NNLS: min ||[G^T; h^T] w - [0; 1]||, w >= 0; y = -res[:-1] / res[-1]
    mat = np.vstack([g_ldp.T, h_ldp[None, :]])
    rhs = np.zeros(len(mat))
    rhs[-1] = 1.0
    from scipy.optimize import nnls     # here: see contacts._project's linprog
    try:
        w, _ = nnls(mat, rhs, maxiter=50 * mat.shape[1])
    except RuntimeError:                       # iteration limit: report, never raise
        return None, "solver"
    res = mat @ w - rhs
    if np.linalg.norm(res) < _INFEASIBLE_TOL or res[-1] > -_INFEASIBLE_TOL:
        return None, "inequality"
    y = -res[:-1] / res[-1]
    return x0 + null @ np.linalg.solve(r, y + e2), "ok"


def _cone_blocks(wc):
    """Block-diagonal (P (K+1), 3 P) of the per-point cone half-spaces."""
    p_count, rows, _ = wc.halfspaces.shape
    g = np.zeros((p_count * rows, 3 * p_count))
    for i in range(p_count):
        g[i * rows:(i + 1) * rows, 3 * i:3 * i + 3] = wc.halfspaces[i]
    return g


def _cone_margin(wc, forces):
    """min over points of mu f_n - ||f_t|| [N]: >= 0 inside every (true) friction cone."""
    fn = np.einsum("ij,ij->i", forces, wc.normals)
    ft = forces - fn[:, None] * wc.normals
    return float(np.min(wc.friction * fn - np.linalg.norm(ft, axis=1)))


@dataclass(frozen=True, eq=False)
class ComEquilibrium:
    """Result of :func:`com_equilibrium`.

    - ``feasible``: contact forces in the linearised cones balance gravity at the CoM.
    - ``forces``: per contact, (k, 3) world forces [N] on the robot (minimum-norm solution),
      or None when infeasible.
    - ``margin``: signed distance [m] from the CoM's ground projection to ``polygon``'s
      boundary, positive inside. ``feasible`` and ``margin >= 0`` agree except within the
      solvers' tolerances (~1e-9 m) of the boundary.
    - ``polygon``: the :class:`~.contacts.SupportPolygon` used for the margin.
    - ``message``: why it is infeasible ('' when feasible).
    """

    feasible: bool
    forces: tuple
    margin: float
    polygon: SupportPolygon
    message: str


def com_equilibrium(contacts, com, mass, gravity=_GRAVITY, world_H_links=None,
                    n_facets=DEFAULT_FACETS, polygon=None):
    """Can valid contact forces hold a rigid body of ``mass`` with CoM ``com`` still?

    Parameters
    ----------
    contacts : sequence of Contact
    com : array_like, shape (3,)
        CoM in the world frame [m].
    mass : float
        Total mass [kg] (> 0); only scales the forces.
    gravity : array_like, shape (3,)
        [m/s^2], world frame.
    world_H_links : dict, optional
        ``{link: world_H_link}``; None: contacts given in the world frame.
    n_facets : int
        Facets of the linearised friction cones.
    polygon : SupportPolygon, optional
        Precomputed :func:`~.contacts.support_polygon` of the same contacts (skips it).

    Returns
    -------
    ComEquilibrium
    """
    com = np.asarray(com, dtype=float)
    if com.shape != (3,) or not np.isfinite(com).all():
        raise ValueError(f"expected com with shape (3,), finite, got {com.shape}")
    mass = float(mass)
    if not (np.isfinite(mass) and mass > 0.0):
        raise ValueError(f"expected mass > 0, got {mass}")
    gravity = np.asarray(gravity, dtype=float)
    wc = world_contacts(contacts, world_H_links, n_facets)
    if polygon is None:
        polygon = support_polygon(contacts, world_H_links, gravity, n_facets)
    weight = mass * np.linalg.norm(gravity)
    p_count = len(wc.points)
    # forces in units of the weight; moments about the CoM
    a_eq = np.vstack([np.tile(np.eye(3), p_count), np.hstack(skew(wc.points - com))])
    b_eq = np.concatenate([-gravity / np.linalg.norm(gravity), np.zeros(3)])
    g_ub = _cone_blocks(wc)
    x, status = lsei(np.eye(3 * p_count), np.zeros(3 * p_count), a_eq, b_eq, g_ub,
                     np.zeros(len(g_ub)))
    margin = polygon.margin(com)
    if x is None:
        why = {"equality": "the contact points cannot produce the wrench that balances gravity",
               "inequality": f"no contact forces inside the {int(n_facets)}-facet friction "
                             "cones balance gravity",
               "solver": "the NNLS solver hit its iteration limit"}[status]
        return ComEquilibrium(False, None, margin, polygon,
                              f"CoM {np.round(com, 4).tolist()} not in equilibrium: {why}")
    return ComEquilibrium(True, wc.split(weight * x.reshape(-1, 3)), margin, polygon, "")


@dataclass(frozen=True, eq=False)
class EquilibriumTorques:
    """Result of :func:`equilibrium_torques`.

    - ``feasible``: True when torques within the limits and forces inside the linearised
      friction cones satisfy the equations of motion.
    - ``tau`` (n,): joint torques [N m or N], ``joints_name_list`` order.
    - ``forces``: per contact, (k, 3) world forces [N] on the robot at ``points``.
    - ``points``: per contact, (k, 3) world positions [m] of the contact points.
    - ``wrenches``: ``{link: w (6,)}``, the contact forces summed per link as wrenches in the
      kd's active representation, ready for ``kd.rnea(..., external_wrenches=wrenches)``
      (MIXED: [force; torque about the link origin], world axes).
    - ``residual``: norm of the base rows of the equations of motion [N, N m] (the joint rows
      hold by construction).
    - ``margin``: min over contact points of ``mu f_n - ||f_t||`` [N], >= 0 inside the true
      friction cones (the inscribed pyramid guarantees it); 0 means a point about to unload
      or slip.
    - ``torque_margin``: min over limited joints of ``limit - |tau|`` [N m]; inf if none.
    - ``message``: '' when feasible, else why.

    When the only failure is the torque limits, ``tau``/``forces``/``wrenches`` hold the
    solution without limits (``torque_margin`` < 0); when no contact forces can balance the
    robot they are None.
    """

    feasible: bool
    tau: np.ndarray
    forces: tuple
    points: tuple
    wrenches: dict
    residual: float
    margin: float
    torque_margin: float
    message: str


def _limits(kd, torque_limits):
    n = kd.NDoF
    if torque_limits is None:
        urdf = kd.model.limits
        lim = np.array([urdf[j][2] if urdf.get(j) is not None else np.nan
                        for j in kd.joints_name_list], dtype=float)
    else:
        lim = np.asarray(torque_limits, dtype=float)
        if lim.shape != (n,):
            raise ValueError(f"expected torque_limits with shape ({n},), got {lim.shape}")
    lim = np.where(np.isnan(lim) | (lim <= 0.0), np.inf, lim)
    return lim


def _to_mixed(rep, world_H_frame, w_H_b):
    """X (6, 6): frame velocity in ``rep`` -> MIXED, from the core's frame transforms."""
    if rep == Representations.MIXED_REPRESENTATION:
        return np.eye(6)
    c_H_f = world_H_frame.copy()
    c_H_f[:3, 3] -= w_H_b[:3, 3]
    x_rep = frame_transform(rep, c_H_f, w_H_b[:3, 3])
    x_mixed = frame_transform(Representations.MIXED_REPRESENTATION, c_H_f, w_H_b[:3, 3])
    return np.linalg.solve(x_rep.T, x_mixed.T).T


def equilibrium_torques(kd, w_H_b, s, contacts, base_vel=None, s_dot=None, accelerations=None,
                        torque_limits=None, n_facets=DEFAULT_FACETS, force_weight=1e-6):
    """Joint torques and contact forces that hold the robot in the given motion (still by default).

    Formulation (forces f_p (3,) world at each contact point p, torques tau (n,))::

        min  ||tau||^2 + eps ||f||^2
        s.t. base rows:   r_b = sum_p J_p,b^T f_p          (6 equations)
             joint rows:  tau = r_j - sum_p J_p,j^T f_p     (substituted)
             f_p in the inscribed n_facets pyramid of its contact
             |tau_j| <= limit_j

    with ``r = M nu_dot + h = kd.rnea(w_H_b, s, base_vel, s_dot, nu_dot)`` and
    ``J_p = [I, -(p - o_L)^] X J_L`` the linear-velocity Jacobian of the point p of link L
    (J_L = ``kd.jacobian(L)`` in the active representation, X maps it to MIXED). Solved as
    one LSEI (:func:`lsei`): exact, no iteration count. ``eps`` (``force_weight``) picks
    the minimum-norm forces among those giving the same torques (e.g. internal forces
    between the corners of one foot).

    Parameters
    ----------
    kd : KinDynComputations
    w_H_b : array_like, shape (4, 4)
    s : array_like, shape (n,)
    contacts : sequence of Contact
    base_vel, s_dot : array_like, shape (6,) and (n,), optional
        Velocities (active representation); default zero.
    accelerations : array_like, shape (6 + n,), optional
        nu_dot (active representation); default zero (static). Contacts are not checked for
        consistency with it (``J_c nu_dot + Jdot_c nu = 0``).
    torque_limits : array_like, shape (n,), optional
        |tau| bounds [N m]; default the URDF effort limits. NaN, 0 or inf: unlimited.
    n_facets : int
        Facets of the linearised friction cones.
    force_weight : float
        eps > 0 above [(N m)^2 / N^2].

    Returns
    -------
    EquilibriumTorques
        ``feasible=False`` with a message (never an exception) when no solution exists.
    """
    n = kd.NDoF
    w_H_b = np.asarray(w_H_b, dtype=float)
    still = base_vel is None and s_dot is None and accelerations is None
    base_vel = np.zeros(6) if base_vel is None else base_vel
    s_dot = np.zeros(n) if s_dot is None else s_dot
    nu_dot = np.zeros(6 + n) if accelerations is None else np.asarray(accelerations, float)
    if nu_dot.shape != (6 + n,):
        raise ValueError(f"expected accelerations with shape ({6 + n},), got {nu_dot.shape}")
    if not force_weight > 0.0:
        raise ValueError(f"expected force_weight > 0, got {force_weight}")
    limits = _limits(kd, torque_limits)
    # r = M nu_dot + h: the gravity term alone for a robot held still (~40 against ~75 us)
    r = kd.gravity_term(w_H_b, s) if still else kd.rnea(w_H_b, s, base_vel, s_dot, nu_dot[:6],
                                                         nu_dot[6:])
    poses = contact_poses(kd, w_H_b, s, contacts)
    wc = world_contacts(contacts, poses, n_facets)
    contacts = list(contacts)

    # point Jacobians (3P, 6+n) and per-link maps of point forces to active-rep wrenches
    jac = np.empty((3 * len(wc.points), 6 + n))
    to_wrench = {}
    for c, sl in zip(contacts, wc.slices):
        h = poses[c.link]
        if c.link not in to_wrench:
            x = _to_mixed(kd.rep, h, w_H_b)
            to_wrench[c.link] = (x, x @ kd.jacobian(c.link, w_H_b, s))
        jm = to_wrench[c.link][1]           # rows of each point p: J_lin - (p - o_L)^ J_ang
        arms = skew(wc.points[sl] - h[:3, 3])                               # (k, 3, 3)
        jac[3 * sl.start:3 * sl.stop] = (jm[:3] - arms @ jm[3:]).reshape(-1, 6 + n)
    a_b, a_j = jac[:, :6].T, jac[:, 6:].T

    # scale to O(1): forces and torques in units of the largest generalized force
    scale = max(float(np.abs(r).max()), 1.0)
    rs = r / scale
    cone = _cone_blocks(wc)
    moving = np.abs(a_j).max(axis=1) > 0.0          # joints the contact forces load
    limited = moving & np.isfinite(limits)
    lim = limits[limited] / scale
    # tau = r_j - A_j f:  -A_j f <= lim - r_j  and  A_j f <= lim + r_j
    g_lim = np.vstack([-a_j[limited], a_j[limited]])
    h_lim = np.concatenate([lim - rs[6:][limited], lim + rs[6:][limited]])
    e_mat = np.vstack([a_j, np.sqrt(force_weight) * np.eye(a_j.shape[1])])
    e_vec = np.concatenate([rs[6:], np.zeros(a_j.shape[1])])
    zeros = np.zeros(len(cone))
    f, status = lsei(e_mat, e_vec, a_b, rs[:6], np.vstack([cone, g_lim]),
                     np.concatenate([zeros, h_lim]))
    message = ""
    if f is None and status == "inequality" and len(h_lim):
        f, status = lsei(e_mat, e_vec, a_b, rs[:6], cone, zeros)
        if f is not None:
            message = "joint torques beyond their limits"
    points = wc.split(wc.points)
    if f is None:
        why = {"equality": "the contact points cannot produce the base wrench (e.g. a single "
                           "point cannot hold a moment)",
               "inequality": f"no contact forces inside the {int(n_facets)}-facet friction "
                             "cones hold the robot",
               "solver": "the NNLS solver hit its iteration limit"}[status]
        return EquilibriumTorques(False, None, None, points, None, np.inf, -np.inf, -np.inf,
                                  f"not in equilibrium: {why}")
    forces = scale * f.reshape(-1, 3)
    tau = r[6:] - a_j @ forces.reshape(-1)
    residual = float(np.linalg.norm(a_b @ forces.reshape(-1) - r[:6]))
    slack = limits - np.abs(tau)
    torque_margin = float(slack.min()) if np.isfinite(limits).any() else np.inf
    if not message and slack.min() < -1e-9 * scale:
        message = "joint torques beyond their limits"
    if message:
        worst = [kd.joints_name_list[j] for j in np.argsort(slack)[:3] if slack[j] < 0]
        message = f"not in equilibrium: {message} ({', '.join(worst)})"
    wrenches = {}
    for c, sl in zip(contacts, wc.slices):
        arm = wc.points[sl] - poses[c.link][:3, 3]
        w = np.concatenate([forces[sl].sum(axis=0), cross3(arm, forces[sl]).sum(axis=0)])
        wrenches[c.link] = wrenches.get(c.link, 0.0) + to_wrench[c.link][0].T @ w
    return EquilibriumTorques(not message, tau, wc.split(forces), points, wrenches, residual,
                              _cone_margin(wc, forces), torque_margin, message)
