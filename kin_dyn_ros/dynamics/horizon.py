"""A batch of states in one call: the terms a planner linearises along its horizon.

:meth:`.computations.KinDynComputations.dynamics_horizon` (and every per-state method it
serves, given ``w_H_b`` (K, 4, 4)) computes :data:`QUANTITIES` at K states: on the compiled
path in one kernel call (:func:`.kernels.horizon`, a loop over the states in compiled code,
each state with one forward pass shared by its whole-body quantities), on the NumPy path
(``KIN_DYN_JIT=0`` or no numba; the reference) with the single-state methods state by state.

Shapes, for K states, n joint coordinates, N = 6 + n, F frames:

- inputs: ``w_H_b`` (K, 4, 4), ``s`` and ``s_dot`` (K, n) in ``joints_name_list`` order,
  ``base_vel`` (K, 6) [linear; angular] in the active representation (velocities None:
  zero);
- outputs (:func:`shapes`): ``com`` (K, 3) world [m]; ``mass_matrix`` (K, N, N);
  ``bias_forces`` and ``gravity_forces`` (K, N); ``centroidal_momentum_matrix`` (K, 6, N)
  [linear; angular about the CoM], world axes; ``com_jacobian`` (K, 3, N); per frame
  ``frame_poses`` (K, F, 4, 4) world_H_frame, ``jacobians`` and ``jacobian_dots``
  (K, F, 6, N), ``jacobian_dot_nu`` (K, F, 6) = dJ/dt nu, the frame's acceleration at zero
  nu_dot. Generalized columns are [base (6); joints (n)], the base in the active
  representation, as the single-state methods give them.
"""

import numpy as np

__all__ = ["QUANTITIES", "FRAME_QUANTITIES", "VELOCITY_QUANTITIES", "shapes", "mask",
           "checked_batch", "non_finite", "per_state"]

# the order of the compiled kernel's rows: bit k of its mask asks for QUANTITIES[k]
QUANTITIES = ("com", "mass_matrix", "bias_forces", "gravity_forces",
              "centroidal_momentum_matrix", "com_jacobian", "frame_poses", "jacobians",
              "jacobian_dots", "jacobian_dot_nu")
FRAME_QUANTITIES = ("frame_poses", "jacobians", "jacobian_dots", "jacobian_dot_nu")
VELOCITY_QUANTITIES = ("bias_forces", "jacobian_dots", "jacobian_dot_nu")


def shapes(k, n, n_frames):
    """{quantity: shape} of each of :data:`QUANTITIES` for ``k`` states, ``n`` joints and
    ``n_frames`` frames."""
    size, f = 6 + n, n_frames
    return {"com": (k, 3), "mass_matrix": (k, size, size), "bias_forces": (k, size),
            "gravity_forces": (k, size), "centroidal_momentum_matrix": (k, 6, size),
            "com_jacobian": (k, 3, size), "frame_poses": (k, f, 4, 4),
            "jacobians": (k, f, 6, size), "jacobian_dots": (k, f, 6, size),
            "jacobian_dot_nu": (k, f, 6)}


def mask(quantities):
    """The kernel's bit mask of ``quantities`` (names of :data:`QUANTITIES`); ValueError
    naming an unknown one."""
    out = 0
    for name in quantities:
        if name not in QUANTITIES:
            raise ValueError(f"unknown quantity '{name}': expected one of {list(QUANTITIES)}")
        out |= 1 << QUANTITIES.index(name)
    return out


def _batch_array(name, value, shape, finite):
    """``value`` as a writable C-contiguous float64 array of ``shape``; ValueError naming
    ``name`` with the expected and the actual shape, or (``finite``) the first state with a
    NaN or inf."""
    arr = value if type(value) is np.ndarray else np.asarray(value, dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"expected {name} with shape {shape}, got {arr.shape}")
    if arr.dtype != np.float64 or not (arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, dtype=np.float64, order="C")
    if finite and not np.isfinite(arr).all():
        non_finite(((name, arr),))
    return arr


def non_finite(named, state=None):
    """Raise ValueError naming the first of ``named`` ((name, (K, ...) array), ...) with a NaN
    or inf, and its first such state (or at ``state`` only, when given)."""
    for name, arr in named:
        rows = arr.reshape(len(arr), -1) if state is None else arr[state:state + 1].reshape(1, -1)
        finite = np.isfinite(rows).all(axis=1)
        if not finite.all():
            k = int(np.argmin(finite)) if state is None else state
            raise ValueError(f"{name}[{k}] contains NaN or inf")
    raise ValueError(f"state {state} contains NaN or inf")


def checked_batch(n, w_H_b, s, base_vel=None, s_dot=None, finite=True):
    """(w_H_b (K, 4, 4), s (K, n), base_vel (K, 6), s_dot (K, n)) as C-contiguous float64
    arrays (velocities None: zeros), K from ``w_H_b``; ValueError naming the first wrong
    shape (expected against actual) or (``finite``; the compiled kernel checks it itself)
    the first state with a NaN or inf."""
    if np.ndim(w_H_b) != 3:
        raise ValueError(f"expected w_H_b with shape (K, 4, 4), got {np.shape(w_H_b)}")
    k = len(w_H_b)
    w_H_b = _batch_array("w_H_b", w_H_b, (k, 4, 4), finite)
    s = _batch_array("s", s, (k, n), finite)
    base_vel = np.zeros((k, 6)) if base_vel is None else _batch_array("base_vel", base_vel,
                                                                      (k, 6), finite)
    s_dot = np.zeros((k, n)) if s_dot is None else _batch_array("s_dot", s_dot, (k, n), finite)
    return w_H_b, s, base_vel, s_dot


def per_state(kd, quantities, frames, w_H_b, s, base_vel, s_dot):
    """{quantity: (K, ...)} computed state by state with ``kd``'s single-state methods (the
    NumPy path's batch; its calls at one state share one forward pass). Arguments as
    :func:`checked_batch` returns them; ``frames`` names."""
    one = kd.sharing_model(keep_kinematics=True)
    out = {q: np.empty(shape) for q, shape in shapes(len(w_H_b), kd.NDoF, len(frames)).items()
           if q in quantities}
    whole = {"com": lambda *x: one.CoM_position(*x[:2]), "mass_matrix":
             lambda *x: one.mass_matrix(*x[:2]), "bias_forces": one.bias_force,
             "gravity_forces": lambda *x: one.gravity_term(*x[:2]),
             "centroidal_momentum_matrix": lambda *x: one.centroidal_momentum_matrix(*x[:2]),
             "com_jacobian": lambda *x: one.CoM_jacobian(*x[:2])}
    single = {"frame_poses": lambda f, *x: one.forward_kinematics(f, *x[:2]),
              "jacobians": lambda f, *x: one.jacobian(f, *x[:2]),
              "jacobian_dots": one.jacobian_dot, "jacobian_dot_nu": one.jacobian_dot_nu}
    for k, state in enumerate(zip(w_H_b, s, base_vel, s_dot)):
        for q, array in out.items():
            if q in whole:
                array[k] = whole[q](*state)
            else:
                for j, frame in enumerate(frames):
                    array[k, j] = single[q](frame, *state)
    return out
