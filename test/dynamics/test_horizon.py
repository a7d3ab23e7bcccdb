"""The batched API (``KinDynComputations.dynamics_horizon`` and the per-state methods given
K states) against the single-state methods, the NumPy path and Pinocchio.

Models: iCub (32 joints, the feet and hands) and a generated branching tree with mimic
joints in a permuted joint order (its mimic coordinates set from their masters with
``fill_mimic``, as a caller does), each with two frames: one a fixed-joint child, one behind
a moving joint (on the tree, behind two mimic joints). Batches of random states (random base
rotations and positions, joints within limits, random velocities) in the three
representations.

- every batched quantity of :data:`.horizon.QUANTITIES`, from ``dynamics_horizon`` and from
  the per-state methods' batch dispatch, equals the single-state calls at each state to
  1e-12 (relative to max(1, max|ref|)) on the compiled path and on the NumPy path, and the
  compiled batch equals the NumPy batch to 1e-12;
- every batched quantity equals Pinocchio's to 1e-10 (``oracles.PinocchioOracle``; the full
  Jdot from Pinocchio's ``getFrameJacobianTimeVariation`` converted here, Jdot nu from the
  oracle's frame acceleration);
- K = 1 and K = 0 give (1, ...) and (0, ...) arrays of :func:`.horizon.shapes`;
- wrong shapes, NaN/inf states, unknown quantities and frames raise ValueError naming them;
- lists, read-only, strided and Fortran-ordered inputs give the same batch.
The compiled tests skip where the NumPy core runs (``KIN_DYN_JIT=0``, no numba).
"""

import functools

import numpy as np
import pinocchio as pin
import pytest
from oracles import (
    GRAVITY,
    PinocchioOracle,
    assert_close,
    core_representation,
    load_random_tree,
    make_case,
    random_state,
    velocity_transform,
    velocity_transform_dot,
)

from kin_dyn_ros.dynamics import KinDynComputations, horizon
from kin_dyn_ros.dynamics.compiled import jit_path

RTOL_SAME = 1e-12     # batch against single-state calls / the other path
RTOL_PIN = 1e-10      # against Pinocchio
K = 8                 # states per batch
MODELS = ("icub", "mimic16")
PATHS = ("compiled", "numpy")
WHOLE = {  # quantity -> (single-state method, takes velocities)
    "com": ("CoM_position", False), "mass_matrix": ("mass_matrix", False),
    "bias_forces": ("bias_force", True), "gravity_forces": ("gravity_term", False),
    "centroidal_momentum_matrix": ("centroidal_momentum_matrix", False),
    "com_jacobian": ("CoM_jacobian", False)}
PER_FRAME = {"frame_poses": ("forward_kinematics", False), "jacobians": ("jacobian", False),
             "jacobian_dots": ("jacobian_dot", True),
             "jacobian_dot_nu": ("jacobian_dot_nu", True)}
METHODS = {**WHOLE, **PER_FRAME}

needs_jit = pytest.mark.skipif(jit_path() is None, reason="the NumPy core runs here")


def _path_param(path):
    return pytest.param(path, marks=needs_jit) if path == "compiled" else path


PATH_PARAMS = [_path_param(p) for p in PATHS]


# --------------------------------------------------------------------------- models, batches


class Setup:
    """A model: its case, the core on each path, the Pinocchio oracle, two frames and a
    seeded batch of K states (w_H_b, s, base_vel, s_dot); the same base velocities are
    read in whichever representation a test sets."""

    def __init__(self, name, case, frames, oracle):
        self.name, self.case, self.frames, self.oracle = name, case, list(frames), oracle
        self.kd = {"numpy": KinDynComputations(case.urdf, case.core_joints, compiled=False)}
        if jit_path() is not None:
            self.kd["compiled"] = KinDynComputations(case.urdf, case.core_joints, compiled=True)
        self.n = case.n
        rng = np.random.default_rng(sum(map(ord, name)))
        states = [random_state(case, rng) for _ in range(K)]
        self.w_H_b = np.stack([st.w_H_b for st in states])
        pairs = [self.kd["numpy"].fill_mimic(st.s, st.s_dot) for st in states]
        self.s = np.stack([p[0] for p in pairs])
        self.s_dot = np.stack([p[1] for p in pairs])
        # base velocities read as given in each representation (any (K, 6) is a velocity)
        self.base_vel = np.stack([st.base_vel for st in states])

    def core(self, path, rep):
        kd = self.kd[path]
        kd.set_frame_velocity_representation(core_representation(rep))
        return kd

    @property
    def batch(self):
        return self.w_H_b, self.s, self.base_vel, self.s_dot

    def state(self, k):
        return self.w_H_b[k], self.s[k], self.base_vel[k], self.s_dot[k]


