"""Publishers and preallocated messages of the node's outputs.

The messages of one model (frame names, joint names) are built once by :class:`TickMessages`
and only their numbers and stamps change per tick: their serialised bytes are made once
(:class:`SerializedTemplate`) and only the numbers are patched in per tick. rclpy's
conversion of ~33 TransformStamped to C costs ~120 us (half of the dynamics tick), a
JointState of 32 names ~5 us; patching costs ~10 us for /tf and ~2 us for the small
messages. A message whose layout varies (the active contacts of ~/forward_dynamics, the
support polygon's markers appended to ~/markers) has a template per layout
(:class:`TemplateCache`, made on first use). Where a template cannot be used, the message
objects (reused: ``publish`` serialises synchronously) are published instead.

QoS: /tf KEEP_LAST 100 reliable volatile and /tf_static KEEP_LAST 1 reliable transient_local
(tf2_ros's TransformBroadcaster and StaticTransformBroadcaster); the rest default depth 10.
"""

import contextlib
import copy
import math
import time

import numpy as np
from geometry_msgs.msg import PointStamped, TransformStamped, TwistStamped
from rclpy.serialization import serialize_message
try:
    from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray
from diagnostic_msgs.msg import DiagnosticArray

from kin_dyn_ros_interfaces.msg import CentresOfPressure, ForwardDynamics

from ..dynamics.compiled import compiled_kernels
from ..dynamics.computations import packed_offsets
from ..dynamics.quaternions import rotation_to_quaternion
from .conversions import (assign_fields, make_transform_stamped, ns_to_stamp, ns_words,
                          stamp_fields, stamp_words, xyz_fields)
from .markers import MarkerSet
from .template_pack import TemplatePack

__all__ = ["TF_QOS", "LATCHED_QOS", "NO_SUBSCRIPTION_EVENTS", "READERS_PERIOD_NS",
           "Publishers", "ReadCounts", "TickMessages",
           "world_frame_link", "SerializedTemplate", "TemplateCache", "EffortMessage",
           "static_transforms"]

TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


# Without rclpy's default QoS event handlers (they only log incompatible peers): each one is
# a waitable that the Python executor visits on every wake-up, a noticeable share of its
# per-message cost at 1 kHz. Used for the outputs and for the best-effort, volatile input
# subscriptions (the weakest QoS request, compatible with every publisher).
_NO_EVENTS = PublisherEventCallbacks(use_default_callbacks=False)
NO_SUBSCRIPTION_EVENTS = SubscriptionEventCallbacks(use_default_callbacks=False)
# How long the per-tick outputs' subscriber counts are taken as they were [ns]: a count costs
# ~1-3 us per publisher, a tick asks for nine, and a subscriber that comes (or goes) is
# served (or dropped) this much later at most.
READERS_PERIOD_NS = 20_000_000


_NO_AGES = np.empty(0)
_TF_ALL, _TF_JOINTS = (("tf", "tf_all"),), (("tf", "tf_joints"),)   # per_tick's, in its pack


class Publishers:
    """Every publisher of the node. ``description`` re-publishes a robot_description given
    as a parameter (reliable, transient_local), as robot_state_publisher does. No QoS event
    handlers (see ``_NO_EVENTS``). ``is_read(publisher)`` tells whether a per-tick output has
    a subscriber (:class:`ReadCounts`: counted at most every ``period_ns``)."""

    def __init__(self, node, period_ns=READERS_PERIOD_NS):
        def pub(msg_type, topic, qos):
            return node.create_publisher(msg_type, topic, qos, event_callbacks=_NO_EVENTS)
        self.description = pub(String, "robot_description", LATCHED_QOS)
        self.tf = pub(TFMessage, "/tf", TF_QOS)
        self.tf_static = pub(TFMessage, "/tf_static", LATCHED_QOS)
        self.com = pub(PointStamped, "~/com", 10)
        self.momentum = pub(TwistStamped, "~/centroidal_momentum", 10)
        self.gravity = pub(JointState, "~/gravity_torques", 10)
        self.forward_dynamics = pub(ForwardDynamics, "~/forward_dynamics", 10)
        self.markers = pub(MarkerArray, "~/markers", 10)
        self.zmp = pub(PointStamped, "~/zmp", 10)
        self.capture_point = pub(PointStamped, "~/capture_point", 10)
        self.cop = pub(CentresOfPressure, "~/cop", 10)
        self.diagnostics = pub(DiagnosticArray, "/diagnostics", 10)
        self.is_read = ReadCounts((self.tf, self.com, self.momentum, self.gravity,
                                   self.forward_dynamics, self.markers, self.zmp,
                                   self.capture_point, self.cop), period_ns)


