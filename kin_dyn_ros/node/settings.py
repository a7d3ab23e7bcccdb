"""The node's parameters: declaration, validation, and a frozen :class:`Settings` snapshot.

Parameters are read once into a Settings object (never per message) and validated as a
whole by :func:`make_settings`: at start-up a bad value stops the node with a clear error;
at run time (``add_on_set_parameters_callback``) it rejects the change with the same reason.
Topic and contact parameters are read-only (the subscriptions are made once); a contact's
geometry (``contact.<name>.points/normal/friction``) is validated by
:func:`contact_geometry`.
"""

import math
from dataclasses import dataclass, fields, replace

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from ..dynamics.contacts import Contact
from .conversions import pose_list_to_matrix
from ..dynamics.representations import parse_representation

__all__ = ["Settings", "make_settings", "declare_settings", "updated_settings",
           "contact_topic_parameter", "MODEL_FIELDS", "DEFAULT_POINTS", "DEFAULT_NORMAL",
           "DEFAULT_FRICTION", "CONTACT_PARAMETERS", "contact_parameter", "contact_geometry",
           "make_contact"]

DEFAULT_POINTS = (0.0, 0.0, 0.0)      # the link frame's origin
DEFAULT_NORMAL = (0.0, 0.0, 1.0)
DEFAULT_FRICTION = 0.6
# (key, default, description) of each contact's geometry parameters contact.<name>.<key>
CONTACT_PARAMETERS = (
    ("points", list(DEFAULT_POINTS), "contact points: flat list of 3k numbers, k points "
     "[x, y, z] in the link frame [m] (e.g. a sole's 4 corners); default its origin"),
    ("normal", list(DEFAULT_NORMAL), "contact normal in the link frame, from the environment "
     "into the link"),
    ("friction", DEFAULT_FRICTION, "Coulomb friction coefficient (>= 0)"),
)

# name, default, description, read-only. Numbers use dynamic typing so that YAML ``rate: 0``
# (an integer) is accepted; make_settings checks the types.
_PARAMETERS = (
    ("robot_description", "", "URDF XML text; when set it wins over the robot_description "
     "topic (reliable, transient_local). Setting it at run time reloads the model", False),
    ("world_frame", "odom", "world (inertial) frame of the base pose, CoM and momentum", False),
    ("base_frame", "", "floating-base link; empty = the URDF root link", False),
    ("frame_prefix", "", "prefix of every model frame on /tf and /tf_static", False),
    ("rate", 0.0, "Hz; 0 = one tick per JointState message, > 0 = timer using the latest "
     "inputs (a tick without a new JointState stamp is skipped)", False),
    ("velocity_representation", "MIXED", "MIXED | BODY_FIXED | INERTIAL_FIXED: base velocity "
     "and acceleration of the outputs and the services' default", False),
    ("gravity", [0.0, 0.0, -9.80665], "gravity acceleration in the world frame [m/s^2]", False),
    ("use_odometry", True, "true: base pose and twist from nav_msgs/Odometry; "
     "false: base fixed at fixed_base_pose with zero twist", True),
    ("odometry_topic", "odom", "nav_msgs/Odometry topic; child_frame_id may be any link", True),
    ("fixed_base_pose", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], "[x, y, z, qx, qy, qz, qw] of the "
     "base in world_frame without odometry (and until the first odometry)", False),
    ("contacts", Parameter.Type.STRING_ARRAY, "links with a WrenchStamped input; topic "
     "contact.<name>.topic (default <name>/wrench); geometry contact.<name>.points, .normal, "
     ".friction", True),
    ("contact_force_threshold", 20.0, "N; a contact is active (support polygon, equilibrium "
     "torques) while its wrench's force along contact.<name>.normal exceeds this", False),
    ("equilibrium_rate", 100.0, "Hz (of JointState stamps) of the contact mechanics: "
     "~/support_polygon, ~/stability_margin, ~/equilibrium_torques; 0 = off", False),
    ("wrench_timeout", 0.1, "s; a tick uses the wrench with its stamp, else the newest older one, "
     "and leaves it out of forward dynamics when it is further than this from the tick", False),
    ("joint_state_timeout", 0.5, "s; joint_states older than this are reported stale", False),
    ("default_joint_position", 0.0, "position of model joints never received [rad or m]", False),
    ("publish_tf", True, "publish /tf and /tf_static (false: run beside robot_state_publisher)",
     False),
    ("publish_base_tf", True, "publish world_frame -> base link on /tf from odometry", False),
    ("publish_frequency", 20.0, "Hz (0 < f <= 1000), as robot_state_publisher's: /tf (the "
     "moving joints and world -> base) is published at most f times per second of "
     "JointState stamps, on turns 1/f apart (a stamp is due from half the JointState "
     "interval before its turn, for stamp jitter; a late one keeps the turns' phase); the "
     "other outputs keep the tick's rate", False),
    ("ignore_timestamp", False, "as robot_state_publisher's: true = the stamps of "
     "joint_states, odometry and wrenches are ignored: each is stamped with the node's clock "
     "when taken, every JointState ticks and publishes /tf (publish_frequency unused)", False),
    ("publish_markers", True, "publish ~/markers (only while something subscribes)", False),
    ("markers_rate", 30.0, "Hz; ~/markers is published at most this often", False),
    ("publish_forward_dynamics", True, "publish ~/forward_dynamics", False),
    ("diagnostics_period", 1.0, "s between /diagnostics messages", False),
    ("sensor_thread", True, "true: joint_states, odometry and wrenches are taken on a thread "
     "of the node's own (~0.25 ms less CPU per message than rclpy's executor); false: by the "
     "executor that spins the node", True),
    ("sensor_thread_cpu", -1, "deprecated: cpu_affinity [N] (used as it when cpu_affinity is "
     "empty, with a warning); -1 = not set", True),
    ("thread_priority", 0, "SCHED_FIFO priority (1-99) of the thread that ticks, as "
     "ros2_control's; 0 = normal scheduling. Where the OS refuses, one warning naming why, "
     "and the node runs on", True),
    ("cpu_affinity", Parameter.Type.INTEGER_ARRAY, "CPUs of the thread that ticks (Linux), "
     "e.g. a core isolated for control; empty = any", True),
    ("services_process", True, "true: ~/get_* and ~/check_equilibrium are answered by a "
     "process of their own (their traffic never competes with the tick); false: by the "
     "node's process", True),
    ("horizon_max_states", 200, "most states a ~/get_dynamics_horizon request may ask about "
     "(more: success false)", False),
    ("lock_memory", False, "mlockall the node's process (its memory never pages out); where "
     "the OS refuses, one warning naming why", True),
    ("merge_queued_joint_states", False, "with rate 0 and the sensor thread: true = "
     "JointStates that queued up while a tick ran are merged by name into one tick on the "
     "newest (fresh outputs, fewer of them, when the node falls behind; counted on "
     "/diagnostics); false = one tick each", False),
)