@pytest.fixture(scope="module")
def setups(model_cases, oracles):
    """{name: Setup} of :data:`MODELS`, built once."""
    icub = Setup("icub", model_cases["icub"], ("l_sole", "r_hand"), oracles["pinocchio", "icub"])
    urdf = load_random_tree()(16, seed=11, mimic=True)
    case = make_case("mimic16", urdf)
    joints = list(np.random.default_rng(7).permutation(case.joints))   # not the default order
    case = make_case("mimic16", urdf, joints=joints)
    # link_016 hangs behind the mimic joints joint_002 and joint_013; frame_001 is fixed
    tree = Setup("mimic16", case, ("link_016", "frame_001"),
                 PinocchioOracle(urdf, joints, case.root, GRAVITY))
    assert tree.kd["numpy"].mimic_joints, "the tree should have mimic joints"
    assert {"joint_002", "joint_013"} <= set(tree.kd["numpy"].mimic_joints)
    return {"icub": icub, "mimic16": tree}


def _single(kd, quantity, frame, w_H_b, s, base_vel, s_dot):
    """``quantity`` at one state from ``kd``'s single-state method."""
    method, velocities = METHODS[quantity]
    args = (w_H_b, s, base_vel, s_dot) if velocities else (w_H_b, s)
    if frame is not None:
        args = (frame, *args)
    return np.asarray(getattr(kd, method)(*args))


def _per_state(setup, path, rep):
    """{quantity: (K, ...)} assembled from single-state calls (the independent reference)."""
    kd = setup.core(path, rep)
    out = {}
    for q in horizon.QUANTITIES:
        if q in WHOLE:
            out[q] = np.stack([_single(kd, q, None, *setup.state(k)) for k in range(K)])
        else:
            out[q] = np.stack([np.stack([_single(kd, q, f, *setup.state(k))
                                         for f in setup.frames]) for k in range(K)])
    return out


@pytest.fixture(scope="module")
def single_refs(setups):
    """single_refs(name, path, rep): the single-state calls' {quantity: (K, ...)}, once."""
    cache = {}

    def get(name, path, rep):
        if (name, path, rep) not in cache:
            cache[name, path, rep] = _per_state(setups[name], path, rep)
        return cache[name, path, rep]

    return get


def _compare_states(got, ref, what, rtol):
    """Each state k of ``got`` (K, ...) against ``ref`` (K, ...), the tolerance per state
    (and per frame for frame quantities)."""
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, expected {ref.shape}"
    for k in range(len(ref)):
        assert_close(got[k], ref[k], f"{what} state {k}", rtol)


# --------------------------------------------------------------------------- Pinocchio


