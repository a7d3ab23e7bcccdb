"""One tick: the measured state at a JointState's stamp, and one core call on it.

:class:`TickComputer` belongs to one model and one set of settings (the node makes a new
one when either changes). From the merged joint states and the inputs matched to the
JointState's stamp (:meth:`.inputs.SensorInputs.for_tick`) it builds the floating-base state
(base pose and velocity from odometry, in the node's velocity representation), the measured
torques when every joint sent its effort, and calls ``kd.compute_tick`` once. Notes (no
odometry yet, joints never received, efforts missing, stale wrenches) are logged throttled.

Joints with no inertia moving with them (a massless subtree, e.g. finger links without
``<inertial>``) have no forward dynamics: the core gives NaN for their accelerations (the
others' are exact and do not depend on them), ~/forward_dynamics carries the NaN, the tick's
note names them (/diagnostics) and they are logged once (again after a model or settings
change: a new :class:`TickComputer`).
"""

import numpy as np

from ..dynamics import Representations
from ..dynamics.base_state import base_state_from_odometry, change_base_representation
from .conversions import ns_to_stamp

__all__ = ["MeasuredState", "Tick", "TickComputer", "massless_note", "same_inputs",
           "EFFORTS_MISSING"]

BODY = Representations.BODY_FIXED_REPRESENTATION
MIXED = Representations.MIXED_REPRESENTATION
# forward dynamics' note while a joint's last JointState carried no effort
EFFORTS_MISSING = "skipped: efforts not received for every joint"


def same_inputs(a, b):
    """Whether two {contact: (expressed frame, wrench (6,))} hold the same inputs in the same
    order: the same contacts and frames, and the same value objects (an input's value is
    never changed, so the same object is the same numbers; compared without comparing
    arrays, whose truth raises)."""
    if len(a) != len(b):
        return False
    for (contact, (frame, value)), (other, (other_frame, other_value)) in zip(a.items(),
                                                                             b.items()):
        if value is not other_value or contact != other or frame != other_frame:
            return False
    return True


def massless_note(names):
    """The note of a tick whose forward dynamics has NaN for the joints ``names``."""
    return (f"computed; NaN for the joints with no inertia moving with them (massless "
            f"subtree): {', '.join(names)}")


class MeasuredState:
    """The state of a tick: w_H_b (4, 4), s (n,), base_vel (6,) in ``representation``,
    s_dot (n,). Never changed once made (the services read it from another thread); not a
    frozen dataclass, whose construction costs ~1 us more, twice a tick with :class:`Tick`."""

    __slots__ = ("w_H_b", "s", "base_vel", "s_dot", "representation")

    def __init__(self, w_H_b, s, base_vel, s_dot, representation):
        self.w_H_b, self.s, self.base_vel, self.s_dot = w_H_b, s, base_vel, s_dot
        self.representation = representation


class Tick:
    """A computed tick: its JointState's ``stamp_ns`` [ns] (:attr:`stamp` as a
    builtin_interfaces/Time), the ``inputs`` it combined, its ``state``,
    whether the base pose came from odometry (or use_odometry is off: ``have_base``), the
    core's ``result`` and why forward dynamics is missing (``fd_note``, "" if computed for
    every joint; :func:`massless_note` if computed but for the massless joints). Never
    changed once made (as :class:`MeasuredState`)."""

    __slots__ = ("stamp_ns", "inputs", "state", "have_base", "result", "fd_note")

    def __init__(self, stamp_ns, inputs, state, have_base, result, fd_note):
        self.stamp_ns, self.inputs, self.state = stamp_ns, inputs, state
        self.have_base, self.result, self.fd_note = have_base, result, fd_note

    @property
    def stamp(self):
        """builtin_interfaces/Time of :attr:`stamp_ns`, made when read (the per-tick
        outputs need only the integer)."""
        return ns_to_stamp(self.stamp_ns)


