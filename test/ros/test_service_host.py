"""node/service_host.py: the services' process lives and dies with the node, and comes back
when it crashed; over real rclpy and loopback DDS (the small MIMIC_URDF arm). What it
answers is tested where the node's services are (test_node.py, test_contacts_node.py: both
with the process and in the node's own).

Run:  source scripts/env.sh && python -m pytest test/ros/test_service_host.py
"""

import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from rclpy.parameter import Parameter

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from ros_helpers import (MIMIC_URDF, loopback_context, module_namespace,  # noqa: E402
                         node_and_rig, node_command)

from kin_dyn_ros.dynamics import KinDynComputations, Representations  # noqa: E402
from kin_dyn_ros.node.service_host import MALLOC_ENVIRONMENT  # noqa: E402
from kin_dyn_ros_interfaces.srv import GetMassMatrix  # noqa: E402

NAMESPACE = module_namespace(__name__)
SMALL = {'robot_description': MIMIC_URDF, 'use_odometry': False}
LINUX = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='/proc')


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(211, 220)


def alive(pid):
    try:
        return pathlib.Path(f'/proc/{pid}/stat').read_text().split(') ')[1][0] != 'Z'
    except OSError:
        return False


def mass_matrix(rig, client):
    future = client.call_async(GetMassMatrix.Request(state=state(), use_measured_state=False))
    assert rig.spin_until(future.done, timeout_s=30.0)
    return future.result()


def state():
    from kin_dyn_ros_interfaces.msg import FloatingBaseState
    msg = FloatingBaseState(joint_names=['j1', 'j2'], positions=[0.3, 0.1])
    msg.base_pose.orientation.w = 1.0
    return msg


@LINUX
def test_a_crashed_services_process_is_restarted(ros_context):
    with node_and_rig(ros_context, dict(SMALL, diagnostics_period=0.1), 'kin_dyn_crash_helper',
                      {}, f'{NAMESPACE}/crash') as (node, rig):
        client = rig.node.create_client(GetMassMatrix, rig.private('get_mass_matrix'))
        assert client.wait_for_service(timeout_sec=30.0)
        kd = KinDynComputations(MIMIC_URDF)
        want = kd.mass_matrix(np.eye(4), kd.apply_mimic(np.array([0.3, 0.1, 0.0])))
        first = node.loop.planners.pid
        res = mass_matrix(rig, client)
        assert res.success, res.message
        np.testing.assert_allclose(np.reshape(res.data, want.shape), want, atol=1e-12)
        os.kill(first, signal.SIGKILL)
        assert rig.spin_until(lambda: node.loop.planners.pid != first, timeout_s=10.0)
        # the dead process's server may still look ready to DDS for a while: ask again
        # until the new one answers
        deadline, res = time.monotonic() + 30.0, None
        while res is None and time.monotonic() < deadline:
            future = client.call_async(GetMassMatrix.Request(state=state()))
            if rig.spin_until(future.done, timeout_s=2.0):
                res = future.result()
        assert res is not None and res.success, res   # the new process, the same answer
        np.testing.assert_allclose(np.reshape(res.data, want.shape), want, atol=1e-12)
        assert alive(node.loop.planners.pid) and not alive(first)