def pin_jacobian_dot(ref, rep, frame, w_H_b, s, base_vel, s_dot):
    """d/dt of the frame Jacobian (6, 6+n) in ``rep`` from Pinocchio.

    Pinocchio gives J_W and its time derivative with the WORLD reference (velocity at the
    world origin, world axes: our INERTIAL_FIXED) for its BODY_FIXED base velocity. Ours is
    J = A J_W P B with A = T_rep(f) T_in(f)^-1 (f's velocity from world to ``rep``) and
    B = Tn^-1 (our nu in ``rep`` to BODY_FIXED), so dJ = dA J_W P B + A dJ_W P B + A J_W P dB.
    """
    q = ref._q(w_H_b, s)
    nu_b = ref._v_body(rep, w_H_b, base_vel, s_dot)
    v = ref.P @ nu_b
    pin.computeJointJacobiansTimeVariation(ref.model, ref.data, q, v)
    pin.updateFramePlacements(ref.model, ref.data)
    fid = ref._fid(frame)
    J_w = pin.getFrameJacobian(ref.model, ref.data, fid, pin.WORLD)
    dJ_w = pin.getFrameJacobianTimeVariation(ref.model, ref.data, fid, pin.WORLD)
    w_H_f = ref.data.oMf[fid].homogeneous
    T_in = velocity_transform("INERTIAL_FIXED", w_H_f)
    T_in_inv = np.linalg.inv(T_in)
    v_f = T_in_inv @ (J_w @ v)                         # f's BODY_FIXED velocity
    T_rep = velocity_transform(rep, w_H_f)
    A = T_rep @ T_in_inv
    dA = (velocity_transform_dot(rep, w_H_f, v_f) @ T_in_inv
          - A @ velocity_transform_dot("INERTIAL_FIXED", w_H_f, v_f) @ T_in_inv)
    B = np.linalg.inv(ref._tn(rep, w_H_b))
    dB = -B @ ref._tn_dot(rep, w_H_b, nu_b) @ B
    return dA @ J_w @ ref.P @ B + A @ dJ_w @ ref.P @ B + A @ J_w @ ref.P @ dB


def _pinocchio(setup, rep):
    """{quantity: (K, ...)} from Pinocchio at the setup's batch in ``rep``."""
    ref, frames = setup.oracle, setup.frames
    out = {q: [] for q in horizon.QUANTITIES}
    for k in range(K):
        h, s, v, sd = setup.state(k)
        out["com"].append(ref.com_position(h, s))
        out["mass_matrix"].append(ref.mass_matrix(rep, h, s))
        out["bias_forces"].append(ref.bias_force(rep, h, s, v, sd))
        out["gravity_forces"].append(ref.gravity_term(rep, h, s))
        out["centroidal_momentum_matrix"].append(ref.centroidal_momentum_matrix(rep, h, s))
        out["com_jacobian"].append(ref.com_jacobian(rep, h, s))
        out["frame_poses"].append([ref.forward_kinematics(f, h, s) for f in frames])
        out["jacobians"].append([ref.jacobian(rep, f, h, s) for f in frames])
        jdots = [pin_jacobian_dot(ref, rep, f, h, s, v, sd) for f in frames]
        out["jacobian_dots"].append(jdots)
        jdot_nu = [ref.jacobian_dot_nu(rep, f, h, s, v, sd) for f in frames]
        nu = np.concatenate([v, sd])
        for f, jd, a in zip(frames, jdots, jdot_nu):   # the two Pinocchio routes agree
            assert_close(jd @ nu, a, f"Pinocchio's Jdot nu of {f} ({rep})", 1e-12)
        out["jacobian_dot_nu"].append(jdot_nu)
    return {q: np.array(x) for q, x in out.items()}


@pytest.fixture(scope="module")
def pin_refs(setups):
    cache = {}

    def get(name, rep):
        if (name, rep) not in cache:
            cache[name, rep] = _pinocchio(setups[name], rep)
        return cache[name, rep]

    return get


# --------------------------------------------------------------------------- 1. against single states


def _batched_methods(kd, setup):
    """{quantity: (K, ...)} from the per-state methods given the whole batch (their batch
    dispatch), frame quantities stacked over the frames."""
    out = {}
    for q in horizon.QUANTITIES:
        method, velocities = METHODS[q]
        args = setup.batch if velocities else setup.batch[:2]
        if q in WHOLE:
            out[q] = np.asarray(getattr(kd, method)(*args))
        else:
            out[q] = np.stack([np.asarray(getattr(kd, method)(f, *args)) for f in setup.frames],
                              axis=1)
    return out


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("name", MODELS)
def test_horizon_equals_the_single_state_calls(setups, single_refs, name, path, rep):
    setup = setups[name]
    kd = setup.core(path, rep)
    assert kd.compiled == (path == "compiled")
    inputs = [a.copy() for a in setup.batch]
    got = kd.dynamics_horizon(*setup.batch, frames=setup.frames)
    for a, b in zip(inputs, setup.batch):
        np.testing.assert_array_equal(a, b, err_msg="dynamics_horizon changed its inputs")
    assert set(got) == set(horizon.QUANTITIES)
    shapes = horizon.shapes(K, setup.n, len(setup.frames))
    ref = single_refs(name, path, rep)
    for q in horizon.QUANTITIES:
        assert got[q].shape == shapes[q], q
        _compare_states(got[q], ref[q], f"dynamics_horizon {q} ({name}, {path}, {rep})",
                        RTOL_SAME)
    kd = setup.core(path, rep)
    for q, batch in _batched_methods(kd, setup).items():
        _compare_states(batch, ref[q], f"batched {METHODS[q][0]} ({name}, {path}, {rep})",
                        RTOL_SAME)


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("name", MODELS)
def test_jacobian_dot_nu_is_jacobian_dot_times_nu(setups, single_refs, name, path, rep):
    """The new single-state jacobian_dot_nu (the batch's reference above) is Jdot nu."""
    ref = single_refs(name, path, rep)
    nu = np.concatenate([setups[name].base_vel, setups[name].s_dot], axis=1)
    _compare_states(ref["jacobian_dot_nu"], np.einsum("kfij,kj->kfi", ref["jacobian_dots"], nu),
                    f"jacobian_dot_nu ({name}, {path}, {rep})", RTOL_SAME)


