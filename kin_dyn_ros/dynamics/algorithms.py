"""Rigid-body algorithms over one :class:`~.kinematics.Kinematics` pass, in frame C.

Every function here works in the internal form: frame C (world axes, base origin), the base
velocity as C's right-trivialised twist, joints in the model's internal order, generalized
vectors ``[base (6); joints (n)]``. :mod:`.computations` maps to and from the user's
representation and joint order.

The recursions of Featherstone (2008) are written with the ancestor matrix ``A`` of the tree
(``A[k, i] = 1`` if body k is body i or one of its ancestors), so that a forward recursion
``v_i = v_parent + S_i qd_i`` is ``V = v_0 + A^T (S qd)`` and a backward one (subtree sums)
is ``F = A f``: each a single matrix product, O(N^2) flops but few NumPy calls.

- CRBA (ch. 6.2): ``M[i, j] = S_i . (Ic_j S_j)`` for i an ancestor of j.
- RNEA (ch. 5.3): ``f_i = I_i a_i + v_i x* I_i v_i - f_ext_i``, ``tau_j = S_j . sum_sub(j) f``.
- Coriolis matrix: the Christoffel-consistent factorisation of Echeandia and Wensing (2021),
  ``C = sum_i J_i^T (I_i Jdot_i + B_i J_i)``, so ``Mdot = C + C^T``.
- Forward dynamics: ``M nu_dot = tau - h`` solved on the CRBA mass matrix (on the joints
  that carry inertia: a massless subtree's joints get NaN, :func:`solve_forward_dynamics`),
  which from Python is faster than the O(n) ABA recursion for humanoid sizes: by Cholesky (LAPACK
  ``dposv``, M being symmetric positive definite) when SciPy is installed, else with
  ``np.linalg.solve`` (LU; the core needs only NumPy). The same numbers, but LU costs twice
  as much warm (38 x 38: ~14 against ~7 us) and about four times as much right after an
  idle wait, as in the node (~40 against ~10 us).
"""

import numpy as np

try:
    from scipy.linalg.lapack import dposv as _dposv
except ImportError:  # NumPy only: solve_mass_matrix uses LU
    _dposv = None

from .spatial import motion_cross_matrix, skew

__all__ = ["mass_matrix", "body_velocities", "inverse_dynamics", "gravity_forces",
           "momentum_matrix", "coriolis_matrix",
           "solve_mass_matrix", "massless_columns", "solve_forward_dynamics", "SINGULAR_BASE"]


def _dots(a, b):
    """Row-wise dot products of (k, 6) arrays."""
    return np.einsum("ij,ij->i", a, b)


def mass_matrix(model, kin):
    """CRBA mass matrix in C, (6+n, 6+n), full and symmetric."""
    n = model.n
    out = np.empty((6 + n, 6 + n))
    out[:6, :6] = kin.composite[0]
    if n:
        f = kin.composite_subspaces                                     # (n, 6) Ic_j S_j
        g = kin.subspaces.dot(f.T) * model.ancestor[1:, 1:]             # upper part, i anc j
        np.add(g, g.T, out=out[6:, 6:])
        out.flat[6 * (7 + n)::7 + n] = g.diagonal()     # the joints' diagonal, counted twice
        out[:6, 6:] = f.T
        out[6:, :6] = f
    return out


def body_velocities(model, kin, base_vel, qd):
    """Spatial velocity of every body in C (N, 6), and each joint's S_j qd_j (n, 6)."""
    sq = kin.subspaces * qd[:, None]
    vel = model.ancestor[1:].T.dot(sq)
    vel += base_vel
    return vel, sq


def inverse_dynamics(model, kin, base_vel, base_acc, qd, qdd=None, body_wrenches=None):
    """RNEA: generalized forces (6+n,) in C, and the body momenta ``I_i v_i`` (N, 6).

    ``base_acc`` is the base's C acceleration *minus gravity* ``[g; 0]`` (the usual trick
    that accounts for gravity). ``qdd`` None means zero joint accelerations (the bias force).
    ``body_wrenches`` (N, 6): external wrenches on each body, about C's origin, world axes;
    they enter with a minus sign (``tau = M a + h - J^T w``).

    The base enters the forward recursions as a 6-DoF joint of the root (``A[0, i] = 1``):
    ``V = A^T [v_0; S_j qd_j]`` and ``a = A^T [a_0; v_j x S_j qd_j + S_j qdd_j]``.
    """
    n_bodies = len(model.parent)
    sq = np.empty((n_bodies, 6))                                        # [v_0; S_j qd_j]
    sq[0] = base_vel
    np.multiply(kin.subspaces, qd[:, None], out=sq[1:])
    acc_vel = np.empty((n_bodies, 6, 2))       # [a_i, v_i] side by side: one product for I a, I v
    vel = acc_vel[:, :, 1]
    np.matmul(model.ancestor.T, sq, out=vel)
    crm = motion_cross_matrix(vel)
    bias = (crm @ sq[:, :, None])[:, :, 0]                              # v_i x S_i qd_i
    bias[0] = base_acc
    if qdd is not None and model.n:
        bias[1:] += kin.subspaces * qdd[:, None]
    np.matmul(model.ancestor.T, bias, out=acc_vel[:, :, 0])
    both = kin.inertia @ acc_vel                                        # (N, 6, 2)
    momenta = both[:, :, 1]
    force = both[:, :, 0] - (np.swapaxes(crm, 1, 2) @ both[:, :, 1:])[:, :, 0]   # v x* = -crm^T
    if body_wrenches is not None:
        force -= body_wrenches
    total = model.ancestor.dot(force)
    return np.concatenate([total[0], _dots(kin.subspaces, total[1:])]), momenta