MAX_PUBLISH_FREQUENCY = 1000.0   # Hz, robot_state_publisher's bound

# Parameters whose change rebuilds the dynamics model.
MODEL_FIELDS = ("robot_description", "base_frame", "gravity")


@dataclass(frozen=True)
class Settings:
    """Validated parameter values. Frames are strings, times in s, rates in Hz."""

    robot_description: str = ""
    world_frame: str = "odom"
    base_frame: str = ""
    frame_prefix: str = ""
    rate: float = 0.0
    velocity_representation: str = "MIXED"
    gravity: tuple = (0.0, 0.0, -9.80665)
    use_odometry: bool = True
    odometry_topic: str = "odom"
    fixed_base_pose: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    contacts: tuple = ()
    contact_topics: tuple = ()          # ((contact, topic), ...) in contacts order
    contact_geometry: tuple = ()        # ((contact, points (3k,), normal, friction), ...) same
    contact_force_threshold: float = 20.0
    equilibrium_rate: float = 100.0
    wrench_timeout: float = 0.1
    joint_state_timeout: float = 0.5
    default_joint_position: float = 0.0
    publish_tf: bool = True
    publish_base_tf: bool = True
    publish_frequency: float = 20.0
    ignore_timestamp: bool = False
    publish_markers: bool = True
    markers_rate: float = 30.0
    publish_forward_dynamics: bool = True
    diagnostics_period: float = 1.0
    sensor_thread: bool = True
    sensor_thread_cpu: int = -1
    thread_priority: int = 0
    cpu_affinity: tuple = ()
    lock_memory: bool = False
    services_process: bool = True
    horizon_max_states: int = 200
    merge_queued_joint_states: bool = False

    @property
    def ticking_cpus(self):
        """CPUs of the ticking thread: cpu_affinity, else the deprecated sensor_thread_cpu."""
        if self.cpu_affinity or self.sensor_thread_cpu < 0:
            return self.cpu_affinity
        return (self.sensor_thread_cpu,)

    @property
    def representation(self):
        return parse_representation(self.velocity_representation)

    @property
    def base_pose(self):
        """(4, 4) world_H_base of ``fixed_base_pose``."""
        return pose_list_to_matrix(self.fixed_base_pose)