@needs_jit
@pytest.mark.parametrize("name", MODELS)
def test_compiled_batch_equals_the_numpy_batch(setups, name, rep):
    setup = setups[name]
    fast = setup.core("compiled", rep).dynamics_horizon(*setup.batch, frames=setup.frames)
    ref = setup.core("numpy", rep).dynamics_horizon(*setup.batch, frames=setup.frames)
    for q in horizon.QUANTITIES:
        _compare_states(fast[q], ref[q], f"compiled vs NumPy {q} ({name}, {rep})", RTOL_SAME)


SUBSETS = [("gravity_forces",), ("com_jacobian",), ("jacobian_dot_nu",), ("frame_poses",),
           ("com", "centroidal_momentum_matrix"), ("bias_forces", "jacobians"),
           ("mass_matrix", "com_jacobian", "jacobian_dots"),
           ("jacobian_dot_nu", "gravity_forces", "com"),
           ("com",), ("bias_forces", "gravity_forces")]   # the kernel's lighter passes


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("quantities", SUBSETS, ids="+".join)
def test_a_subset_of_quantities(setups, single_refs, quantities, path):
    """Only the quantities asked for, each as the single-state calls give it (the kernel
    lays out only those: its offsets must follow the mask)."""
    setup = setups["mimic16"]
    kd = setup.core(path, "BODY_FIXED")
    got = kd.dynamics_horizon(*setup.batch, frames=setup.frames, quantities=quantities)
    assert set(got) == set(quantities)
    ref = single_refs("mimic16", path, "BODY_FIXED")
    for q in quantities:
        _compare_states(got[q], ref[q], f"{q} of {quantities} ({path})", RTOL_SAME)


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_frames_in_any_order_and_repeated(setups, single_refs, path):
    setup = setups["icub"]
    kd = setup.core(path, "INERTIAL_FIXED")
    frames = [setup.frames[1], setup.frames[0], setup.frames[1]]
    got = kd.dynamics_horizon(*setup.batch, frames=frames,
                              quantities=horizon.FRAME_QUANTITIES)
    ref = single_refs("icub", path, "INERTIAL_FIXED")
    for q in horizon.FRAME_QUANTITIES:
        _compare_states(got[q], ref[q][:, [1, 0, 1]], f"{q} of {frames} ({path})", RTOL_SAME)


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_no_velocities_means_zero(setups, path, rep):
    setup = setups["mimic16"]
    kd = setup.core(path, rep)
    got = kd.dynamics_horizon(setup.w_H_b, setup.s, frames=setup.frames,
                              quantities=horizon.VELOCITY_QUANTITIES)
    zero6, zero_n = np.zeros(6), np.zeros(setup.n)
    for k in range(K):
        h, s = setup.w_H_b[k], setup.s[k]
        assert_close(got["bias_forces"][k], kd.bias_force(h, s, zero6, zero_n),
                     f"bias, no velocities, state {k}", RTOL_SAME)
        assert_close(got["bias_forces"][k], kd.gravity_term(h, s),
                     f"bias = gravity at rest, state {k}", RTOL_SAME)
        for j, f in enumerate(setup.frames):
            assert_close(got["jacobian_dots"][k, j], np.zeros((6, 6 + setup.n)),
                         f"Jdot at rest {f}", RTOL_SAME)
            assert_close(got["jacobian_dot_nu"][k, j], np.zeros(6), f"Jdot nu at rest {f}",
                         RTOL_SAME)