@LINUX
def test_the_services_process_ends_with_the_node_even_killed(ros_context):
    """SIGKILL to the node (no clean-up at all): its services' process sees its stdin close
    and ends."""
    proc = subprocess.Popen(node_command() + [
        '--ros-args', '-r', f'__ns:={NAMESPACE}/killed', '-p',
        f'robot_description:={MIMIC_URDF}', '-p', 'use_odometry:=false'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, env=dict(os.environ))
    try:
        deadline, host = time.monotonic() + 60.0, None
        while host is None and time.monotonic() < deadline:
            time.sleep(0.05)
            for stat in pathlib.Path('/proc').glob('[0-9]*/cmdline'):
                try:
                    if b'kin_dyn_ros.service_process' in stat.read_bytes() and \
                            int(pathlib.Path(stat.parent, 'stat').read_text().split(') ')[1]
                                .split()[1]) == proc.pid:
                        host = int(stat.parent.name)
                except (OSError, ValueError):
                    continue
        assert host is not None, 'no services process started'
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10.0
        while alive(host) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(host), 'the services process outlived its node'
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@LINUX
def test_the_services_process_serves_at_its_working_priority_without_a_model(ros_context):
    """No robot_description yet: the services' process still leaves its start-up's SCHED_IDLE
    (which would starve it on a saturated machine) for SCHED_BATCH at nice +10 once it
    serves, every thread of it, so that a request before the model gets its "no model"
    answer."""
    with node_and_rig(ros_context, {'use_odometry': False}, 'kin_dyn_idle_helper', {},
                      f'{NAMESPACE}/idle') as (node, rig):
        client = rig.node.create_client(GetMassMatrix, rig.private('get_mass_matrix'))
        assert client.wait_for_service(timeout_sec=30.0)
        res = mass_matrix(rig, client)
        assert not res.success and 'robot_description' in res.message, res.message
        # every thread: DDS's receiving threads at SCHED_IDLE would hold the shared-memory
        # ports' locks the node's publishers wait for (stalls of 100-250 ms, soak 2026-11-27)
        nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
        threads = {int(t.name): (os.sched_getscheduler(int(t.name)),
                                 os.getpriority(os.PRIO_PROCESS, int(t.name)))
                   for t in pathlib.Path(f'/proc/{node.loop.planners.pid}/task').iterdir()}
        assert len(threads) > 3 and set(threads.values()) == {(os.SCHED_BATCH, nice)}, threads


def test_a_settings_change_keeps_the_model_and_applies_the_settings(ros_context):
    """A parameter change that keeps the model (frame_prefix, velocity_representation)
    reaches the services' process without its description: same model, new settings. (And
    the process runs with MALLOC_ENVIRONMENT, unless the user set those variables, and has
    not loaded numba.)"""
    from kin_dyn_ros_interfaces.srv import GetJacobian
    with node_and_rig(ros_context, SMALL, 'kin_dyn_settings_helper', {},
                      f'{NAMESPACE}/settings') as (node, rig):
        client = rig.node.create_client(GetJacobian, rig.private('get_jacobian'))
        assert client.wait_for_service(timeout_sec=30.0)
        first = node.loop.planners.pid
        assert all(r.successful for r in node.set_parameters([
            Parameter('frame_prefix', value='r1/'),
            Parameter('velocity_representation', value='BODY_FIXED')]))
        kd = KinDynComputations(MIMIC_URDF)
        kd.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
        want = kd.jacobian('b', np.eye(4), kd.apply_mimic(np.array([0.3, 0.1, 0.0])))
        future = client.call_async(GetJacobian.Request(frame='r1/b', state=state()))
        assert rig.spin_until(future.done, timeout_s=30.0)
        res = future.result()
        assert res.success, res.message
        np.testing.assert_allclose(np.reshape(res.data, want.shape), want, atol=1e-12)
        assert node.loop.planners.pid == first           # the same process: no restart
        environ = dict(item.split('=', 1) for item in pathlib.Path(
            f'/proc/{first}/environ').read_text().split('\0') if '=' in item)
        for name, value in MALLOC_ENVIRONMENT.items():   # its large answers from the heap
            assert environ[name] == os.environ.get(name, value)
        # ~/get_* on the NumPy core: no numba (llvmlite) until a horizon is asked for
        assert 'llvmlite' not in pathlib.Path(f'/proc/{first}/maps').read_text()


@LINUX
def test_a_services_process_whose_node_ends_at_once_exits_cleanly(ros_context):
    """The node stopped while its services' process starts (stdin closed before the process
    spins; CI, 2026-11-28: the context shut down by the reading thread before the executor
    was made, a traceback): it ends with status 0 and says nothing."""
    from kin_dyn_ros.node.state_share import StateWriter
    writer = StateWriter()
    proc = subprocess.run(
        [sys.executable, '-m', 'kin_dyn_ros.service_process', str(writer.fd),
         f'{NAMESPACE}/gone/kin_dyn_node', 'kin_dyn_gone_services', f'{NAMESPACE}/gone'],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, pass_fds=(writer.fd,),
        cwd=REPO, env=dict(os.environ), timeout=60)
    assert (proc.returncode, proc.stderr) == (0, ''), proc.stderr
