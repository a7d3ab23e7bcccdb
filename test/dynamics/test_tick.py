"""compute_tick: the node's per-tick call equals the standalone calls and the references."""

import numpy as np
import pytest
from oracles import PinocchioOracle, assert_close

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics import algorithms as alg
from kin_dyn_ros.dynamics.spatial import homogeneous, so3_exp, wrench_transform


@pytest.fixture(scope="module")
def icub(icub_urdf):
    return KinDynComputations(icub_urdf)


@pytest.fixture(scope="module")
def state(icub):
    rng = np.random.default_rng(7)
    n = icub.NDoF
    return dict(w_H_b=homogeneous(so3_exp(rng.normal(size=3)), rng.normal(size=3)),
                s=rng.uniform(-1, 1, n), base_vel=rng.normal(size=6), s_dot=rng.normal(size=n),
                tau=rng.normal(scale=5, size=n),
                wrenches={"l_sole": ("l_sole", rng.normal(scale=50, size=6)),
                          "r_sole": ("r_foot", rng.normal(scale=50, size=6))})


def _as_mixed_wrenches(kd, st):
    """Sensor-frame wrenches -> MIXED external wrenches at each link's origin, world axes."""
    out = {}
    for link, (expressed, w) in st["wrenches"].items():
        w_H_e = kd.forward_kinematics(expressed, st["w_H_b"], st["s"])
        w_world = wrench_transform(w_H_e) @ w            # about the world origin
        o = kd.forward_kinematics(link, st["w_H_b"], st["s"])[:3, 3]
        shift = np.eye(6)
        shift[3:, :3] = -np.array([[0, -o[2], o[1]], [o[2], 0, -o[0]], [-o[1], o[0], 0]])
        out[link] = shift @ w_world
    return out


def _mixed_to(rep, w_H_f, w):
    """A wrench at F's origin with world axes (MIXED), in ``rep``'s convention for frame F."""
    r, o = w_H_f[:3, :3], w_H_f[:3, 3]
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        return np.concatenate([r.T @ w[:3], r.T @ w[3:]])
    if rep == Representations.INERTIAL_FIXED_REPRESENTATION:
        return np.concatenate([w[:3], w[3:] + np.cross(o, w[:3])])
    return w


@pytest.mark.parametrize("representation", list(Representations))
def test_tick_equals_the_standalone_calls(icub, state, representation):
    rep = representation
    icub.set_frame_velocity_representation(rep)
    st = state
    args = (st["w_H_b"], st["s"])
    tick = icub.compute_tick(*args, st["base_vel"], st["s_dot"], st["tau"], st["wrenches"])
    for i, name in enumerate(tick.frame_names[:5]):      # one pose alone, before all of them
        assert_close(tick.world_H_frame(i), icub.forward_kinematics(name, *args), name)
    for i, name in enumerate(tick.frame_names):
        assert_close(tick.world_H_frames[i], icub.forward_kinematics(name, *args), name)
        assert_close(tick.world_H_frame(i), tick.world_H_frames[i], name)
    nu = np.concatenate([st["base_vel"], st["s_dot"]])
    mass = icub.get_total_mass()
    assert_close(tick.com, icub.CoM_position(*args), "com")
    assert_close(tick.com_velocity, icub.CoM_jacobian(*args) @ nu, "com velocity")
    assert_close(tick.centroidal_momentum, icub.centroidal_momentum_matrix(*args) @ nu, "momentum")
    assert_close(tick.centroidal_momentum[:3], mass * tick.com_velocity, "m v_com")
    assert_close(tick.gravity_torques, icub.gravity_term(*args)[6:], "gravity torques")
    icub.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    mixed = _as_mixed_wrenches(icub, st)
    icub.set_frame_velocity_representation(rep)
    ext = {link: _mixed_to(rep, icub.forward_kinematics(link, *args), w) for link, w in mixed.items()}
    nu_dot = icub.aba(*args, st["base_vel"], st["s_dot"], st["tau"], ext)
    assert_close(tick.base_acceleration, nu_dot[:6], "base acceleration")
    assert_close(tick.joint_accelerations, nu_dot[6:], "joint accelerations")
    assert tick.representation == rep