LAYOUTS = {  # name -> the batch (w_H_b, s, base_vel, s_dot) with the same values, laid out so
    "lists": lambda b: tuple(a.tolist() for a in b),
    "read_only": lambda b: tuple(_read_only(a) for a in b),
    "strided": lambda b: tuple(np.repeat(a, 2, axis=0)[::2] for a in b),
    "fortran_w_H_b": lambda b: (np.asfortranarray(b[0]), *b[1:]),
    "fortran_s": lambda b: (b[0], np.asfortranarray(b[1]), *b[2:]),
    "transposed_velocities": lambda b: (*b[:2], b[2].T.copy().T, b[3].T.copy().T),
}
def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def _layout_params():
    out = []
    for layout in LAYOUTS:
        for path in PATHS:
            marks = [needs_jit] if path == "compiled" else []
            out.append(pytest.param(layout, path, marks=marks, id=f"{layout}-{path}"))
    return out


@pytest.mark.parametrize("layout, path", _layout_params())
def test_any_array_layout_gives_the_same_batch(setups, single_refs, layout, path):
    """Lists, read-only, strided and Fortran-ordered arrays: the values are what counts."""
    setup = setups["mimic16"]
    kd = setup.core(path, "MIXED")
    batch = LAYOUTS[layout](setup.batch)
    got = kd.dynamics_horizon(*batch, frames=setup.frames)
    ref = single_refs("mimic16", path, "MIXED")
    for q in horizon.QUANTITIES:
        _compare_states(got[q], ref[q], f"{q} from {layout} inputs ({path})", RTOL_SAME)
    _compare_states(np.asarray(kd.bias_force(*batch)), ref["bias_forces"],
                    f"batched bias_force from {layout} inputs ({path})", RTOL_SAME)


# --------------------------------------------------------------------------- 2. against Pinocchio


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("name", MODELS)
def test_horizon_equals_pinocchio(setups, pin_refs, name, path, rep):
    setup = setups[name]
    got = setup.core(path, rep).dynamics_horizon(*setup.batch, frames=setup.frames)
    ref = pin_refs(name, rep)
    for q in horizon.QUANTITIES:
        _compare_states(got[q], ref[q], f"{q} vs Pinocchio ({name}, {path}, {rep})", RTOL_PIN)


# --------------------------------------------------------------------------- 3. K = 1 and K = 0


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("name", MODELS)
def test_one_state(setups, single_refs, name, path):
    setup = setups[name]
    kd = setup.core(path, "MIXED")
    one = [a[3:4] for a in setup.batch]
    got = kd.dynamics_horizon(*one, frames=setup.frames)
    ref = single_refs(name, path, "MIXED")
    shapes = horizon.shapes(1, setup.n, len(setup.frames))
    for q in horizon.QUANTITIES:
        assert got[q].shape == shapes[q], q
        assert_close(got[q][0], ref[q][3], f"K = 1 {q} ({name}, {path})", RTOL_SAME)
    for q, batch in _batched_methods(kd, _Sliced(setup, slice(3, 4))).items():
        assert batch.shape == shapes[q], q
        assert_close(batch[0], ref[q][3], f"K = 1 batched {METHODS[q][0]} ({name}, {path})",
                     RTOL_SAME)


class _Sliced:
    """A Setup's batch restricted to ``index``."""

    def __init__(self, setup, index):
        self.frames = setup.frames
        self.batch = tuple(a[index] for a in setup.batch)


@pytest.mark.parametrize("path", PATH_PARAMS)
@pytest.mark.parametrize("n_frames", [0, 2])
def test_no_states(setups, path, n_frames):
    setup = setups["icub"]
    kd = setup.core(path, "BODY_FIXED")
    n = setup.n
    empty = (np.empty((0, 4, 4)), np.empty((0, n)), np.empty((0, 6)), np.empty((0, n)))
    frames = setup.frames[:n_frames]
    shapes = horizon.shapes(0, n, n_frames)
    for velocities in (empty, empty[:2]):
        got = kd.dynamics_horizon(*velocities, frames=frames)
        assert set(got) == set(horizon.QUANTITIES)
        for q in horizon.QUANTITIES:
            assert isinstance(got[q], np.ndarray) and got[q].shape == shapes[q], (q, got[q])
    if n_frames:
        for q, batch in _batched_methods(kd, _Sliced(setup, slice(0, 0))).items():
            assert batch.shape == shapes[q], (q, batch.shape)