def gravity_forces(model, kin, gravity):
    """Generalized gravity forces in C (6+n,): ``-[Ic_0 g6; S_j . Ic_j g6]``, g6 = [g; 0]."""
    wrench = kin.composite[:, :, :3] @ gravity                          # Ic_j [g; 0]
    return -np.concatenate([wrench[0], _dots(kin.subspaces, wrench[1:])])


def momentum_matrix(model, kin):
    """Total momentum about C's origin per generalized velocity, (6, 6+n): [Ic_0, Ic_j S_j]."""
    return np.concatenate([kin.composite[0], kin.composite_subspaces.T], axis=1)


def _coriolis_b(inertia, vel):
    """Echeandia-Wensing B(I, v) = 1/2 (v x* I + (I v) xbar - I v x), (N, 6, 6)."""
    crm = motion_cross_matrix(vel)
    f = (inertia @ vel[:, :, None])[:, :, 0]
    sk = skew(f.reshape(-1, 2, 3))
    fbar = np.zeros(inertia.shape)                 # (f xbar) v = v x* f
    fbar[:, :3, 3:] = -sk[:, 0]
    fbar[:, 3:, :3] = -sk[:, 0]
    fbar[:, 3:, 3:] = -sk[:, 1]
    return 0.5 * (-np.swapaxes(crm, 1, 2) @ inertia + fbar - inertia @ crm)


def coriolis_matrix(model, kin, base_vel, qd):
    """Christoffel-consistent C (6+n, 6+n) in C: ``C nu = h - g`` and ``Mdot = C + C^T``."""
    n = model.n
    vel, _ = body_velocities(model, kin, base_vel, qd)
    b = _coriolis_b(kin.inertia, vel)
    bc = (model.ancestor @ b.reshape(-1, 36)).reshape(-1, 6, 6)          # subtree sums
    ic = kin.composite
    out = np.empty((6 + n, 6 + n))
    out[:6, :6] = bc[0]
    if n:
        s = kin.subspaces
        sdot = (motion_cross_matrix(vel[1:]) @ s[:, :, None])[:, :, 0]
        p = np.einsum("nij,nj->ni", ic[1:], sdot) + np.einsum("nij,nj->ni", bc[1:], s)
        q = np.einsum("nji,nj->ni", bc[1:], s)                       # Bc_j^T S_j
        f = np.einsum("nij,nj->ni", ic[1:], s)                       # Ic_j S_j
        anc = model.ancestor[1:, 1:]
        strict = anc - np.eye(n)
        out[6:, 6:] = (s @ p.T) * anc + (f @ sdot.T + q @ s.T) * strict.T
        out[:6, 6:] = p.T
        out[6:, :6] = q
    return out


def massless_columns(mass):
    """Boolean mask (n,) of the joint columns of M (6+n, 6+n) with no inertia moving with
    them: ``M_jj <= 1e-12 max(1, max diag)``. Their rows and columns of M are zero (M_jj =
    S_j . Ic_j S_j = 0 with Ic_j positive semi-definite gives Ic_j S_j = 0, and so for every
    entry of the row), and so is every descendant's."""
    diag = mass.diagonal()
    return diag[6:] <= 1e-12 * max(1.0, diag.max())


def solve_forward_dynamics(mass, rhs):
    """``nu_dot`` (6+n,) of ``M nu_dot = rhs`` on the joints that carry inertia, NaN for the
    massless ones (:func:`massless_columns`), and that mask (n,).

    The massless joints' rows and columns of M vanish, so the other coordinates'
    accelerations solve the reduced system ``M_rr x_r = rhs_r`` and do not depend on them
    (as Pinocchio's model with those joints locked); theirs are undefined. ValueError when
    the reduced M is singular (degenerate inertia of the floating base's subtree)."""
    massless = massless_columns(mass)
    if not massless.any():
        return _checked_solve(mass, rhs), massless
    keep = np.concatenate([np.ones(6, dtype=bool), ~massless])
    out = np.full(len(rhs), np.nan)
    out[keep] = _checked_solve(mass[np.ix_(keep, keep)], rhs[keep])
    return out, massless


SINGULAR_BASE = ("the mass matrix is singular (degenerate inertia of the floating base's "
                 "subtree); forward dynamics is undefined")


def _checked_solve(mass, rhs):
    x = _solve_spd(mass, rhs)
    if x is None:
        raise ValueError(SINGULAR_BASE)
    return x


def solve_mass_matrix(mass, rhs, joint_names):
    """Solve ``M x = rhs`` (rhs (6+n,) or (6+n, k)); ValueError naming joints if M is
    singular.

    A joint whose subtree is massless has ``M_jj = 0`` (no inertia moves with it) and makes M
    singular; ``joint_names`` names M's joint columns for the message. Otherwise M is
    singular only when the whole robot's inertia is (e.g. point masses on one line): the
    factorisation then fails.
    """
    massless = massless_columns(mass)
    if massless.any():
        bad = [joint_names[k] for k in np.flatnonzero(massless)]
        raise ValueError(f"the mass matrix is singular: no inertia moves with joint(s) {bad} "
                         f"(massless subtree)")
    return _checked_solve(mass, rhs)


def _solve_spd(mass, rhs):
    """``M x = rhs`` for a symmetric positive definite M: Cholesky (SciPy's LAPACK), or LU
    without SciPy; None when the factorisation fails (M singular)."""
    if _dposv is None:
        try:
            return np.linalg.solve(mass, rhs)
        except np.linalg.LinAlgError:
            return None
    _, x, info = _dposv(mass, rhs)
    return x if info == 0 else None
