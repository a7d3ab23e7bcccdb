"""The compiled kernels (numba) against the NumPy core, the reference, on every test model.

Each model is built twice, ``compiled=True`` and ``compiled=False``; every public call and
the per-tick call must agree to 1e-12 (relative to max(1, max|reference|)) in the three
representations, on the shared test models (iCub, a branching tree in a permuted joint
order, a prismatic chain, a massless root) and on generated trees with mimic joints,
hundreds of fixed frames and a massless leaf. The oracle tests (Pinocchio, iDynTree) run on
whichever path the process runs; CI runs them on both (scripts/test.sh).
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from oracles import assert_close, core_representation, make_case, random_state

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics import contacts as contacts_module
from kin_dyn_ros.dynamics.compiled import (EMPTY, NO_BALANCING, compiled_kernels, direct,
                                           direct_arrays, direct_call, jit_path, jit_status, queries_ready)
from kin_dyn_ros.dynamics.contacts import Contact, ground_axes, hull_support

pytestmark = pytest.mark.skipif(
    jit_path() is None, reason=f"the NumPy core runs here ({jit_status().reason}); the "
    "compiled pass of scripts/test.sh runs these")

RTOL = 1e-12
EXTRA = {  # generated trees beyond the shared cases: (random_tree_urdf kwargs)
    "mimic40": dict(n_joints=40, seed=21, n_fixed=300, mimic=True, massless_root=True),
    "leaf8": dict(n_joints=8, seed=4, massless_leaf=True),
}


@pytest.fixture(scope="module")
def pairs(model_cases):
    """{name: (case, compiled kd, NumPy kd)}, built once."""
    from random_tree import random_tree_urdf
    cases = dict(model_cases)
    for name, kwargs in EXTRA.items():
        cases[name] = make_case(name, random_tree_urdf(**kwargs))
    out = {}
    for name, case in cases.items():
        joints = case.core_joints
        out[name] = (case, KinDynComputations(case.urdf, joints, compiled=True),
                     KinDynComputations(case.urdf, joints, compiled=False))
    assert queries_ready(timeout=600)       # (the position calls' kernels: frame_at below)
    return out


def _close(ours, ref, what):
    """assert_close, with NaN (a massless joint's acceleration) where and only where the
    reference has NaN."""
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref), err_msg=what)
    assert_close(np.nan_to_num(ours), np.nan_to_num(ref), what, RTOL)


NAMES = ("icub", "tree12", "chain10_prismatic", "massless_root", *EXTRA)


def _pair(pairs, name, rep):
    case, fast, ref = pairs[name]
    for kd in (fast, ref):
        kd.set_frame_velocity_representation(core_representation(rep))
    return case, fast, ref


def _states(case, count=2):
    rng = np.random.default_rng(abs(hash(case.name)) % 2**32)
    return [random_state(case, rng) for _ in range(count)]


@pytest.mark.parametrize("name", NAMES)
def test_whole_body_calls_match_the_numpy_core(pairs, name, rep):
    case, fast, ref = _pair(pairs, name, rep)
    assert fast.compiled and not ref.compiled
    frames = list(case.wrench_frames) if case.wrench_frames else list(case.links[-2:])
    for st in _states(case):
        wrenches = {f: np.arange(6.0) * (k + 1) - 2.0 for k, f in enumerate(frames)}
        h, s, v, sd = st.w_H_b, st.s, st.base_vel, st.s_dot
        for call, args in (
                ("CoM_position", (h, s)), ("CoM_jacobian", (h, s)), ("mass_matrix", (h, s)),
                ("centroidal_momentum_matrix", (h, s)), ("gravity_term", (h, s)),
                ("bias_force", (h, s, v, sd)), ("coriolis_term", (h, s, v, sd)),
                ("coriolis_matrix", (h, s, v, sd)),
                ("rnea", (h, s, v, sd, st.base_acc, st.s_ddot, wrenches)),
                ("aba", (h, s, v, sd, st.tau, wrenches))):
            _close(getattr(fast, call)(*args), getattr(ref, call)(*args),
                   f"{call} on {name} {rep}")
        for gravity in (True, False):       # (bias_force, coriolis_term: straight in)
            assert fast._jit.bias_at(fast._rep_code, gravity, h, s, v, sd) is not None
        if not name.startswith("leaf"):     # M is singular with a massless leaf
            m_inv = ref.inverse_mass_matrix(h, s)
            assert_close(fast.inverse_mass_matrix(h, s) / np.abs(m_inv).max(),
                         m_inv / np.abs(m_inv).max(), f"M^-1 on {name} {rep}", RTOL)


@pytest.mark.parametrize("name", NAMES)
def test_frame_calls_match_the_numpy_core(pairs, name, rep):
    case, fast, ref = _pair(pairs, name, rep)
    frames = case.jacobian_frames or case.links
    for st in _states(case, 1):
        for frame in frames[:12]:
            for call, args in (("forward_kinematics", (st.w_H_b, st.s)),
                               ("jacobian", (st.w_H_b, st.s)),
                               ("relative_jacobian", (st.s,)),
                               ("jacobian_dot", (st.w_H_b, st.s, st.base_vel, st.s_dot))):
                assert_close(getattr(fast, call)(frame, *args), getattr(ref, call)(frame, *args),
                             f"{call}({frame}) on {name} {rep}", RTOL)
            for what, pose in (("pose", st.w_H_b), ("jacobian", st.w_H_b),
                               ("relative", np.eye(4))):    # (straight to frame_at_position)
                assert fast._jit.frame_at(fast._rep_code, what, frame, pose,
                                          st.s) is not None, f"{what}({frame}) not straight in"


@pytest.mark.parametrize("name", NAMES)
def test_compute_tick_matches_the_numpy_core(pairs, name, rep):
    case, fast, ref = _pair(pairs, name, rep)
    links = case.links
    for st in _states(case):
        sensors = {links[-1]: (links[1], np.linspace(-3.0, 4.0, 6)),
                   links[len(links) // 2]: (links[len(links) // 2], np.linspace(5.0, -1.0, 6))}
        for tau in (st.tau, None):
            a = fast.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, tau, sensors)
            b = ref.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, tau, sensors)
            singles = [a.world_H_frame(k) for k in range(len(a.frame_names))]   # one by one,
            np.testing.assert_array_equal(singles, a.world_H_frames)    # then all: the same ops
            for field in ("joint_transforms", "base_pose", "com", "com_velocity",
                          "centroidal_momentum", "gravity_torques", "joint_quaternions",
                          "world_H_frames"):
                assert_close(getattr(a, field), getattr(b, field), f"{field} on {name}", RTOL)
            assert_close(a.world_H_frame(len(links) - 1), b.world_H_frame(len(links) - 1),
                         "world_H_frame", RTOL)
            assert a.massless_joints == b.massless_joints
            assert a.forward_dynamics_error == b.forward_dynamics_error
            _close(a.packed, b.packed, f"packed on {name}")        # NaN: no forward dynamics
            if tau is None:
                assert a.base_acceleration is None and a.joint_accelerations is None
                continue
            _close(a.base_acceleration, b.base_acceleration, f"base acc {name}")
            _close(a.joint_accelerations, b.joint_accelerations, f"joint acc {name}")


def test_a_massless_leaf_is_named_and_nan(pairs):
    case, fast, _ = _pair(pairs, "leaf8", "MIXED")
    st = _states(case, 1)[0]
    leaf = "joint_007"                   # the last joint generated moves the massless leaf
    tick = fast.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau)
    assert tick.massless_joints == (leaf,) and tick.forward_dynamics_error == ""
    nan = np.isnan(tick.joint_accelerations)
    assert nan.sum() == 1 and nan[case.joints.index(leaf)]
    with pytest.raises(ValueError, match=leaf):
        fast.inverse_mass_matrix(st.w_H_b, st.s)


@pytest.mark.parametrize("call, args, message", [
    ("compute_tick", lambda st: (st.w_H_b, st.s * np.nan, st.base_vel, st.s_dot),
     "s contains NaN or inf"),
    ("compute_tick", lambda st: (st.w_H_b, st.s[:-1], st.base_vel, st.s_dot),
     r"expected s with shape \(32,\), got \(31,\)"),
    ("mass_matrix", lambda st: (np.where(np.eye(4) > 0, np.inf, st.w_H_b), st.s),
     "w_H_b contains NaN or inf"),
    ("rnea", lambda st: (st.w_H_b, st.s, st.base_vel, st.s_dot, st.base_acc,
                         np.full_like(st.s, np.nan)), "s_ddot contains NaN or inf"),
    ("jacobian", lambda st: ("l_sole", st.w_H_b, np.append(st.s, 0.0)),
     r"expected s with shape \(32,\), got \(33,\)"),
    ("jacobian", lambda st: ("nowhere", st.w_H_b, st.s), "unknown frame 'nowhere'"),
    ("relative_jacobian", lambda st: ("l_sole", st.s[:-1]),
     r"expected s with shape \(32,\), got \(31,\)"),
    ("forward_kinematics", lambda st: ("l_sole", st.w_H_b[:3], st.s),
     r"expected w_H_b with shape \(4, 4\), got \(3, 4\)"),
    ("centroidal_momentum_matrix", lambda st: (st.w_H_b[:, :3], st.s),
     r"expected w_H_b with shape \(4, 4\), got \(4, 3\)"),
    ("CoM_position", lambda st: (st.w_H_b, []), r"expected s with shape \(32,\), got \(0,\)"),
    ("inverse_mass_matrix", lambda st: (st.w_H_b, st.s[:-1]),
     r"expected s with shape \(32,\), got \(31,\)"),
    ("bias_force", lambda st: (st.w_H_b, st.s, st.base_vel * np.nan, st.s_dot),
     "base_vel contains NaN or inf"),                    # (a full state: straight in)
    ("coriolis_term", lambda st: (st.w_H_b, st.s, st.base_vel, st.s_dot[:-1]),
     r"expected s_dot with shape \(32,\), got \(31,\)"),
    ("rnea", lambda st: (st.w_H_b, st.s, st.base_vel, st.s_dot, st.base_acc, st.s_dot,
                         {"r_sole": np.ones(6), "l_sole": [0.0, np.nan, 0.0, 0.0, 0.0, 0.0]}),
     "external wrench on 'l_sole' contains NaN or inf"),    # (the kernel finds it)
    ("aba", lambda st: (st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau,
                        {"r_sole": np.ones(6), "l_sole": np.ones(5)}),
     r"expected external wrench on 'l_sole' with shape \(6,\), got \(5,\)"),
    ("aba", lambda st: (st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau, {"nowhere": np.ones(6)}),
     "unknown frame 'nowhere'"),
])
def test_bad_input_raises_the_numpy_cores_message(pairs, call, args, message):
    case, fast, ref = _pair(pairs, "icub", "MIXED")
    st = _states(case, 1)[0]
    for kd in (fast, ref):
        with pytest.raises(ValueError, match=message):
            getattr(kd, call)(*args(st))


@pytest.mark.parametrize("name", ("icub", "tree12", "leaf8", "mimic40", "massless_root"))
def test_a_prepared_tick_is_compute_tick(pairs, name, rep):
    """PreparedTick (one kernel call for fixed wrenches, the node's tick) gives compute_tick's
    result on the same path bit for bit and the NumPy core's to 1e-12, with and without
    torques, massless joints named; None where compute_tick raises or has no forward
    dynamics (a NaN, a wrong shape) and for a list (compute_tick
    takes it)."""
    case, fast, ref = _pair(pairs, name, rep)
    links = case.links
    sensors = {links[-1]: (links[1], np.linspace(-3.0, 4.0, 6)),
               links[len(links) // 2]: (links[len(links) // 2], np.linspace(5.0, -1.0, 6))}
    prepared = fast.prepared_tick(sensors)
    assert ref.prepared_tick(sensors) is None          # (the NumPy core has none)
    for st in _states(case):
        for tau in (st.tau, None):
            out, poses = prepared.run(st.w_H_b, st.s, st.base_vel, st.s_dot, tau)
            ours = prepared.result(st.w_H_b, out, poses, tau is not None)
            same = fast.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, tau, sensors)
            np.testing.assert_array_equal(ours.packed, same.packed)
            _close(ours.packed, ref.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, tau,
                                                 sensors).packed, f"packed on {name}")
            assert ours.massless_joints == same.massless_joints
            assert (ours.base_acceleration is None) == (tau is None)
            assert_close(ours.world_H_frames, same.world_H_frames, "frames", 0.0)
    st = _states(case, 1)[0]
    bad = st.s.copy()
    bad[0] = np.nan
    for args in ((st.w_H_b, bad, st.base_vel, st.s_dot, st.tau),
                 (st.w_H_b, st.s[:-1].copy(), st.base_vel, st.s_dot, st.tau),
                 (st.w_H_b[:3].copy(), st.s, st.base_vel, st.s_dot, st.tau),
                 (st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau[:-1].copy())):
        assert prepared.run(*args) is None
        with pytest.raises(ValueError):
            fast.compute_tick(*args, sensors)
    assert prepared.run(st.w_H_b, list(st.s), st.base_vel, st.s_dot, st.tau) is None
    with pytest.raises(ValueError, match="wrench on"):
        fast.prepared_tick({links[-1]: (links[1], np.full(6, np.inf))})
    one_nan = np.zeros(6)
    one_nan[4] = np.nan
    with pytest.raises(ValueError, match=f"wrench on '?{links[-2]}"):
        fast.prepared_tick({links[-1]: (links[1], np.ones(6)), links[-2]: (links[1], one_nan)})


def test_a_renewed_prepared_tick_is_the_prepared_tick_of_its_values(pairs, rep):
    """PreparedTick.renewed (new values of the same wrenches: the node's steady tick on
    each new wrench) runs as a PreparedTick made of those wrenches, bit for bit; the old one
    keeps its values; None for a value that is not (6,), and a NaN is declined by run;
    without wrenches it is the same PreparedTick."""
    case, fast, _ = _pair(pairs, "icub", rep)
    links = case.links
    old = {links[-1]: (links[1], np.linspace(-3.0, 4.0, 6)),
           links[5]: (links[5], np.linspace(5.0, -1.0, 6))}
    new = {links[-1]: (links[1], np.linspace(2.0, -7.0, 6)),
           links[5]: (links[5], np.linspace(-4.0, 9.0, 6))}
    prepared = fast.prepared_tick(old)
    renewed = prepared.renewed(new)
    assert renewed.frame_wrenches is new
    st = _states(case, 1)[0]
    for tau in (st.tau, None):
        def packed(p):
            out, poses = p.run(st.w_H_b, st.s, st.base_vel, st.s_dot, tau)
            return p.result(st.w_H_b, out, poses, tau is not None).packed
        got, before = packed(renewed), packed(prepared)
        np.testing.assert_array_equal(got, packed(fast.prepared_tick(new)))
        np.testing.assert_array_equal(before, packed(fast.prepared_tick(old)))
        assert np.array_equal(got, before, equal_nan=True) == (tau is None)   # (fd only)
    assert prepared.renewed({links[-1]: (links[1], np.ones(5)), links[5]: (links[5],
                                                                          np.ones(6))}) is None
    nan = prepared.renewed({links[-1]: (links[1], np.full(6, np.nan)),
                            links[5]: (links[5], np.ones(6))})
    assert nan.run(st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau) is None
    none = fast.prepared_tick({})
    assert none.renewed({}) is none


def test_the_tick_kernel_refuses_wrong_shapes_before_reading(pairs):
    """kernels.tick checks every shape (BAD_SHAPE) before reading: a PreparedTick passes the
    node's arrays straight in."""
    case, fast, _ = _pair(pairs, "icub", "MIXED")
    st, k, jit = _states(case, 1)[0], jit_path(), fast._jit
    n, e = len(st.s), np.empty(0)
    good = dict(w_H_b=st.w_H_b, s=st.s, nu=st.base_vel, s_dot=st.s_dot, tau=st.tau,
                targets=np.zeros((1, 2), np.int64), wrenches=np.zeros(6),
                out=np.empty(22 * n + 19), poses=np.empty((n + 1, 4, 4)))

    def call(**changed):
        a = {**good, **changed}
        return k.tick(jit.mf, jit.mi, 2, a["w_H_b"], a["s"], a["nu"], a["s_dot"], a["tau"],
                      a["targets"], a["wrenches"], a["out"], a["poses"])
    assert call() == k.OK and call(tau=e) == k.OK
    for changed in (dict(w_H_b=np.eye(4)[:3].copy()), dict(s=st.s[:-1].copy()),
                    dict(nu=st.base_vel[:5].copy()), dict(s_dot=np.zeros(n + 1)),
                    dict(tau=st.tau[:-1].copy()), dict(wrenches=np.zeros(5)),
                    dict(targets=np.zeros((2, 2), np.int64)), dict(out=np.empty(22 * n)),
                    dict(poses=np.empty((n, 4, 4)))):
        assert call(**changed) == k.BAD_SHAPE, changed


def test_the_kernels_refuse_wrong_shapes_before_reading(pairs):
    """The position calls go straight to the kernels, which check the shapes themselves
    (BAD_SHAPE): none reads past an array given too small."""
    case, fast, _ = _pair(pairs, "icub", "MIXED")
    st, k, jit = _states(case, 1)[0], jit_path(), fast._jit
    e, n = np.empty(0), len(st.s)
    for h, s, nu, s_dot, want in ((st.w_H_b[:3].copy(), st.s, e, e, k.WANT_JACOBIAN),
                                  (st.w_H_b, st.s[:-1].copy(), e, e, k.WANT_POSE),
                                  (st.w_H_b, st.s, st.base_vel[:5].copy(), st.s_dot,
                                   k.WANT_JDOT)):
        assert k.frame_query(jit.mf, jit.mi, 2, want, fast.model.frame_index["l_sole"], h, s,
                             nu, s_dot, np.empty(16 + 12 * (6 + n))) == k.BAD_SHAPE
    for h, s, tau in ((st.w_H_b[:, :3].copy(), st.s, e), (st.w_H_b, st.s[:-1].copy(), e),
                      (st.w_H_b, st.s, st.s[:-1].copy())):
        assert k.whole_body(jit.mf, jit.mi, 2, k.WANT_CMM | k.WANT_ABA, h, s, e, e, e, e, tau,
                            True, np.empty(0, np.int64), np.empty((0, 6)),
                            np.empty(3 + 7 * (6 + n))) == k.BAD_SHAPE
    assert k.whole_body(jit.mf, jit.mi, 2, 0, st.w_H_b, st.s, e, e, e, e, e, True,
                        np.empty(1, np.int64), np.empty((0, 6)), np.empty(3)) == k.BAD_SHAPE
    jdot = np.full((6, 6 + n), 7.0)     # frame_at_position: no rates, so no Jdot
    assert k.frame_at_position(jit.mf, jit.mi, 2, k.WANT_JDOT, fast.model.frame_index["l_sole"],
                               st.w_H_b, st.s, jdot) == k.BAD_SHAPE and (jdot == 7.0).all()
    size = 6 + n          # whole_at_position: ``out`` of the answer's size, else refused
    for want, out in ((k.WANT_CMM, np.empty((6, size - 1))), (k.WANT_CMM, np.empty(3 + 6 * size)),
                      (k.WANT_MASS, np.empty((6, size))), (0, np.empty(4))):
        out[...] = 7.0
        assert k.whole_at_position(jit.mf, jit.mi, 2, want, st.w_H_b, st.s, out) == k.BAD_SHAPE
        assert (out == 7.0).all(), "written before refusing"
    for nu, s_dot, out in ((st.base_vel, st.s_dot, np.empty(size - 1)),   # bias_at_state
                           (st.base_vel[:5].copy(), st.s_dot, np.empty(size)),
                           (st.base_vel, st.s_dot[:-1].copy(), np.empty(size))):
        out[...] = 7.0
        assert k.bias_at_state(jit.mf, jit.mi, 2, True, st.w_H_b, st.s, nu, s_dot,
                               out) == k.BAD_SHAPE
        assert (out == 7.0).all(), "written before refusing"


def test_read_only_strided_and_fortran_inputs_take_the_same_signature(pairs):
    case, fast, ref = _pair(pairs, "icub", "BODY_FIXED")
    st = _states(case, 1)[0]
    s = np.repeat(st.s, 2)[::2]                      # not contiguous
    h = st.w_H_b.copy()
    h.flags.writeable = False
    signatures = {k: len(d.signatures) for k, d in _dispatchers().items()}
    assert_close(fast.mass_matrix(h, s), ref.mass_matrix(h, s), "mass matrix", RTOL)
    assert_close(fast.compute_tick(h, s, st.base_vel, st.s_dot, st.tau).com,
                 ref.compute_tick(h, s, st.base_vel, st.s_dot, st.tau).com, "com", RTOL)
    assert_close(fast.bias_force(h, s, st.base_vel, s), ref.bias_force(h, s, st.base_vel, s),
                 "bias force", RTOL)
    assert_close(fast.coriolis_term(h, s, st.base_vel, s),
                 ref.coriolis_term(h, s, st.base_vel, s), "coriolis term", RTOL)
    fortran = np.asfortranarray(st.w_H_b)          # column-major: copied to row-major
    assert_close(fast.mass_matrix(fortran, st.s), ref.mass_matrix(st.w_H_b, st.s),
                 "mass matrix of a Fortran-ordered w_H_b", RTOL)
    for call in ("jacobian", "forward_kinematics"):       # the position kernels' callers
        assert_close(getattr(fast, call)("l_sole", h, s), getattr(ref, call)("l_sole", h, s),
                     call, RTOL)
    assert_close(fast.relative_jacobian("l_sole", s), ref.relative_jacobian("l_sole", s),
                 "relative jacobian", RTOL)
    assert {k: len(d.signatures) for k, d in _dispatchers().items()} == signatures


def _dispatchers():
    """The compiled entry points: a call with other array types would compile another
    signature (seconds, in the middle of a tick)."""
    kernels = jit_path()
    return {name: getattr(kernels, name)
            for name in ("tick", "whole_body", "frame_query", "frame_poses", "frame_at_position",
                         "whole_at_position", "bias_at_state")}


def test_scatter_words_writes_the_numpy_quaternion_bit_for_bit():
    """:func:`.kernels.scatter_words` (the node's outputs' numbers into their bytes): the
    base pose's quaternion has the bits of quaternions.rotation_to_quaternion (/tf from
    either path is the same bytes), on random rotations and on each branch of Shepperd's
    method (rotations by pi about x, y, z and the identity); values and extra by index; the
    stamp into every pair of 32-bit words."""
    from scipy.spatial.transform import Rotation

    from kin_dyn_ros.dynamics.quaternions import rotation_to_quaternion
    kernels = jit_path()
    rng = np.random.default_rng(3)
    rotations = [*Rotation.random(200, random_state=4).as_matrix(), np.eye(3),
                 *(Rotation.from_rotvec(np.pi * axis).as_matrix() for axis in np.eye(3))]
    values, extra = rng.normal(size=5), rng.normal(size=2)
    sources = np.array([9, 3, 0, 5, 6, 7, 8, 10, 11, 12, 13], np.intp)
    targets = np.arange(1, 12, dtype=np.intp)
    for r in rotations:
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = r, rng.normal(size=3)
        words = np.zeros(14)
        halves = words.view(np.uint32)
        pairs = np.array([[24, 25], [26, 27]], np.intp)
        assert kernels.scatter_words(values, extra, pose, True, sources, targets, words,
                                     pairs, halves, 2 ** 32 - 5, 999_999_999) == kernels.OK
        base = np.concatenate([pose[:3, 3], rotation_to_quaternion(r)])
        want = np.concatenate([values, base, extra])[sources]
        np.testing.assert_array_equal(words[1:12].view(np.uint64), want.view(np.uint64))
        assert words[0] == 0.0
        assert halves[24:28].tolist() == [2 ** 32 - 5, 999_999_999] * 2


# steady_tick's merge arguments when it is given no JointState (b""): not read
NO_MERGE = (np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.uint8), np.zeros(0),
            np.zeros(0, np.bool_), np.zeros(0, np.bool_), np.zeros(2, np.int64))


def _steady_call(k, head, values, targets, stamps, flags, shared, scatter, mimic, size,
                 shape, w_H_b, nu, wrenches, balancing=None, balanced=0, call=None):
    """A :func:`.kernels.steady_tick` call (or ``call``'s) with no JointState (``flags``:
    with_pose, with_odometry, timeout, fd; ``shared``: words, header, generation, code;
    ``scatter``: buf, sources, places, pairs; ``mimic``: mimic, factors), its results first
    filled with 7.0: (status, out, poses, ages, state, balanced), the views at
    :func:`.kernels.steady_results_layout`'s offsets."""
    n = values.shape[1]
    at, ages_at, state_at, end = k.steady_results_layout(size, shape[0], len(stamps) - 1, n)
    fixed = k.steady_arguments(*NO_MERGE, *head, values, targets, stamps, *flags, *shared,
                               *scatter, *mimic, size, shape[0])
    results = np.full(end + balanced, 7.0)
    status = (call or k.steady_tick)(b"", 0, 0, 0, fixed, w_H_b, nu, wrenches, results,
                                     k.steady_balancing(balancing or NO_BALANCING))
    return (status, results[:at], results[at:ages_at].reshape(shape),
            results[ages_at:state_at], results[state_at:end].reshape(2, n), results[end:])


def _upright_on_two_soles(case):
    """(a state of ``case`` (iCub) upright at 0.6 m, every joint at zero: the soles flat and
    level; a sole's points (4, 3); {l_sole, r_sole: Contact})."""
    st = _states(case, 1)[0]
    st.w_H_b[:3, :3], st.w_H_b[:3, 3], st.s[:] = np.eye(3), [0.0, 0.0, 0.6], 0.0
    sole = np.array([[0.05, 0.02, 0.0], [-0.05, 0.02, 0.0], [-0.05, -0.02, 0.0],
                     [0.05, -0.02, 0.0]])
    return st, sole, {f: Contact(f, sole, [0, 0, 1], 0.6) for f in ("l_sole", "r_sole")}


def test_the_steady_tick_kernel_is_tick_share_and_scatter_in_one_call(pairs):
    """:func:`.kernels.steady_tick` (the node's steady tick): the ages (tick - input) * 1e-9,
    the positions and velocities copied with the mimic joints filled as MimicJoints fills
    them, the tick's out and poses as PreparedTick.run's (the efforts its torques), the state
    words as share_state's with the sequence word two on, and the buffer as scatter_words
    would write it from the out,
    the base pose and the ages (NumPy: indices and rotation_to_quaternion), bit for bit; a
    wrench older than the timeout (STALE) or a NaN (the tick's status) writes nothing."""
    from kin_dyn_ros.dynamics.model import MimicJoints
    from kin_dyn_ros.dynamics.quaternions import rotation_to_quaternion
    case, fast, _ = _pair(pairs, "icub", "MIXED")
    k, st, links = jit_path(), _states(case, 1)[0], case.links
    prepared = fast.prepared_tick({links[-1]: (links[1], np.linspace(-3.0, 4.0, 6))})
    _, head, wrench, size, shape = prepared.arguments()
    n, m = len(st.s), size + 7 + 2
    sources = np.random.default_rng(5).permutation(m)[:60].astype(np.intp)
    places, pairs_at = np.arange(1, 61, dtype=np.intp), np.array([[124, 125]], np.intp)
    stamp = 1_700_000_000_123_456_789
    stamps = np.array([stamp, stamp - 5_000_001, stamp + 20_000_003], np.int64)

    def call(s, stamps, timeout=0.1, direct=None):      # (no JointState to merge: b"")
        words, buf = np.zeros(7 + 22 + 2 * n), np.zeros(8 * 63, np.uint8)
        words[0] = 4.0
        status, out, poses, ages, state, _ = _steady_call(
            k, head, np.stack([s, st.s_dot, st.tau]), wrench[0], stamps,
            (True, True, timeout, True), (words, 7, 3, 2), (buf, sources, places, pairs_at),
            (mimic, factors), size, shape, st.w_H_b, st.base_vel, wrench[1], call=direct)
        return status, out, poses, ages, words, buf, state

    # joint 4 mimics joint 1 (x -2, + 0.5) and joint 6 joint 2 (x 0.75), as MimicJoints fills
    mimic, factors = np.array([[4, 6], [1, 2]], np.int64), np.array([[-2.0, 0.75], [0.5, 0.0]])
    s = st.s.copy()
    s[[4, 6]] = [3.0, -3.0]                            # (replaced by the masters')
    status, out, poses, ages, words, buf, state = call(s, stamps)
    assert status == k.OK
    assert ages.tolist() == [5_000_001 * 1e-9, -20_000_003 * 1e-9]
    names = case.joints
    filled = MimicJoints(names, {names[j]: (names[master], f, o)
                                 for j, master, f, o in zip(*mimic, *factors)})
    s, s_dot = filled.positions(s), filled.velocities(st.s_dot)
    np.testing.assert_array_equal(state, [s, s_dot])
    want_out, want_poses = prepared.run(st.w_H_b, s, st.base_vel, s_dot, st.tau)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(poses, want_poses)
    want_words = np.zeros_like(words)
    k.share_state(want_words, want_words.view(np.uint64), 7, 3, 2, st.w_H_b, s,
                  st.base_vel, s_dot)
    want_words[0] = 6.0
    np.testing.assert_array_equal(words.view(np.uint64), want_words.view(np.uint64))
    base = np.concatenate([st.w_H_b[:3, 3], rotation_to_quaternion(st.w_H_b[:3, :3])])
    f64, u32 = buf.view(np.float64), buf.view(np.uint32)
    want = np.concatenate([want_out, base, ages])[sources]
    np.testing.assert_array_equal(f64[1:61].view(np.uint64), want.view(np.uint64))
    assert u32[124:126].tolist() == [stamp // 10**9 % 2**32, 123_456_789]
    stale = stamps.copy()
    stale[2] = stamp - 100_000_001                   # older than the 0.1 s timeout
    # results too short for their layout: BAD_SHAPE before anything is written
    end = k.steady_results_layout(size, shape[0], len(stamps) - 1, n)[-1]
    fixed = k.steady_arguments(*NO_MERGE, *head, np.stack([st.s, st.s_dot, st.tau]),
                               wrench[0], stamps, True, True, 0.1, True, np.zeros(0), 7, 3, 2,
                               np.zeros(8, np.uint8), sources, places, pairs_at, mimic,
                               factors, size, shape[0])
    short = np.full(end - 1, 7.0)
    assert k.steady_tick(b"", 0, 0, 0, fixed, st.w_H_b, st.base_vel, wrench[1], short,
                         k.steady_balancing(NO_BALANCING)) == k.BAD_SHAPE
    assert (short == 7.0).all()
    entry = direct(k.steady_tick)[0]          # (its code, without numba's dispatch: the same)
    for times in (stamps, stale):
        got, want = call(s, times, direct=entry), call(s, times)
        assert got[0] == want[0] and all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                                         for a, b in zip(got[1:], want[1:]))
    for s, times, code in ((st.s, stale, k.STALE), (st.s + np.nan, stamps, k.NOT_FINITE)):
        status, out, _, _, words, buf, _ = call(s, times)
        assert status == code
        assert words[0] == 4.0 and not words[1:].any() and not buf.any()
        assert code != k.STALE or (out == 7.0).all()


def test_direct_calls_take_only_arrays_of_the_kernels_types():
    """:func:`.compiled.direct_arrays`: only aligned, writable, C-contiguous float64 ndarrays
    of the dimensions given (what the compiled code reads without numba's dispatch);
    :func:`.compiled.direct` gives the one signature's code and types, None for a kernel
    of several signatures; :func:`.compiled.direct_call` the code only for arguments of
    the signature's types."""
    a = np.eye(4)
    readonly = a.copy()
    readonly.flags.writeable = False
    unaligned = np.frombuffer(bytearray(8 * 16 + 1), np.uint8)[1:].view(np.float64)
    assert direct_arrays((a, 2), (a[0], 1), (np.zeros(0), 1))
    for wrong in ((a, 1), (a.T, 2), (a[:, :2], 2), (readonly, 2), (a.astype(np.float32), 2),
                  (a.view(type('Sub', (np.ndarray,), {})), 2), (a.tolist(), 2), (unaligned, 1)):
        assert not direct_arrays((a, 2), wrong), wrong
    k = jit_path()
    assert k.steady_results_layout(5, 2, 3, 4) == (5, 37, 40, 48)     # (compiled, or loaded)
    entry, types = direct(k.steady_results_layout)
    assert entry(5, 2, 3, 4) == (5, 37, 40, 48)
    assert len(types) == 4
    # direct_call: the code when the arguments kept are of the signature's types, else the
    # dispatcher (which converts or refuses them)
    assert direct_call(k.steady_results_layout, {0: 5, 3: 4}) is entry
    for kept in ({0: 5.0}, {3: np.zeros(1)}, {1: "2"}):
        assert direct_call(k.steady_results_layout, kept) is k.steady_results_layout
    import numba
    twice = numba.njit(lambda x: 2 * x)
    assert twice(1) == 2 and twice(0.5) == 1.0          # (two signatures)
    assert direct(twice) is None and direct(lambda x: 2 * x) is None


def test_the_steady_tick_kernel_writes_the_balance_outputs_as_balance_and_scatter(pairs):
    """:func:`.kernels.steady_tick` with ``balanced`` (the node's balance outputs read): the
    balance vector as :func:`.kernels.balance` gives it on the tick's poses, CoM and CoM
    velocity (PreparedTick.balance_vector), bit for bit; the balance messages' buffer written
    as scatter_words writes it from that vector (its sources: the vector, a pose, one 0.0)
    only while the CoPs' defined flags are the pattern given (state [OK, 1]); another
    pattern, or no contact active, leaves the buffer alone (state [OK, 0]); an active contact
    that is not a sole gives NOT_SOLES; an empty ``balanced``: nothing computed."""
    case, fast, _ = _pair(pairs, "icub", "MIXED")
    k, (st, sole, feet) = jit_path(), _upright_on_two_soles(case)
    _, head, _, size, shape = fast.prepared_tick({}).arguments()
    stamp = 1_700_000_000_123_456_789

    def call(prepared, balanced, balancing):
        targets, wrenches = prepared.arguments()[2]
        status, out, poses, _, _, got = _steady_call(
            k, head, np.stack([st.s, st.s_dot, st.tau]), targets,
            np.array([stamp, 0], np.int64), (False, False, 0.1, False),
            (np.zeros(0), 7, 3, 2), (np.zeros(8, np.uint8), *NO_BALANCING[13:16]),
            (np.zeros((2, 0), np.int64), np.zeros((2, 0))), size, shape, st.w_H_b,
            st.base_vel, wrenches, balancing, len(balanced))
        balanced[:] = got
        return status, out, poses

    seen = []
    for forces, pattern, contacts in (((150.0, 90.0), (1, 1), feet),
                                      ((150.0, 2.0), (1, 0), feet),
                                      ((2.0, 3.0), (1, 1), feet),
                                      ((150.0, 90.0), (1, 1),
                                       {**feet, "r_sole": Contact("r_sole", sole[:2],
                                                                  [0, 0, 1], 0.6)})):
        prepared = fast.prepared_tick({f: (f, [1.0, -2.0, force, 0.3, -0.2, 0.1])
                                       for f, force in zip(feet, forces)})
        names, lay, model = prepared.balance_arguments(contacts, 20.0)
        m = lay[-1]
        sources = np.random.default_rng(3).permutation(np.arange(m + 8))[:20].astype(np.intp)
        places, stamp_at = np.arange(1, 21, dtype=np.intp), np.array([[44, 45]], np.intp)
        for given in (pattern, (1 - pattern[0], pattern[1])):
            buf, state = np.zeros(8 * 23, np.uint8), np.full(2, 7, np.int64)
            balanced = np.full(m, 7.0)
            status, out, poses = call(prepared, balanced, (
                *model, np.array(given, np.int64), buf, sources, places, stamp_at, state))
            assert status == k.OK
            vector = prepared.balance_vector(st.w_H_b, out, poses, contacts, 20.0)
            if vector is None:              # (balance's own kernel: not a sole)
                assert contacts is not feet and state.tolist() == [k.NOT_SOLES, 0]
                assert not buf.any()
                seen.append("not soles")
                continue
            assert vector[0] == names and state[0] == k.OK
            want = vector[1]
            np.testing.assert_array_equal(balanced.view(np.uint64), want.view(np.uint64))
            defined = tuple(int(want[5 * i + 4] > 0.0) for i in range(2))
            written = want[lay[0]] > 0 and given == defined
            assert state[1] == written
            seen.append(written)
            if not written:
                assert not buf.any()
                continue
            f64, u32 = buf.view(np.float64), buf.view(np.uint32)
            expected = np.concatenate([want, np.zeros(8)])[sources]
            np.testing.assert_array_equal(f64[1:21].view(np.uint64), expected.view(np.uint64))
            assert u32[44:46].tolist() == [stamp // 10**9 % 2**32, 123_456_789]
    assert seen == [True, False, True, False, False, False, "not soles", "not soles"]
    state = np.full(2, 7, np.int64)
    call(prepared, EMPTY, (*model, *NO_BALANCING[11:16], state))
    assert state.tolist() == [7, 7]


# ------------------------------------------------------------------------ balance

def _balance_cases(rng, n):
    """(name, w_H_b, s, gravity-free tweaks) of iCub states for the balance comparison:
    random postures (the soles then on different planes: the lowest-point ground), the zero
    posture with the soles on one plane, and the robot upside down (the CoM below the
    ground: no pendulum)."""
    upright = np.eye(4)
    upright[2, 3] = 0.6
    flipped = np.diag([1.0, -1.0, -1.0, 1.0])          # (the soles above the CoM)
    yield "coplanar", upright, np.zeros(n)
    yield "upside_down", flipped, np.zeros(n)
    for k in range(6):
        w_H_b = upright.copy()
        w_H_b[:3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0] if k % 2 else np.eye(3)
        if np.linalg.det(w_H_b[:3, :3]) < 0:
            w_H_b[:3, 0] *= -1.0
        yield f"random{k}", w_H_b, rng.uniform(-0.4, 0.4, n)


def _same_balance(ours, ref, what):
    assert ours.names == ref.names and ours.active == ref.active, what
    for i, (a, b) in enumerate(zip(ours.cops, ref.cops)):
        assert a.reason == b.reason and (a.point is None) == (b.point is None), (what, i)
        assert_close(a.normal_force, b.normal_force, f"{what} cop {i} fn", RTOL)
        if b.point is not None:
            assert_close(a.point, b.point, f"{what} cop {i}", RTOL)
    if ref.ground is None:
        assert ours.ground is None and ours.zmp is None and ours.divergence is None, what
        return
    assert_close(ours.ground.point, ref.ground.point, f"{what} ground point", RTOL)
    assert_close(ours.ground.normal, ref.ground.normal, f"{what} ground normal", RTOL)
    assert ours.zmp.reason == ref.zmp.reason, what
    assert_close(ours.zmp.normal_force, ref.zmp.normal_force, f"{what} zmp fn", RTOL)
    if ref.zmp.point is not None:
        assert_close(ours.zmp.point, ref.zmp.point, f"{what} zmp", RTOL)
    a, b = ours.divergence, ref.divergence
    assert a.reason == b.reason and (a.dcm is None) == (b.dcm is None), what
    assert_close(a.height, b.height, f"{what} height", RTOL)
    if b.dcm is not None:
        for field in ("dcm", "capture_point", "omega"):
            assert_close(getattr(a, field), getattr(b, field), f"{what} {field}", RTOL)


@pytest.mark.parametrize("gravity", [(0.0, 0.0, -9.81), (1.2, -0.7, -9.7)])
def test_balance_kernel_equals_the_numpy_balance(model_cases, gravity, rng):
    """compute_tick's balance on the compiled path (kernels.balance, NOT_SOLES falling back)
    against the NumPy core's, iCub's soles and a line contact: CoPs, activity, their
    reasons, the ground plane (one plane, the lowest point), ZMP, DCM, capture point, no
    pendulum; wrenches missing, below the threshold, in the link's or another frame."""
    from kin_dyn_ros.dynamics.contacts import Contact
    urdf, joints = model_cases["icub"].urdf, model_cases["icub"].core_joints
    fast = KinDynComputations(urdf, joints, gravity=np.array(gravity), compiled=True)
    ref = KinDynComputations(urdf, joints, gravity=np.array(gravity), compiled=False)
    sole = np.array([[0.08, 0.035, 0.0], [-0.05, 0.035, 0.0], [-0.05, -0.03, 0.0],
                     [0.08, -0.03, 0.0]])
    feet = {"l_sole": Contact("l_sole", sole, [0, 0, 1], 0.6),
            "r_sole": Contact("r_sole", sole, [0, 0, 1], 0.6)}
    edge = {**feet, "r_sole": Contact("r_sole", sole[:2], [0, 0, 1], 0.6)}     # a line
    n, seen = fast.NDoF, set()
    for name, w_H_b, s in _balance_cases(rng, n):
        for contacts in (feet, edge):
            for trial in range(4):
                wrench = lambda: np.concatenate([rng.normal(0, 20, 2),     # noqa: E731
                                                 [rng.uniform(30.0, 300.0)], rng.normal(0, 3, 3)])
                wrenches = {"l_sole": ("l_sole", wrench()),
                            "r_sole": ("r_ankle_2" if trial % 2 else "r_sole", wrench())}
                if trial == 2:
                    del wrenches["r_sole"]                  # no measured wrench
                threshold = 1e9 if trial == 3 and contacts is feet else 5.0
                args = (w_H_b, s, rng.normal(size=6), rng.normal(size=n), None, wrenches,
                        contacts, threshold)
                for rep in ("MIXED", "BODY_FIXED"):
                    for kd in (fast, ref):
                        kd.set_frame_velocity_representation(core_representation(rep))
                    expected = ref.compute_tick(*args).balance
                    _same_balance(fast.compute_tick(*args).balance, expected,
                                  f"{name} {trial} {rep}")
                    centre = lambda i: ref.forward_kinematics(             # noqa: E731
                        list(contacts)[i], w_H_b, s)[:3] @ np.append(sole.mean(axis=0), 1.0)
                    seen.update(_balance_kinds(expected, contacts is edge, centre))
    assert seen == {"no wrench", "below threshold", "no active contact", "one plane",
                    "lowest point", "no pendulum", "pendulum", "not a sole"}, seen


def test_while_the_contact_kernels_load_the_tick_computes_them_in_numpy(pairs, monkeypatch):
    """The first seconds of a cold start (the contact mechanics' kernels still loading:
    ``contacts_ready()`` False): the compiled tick calls none of them; its balance, a
    frame's world pose and the support hull come from NumPy (the NumPy core's, 1e-12), its
    contact points are None (the node's NumPy way); once loaded, the kernels again."""
    from kin_dyn_ros.dynamics import compiled
    case, fast, ref = _pair(pairs, "icub", "MIXED")
    st, _, feet = _upright_on_two_soles(case)
    wrenches = {f: (f, [1.0, -2.0, 150.0, 0.3, -0.2, 0.1]) for f in feet}
    args = (st.w_H_b, st.s, st.base_vel, st.s_dot, None, wrenches, feet, 20.0)
    frame = fast.frame_names.index("r_sole")
    axes, up = ground_axes(fast.gravity), np.array([0.0, 0.0, 1.0])

    def support(result):
        poses = [result.world_H_frame(fast.frame_names.index(f)) for f in feet]
        return hull_support(tuple(feet.values()), poses, result.com, axes, up, tuple(feet))
    compiled_support = support(fast.compute_tick(*args))          # (the kernels')
    calls = []
    for name in ("balance", "contact_points", "world_frame_pose"):
        kernel = getattr(fast._jit, name)
        monkeypatch.setattr(fast._jit, name, lambda *a, _k=kernel, _n=name: (
            calls.append(_n), _k(*a))[1])
    monkeypatch.setattr(compiled.jit_path(), "support_hull", None)     # (a call would fail)
    monkeypatch.setattr(compiled.jit_path(), "polygon_margin", None)
    loading = compiled._CONTACT_READY
    loading.clear()
    try:
        assert not compiled.contacts_ready() and compiled.contact_kernels() is None
        got, want = fast.compute_tick(*args), ref.compute_tick(*args)
        _same_balance(got.balance, want.balance, "loading")
        assert got.contact_points() is None
        assert_close(got.world_H_frame(frame), want.world_H_frame(frame), "pose", 1e-12)
        numpy_support = support(got)
        assert numpy_support.inside and len(numpy_support.points) >= 4
        assert_close(numpy_support.points, compiled_support.points, "support", 1e-12)
        assert_close(numpy_support.margin, compiled_support.margin, "margin", 1e-12)
        assert calls == []
    finally:
        loading.set()
    monkeypatch.undo()
    assert fast.compute_tick(*args).contact_points() is not None


def _balance_kinds(res, edge, centre):
    """Which branches of balance() a result took (``centre``(i): contact i's sole centre in
    the world: the ground's point when the active soles are on one plane)."""
    kinds = {"no wrench" if c.reason == "no wrench" else "below threshold"
             for c in res.cops if c.reason}
    if res.ground is None:
        return kinds | {"no active contact"}
    if edge and 1 in res.active:
        return kinds | {"not a sole"}            # (the NumPy path's SVD ground)
    one_plane = np.allclose(res.ground.point, centre(res.active[0]), rtol=0, atol=1e-12)
    kinds.add("one plane" if one_plane else "lowest point")
    kinds.add("pendulum" if res.divergence.dcm is not None else "no pendulum")
    return kinds


# ------------------------------------------------------------------------ support polygon

def _support_scenes(rng, count):
    """(contacts, poses, com) of 1-3 contacts whose points are random, one point repeated,
    collinear, on a coarse grid (ties in x and in y) or a sole's four corners; each link
    turned at random or level, the CoM anywhere near them."""
    sole = np.array([[0.1, 0.05, 0], [-0.05, 0.05, 0], [-0.05, -0.04, 0], [0.1, -0.04, 0]])
    kinds = (lambda n: rng.normal(size=(n, 3)) * 0.1,
             lambda n: np.repeat(rng.normal(size=(1, 3)), n, axis=0),
             lambda n: np.outer(rng.uniform(-1, 1, n), rng.normal(size=3)),
             lambda n: np.round(rng.normal(size=(n, 3)), 1),
             lambda n: sole)
    for _ in range(count):
        k = int(rng.integers(1, 4))
        contacts = tuple(Contact(f"c{i}", kinds[rng.integers(len(kinds))](rng.integers(1, 9)),
                                 [0, 0, 1], 0.5) for i in range(k))
        poses = []
        for _ in range(k):
            h = np.eye(4)
            if rng.integers(2):
                h[:3, :3] = Rotation.random(random_state=rng).as_matrix()
            h[:3, 3] = rng.normal(size=3) * 0.3
            poses.append(h)
        yield contacts, poses, rng.normal(size=3) * 0.2


@pytest.fixture
def numpy_support(monkeypatch):
    """call(f, *args): f on the NumPy path of :mod:`.contacts` (no compiled kernels)."""
    def call(f, *args):
        with monkeypatch.context() as patch:
            patch.setattr(contacts_module, "contact_kernels", lambda: None)
            return f(*args)
    return call


@pytest.mark.parametrize("gravity", [(0.0, 0.0, -9.81), (1.2, -0.7, -9.7)])
def test_support_hull_equals_the_numpy_hull(pairs, numpy_support, gravity, rng):
    """hull_support (the node's support polygon and margin) and SupportPolygon.margin on the
    compiled path (kernels.support_hull, kernels.polygon_margin) against the NumPy path, on
    600 scenes with degenerate hulls (a point, a segment, ties): the same vertex count and
    every number to 1e-12."""
    assert compiled_kernels() is not None            # (pairs loaded a compiled model)
    axes, up = ground_axes(gravity), -np.asarray(gravity) / np.linalg.norm(gravity)
    counts = set()
    for contacts, poses, com in _support_scenes(rng, 600):
        names = tuple(c.link for c in contacts)
        ours = hull_support(contacts, poses, com, axes, up, names)
        ref = numpy_support(hull_support, contacts, poses, com, axes, up, names)
        assert ours.polygon.vertices.shape == ref.polygon.vertices.shape
        counts.add(min(len(ref.polygon.vertices), 3))
        for got, want, what in ((ours.polygon.vertices, ref.polygon.vertices, "vertices"),
                                (ours.points, ref.points, "plane points"),
                                (ours.com_projection, ref.com_projection, "projection"),
                                (ours.height, ref.height, "height"),
                                (ours.margin, ref.margin, "margin")):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=what)
        assert (ours.inside, ours.names, ours.contacts) == (ref.inside, ref.names, ref.contacts)
        if len(ref.polygon.vertices) >= 3:
            for got, want in zip(ours.polygon.halfplanes, ref.polygon.halfplanes):
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        for point in (rng.normal(size=3) * 0.3, rng.normal(size=2) * 0.1, com):
            np.testing.assert_allclose(
                ours.polygon.margin(point), numpy_support(ref.polygon.margin, point),
                rtol=0, atol=1e-12)
    assert counts == {1, 2, 3}, counts        # a point, a segment and polygons were seen


def test_polygon_margin_names_a_wrong_point_as_the_numpy_path(pairs):
    """A wrong point takes the NumPy path, which names it; other types (a list) the same
    answer."""
    polygon = hull_support((Contact("c", np.eye(3), [0, 0, 1], 0.5),), [np.eye(4)],
                           np.zeros(3), ground_axes((0, 0, -9.81)), np.array([0, 0, 1.0]),
                           ("c",)).polygon
    assert polygon._lines is not None and compiled_kernels() is not None
    for point, message in ((np.zeros(4), "point"), (np.array([np.nan, 0.0]), "point")):
        with pytest.raises(ValueError, match=message):
            polygon.margin(point)
    assert polygon.margin([0.2, 0.2, 5.0]) == polygon.margin(np.array([0.2, 0.2, 5.0]))