# --------------------------------------------------------------------------- 4. errors


def _raises(call, *needles):
    """``call()`` raises ValueError whose message contains every needle."""
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    return message


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_wrong_shapes_say_expected_and_got(setups, path):
    setup = setups["icub"]
    kd = setup.core(path, "MIXED")
    h, s, v, sd = setup.batch
    n = setup.n
    horizon_of = functools.partial(kd.dynamics_horizon, frames=setup.frames)
    _raises(lambda: horizon_of(h, s[:, :-1], v, sd), f"({K}, {n})", f"({K}, {n - 1})", "s ")
    _raises(lambda: horizon_of(h, s[:-1], v, sd), f"({K}, {n})", f"({K - 1}, {n})")
    _raises(lambda: horizon_of(h, s, v[:, :5], sd), "base_vel", f"({K}, 6)", f"({K}, 5)")
    _raises(lambda: horizon_of(h, s, v, np.append(sd, sd[:1], axis=0)), "s_dot",
            f"({K}, {n})", f"({K + 1}, {n})")
    _raises(lambda: horizon_of(h[0], s[0], v[0], sd[0]), "w_H_b", "(K, 4, 4)", "(4, 4)")
    _raises(lambda: horizon_of(h[0], s, v, sd), "w_H_b", "(K, 4, 4)", "(4, 4)")
    _raises(lambda: horizon_of(h[:, :3], s, v, sd), "w_H_b", f"({K}, 4, 4)", f"({K}, 3, 4)")
    _raises(lambda: horizon_of(h, s[0], v, sd), "s ", f"({K}, {n})", f"({n},)")
    # the per-state methods given a batch say the same
    _raises(lambda: kd.mass_matrix(h, s[:, :-1]), f"({K}, {n})", f"({K}, {n - 1})")
    _raises(lambda: kd.jacobian("l_sole", h, s[0]), f"({K}, {n})", f"({n},)")
    _raises(lambda: kd.bias_force(h, s, v[0], sd), "base_vel", f"({K}, 6)", "(6,)")


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_a_non_finite_state_is_named(setups, path):
    setup = setups["mimic16"]
    kd = setup.core(path, "MIXED")
    h, s, v, sd = setup.batch
    s_bad = s.copy()
    s_bad[3, 2] = np.nan
    message = _raises(lambda: kd.dynamics_horizon(h, s_bad, v, sd), "s[3]")
    assert "s_dot" not in message
    h_bad = h.copy()
    h_bad[5, 0, 3] = np.inf
    _raises(lambda: kd.dynamics_horizon(h_bad, s, v, sd), "w_H_b[5]")
    v_bad = v.copy()
    v_bad[0, 4] = -np.inf
    _raises(lambda: kd.dynamics_horizon(h, s, v_bad, sd), "base_vel[0]")
    sd_bad = sd.copy()
    sd_bad[K - 1, 0] = np.nan
    _raises(lambda: kd.dynamics_horizon(h, s, v, sd_bad), f"s_dot[{K - 1}]")
    _raises(lambda: kd.CoM_position(h, s_bad), "s[3]")
    _raises(lambda: kd.jacobian_dot_nu(setup.frames[0], h, s, v, sd_bad), f"s_dot[{K - 1}]")


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_unknown_quantity_or_frame_is_named(setups, path):
    setup = setups["mimic16"]
    kd = setup.core(path, "MIXED")
    _raises(lambda: kd.dynamics_horizon(*setup.batch, quantities=("com", "inertia")),
            "inertia")
    _raises(lambda: kd.dynamics_horizon(*setup.batch, frames=["link_016", "nowhere"]),
            "nowhere")
    _raises(lambda: kd.jacobian("nowhere", *setup.batch[:2]), "nowhere")