class ReadCounts:
    """Which of ``publishers`` have a subscriber, counted at most every ``period_ns``.

    ``read_counts(publisher)`` tells whether ``publisher`` had a subscriber when last
    counted: at most ``period_ns`` ago (``time.perf_counter``); all are counted again after
    that. ``read_counts.any()`` whether any of them had one. :attr:`read` is the set of the
    last count, valid until :attr:`fresh_until` [s, perf_counter]: a caller that has the time
    (the tick) takes it without a call."""

    def __init__(self, publishers, period_ns=READERS_PERIOD_NS):
        self._publishers, self._period = tuple(publishers), period_ns * 1e-9
        self.read, self.fresh_until = frozenset(), -math.inf

    def __call__(self, publisher):
        return publisher in self.current()

    def any(self):
        return bool(self.current())

    def current(self, now=None):
        """The set of ``publishers`` that had a subscriber when last counted (one tick asks
        once); ``now``: ``time.perf_counter()`` if the caller has it."""
        now = time.perf_counter() if now is None else now
        if now >= self.fresh_until:
            self.fresh_until = now + self._period
            self.read = frozenset(p for p in self._publishers if p.get_subscription_count())
        return self.read

    def expire(self):
        """Count again at the next call (e.g. a test that waited for a subscriber)."""
        self.fresh_until = -math.inf


def byte_publisher(publisher):
    """(context, publish) that publish serialised bytes on ``publisher`` as ``with context:
    publish(data)``: rclpy's handle (held while publishing, as ``publisher.publish`` holds
    it) and its ``publish_raw``, without ``publish``'s frame, handle property and type checks
    (~8 us less per JointState for five messages at 1 kHz, measured in the running node);
    where the handle lacks ``publish_raw``, (a null context, ``publisher.publish``)."""
    handle = publisher.handle
    publish_raw = getattr(handle, "publish_raw", None)
    if publish_raw is None or not hasattr(handle, "__enter__"):
        return contextlib.nullcontext(), publisher.publish
    return handle, publish_raw


def static_transforms(kd, prefix, stamp):
    """{child frame: TransformStamped} of the model's fixed edges (the full /tf_static set)."""
    out = {}
    for _, parent, child, h in kd.static_transforms:
        out[prefix + child] = make_transform_stamped(h, prefix + parent, prefix + child, stamp)
    return out


def world_frame_link(kd, settings):
    """The model frame whose /tf name (``frame_prefix`` + frame) is ``world_frame``, or None.

    A URDF with a ``world`` link (as written for simulators) under ``world_frame: world``
    and no prefix: world -> root link on /tf would then be a self-transform (the root) or
    close a cycle (any other frame), which tf2 rejects or loops on."""
    prefix, world = settings.frame_prefix, settings.world_frame
    link = world[len(prefix):] if world.startswith(prefix) else None
    return link if link in kd.model.frame_index else None


def _distinct(draw):
    """``draw()`` (an array) again until its values are distinct."""
    while True:
        values = draw()
        if len(np.unique(values)) == len(values):
            return values