# -- contacts ------------------------------------------------------------------------------
def contact_parameter(contact, key):
    """Name of a contact's parameter: ``contact.<contact>.<key>``."""
    return f"contact.{contact}.{key}"


def _numbers(name, value, sizes):
    values = list(value) if isinstance(value, (list, tuple)) or hasattr(value, "tolist") else None
    if values is None or not sizes(len(values)) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return None
    arr = np.asarray(values, dtype=float)
    if not np.isfinite(arr).all():
        raise ValueError(f"parameter '{name}' contains NaN or inf: {values}")
    return tuple(arr.tolist())


def contact_geometry(contact, points=DEFAULT_POINTS, normal=DEFAULT_NORMAL,
                     friction=DEFAULT_FRICTION):
    """Validated ``(contact, points (3k,), normal (3,), friction)`` of one contact's
    parameters (None = the default); ValueError naming the parameter."""
    name = contact_parameter(contact, "points")
    pts = _numbers(name, DEFAULT_POINTS if points is None else points,
                   lambda n: n >= 3 and n % 3 == 0)
    if pts is None:
        raise ValueError(f"parameter '{name}' must be a flat list of 3k numbers (k points x, y, "
                         f"z in the link frame, k >= 1), got {points!r}")
    name = contact_parameter(contact, "normal")
    nrm = _numbers(name, DEFAULT_NORMAL if normal is None else normal, lambda n: n == 3)
    if nrm is None or np.linalg.norm(nrm) < 1e-9:
        raise ValueError(f"parameter '{name}' must be 3 numbers, not all zero, got {normal!r}")
    name = contact_parameter(contact, "friction")
    mu = DEFAULT_FRICTION if friction is None else friction
    if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not (np.isfinite(mu)
                                                                         and mu >= 0.0):
        raise ValueError(f"parameter '{name}' must be a finite number >= 0, got {friction!r}")
    return contact, pts, nrm, float(mu)


def make_contact(geometry, link=None):
    """The core's Contact of a :func:`contact_geometry` tuple (on ``link``, default the
    contact's name)."""
    contact, points, normal, friction = geometry
    return Contact(link or contact, np.reshape(points, (-1, 3)), normal, friction)


def contact_topic_parameter(contact):
    return f"contact.{contact}.topic"


def _number(name, value, minimum=None, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"parameter '{name}' must be a finite number, got {value!r}")
    if (positive and value <= 0) or (minimum is not None and value < minimum):
        bound = "> 0" if positive else f">= {minimum}"
        raise ValueError(f"parameter '{name}' must be {bound}, got {value!r}")
    return float(value)


def _vector(name, value, size):
    values = list(value) if isinstance(value, (list, tuple)) or hasattr(value, "tolist") else None
    if values is None or len(values) != size:
        raise ValueError(f"parameter '{name}' must be a list of {size} numbers, got {value!r}")
    return tuple(_number(name, v) for v in values)


def _string(name, value, allow_empty=True):
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise ValueError(f"parameter '{name}' must be a non-empty string, got {value!r}")
    return value


