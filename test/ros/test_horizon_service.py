"""``~/get_dynamics_horizon`` of kin_dyn_node over real rclpy and loopback DDS: a 50-knot
horizon against the core's single-state calls (in the test's process) and Pinocchio, its
layout, and bad requests, answered by the services' process (the default) and by the
node's own (``services_process: false``).

Run:  source scripts/env.sh && python -m pytest test/ros/test_horizon_service.py
"""

import pathlib
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from rclpy.parameter import Parameter

from kin_dyn_ros.dynamics import Representations
from kin_dyn_ros.dynamics.compiled import jit_status
from kin_dyn_ros.dynamics.spatial import so3_exp
from kin_dyn_ros.node.horizon_service import SERVED
from kin_dyn_ros_interfaces.srv import GetDynamicsHorizon

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'dynamics'))
from oracles import PinocchioOracle  # noqa: E402
from ros_helpers import (load_model, loopback_context, module_namespace,  # noqa: E402
                         node_and_rig)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

NAMESPACE = module_namespace(__name__)
FRAMES = ('l_sole', 'r_hand')
K = 50
TOL = dict(rtol=1e-12, atol=1e-12)      # against the core: the same arithmetic, sent as bytes
ORACLE = dict(rtol=1e-9, atol=1e-9)     # against Pinocchio
SINGLE = {  # quantity -> the core's single-state call (kd, state k, frame)
    'mass_matrix': lambda kd, st, f: kd.mass_matrix(st.w_H_b, st.s),
    'bias_forces': lambda kd, st, f: kd.bias_force(st.w_H_b, st.s, st.nu, st.s_dot),
    'gravity_forces': lambda kd, st, f: kd.gravity_term(st.w_H_b, st.s),
    'centroidal_momentum_matrix':
        lambda kd, st, f: kd.centroidal_momentum_matrix(st.w_H_b, st.s),
    'com': lambda kd, st, f: kd.CoM_position(st.w_H_b, st.s),
    'com_jacobian': lambda kd, st, f: kd.CoM_jacobian(st.w_H_b, st.s),
    'frame_poses': lambda kd, st, f: kd.forward_kinematics(f, st.w_H_b, st.s),
    'jacobians': lambda kd, st, f: kd.jacobian(f, st.w_H_b, st.s),
    'jacobian_dot_nu': lambda kd, st, f: kd.jacobian_dot_nu(f, st.w_H_b, st.s, st.nu,
                                                            st.s_dot),
}


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(34, 66)


@pytest.fixture(scope='module', params=[True, False], ids=['services_process', 'in_process'])
def system(request, ros_context, icub_urdf):
    params = {'services_process': request.param}
    with node_and_rig(ros_context, params, 'horizon_helper', {}, NAMESPACE) as (node, rig):
        client = rig.node.create_client(GetDynamicsHorizon, rig.private('get_dynamics_horizon'))
        load_model(rig, icub_urdf, odometry=False)
        assert client.wait_for_service(timeout_sec=10.0)
        yield SimpleNamespace(node=node, rig=rig, client=client)


def horizon(ref, k=K, seed=3):
    """K states of a walking-like horizon: base poses, joints, velocities (arrays)."""
    rng = np.random.default_rng(seed)
    n = ref.NDoF
    w_H_b = np.tile(np.eye(4), (k, 1, 1))
    for i in range(k):
        w_H_b[i, :3, :3] = so3_exp(rng.normal(size=3) * 0.3)
    w_H_b[:, :3, 3] = rng.normal(size=(k, 3))
    return SimpleNamespace(w_H_b=w_H_b, s=rng.uniform(-0.6, 0.6, (k, n)),
                           nu=rng.normal(size=(k, 6)), s_dot=rng.normal(size=(k, n)))


def request_of(ref, states, **fields):
    """The request a planner fills from its arrays: one assignment per field."""
    from kin_dyn_ros.dynamics import rotations_to_quaternions
    poses = np.concatenate([states.w_H_b[:, :3, 3],
                            rotations_to_quaternions(states.w_H_b[:, :3, :3])], axis=1)
    req = GetDynamicsHorizon.Request(
        joint_names=ref.joints_name_list, positions=states.s.ravel(),
        velocities=states.s_dot.ravel(), base_poses=poses.ravel(),
        base_twists=states.nu.ravel(), frames=list(FRAMES))
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def call(system, request):
    future = system.client.call_async(request)
    assert system.rig.spin_until(future.done, timeout_s=30.0), 'no response'
    return future.result()