@pytest.mark.parametrize("solver", ["cholesky", "lu"])
def test_tick_forward_dynamics_against_pinocchio(icub, icub_urdf, icub_joints, state, solver,
                                                 monkeypatch):
    """Independent reference: Pinocchio's ABA with the same two foot wrenches (BODY_FIXED);
    with SciPy's Cholesky solve and with NumPy's LU (the core without SciPy)."""
    if solver == "lu":
        monkeypatch.setattr(alg, "_dposv", None)
    else:
        assert alg._dposv is not None          # SciPy is a test dependency
    st = state
    ref = PinocchioOracle(icub_urdf, icub_joints, None, icub.gravity)
    icub.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    mixed = _as_mixed_wrenches(icub, st)
    rep = "MIXED"
    tick = icub.compute_tick(st["w_H_b"], st["s"], st["base_vel"], st["s_dot"], st["tau"],
                             st["wrenches"])
    expected = ref.aba(rep, st["w_H_b"], st["s"], st["base_vel"], st["s_dot"], st["tau"], mixed)
    assert_close(np.concatenate([tick.base_acceleration, tick.joint_accelerations]), expected,
                 "tick forward dynamics vs Pinocchio")


def test_tick_without_torques_skips_forward_dynamics(icub, state):
    tick = icub.compute_tick(state["w_H_b"], state["s"], state["base_vel"], state["s_dot"])
    assert tick.base_acceleration is None and tick.joint_accelerations is None


@pytest.mark.parametrize("with_tau", [True, False])
def test_packed_holds_each_field_where_packed_offsets_says(icub, state, with_tau):
    """TickResult.packed (the node renders its outputs from it) is every field at the
    offsets of packed_offsets, NaN for the accelerations without forward dynamics; on the
    path this process runs (CI runs both)."""
    from kin_dyn_ros.dynamics.computations import packed_offsets
    tau = state["tau"] if with_tau else None
    r = icub.compute_tick(state["w_H_b"], state["s"], state["base_vel"], state["s_dot"], tau)
    n, packed = icub.NDoF, r.packed
    at = packed_offsets(n)
    assert packed.shape == (at["end"],)
    nan = np.full(6 + n, np.nan)
    fields = {"joint_transforms": r.joint_transforms.ravel(),
              "joint_quaternions": r.joint_quaternions.ravel(), "com": r.com,
              "com_velocity": r.com_velocity, "centroidal_momentum": r.centroidal_momentum,
              "gravity_torques": r.gravity_torques,
              "base_acceleration": nan[:6] if tau is None else r.base_acceleration,
              "joint_accelerations": nan[6:] if tau is None else r.joint_accelerations,
              "massless": [len(r.massless_joints)]}
    for name, value in fields.items():
        np.testing.assert_array_equal(packed[at[name]:at[name] + len(value)], value, name)


def test_tick_rejects_bad_input_with_the_name(icub, state):
    with pytest.raises(ValueError, match="s_dot"):
        icub.compute_tick(state["w_H_b"], state["s"], state["base_vel"], state["s_dot"][:-1])
    with pytest.raises(ValueError, match="NaN"):
        icub.compute_tick(state["w_H_b"], state["s"] * np.nan, state["base_vel"], state["s_dot"])
    with pytest.raises(ValueError, match="unknown frame 'nope'"):
        icub.compute_tick(state["w_H_b"], state["s"], state["base_vel"], state["s_dot"],
                          state["tau"], {"nope": ("l_sole", np.zeros(6))})