class TickComputer:
    """The ticks of ``kd`` (the model's tick instance, in the node's representation) with
    ``settings``; ``aux`` is a KinDynComputations of the same model for the odometry's
    conversion (used on the tick's thread only); ``contacts``: {name: Contact} of the
    contacts that are links of the model (the result's ``balance`` is theirs); ``log``: a
    :class:`.throttle.ThrottledLogger`."""

    def __init__(self, kd, aux, settings, contacts, log):
        self.kd, self._aux, self.settings = kd, aux, settings
        self.contacts, self.geometry, self._log = tuple(contacts), contacts, log
        self._root_base = (None, None)     # (odometry, its base velocity): once per message
        self._fixed_base = settings.base_pose
        self._complete = False             # every joint received at least once
        self._massless = ((), "")          # (massless joints of the last tick, their note)
        self._representation = kd.rep
        self._prepared = None              # the PreparedTick of the last wrenches

    @property
    def prepared(self):
        """The core's PreparedTick of the last tick's wrenches (None: none yet, or the
        NumPy core)."""
        return self._prepared

    @property
    def every_joint_received(self):
        """Whether every joint has been received (as the last :meth:`torques` found)."""
        return self._complete

    def compute(self, sensors, forward_dynamics=True):
        """The :class:`Tick` of the merged joint states of ``sensors``
        (:class:`.inputs.SensorInputs`) at its latest JointState's stamp, with forward
        dynamics when ``forward_dynamics`` (something reads it) and the settings allow;
        ValueError from the core (the tick is then skipped). On the compiled path one kernel
        call (:meth:`_prepared_tick`); compute_tick where that one declines."""
        s, s_dot = sensors.merger.state()
        inputs = sensors.for_tick(sensors.joint_state_stamp_ns, self.contacts,
                                  self.settings.wrench_timeout)
        for contact in inputs.stale:
            self._log.warning(f"stale {contact}", f"wrench of '{contact}' older than "
                              f"wrench_timeout: left out of forward dynamics")
        w_H_b, nu, have_base = self.base_state(inputs.odometry, s, s_dot)
        tau, fd_note = self.torques(sensors.merger, forward_dynamics)
        state = MeasuredState(w_H_b, s, nu, s_dot, self._representation)
        tick = self._prepared_tick(inputs, state, have_base, tau, fd_note)
        if tick is not None:
            return tick
        result = self.kd.compute_tick(w_H_b, s, nu, s_dot, tau, inputs.wrenches,
                                      self.geometry, self.settings.contact_force_threshold)
        if result.forward_dynamics_error:   # the other outputs are still published
            fd_note = f"skipped: {result.forward_dynamics_error}"
            self._log.warning("forward dynamics", f"forward dynamics {fd_note}")
        elif result.massless_joints:
            fd_note = self.note_massless(result.massless_joints)
        return Tick(inputs.stamp_ns, inputs, state, have_base, result, fd_note)

    def _prepared_tick(self, inputs, state, have_base, tau, fd_note):
        """The :class:`Tick` by the core's :class:`..dynamics.computations.PreparedTick` of
        these wrenches (:meth:`prepare`); None on the NumPy core, or when the kernel did not
        return OK (compute_tick then says why)."""
        prepared = self.prepare(inputs.wrenches)
        if prepared is None:
            return None
        got = prepared.run(state.w_H_b, state.s, state.base_vel, state.s_dot, tau)
        if got is None:
            return None
        out, poses = got
        result = prepared.result(state.w_H_b, out, poses, tau is not None, self.geometry,
                                 self.settings.contact_force_threshold)
        if result.massless_joints:
            fd_note = self.note_massless(result.massless_joints)
        return Tick(inputs.stamp_ns, inputs, state, have_base, result, fd_note)

    def prepare(self, wrenches):
        """The core's PreparedTick of ``wrenches`` ({contact: (expressed link, w (6,))}),
        kept while they are the same objects (an input's value never changes): None on the
        NumPy core or for a wrench the core refuses (compute_tick names it)."""
        prepared = self._prepared
        if prepared is None or not same_inputs(prepared.frame_wrenches, wrenches):
            try:
                prepared = self._prepared = self.kd.prepared_tick(wrenches)
            except ValueError:
                return None
        return prepared

    def note_massless(self, names):
        """:func:`massless_note` of ``names``, logged once (made again only when they change)."""
        if names != self._massless[0]:
            self._massless = names, massless_note(names)
            self._log.info("massless joints", f"forward dynamics: no inertia moves with "
                           f"joint(s) {', '.join(names)} (massless subtree): their "
                           f"accelerations are published as NaN; the others' are exact and "
                           f"do not depend on them")
        return self._massless[1]

    def base_state(self, odom, s, s_dot):
        """(w_H_b (4, 4), base velocity (6,) in the node's representation, from odometry?)
        of the matched odometry (a :class:`.inputs.Timed` or None) at joint positions ``s``
        and velocities ``s_dot`` (used only for odometry of a link other than the root);
        kept while the odometry is the same object."""
        settings = self.settings
        if not settings.use_odometry or odom is None:
            if settings.use_odometry:
                self._log.warning("no odometry", f"no odometry on '{settings.odometry_topic}' "
                                  f"yet: base at fixed_base_pose")
            return self._fixed_base, np.zeros(6), not settings.use_odometry
        if odom.frame == self.kd.model.root_link:    # no joint in between
            if self._root_base[0] is not odom:
                w_H_c, twist, mixed = odom.value    # (mixed: the compiled reader's)
                self._root_base = odom, mixed if mixed is not None and \
                    self._representation == MIXED else change_base_representation(
                        twist, w_H_c, BODY, self._representation)
            return odom.value[0], self._root_base[1], True
        aux = self._aux
        aux.set_frame_velocity_representation(BODY)
        root_H_child = aux.forward_kinematics(odom.frame, np.eye(4), s)
        j_rel = aux.relative_jacobian(odom.frame, s)
        w_H_b, nu = base_state_from_odometry(*odom.value[:2], root_H_child, j_rel, s_dot,
                                             self._representation)
        return w_H_b, nu, True

    def torques(self, merger, wanted):
        """(measured joint torques (n,) for forward dynamics or None, why not)."""
        if not self._complete:
            missing = merger.missing
            self._complete = not missing
            if missing:
                self._log.warning("missing joints", f"joints never received, at "
                                  f"default_joint_position: {missing}")
        if not self.settings.publish_forward_dynamics:
            return None, "disabled (publish_forward_dynamics: false)"
        if not wanted:
            return None, "not computed: nothing subscribes to ~/forward_dynamics"
        if not merger.efforts_complete:
            self._log.info("no efforts", f"forward dynamics {EFFORTS_MISSING}")
            return None, EFFORTS_MISSING
        return merger.efforts, ""