def as_array(multi):
    """A Float64MultiArray as the NumPy array of its layout (what a planner does)."""
    shape = [d.size for d in multi.layout.dim]
    return np.asarray(multi.data).reshape(shape)


def state(states, k):
    return SimpleNamespace(w_H_b=states.w_H_b[k], s=states.s[k], nu=states.nu[k],
                           s_dot=states.s_dot[k])


@pytest.mark.parametrize('rep', ['MIXED', 'BODY_FIXED'])
def test_a_50_knot_horizon_equals_the_single_state_calls(system, ref, rep):
    states = horizon(ref)
    res = call(system, request_of(ref, states, representation=rep))
    assert res.success, res.message
    n = 6 + ref.NDoF
    assert res.num_states == K and list(res.frames) == list(FRAMES)
    assert list(res.column_names[6:]) == ref.joints_name_list and len(res.column_names) == n
    pid = getattr(system.node.loop.planners, 'pid', None)   # the services' process
    if pid is not None:     # it loaded the compiled kernels for the horizon (where they run)
        maps = pathlib.Path(f'/proc/{pid}/maps').read_text()
        assert ('llvmlite' in maps) == jit_status().compiled
    ref.set_frame_velocity_representation(rep)
    try:
        for name in SERVED:
            got = as_array(getattr(res, name))
            for k in (0, 17, K - 1):
                st = state(states, k)
                if got.ndim > 1 and got.shape[1] == len(FRAMES) and name in (
                        'frame_poses', 'jacobians', 'jacobian_dot_nu'):
                    for j, frame in enumerate(FRAMES):
                        np.testing.assert_allclose(got[k, j], SINGLE[name](ref, st, frame),
                                                   **TOL, err_msg=f'{name} {k} {frame}')
                else:
                    np.testing.assert_allclose(got[k], SINGLE[name](ref, st, None), **TOL,
                                               err_msg=f'{name} state {k}')
    finally:
        ref.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)


def test_the_horizon_agrees_with_pinocchio(system, ref, icub_urdf):
    pin = PinocchioOracle(icub_urdf, ref.joints_name_list)
    states = horizon(ref, k=4, seed=8)
    res = call(system, request_of(ref, states, representation='BODY_FIXED'))
    assert res.success, res.message
    mass, bias = as_array(res.mass_matrix), as_array(res.bias_forces)
    jac = as_array(res.jacobians)
    for k in range(4):
        st = state(states, k)
        np.testing.assert_allclose(mass[k], pin.mass_matrix('BODY_FIXED', st.w_H_b, st.s),
                                   **ORACLE)
        np.testing.assert_allclose(bias[k], pin.bias_force('BODY_FIXED', st.w_H_b, st.s,
                                                           st.nu, st.s_dot), **ORACLE)
        np.testing.assert_allclose(jac[k, 0], pin.jacobian('BODY_FIXED', 'l_sole', st.w_H_b,
                                                           st.s), **ORACLE)


def test_the_layout_gives_each_shape_and_only_what_was_asked(system, ref):
    states = horizon(ref, k=3)
    res = call(system, request_of(ref, states, quantities=['com', 'jacobians'],
                                  velocities=[], base_twists=[]))
    assert res.success, res.message
    n = 6 + ref.NDoF
    dims = res.jacobians.layout.dim
    assert [(d.label, d.size, d.stride) for d in dims] == [
        ('state', 3, 3 * 2 * 6 * n), ('frame', 2, 2 * 6 * n), ('row', 6, 6 * n),
        ('column', n, n)]
    assert [d.size for d in res.com.layout.dim] == [3, 3]
    for name in set(SERVED) - {'com', 'jacobians'}:
        assert not getattr(res, name).layout.dim and not len(getattr(res, name).data), name
    # no velocities: zeros (the bias of a state at rest is its gravity)
    rest = call(system, request_of(ref, states, quantities=['bias_forces', 'gravity_forces'],
                                   velocities=[], base_twists=[]))
    np.testing.assert_allclose(as_array(rest.bias_forces), as_array(rest.gravity_forces),
                               rtol=0, atol=1e-9)


