"""bench_node.py ``--service-load --horizon`` (issue 35): a planner's horizon as the load (not
a test).

The load is one client of ``~/get_dynamics_horizon`` at HORIZON_HZ asking for HORIZON_STATES
states (iCub on its left sole, the other joints moved a little from state to state, random
velocities), every quantity, frames l_sole and r_sole. Before the first run, on the idle
node, the client process times in one run (median of ``repeats``):

- the horizon end to end (client call to response, deserialised);
- the core's batch on the same states in this process
  (``KinDynComputations.dynamics_horizon``, the compiled path when it runs);
- the response's transport: the same request answered, over DDS, by an echo service in
  this process (its own node and executor thread) that returns the node's last response
  as it is (no computation): request and response through rclpy and the middleware;
- HORIZON_STATES single ``~/get_dynamics`` calls one after the other (the same states).

The target: end to end <= 3 x core batch + transport.
"""

import threading
import time

import numpy as np

__all__ = ["HORIZON_HZ", "HORIZON_STATES", "HORIZON_FRAMES", "horizon_states",
           "horizon_request", "idle_horizon", "print_idle_horizon"]

HORIZON_HZ, HORIZON_STATES = 20.0, 50
HORIZON_FRAMES = ['l_sole', 'r_sole']
E2E_TARGET = 3.0


def horizon_states(kd, w_H_b, s, count=HORIZON_STATES, seed=5):
    """(w_H_b (K, 4, 4), s (K, n), nu (K, 6), s_dot (K, n)): the support state with every joint
    moved by up to 0.05 rad and random velocities."""
    rng = np.random.default_rng(seed)
    n = kd.NDoF
    return (np.repeat(w_H_b[None], count, axis=0), s + rng.uniform(-0.05, 0.05, (count, n)),
            rng.normal(scale=0.1, size=(count, 6)), rng.normal(scale=0.3, size=(count, n)))


def horizon_request(kd, states, frames=HORIZON_FRAMES):
    """The GetDynamicsHorizon request of ``states`` (every quantity), filled as a planner
    fills it: one assignment per field from its arrays."""
    from kin_dyn_ros.dynamics import rotations_to_quaternions
    from kin_dyn_ros_interfaces.srv import GetDynamicsHorizon
    w_H_b, s, nu, s_dot = states
    poses = np.concatenate([w_H_b[:, :3, 3], rotations_to_quaternions(w_H_b[:, :3, :3])], 1)
    return GetDynamicsHorizon.Request(joint_names=kd.joints_name_list, positions=s.ravel(),
                                      velocities=s_dot.ravel(), base_poses=poses.ravel(),
                                      base_twists=nu.ravel(), frames=list(frames))


def _median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def echo_transport(client_loop, response, repeats):
    """Median round trip [ms] of ``client_loop``'s request to an echo service (a node and
    executor thread of its own here) answering ``response`` as it is."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from kin_dyn_ros_interfaces.srv import GetDynamicsHorizon
    node = rclpy.create_node('kin_dyn_bench_horizon_echo', start_parameter_services=False)
    node.create_service(GetDynamicsHorizon, 'kin_dyn_bench_horizon_echo',
                        lambda request, answer: response)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    client = client_loop.client
    try:
        client_loop.client = client_loop.node.create_client(GetDynamicsHorizon,
                                                            'kin_dyn_bench_horizon_echo')
        client_loop.client.wait_for_service(timeout_sec=30.0)
        client_loop.call(client_loop.request)
        return float(np.median([client_loop.call(client_loop.request)[1]
                                for _ in range(repeats)]))
    finally:
        client_loop.node.destroy_client(client_loop.client)
        client_loop.client = client
        executor.shutdown()
        node.destroy_node()


def idle_horizon(kd, horizon_loop, dynamics_loop, states, repeats=20):
    """The idle node's figures [ms] (see the module): ``horizon_loop`` and ``dynamics_loop``
    are bench_node's ClientLoops of the two services (their ``call``)."""
    from rclpy.serialization import serialize_message
    from kin_dyn_ros.node.conversions import matrix_to_pose
    from kin_dyn_ros_interfaces.msg import FloatingBaseState
    from kin_dyn_ros_interfaces.srv import GetDynamics
    request = horizon_loop.request
    answers = [horizon_loop.call(request) for _ in range(repeats)]
    response = answers[-1][0]
    ok = all(r is not None and r.success for r, _ in answers)
    w_H_b, s, nu, s_dot = states
    batch = _median_ms(lambda: kd.dynamics_horizon(w_H_b, s, nu, s_dot, HORIZON_FRAMES),
                       repeats)
    wire = serialize_message(response)
    transport = echo_transport(horizon_loop, response, repeats)
    singles = [GetDynamics.Request(state=FloatingBaseState(
        joint_names=kd.joints_name_list, positions=s[k].tolist(), velocities=s_dot[k].tolist(),
        base_pose=matrix_to_pose(w_H_b[k])), frames=HORIZON_FRAMES) for k in range(len(s))]
    for single, twist in zip(singles, nu):
        lin, ang = single.state.base_twist.linear, single.state.base_twist.angular
        lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in twist)

    def fifty():
        for single in singles:
            dynamics_loop.call(single)
    return {'e2e_ms': float(np.median([ms for _, ms in answers])), 'success': ok,
            'message': '' if ok else next((r.message for r, _ in answers
                                           if r is not None and not r.success), 'no answer'),
            'batch_ms': batch, 'transport_ms': transport, 'bytes': len(wire),
            'singles_ms': _median_ms(fifty, 3), 'states': len(s)}


def print_idle_horizon(h):
    """The idle node's line of the horizon load, with the target."""
    bound = E2E_TARGET * h['batch_ms'] + h['transport_ms']
    print(f"get_dynamics_horizon on the idle node ({h['states']} states, every quantity, frames "
          f"{' '.join(HORIZON_FRAMES)}; median of 20): end to end {h['e2e_ms']:.2f} ms "
          f"(success {h['success']}{'' if h['success'] else ': ' + h['message']}); core "
          f"batch here {h['batch_ms']:.2f} ms; transport (the same request to an echo "
          f"service answering the {h['bytes'] / 1e3:.0f} kB response) {h['transport_ms']:.2f} "
          f"ms; {h['states']} single get_dynamics calls {h['singles_ms']:.1f} ms; target end "
          f"to end <= {E2E_TARGET:g} x batch + transport = {bound:.2f} ms: "
          f"{'met' if h['e2e_ms'] <= bound else 'NOT met'}")