def test_contact_points_are_the_forces_the_balance_and_the_support(icub, icub_urdf):
    """``TickResult.contact_points`` (one compiled kernel call) holds, where its layout
    says: each contact's link origin and its wrench's force in the world (the frame poses
    by forward_kinematics, rotated by hand), whether it has one; the Balance's CoPs, ZMP and
    capture point (the NumPy core's) with their margins to the support polygon of the active
    contacts (``ground_support``'s, ``SupportPolygon.margin``); that support's outline
    closed, the CoM's margin and projection. None on the NumPy core and where an active
    contact is not a flat sole."""
    from kin_dyn_ros.dynamics.compiled import jit_status
    from kin_dyn_ros.dynamics.contacts import Contact, ground_support
    if not icub.compiled:
        pytest.skip(f"the NumPy core runs here: {jit_status().describe()}")
    icub.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    sole = np.array([[0.1, 0.04, 0.0], [-0.05, 0.04, 0.0], [-0.05, -0.04, 0.0],
                     [0.1, -0.04, 0.0]])
    contacts = {c: Contact(c, sole, [0.0, 0.0, 1.0], 0.6) for c in ("l_sole", "r_sole",
                                                                    "l_hand")}
    rng = np.random.default_rng(11)
    n = icub.NDoF
    w_H_b = homogeneous(so3_exp(0.02 * rng.normal(size=3)), [0.0, 0.0, 0.6])
    s, nu, s_dot = 0.02 * rng.normal(size=n), rng.normal(size=6), rng.normal(size=n)
    # r_sole's wrench (140 N up its sole's normal) given in the axes of r_foot, about its origin
    h = np.linalg.solve(icub.forward_kinematics("r_foot", w_H_b, s),
                        icub.forward_kinematics("r_sole", w_H_b, s))
    f = h[:3, :3] @ [1.0, -0.5, 140.0]
    numpy_kd = KinDynComputations(icub_urdf, compiled=False)
    for loaded in (("l_sole", "r_sole"), ("l_sole",), ()):
        wrenches = {"l_sole": ("l_sole", np.array([3.0, 0.4, 180.0 if "l_sole" in loaded
                                                   else 5.0, 1.0, -2.0, 0.02])),
                    "r_sole": ("r_foot", np.concatenate([
                        f * (1.0 if "r_sole" in loaded else 0.01),
                        h[:3, :3] @ [-0.5, 1.5, 0.1] + np.cross(h[:3, 3], f)]))}
        reference = numpy_kd.compute_tick(w_H_b, s, nu, s_dot, None, wrenches, contacts, 20.0)
        balance = reference.balance
        active = tuple(balance.names[i] for i in balance.active)
        assert active == loaded
        support = ground_support([contacts[c] for c in active],
                                 {c: icub.forward_kinematics(c, w_H_b, s) for c in active},
                                 reference.com, icub.gravity, active)
        tick = icub.compute_tick(w_H_b, s, nu, s_dot, None, wrenches, contacts, 20.0)
        out, lay = tick.contact_points()
        k = len(contacts)
        rows, flags = out[:lay[1]].reshape(k, 6), out[lay[1]:lay[2]]
        for i, link in enumerate(contacts):
            if link not in wrenches:
                assert flags[i] == 0.0 and not rows[i].any()
                continue
            frame, w = wrenches[link]
            expected = np.concatenate([
                icub.forward_kinematics(link, w_H_b, s)[:3, 3],
                icub.forward_kinematics(frame, w_H_b, s)[:3, :3] @ w[:3]])
            assert flags[i] == 1.0
            assert_close(rows[i], expected, f"{link}: origin and force", 1e-12)
        points = [c.point for c in balance.cops] + [balance.zmp_point, balance.capture_point]
        got = out[lay[2]:lay[3]].reshape(-1, 3)
        for i, p in enumerate(points):
            assert out[lay[3] + i] == (p is not None)
            if p is None:
                assert not got[i].any() and np.isnan(out[lay[4] + i])
                continue
            assert_close(got[i], p, f"balance point {i}", 1e-12)
            assert abs(out[lay[4] + i] - support.polygon.margin(p)) <= 1e-12
        at = lay[5]
        vertices = support.points
        closed = np.concatenate([vertices, vertices[:1]]) if len(vertices) > 1 \
            else np.repeat(vertices, 2, axis=0)
        assert out[at] == len(closed)
        assert out[at + 1] == pytest.approx(support.margin, abs=1e-12) if active \
            else out[at + 1] == -np.inf
        assert_close(out[at + 2:at + 5], support.com_projection, "CoM projection", 1e-12)
        assert_close(out[at + 5:at + 5 + closed.size], closed.ravel(), "outline", 1e-12)
    assert numpy_kd.compute_tick(w_H_b, s, nu, s_dot, None, wrenches, contacts,
                                 20.0).contact_points() is None
    point = {**contacts, "l_sole": Contact("l_sole", np.zeros(3), [0.0, 0.0, 1.0], 0.6)}
    loaded = {**wrenches, "l_sole": ("l_sole", np.array([3.0, 0.4, 180.0, 1.0, -2.0, 0.02]))}
    assert icub.compute_tick(w_H_b, s, nu, s_dot, None, loaded, point,
                             20.0).contact_points() is None