def test_zero_states_answer_empty_arrays(system, ref):
    empty = SimpleNamespace(w_H_b=np.empty((0, 4, 4)), s=np.empty((0, ref.NDoF)),
                            nu=np.empty((0, 6)), s_dot=np.empty((0, ref.NDoF)))
    res = call(system, request_of(ref, empty))
    assert res.success, res.message
    assert res.num_states == 0
    assert [d.size for d in res.mass_matrix.layout.dim] == [0, 6 + ref.NDoF, 6 + ref.NDoF]


def _bad(ref, states):
    n = ref.NDoF
    nan = states.s.copy()
    nan[2, 5] = np.nan
    unit = request_of(ref, states).base_poses
    unit[7 + 6] = 2.0                    # state 1's qw
    return [
        (dict(positions=states.s.ravel()[:-1]), f'positions has {3 * n - 1} values, '
         f'expected 3 x {n}'),
        (dict(velocities=states.s_dot.ravel()[:5]), 'velocities has 5 values'),
        (dict(base_poses=unit[:-2]), 'base_poses has 19 values, expected K x 7'),
        (dict(base_twists=states.nu.ravel()[:-1]), 'base_twists has 17 values'),
        (dict(joint_names=ref.joints_name_list[:-1] + ['elbow']), "unknown joints ['elbow']"),
        (dict(joint_names=ref.joints_name_list[:-1], positions=states.s[:, :-1].ravel()),
         f"joint_names misses joints ['{ref.joints_name_list[-1]}']"),
        (dict(frames=['l_sole', 'wing']), "unknown frames ['wing']"),
        (dict(quantities=['mass_matrix', 'hessian']), "unknown quantities ['hessian']"),
        (dict(positions=nan.ravel()), 'positions of state 2 contains NaN or inf'),
        (dict(base_poses=unit), 'base_poses of state 1: quaternion'),
        (dict(representation='SIDEWAYS'), 'SIDEWAYS'),
    ]


def test_bad_requests_name_the_first_problem(system, ref):
    states = horizon(ref, k=3)
    for fields, message in _bad(ref, states):
        res = call(system, request_of(ref, states, **fields))
        assert not res.success, fields
        assert message in res.message, (message, res.message)
        assert res.num_states == 0 and not len(res.mass_matrix.data)
    good = call(system, request_of(ref, states))      # and the service goes on
    assert good.success, good.message


def test_more_states_than_horizon_max_states_are_refused(system, ref):
    states = horizon(ref, k=6)
    system.node.set_parameters([Parameter('horizon_max_states', value=5)])
    try:
        assert system.rig.spin_until(lambda: '6 states: more than horizon_max_states = 5' in
                                     call(system, request_of(ref, states)).message,
                                     timeout_s=10.0)
        assert call(system, request_of(ref, horizon(ref, k=5))).success
    finally:
        system.node.set_parameters([Parameter('horizon_max_states', value=200)])
    assert system.rig.spin_until(lambda: call(system, request_of(ref, states)).success,
                                 timeout_s=10.0)
    bad = system.node.set_parameters([Parameter('horizon_max_states', value=0)])
    assert not bad[0].successful and 'horizon_max_states' in bad[0].reason


def test_a_failure_answers_success_false_and_a_bug_is_logged():
    from kin_dyn_ros.node.services import failed_response
    logged = []
    logger = SimpleNamespace(error=logged.append)
    res = failed_response(GetDynamicsHorizon, logger, ValueError('positions has 3 values'))
    assert not res.success and res.message == 'positions has 3 values' and not logged
    res = failed_response(GetDynamicsHorizon, logger, KeyError('x'))
    assert not res.success and res.message == "internal error: KeyError('x')"
    assert logged == ["GetDynamicsHorizon failed: KeyError('x')"]