class SerializedTemplate:
    """A message serialised once (CDR bytes) whose float64, 32-bit integer and float32
    fields are patched per tick, for publishing with ``publisher.publish(bytes)``.

    ``doubles``, ``integers`` and ``floats`` are lists of ``(object, attribute)`` inside
    ``msg``; ``(object, attribute, k)`` in ``doubles`` is a float64 sequence field of k
    elements (it must hold k values in ``msg`` too). Their byte offsets are found by
    serialising a copy with a distinct random sentinel in each field. Random, not fixed: the
    serialiser leaves alignment padding uninitialised, and that memory may still hold the
    sentinels of an earlier template (a fixed pattern was then found twice in ~2 % of
    templates). ``ok`` is False when no attempt works (a sentinel not found exactly once, a
    layout other than the message's, or a non-little-endian encoding): :meth:`render` then
    writes the values into the message object, ``msg``, and returns it (the fallback: the
    same message, published the plain way). Callers never look at which one they got.

    ``integer_width`` k: the integer fields come in groups of k that take the same k values
    (e.g. each transform's stamp): :meth:`render` then takes those k values.
    """

    _ATTEMPTS = 3

    def __init__(self, msg, doubles, integers, integer_width=None, floats=()):
        rng = np.random.default_rng()
        self.msg = msg
        self._fields = (doubles, integers, floats)
        base = serialize_message(msg)
        for _ in range(self._ATTEMPTS):
            data, offsets, ok = self._locate(msg, doubles, integers, floats, rng)
            self.ok = ok and len(data) == len(base)    # same layout as the message
            if self.ok:
                break
        self._size = len(base)
        self._buf = np.zeros(4 + 8 * -(-(self._size - 4) // 8), np.uint8)
        self._buf[:self._size] = np.frombuffer(base, np.uint8)
        payload = self._buf[4:]
        self._f64, self._u32, self._f32 = (payload.view(t) for t in ("<f8", "<u4", "<f4"))
        d_idx, i_idx, f_idx = ((o - 4) // w for o, w in zip(offsets, (8, 4, 4)))
        self._d_idx, self._f_idx = _run_or_indices(d_idx), _run_or_indices(f_idx)
        self._grouped = bool(integer_width)
        self._i_idx = i_idx.reshape(-1, integer_width) if integer_width \
            else _run_or_indices(i_idx)

    @property
    def size(self):
        """Bytes of the serialised message."""
        return self._size

    @property
    def nbytes(self):
        """Bytes of :meth:`layout`'s buffer: 4 + a whole number of float64 words."""
        return len(self._buf)

    def layout(self):
        """(buffer (uint8, :attr:`nbytes`: the message's bytes then padding), payload
        float64 word (d,) of each double field, payload 32-bit words (m, 2) of each pair of
        integer fields) of a usable template (``ok``) without float32 fields, whose integer
        fields are pairs (a stamp's sec and nanosec), for :class:`.template_pack.TemplatePack`
        (the payload: the bytes after the 4-byte encapsulation header)."""
        if not self.ok or len(self._fields[2]):
            raise ValueError("not a usable template of doubles and stamps")
        words = np.arange(len(self._f64))[self._d_idx]
        pairs = np.arange(len(self._u32))[self._i_idx].reshape(-1, 2)
        return self._buf.copy(), words, pairs

    @staticmethod
    def _locate(msg, doubles, integers, floats, rng):
        """(sentinel bytes, (double, integer, float offsets), ok) with random sentinels."""
        n_doubles = sum(f[2] if len(f) == 3 else 1 for f in doubles)
        patterns = (
            _distinct(lambda: rng.uniform(1.0e299, 1.0e300, n_doubles).astype("<f8")),
            _distinct(lambda: rng.integers(2 ** 24, 2 ** 31, len(integers)).astype("<u4")),
            _distinct(lambda: rng.uniform(1.0e37, 3.0e38, len(floats)).astype("<f4")))
        sentinel = copy.deepcopy((msg, doubles, integers, floats))
        for fields, pattern in zip(sentinel[1:], patterns):
            assign_fields(fields, pattern.tolist())
        data = serialize_message(sentinel[0])
        offsets = [np.array([data.find(p.tobytes()) for p in pattern], np.intp)
                   for pattern in patterns]
        # XCDR1 aligns each primitive to its size relative to the payload (after the 4-byte
        # encapsulation header): the fields are then elements of typed views of the payload.
        ok = data[:2] == b"\x00\x01" and all(
            ((off - 4) % pattern.itemsize == 0).all()
            and all(o >= 0 and data.count(p.tobytes()) == 1 for o, p in zip(off, pattern))
            for off, pattern in zip(offsets, patterns))
        return data, offsets, ok

    def render(self, doubles, integers, floats=()):
        """The message with ``doubles`` (float64), ``integers`` (int32/uint32 values in
        [0, 2**31); the k values of every group with ``integer_width`` k) and ``floats``
        (float32) in the fields given at construction, in the same order: serialised bytes,
        or (``ok`` False) the message object with those values, for ``publish``."""
        if not self.ok:
            return self._fill(doubles, integers, floats)
        self._f64[self._d_idx] = doubles if getattr(doubles, "ndim", 0) == 1 \
            else np.ravel(doubles)
        self._u32[self._i_idx] = integers
        if len(floats):
            self._f32[self._f_idx] = np.ravel(floats)
        return self._buf[:self._size].tobytes()

    def _fill(self, doubles, integers, floats):
        """The fallback of :meth:`render`: the values written into ``msg``'s fields."""
        double_fields, integer_fields, float_fields = self._fields
        integers = np.ravel(integers)
        if self._grouped:     # one group's values for every group
            integers = np.tile(integers, len(integer_fields) // max(len(integers), 1))
        assign_fields(double_fields, np.ravel(doubles).tolist())
        assign_fields(integer_fields, [int(v) for v in integers])
        assign_fields(float_fields, np.ravel(floats).tolist())
        return self.msg


def _run_or_indices(indices):
    """``indices`` (k,) of a template's fields as a slice when they are one run (i, i+1, ...;
    a slice writes faster than an index array), else as they are."""
    if len(indices) and (np.diff(indices) == 1).all():
        return slice(int(indices[0]), int(indices[-1]) + 1)
    return indices


class TemplateCache:
    """Serialised templates of one output, one per message layout (a hashable ``key``);
    at most ``limit`` are kept (all are dropped when full)."""

    def __init__(self, limit=64):
        self._limit, self._templates = limit, {}

    def __len__(self):
        return len(self._templates)

    def get(self, key, build, *args):
        """The template of ``key``, made by ``build(*args)`` (~0.3-2 ms on iCub) when there is
        none (``args``: a hot path passes its method and arguments, not a new closure)."""
        template = self._templates.get(key)
        if template is None:
            if len(self._templates) >= self._limit:
                self._templates.clear()
            template = self._templates[key] = build(*args)
        return template


class EffortMessage:
    """sensor_msgs/JointState with joint ``names`` and an effort per joint only (torques for
    rviz's Effort display), serialised once (see :class:`SerializedTemplate`)."""

    def __init__(self, names):
        n = len(names)
        self.msg = JointState(name=list(names), effort=[0.0] * n)
        self.template = SerializedTemplate(self.msg, [(self.msg, "effort", n)],
                                           stamp_fields(self.msg))

    def render(self, effort, stamp):
        """The message with ``effort`` (n,) stamped ``stamp`` (builtin_interfaces/Time):
        serialised bytes, or the message object when the template is unusable."""
        return self.template.render(effort, stamp_words(stamp))


class _SerializedTF:
    """TFMessage of N transforms, serialised once; see :class:`SerializedTemplate`."""

    def __init__(self, transforms):
        self.msg = TFMessage(transforms=transforms)
        doubles, ints = [], []
        for tf in transforms:
            r = tf.transform.rotation
            doubles += xyz_fields([tf.transform.translation]) + [(r, "x"), (r, "y"), (r, "z"),
                                                                 (r, "w")]
            ints += stamp_fields(tf)
        self.template = SerializedTemplate(self.msg, doubles, ints, integer_width=2)
        self._values = np.empty((len(transforms), 7))    # translation, quaternion per edge

    def render(self, translations, quaternions, stamp, base_pose=None):
        """Serialised TFMessage (bytes, or the message when the template is unusable) stamped
        ``stamp``: ``translations`` (n, 3) and unit ``quaternions`` (n, 4) (x, y, z, w) of
        the first n transforms, then ``base_pose`` (4, 4) when given (N = n + 1)."""
        values, n = self._values, len(translations)
        values[:n, :3] = translations
        values[:n, 3:] = quaternions
        if base_pose is not None:
            values[n, :3] = base_pose[:3, 3]
            values[n, 3:] = rotation_to_quaternion(base_pose[:3, :3])
        return self.template.render(values, stamp_words(stamp))


class TickMessages:
    """The per-tick messages of one model and settings, updated in place.

    ``kd`` gives the /tf edges (``kd.joint_frames``) and the root link; ``settings`` the
    frame prefix, world frame, contacts and representation.
    """

    def __init__(self, kd, settings):
        prefix, world = settings.frame_prefix, settings.world_frame
        self.world_link = world_frame_link(kd, settings)
        self.joint_tfs = [_transform(prefix + p, prefix + c) for _, p, c in kd.joint_frames]
        self.base_tf = _transform(world, prefix + kd.model.root_link)
        self._tf_joints = _SerializedTF(self.joint_tfs)
        self._tf_all = _SerializedTF(self.joint_tfs + [self.base_tf])
        self.com = PointStamped()
        self.com.header.frame_id = world
        p = self.com.point
        self._com = SerializedTemplate(self.com, xyz_fields([p]), stamp_fields(self.com))
        self.momentum = TwistStamped()
        self.momentum.header.frame_id = world
        t = self.momentum.twist
        self._momentum = SerializedTemplate(
            self.momentum, xyz_fields([t.linear, t.angular]), stamp_fields(self.momentum))
        self._gravity = EffortMessage(kd.joints_name_list)
        self._joints, self._representation = list(kd.joints_name_list), \
            settings.velocity_representation
        self._fd_templates = TemplateCache()     # per set of active contacts
        self.markers = MarkerSet(world, settings.contacts)
        self._markers = SerializedTemplate(self.markers.array, self.markers.double_fields,
                                           self.markers.integer_fields)
        self._marker_templates = TemplateCache()   # the array with a MarkerGroup, per layout
        self._contacts, self._frame_index = settings.contacts, kd.model.frame_index
        self._packs = TemplateCache()     # per forward dynamics layout (None: without)
        kernels = compiled_kernels() if kd.compiled else None
        self.scatter = None if kernels is None else kernels.scatter_words   # (or NumPy)

    def per_tick(self, result, stamp_ns, inputs, wanted, with_base):
        """{name: message} of the tick's outputs (stamped ``stamp_ns`` [ns], an integer: the
        hot path makes no builtin_interfaces/Time) named in ``wanted`` (of "tf", "com",
        "momentum", "gravity"; "tf" with world -> root link when ``with_base``, as
        :meth:`tf`), and "forward_dynamics" whenever ``result`` has it (``inputs`` as
        :meth:`forward_dynamics_msg`'s). The same messages as :meth:`tf`, :meth:`com_point`,
        ... give; all rendered at once (:class:`.template_pack.TemplatePack`) when every
        template is usable, else one by one."""
        fd = result.base_acceleration is not None
        pack = self.pack_for(fd, inputs)
        if not pack:
            return self._one_by_one(result, ns_to_stamp(stamp_ns), inputs, wanted, with_base)
        ages = None if not fd else np.array(
            [inputs.odometry_age or 0.0, *map(inputs.wrench_ages.__getitem__, inputs.wrenches)])
        names, aliases, base = self.packed_layout(wanted, fd, with_base)
        return pack.render(result.packed, _NO_AGES if ages is None else ages,
                           result.base_pose, base, ns_words(stamp_ns), names, aliases)

    def packed_layout(self, wanted, fd, with_base):
        """(names, aliases, with_pose) of :meth:`per_tick`'s outputs ``wanted`` from a pack
        (:meth:`pack_for`; :meth:`.template_pack.TemplatePack.render`'s arguments): the
        names with "forward_dynamics" when ``fd``, "tf" as the pack's /tf with or without
        world -> root link, and whether the base pose is written (it is then in /tf)."""
        base = with_base and self.world_link is None and "tf" in wanted
        names = (*wanted, "forward_dynamics") if fd else tuple(wanted)
        return names, (_TF_ALL if base else _TF_JOINTS), base

    def pack_for(self, fd, inputs):
        """The :class:`.template_pack.TemplatePack` of the per-tick outputs of a tick with
        forward dynamics (``fd``) or without, with ``inputs``' wrenches and odometry (their
        ages are ~/forward_dynamics' numbers), or False when a template is unusable. Its
        sources: TickResult.packed, then the base pose (7), then the ages (1 + k)."""
        key = (tuple(inputs.wrenches), inputs.odometry_age is not None) if fd else None
        return self._packs.get(key, self._pack, key)

    def _one_by_one(self, result, stamp, inputs, wanted, with_base):
        """:meth:`per_tick` from each output's own template (or message object)."""
        render = {"tf": lambda: self.tf(result, stamp, with_base),
                  "com": lambda: self.com_point(result, stamp),
                  "momentum": lambda: self.centroidal_momentum(result, stamp),
                  "gravity": lambda: self.gravity_torques(result, stamp)}
        out = {name: render[name]() for name in wanted}
        if result.base_acceleration is not None:
            out["forward_dynamics"] = self.forward_dynamics_msg(result, stamp, inputs)
        return out

    def _pack(self, key):
        """The :class:`.template_pack.TemplatePack` of the per-tick templates with the
        forward dynamics layout ``key`` (None: without), or False when one is unusable."""
        n = len(self._joints)
        templates = [self._tf_joints.template, self._tf_all.template, self._com,
                     self._momentum, self._gravity.template]
        if key is not None:
            templates.append(self._fd_templates.get(key, lambda: self._fd_template(*key)))
        if not all(t.ok for t in templates):
            return False
        # sources: TickResult.packed, then the base pose (7), then the ages (1 + k)
        at, edges = packed_offsets(n), np.arange(n)[:, None]
        end = at["end"]
        tf = np.hstack([at["joint_transforms"] + 16 * edges + [3, 7, 11],
                        at["joint_quaternions"] + 4 * edges + np.arange(4)]).ravel()
        sources = [tf, np.concatenate([tf, np.arange(end, end + 7)]),
                   np.arange(at["com"], at["com"] + 3),
                   np.arange(at["centroidal_momentum"], at["centroidal_momentum"] + 6),
                   np.arange(at["gravity_torques"], at["gravity_torques"] + n)]
        if key is not None:       # base then joint accelerations: one run
            acc = at["base_acceleration"]
            sources.append(np.concatenate([np.arange(acc, acc + 6 + n),
                                           np.arange(end + 7, end + 8 + len(key[0]))]))
        names = ("tf_joints", "tf_all", "com", "momentum", "gravity", "forward_dynamics")
        return TemplatePack(list(zip(names, templates, sources)), self.scatter)

    def tf(self, result, stamp, with_base):
        """/tf of the tick (serialised TFMessage bytes): parent link -> child link of every
        joint, and world -> root link when ``with_base`` (never when the world frame is a
        frame of the model, :attr:`world_link`: a self-transform or a cycle in the tree)."""
        translations, quaternions = result.joint_transforms[:, :3, 3], result.joint_quaternions
        if with_base and self.world_link is None:
            return self._tf_all.render(translations, quaternions, stamp, result.base_pose)
        return self._tf_joints.render(translations, quaternions, stamp)

    def contact_forces(self, result, wrenches):
        """Per contact of the settings, (link origin (3,), force (3,)) in the world frame of
        the tick's wrench ({contact: (expressed link, w (6,))}), or None without one. The
        frames' poses from ``result.world_H_frame``, one compiled call each (in the running
        node, for two contacts, ~15 against 68 us per ~/markers array for every frame's)."""
        index, out = self._frame_index, []
        for contact in self._contacts:
            entry = wrenches.get(contact) if contact in index else None
            if entry is None:
                out.append(None)
                continue
            frame, w = entry
            pose = result.world_H_frame(index[contact])
            axes = pose if frame == contact else result.world_H_frame(index[frame])
            out.append((pose[:3, 3], axes[:3, :3] @ w[:3]))
        return out

    def marker_array(self, result, stamp, forces, extra=None):
        """~/markers of the tick (serialised bytes when possible); ``forces`` as
        :meth:`contact_forces`. ``extra``: a :class:`.markers.MarkerGroup` to append (the
        contact mechanics' markers), or None. The array with a group comes from a template
        per group layout (``extra.key``), made on its first use (~2 ms on iCub, once per
        layout); building and publishing the message objects instead costs ~0.5 ms each
        time."""
        doubles, integers = self.markers.values(stamp, result.com, result.centroidal_momentum,
                                                forces)
        if extra is None:
            return self._markers.render(doubles, integers)
        template = self._marker_templates.get(extra.key, lambda: self._group_template(extra))
        return template.render(np.concatenate([doubles, extra.doubles]),
                               [*integers, *extra.integers])

    def marker_template(self, key, group, *args):
        """The template of :meth:`marker_array` with a MarkerGroup of layout ``key``, made
        from ``group(*args)`` (that MarkerGroup; its values are not read) when new."""
        return self._marker_templates.get(key, self._built_template, group, args)

    def _built_template(self, group, args):
        return self._group_template(group(*args))

    def _group_template(self, group):
        """SerializedTemplate of the markers array followed by ``group``'s layout."""
        markers, doubles, integers = group.prototype()
        own = self.markers
        return SerializedTemplate(MarkerArray(markers=[*own.array.markers, *markers]),
                                  own.double_fields + doubles, own.integer_fields + integers)

    def com_point(self, result, stamp):
        """PointStamped of the CoM [m], world frame (serialised bytes when possible)."""
        return self._com.render(result.com, stamp_words(stamp))

    def centroidal_momentum(self, result, stamp):
        """TwistStamped: linear = m v_com [kg m/s], angular = angular momentum about the
        CoM [kg m^2/s], world axes (serialised bytes when possible)."""
        return self._momentum.render(result.centroidal_momentum, stamp_words(stamp))

    def gravity_torques(self, result, stamp):
        """JointState with name and effort = gravity torques [N m or N] (serialised bytes
        when possible)."""
        return self._gravity.render(result.gravity_torques, stamp)

    def forward_dynamics_msg(self, result, stamp, inputs):
        """ForwardDynamics of a tick (``result.base_acceleration`` must not be None) at
        ``stamp`` that combined ``inputs`` (:class:`.inputs.TickInputs`: its wrenches are the
        active contacts; the odometry's and the wrenches' ages); serialised bytes when
        possible, from a template per set of active contacts and base source. The joints
        with no inertia moving with them (``result.massless_joints``) keep their NaN."""
        names, from_odometry = tuple(inputs.wrenches), inputs.odometry_age is not None
        template = self._fd_templates.get((names, from_odometry),
                                          lambda: self._fd_template(names, from_odometry))
        ages = [inputs.odometry_age if from_odometry else 0.0,
                *(inputs.wrench_ages[c] for c in names)]
        values = np.concatenate([result.base_acceleration, result.joint_accelerations, ages])
        return template.render(values, stamp_words(stamp))

    def _fd_template(self, names, from_odometry):
        """SerializedTemplate of ForwardDynamics with active_contacts ``names``: the 6 base
        then n joint accelerations, the odometry's and the wrenches' ages, the stamp."""
        msg = ForwardDynamics(representation=self._representation, joint_names=self._joints,
                              active_contacts=list(names),
                              joint_accelerations=[0.0] * len(self._joints),
                              base_from_odometry=from_odometry,
                              wrench_ages=[0.0] * len(names))
        a = msg.base_acceleration
        doubles = xyz_fields([a.linear, a.angular]) + [
            (msg, "joint_accelerations", len(self._joints)), (msg, "odometry_age"),
            (msg, "wrench_ages", len(names))]
        return SerializedTemplate(msg, doubles, stamp_fields(msg))


def _transform(parent, child):
    tf = TransformStamped()
    tf.header.frame_id = parent
    tf.child_frame_id = child
    return tf