def make_settings(**values):
    """Validated :class:`Settings` from parameter values; ValueError naming the parameter."""
    s = Settings(**values)
    contacts = tuple(s.contacts or ())
    if len(set(contacts)) != len(contacts) or not all(isinstance(c, str) and c for c in contacts):
        raise ValueError(f"parameter 'contacts' must be distinct non-empty link names, "
                         f"got {list(contacts)}")
    topics = dict(s.contact_topics)
    geometry = {g[0]: g[1:] for g in s.contact_geometry}
    parse_representation(s.velocity_representation)   # ValueError lists the valid names
    pose = _vector("fixed_base_pose", s.fixed_base_pose, 7)
    try:
        pose_list_to_matrix(pose)
    except ValueError as exc:
        raise ValueError(f"parameter 'fixed_base_pose': {exc}") from None
    for name in ("robot_description", "base_frame", "frame_prefix"):
        _string(name, getattr(s, name))
    for name in ("world_frame", "odometry_topic"):
        _string(name, getattr(s, name), allow_empty=False)
    for name in ("use_odometry", "publish_tf", "publish_base_tf", "publish_markers",
                 "publish_forward_dynamics", "sensor_thread", "merge_queued_joint_states",
                 "ignore_timestamp", "lock_memory", "services_process"):
        if not isinstance(getattr(s, name), bool):
            raise ValueError(f"parameter '{name}' must be a bool, got {getattr(s, name)!r}")
    cpu = s.sensor_thread_cpu
    if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < -1:
        raise ValueError(f"parameter 'sensor_thread_cpu' must be a CPU index >= 0 or -1, "
                         f"got {cpu!r}")
    priority = s.thread_priority
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 99:
        raise ValueError(f"parameter 'thread_priority' must be an integer in 0-99 (0: off), "
                         f"got {priority!r}")
    limit = s.horizon_max_states
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"parameter 'horizon_max_states' must be an integer >= 1, got "
                         f"{limit!r}")
    cpus = tuple(s.cpu_affinity or ())
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in cpus):
        raise ValueError(f"parameter 'cpu_affinity' must list CPU indices >= 0, got "
                         f"{list(cpus)}")
    return replace(
        s, contacts=contacts, fixed_base_pose=pose, cpu_affinity=cpus,
        contact_topics=tuple((c, _string(contact_topic_parameter(c),
                                         topics.get(c, f"{c}/wrench"), False))
                             for c in contacts),
        contact_geometry=tuple(contact_geometry(c, *geometry.get(c, ())) for c in contacts),
        contact_force_threshold=_number("contact_force_threshold", s.contact_force_threshold,
                                        minimum=0.0),
        equilibrium_rate=_number("equilibrium_rate", s.equilibrium_rate, minimum=0.0),
        velocity_representation=parse_representation(s.velocity_representation).name
        .replace("_REPRESENTATION", ""),
        gravity=_vector("gravity", s.gravity, 3),
        rate=_number("rate", s.rate, minimum=0.0),
        wrench_timeout=_number("wrench_timeout", s.wrench_timeout, positive=True),
        joint_state_timeout=_number("joint_state_timeout", s.joint_state_timeout, positive=True),
        default_joint_position=_number("default_joint_position", s.default_joint_position),
        diagnostics_period=_number("diagnostics_period", s.diagnostics_period, positive=True),
        markers_rate=_number("markers_rate", s.markers_rate, positive=True),
        publish_frequency=_frequency(s.publish_frequency))


def _frequency(value):
    """publish_frequency [Hz]: robot_state_publisher's range without its 0 (a division by
    zero there)."""
    f = _number("publish_frequency", value, positive=True)
    if f > MAX_PUBLISH_FREQUENCY:
        raise ValueError(f"parameter 'publish_frequency' must be <= {MAX_PUBLISH_FREQUENCY:g} "
                         f"Hz (robot_state_publisher's range), got {value!r}; for /tf on every "
                         f"JointState set ignore_timestamp")
    return f


def declare_settings(node):
    """Declare every parameter on ``node`` (with its description) and return the Settings.

    Raises ValueError for an invalid value.
    """
    values = {}
    for name, default, text, read_only in _PARAMETERS:
        dynamic = isinstance(default, (float, list))
        descriptor = ParameterDescriptor(description=text, read_only=read_only,
                                         dynamic_typing=dynamic)
        values[name] = node.declare_parameter(name, default, descriptor).value
    values["contacts"] = tuple(values["contacts"] or ())
    values["cpu_affinity"] = tuple(values["cpu_affinity"] or ())
    topics, geometry = [], []
    for contact in values["contacts"]:
        name = contact_topic_parameter(contact)
        text = f"geometry_msgs/WrenchStamped topic of contact '{contact}'"
        topic = node.declare_parameter(name, f"{contact}/wrench",
                                       ParameterDescriptor(description=text, read_only=True))
        topics.append((contact, topic.value))
        geometry.append((contact, *(node.declare_parameter(
            contact_parameter(contact, key), default, ParameterDescriptor(
                description=doc, read_only=True, dynamic_typing=True)).value
            for key, default, doc in CONTACT_PARAMETERS)))
    values["contact_topics"] = tuple(topics)
    values["contact_geometry"] = tuple(geometry)
    return make_settings(**values)


def updated_settings(settings, parameters):
    """Settings with rclpy ``parameters`` applied (others' names ignored); ValueError if
    the result is invalid."""
    names = {f.name for f in fields(Settings)} - {"contacts", "contact_topics"}
    changes = {p.name: p.value for p in parameters if p.name in names}
    if "robot_description" in changes and changes["robot_description"] is None:
        changes["robot_description"] = ""
    for key, value in changes.items():
        if isinstance(value, np.ndarray):
            changes[key] = value.tolist()
    return make_settings(**{**{f.name: getattr(settings, f.name) for f in fields(Settings)},
                            **changes})