@pytest.mark.parametrize("order", [("l_sole", "r_sole"), ("r_sole", "l_sole"), ("l_sole",)],
                         ids=["contacts' order", "reversed", "one wrench"])
def test_a_renewed_prepared_tick_has_the_balance_of_its_own_wrenches(icub, icub_urdf, order):
    """The node's steady ticks: a PreparedTick renewed with each new wrench message keeps
    the contacts' arrays of the balance (its links and frames are the same) and takes only
    the new values. Its balance vector and contact points, asked in turn, are those of a
    fresh compute_tick of the same wrenches, and its ZMP the NumPy core's; with the wrenches
    in the contacts' order (row i is contact i's), another order and a contact without one."""
    from kin_dyn_ros.dynamics.contacts import Contact
    if not icub.compiled:
        pytest.skip("the NumPy core runs here")
    icub.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    sole = np.array([[0.1, 0.04, 0.0], [-0.05, 0.04, 0.0], [-0.05, -0.04, 0.0],
                     [0.1, -0.04, 0.0]])
    contacts = {c: Contact(c, sole, [0.0, 0.0, 1.0], 0.6) for c in ("l_sole", "r_sole")}
    fresh = KinDynComputations(icub_urdf)
    numpy_kd = KinDynComputations(icub_urdf, compiled=False)
    for kd in (fresh, numpy_kd):
        kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    rng = np.random.default_rng(5)
    n = icub.NDoF
    w_H_b = homogeneous(np.eye(3), [0.0, 0.0, 0.6])
    s, nu, s_dot = 0.01 * rng.normal(size=n), rng.normal(size=6), rng.normal(size=n)

    def wrenches():
        return {c: (c, np.array([*rng.normal(size=2), 100.0 + 80.0 * rng.random(),
                                 *rng.normal(size=3)])) for c in order}
    prepared = icub.prepared_tick(wrenches())
    for step in range(6):
        prepared = prepared.renewed(wrenches())
        out, poses = prepared.run(w_H_b, s, nu, s_dot)
        args = (w_H_b, s, nu, s_dot, None, prepared.frame_wrenches, contacts, 20.0)
        want = fresh.compute_tick(*args)
        if step % 2:
            vector = prepared.balance_vector(w_H_b, out, poses, contacts, 20.0)
            np.testing.assert_array_equal(vector[1], want.balance_vector[1])
        else:
            got, lay = prepared.result(w_H_b, out, poses, False, contacts,
                                       20.0).contact_points()
            end = lay[5] + 5 + 3 * int(got[lay[5]])           # (the outline written)
            np.testing.assert_array_equal(got[:end], want.contact_points()[0][:end])
        zmp = numpy_kd.compute_tick(*args).balance.zmp_point
        assert_close(want.balance.zmp_point, zmp, "ZMP", 1e-12)


def test_contact_points_are_computed_once_per_result(icub):
    """The markers and the contact mechanics of one tick read the same vector: the second
    call gives the first one's objects, without a kernel call."""
    from kin_dyn_ros.dynamics.contacts import Contact
    if not icub.compiled:
        pytest.skip("the NumPy core runs here")
    sole = np.array([[0.1, 0.04, 0.0], [-0.05, 0.04, 0.0], [-0.05, -0.04, 0.0]])
    contacts = {"l_sole": Contact("l_sole", sole, [0.0, 0.0, 1.0], 0.6)}
    n = icub.NDoF
    tick = icub.compute_tick(np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n), None,
                             {"l_sole": ("l_sole", np.array([0, 0, 100.0, 0, 0, 0]))},
                             contacts, 20.0)
    first = tick.contact_points()
    calls = []
    real = icub._contact_points
    icub._contact_points = lambda *a: calls.append(a) or real(*a)
    try:
        again = tick.contact_points()
    finally:
        del icub._contact_points
    assert again[0] is first[0] and again[1] is first[1] and not calls
