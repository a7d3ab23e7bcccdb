"""Record ROS 2 messages to an MCAP file that Foxglove and PlotJuggler open directly.

The file follows rosbag2's MCAP layout (profile ``ros2``, message encoding ``cdr``, schema
encoding ``ros2msg``): every channel's schema is the type's *complete* message definition,
the .msg text of the type followed by the .msg text of every type it uses, each after a
line of 80 ``=`` and a ``MSG: pkg/msg/Type`` line (rosbag2's docs/message_definition_encoding.md).
The .msg files are read from the ``share/<pkg>/msg/`` folders of the packages on
``AMENT_PREFIX_PATH`` (the wheels' and the interface overlay's install trees).

Messages are written as the CDR bytes that came off the wire (rclpy ``raw=True``
subscriptions, or ``rclpy.serialization.serialize_message`` for what the demo publishes):
no re-encoding in Python, so recording costs little next to the node under test.

No rclpy import here: only ``mcap`` / ``mcap_ros2`` and the standard library.
"""

import os
import re
import time
from pathlib import Path

from mcap_ros2.writer import Writer

__all__ = ["message_definition", "McapRecorder", "PRIMITIVE_TYPES"]

PRIMITIVE_TYPES = frozenset({
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
    "int32", "uint32", "int64", "uint64", "string", "wstring",
})
SEPARATOR = "=" * 80


def _split_type(type_name):
    """'pkg/msg/Type' or 'pkg/Type' -> ('pkg', 'Type')."""
    parts = type_name.split("/")
    if len(parts) == 3 and parts[1] == "msg":
        return parts[0], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"expected a message type 'pkg/msg/Type', got '{type_name}'")


def _find_msg_file(package, name, prefixes):
    for prefix in prefixes:
        path = Path(prefix) / "share" / package / "msg" / f"{name}.msg"
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no {package}/msg/{name}.msg under share/ of AMENT_PREFIX_PATH ({':'.join(prefixes)})")


def _field_types(package, text):
    """Complex types ('pkg/msg/Type') used by the fields of a .msg text, in order."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        base = re.split(r"[\[<=\s]", line.split()[0], maxsplit=1)[0]
        if base in PRIMITIVE_TYPES:
            continue
        pkg, name = _split_type(base) if "/" in base else (package, base)
        out.append(f"{pkg}/msg/{name}")
    return out


def message_definition(type_name, prefixes=None):
    """Complete ros2msg definition of ``type_name`` ('pkg/msg/Type'), as rosbag2 writes it.

    ``prefixes``: install prefixes whose ``share/<pkg>/msg`` folders hold the .msg files
    (default: ``AMENT_PREFIX_PATH``). Raises FileNotFoundError naming a missing .msg file.
    """
    if prefixes is None:
        prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    package, name = _split_type(type_name)
    root = f"{package}/msg/{name}"
    texts, order, stack = {}, [], [root]
    while stack:   # depth-first, each type once
        current = stack.pop()
        if current in texts:
            continue
        pkg, nm = _split_type(current)
        texts[current] = _find_msg_file(pkg, nm, prefixes).read_text(encoding="utf-8")
        order.append(current)
        stack.extend(reversed(_field_types(pkg, texts[current])))
    parts = [texts[root].rstrip("\n")]
    for dep in order[1:]:
        parts += [SEPARATOR, f"MSG: {dep}", texts[dep].rstrip("\n")]
    return "\n".join(parts) + "\n"


class _RawWriter(Writer):
    """mcap_ros2's writer plus :meth:`write_serialized` for CDR bytes already encoded by rclpy.

    (Uses the writer's ``_writer`` / ``_channel_ids``, as its own ``write_message`` does;
    mcap-ros2-support is pinned in scripts/requirements-<distro>.txt.)
    """

    def write_serialized(self, topic, schema, data, log_time, publish_time=None, sequence=0):
        channel_id = self._channel_ids.get(topic)
        if channel_id is None:
            channel_id = self._writer.register_channel(topic=topic, message_encoding="cdr",
                                                       schema_id=schema.id)
            self._channel_ids[topic] = channel_id
        self._writer.add_message(channel_id=channel_id, log_time=log_time,
                                 publish_time=log_time if publish_time is None else publish_time,
                                 sequence=sequence, data=bytes(data))


class McapRecorder:
    """Write serialized ROS 2 messages to ``path`` (an .mcap file, zstd-compressed chunks).

    Call :meth:`add_topic` once per topic (registers the type's schema), then :meth:`write`
    with the CDR bytes; :meth:`close` (or the context manager) finishes the file.
    ``counts`` holds the number of messages written per topic.
    """

    def __init__(self, path, prefixes=None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "wb")
        self._writer = _RawWriter(self._file)
        self._prefixes = prefixes
        self._schemas = {}
        self._topics = {}
        self._sequence = {}
        self.counts = {}

    def add_topic(self, topic, type_name):
        """Register ``topic`` with ROS 2 type ``type_name`` ('pkg/msg/Type')."""
        if topic in self._topics:
            if self._topics[topic].name != type_name:
                raise ValueError(f"topic {topic} already recorded as {self._topics[topic].name}, "
                                 f"got {type_name}")
            return
        schema = self._schemas.get(type_name)
        if schema is None:
            schema = self._writer.register_msgdef(type_name,
                                                  message_definition(type_name, self._prefixes))
            self._schemas[type_name] = schema
        self._topics[topic] = schema
        self.counts[topic] = 0
        self._sequence[topic] = 0

    def has_topic(self, topic):
        return topic in self._topics

    def write(self, topic, data, log_time_ns=None):
        """Write one message's CDR bytes (with the 4-byte encapsulation header) on ``topic``."""
        if log_time_ns is None:
            log_time_ns = time.time_ns()
        self._sequence[topic] += 1
        self._writer.write_serialized(topic, self._topics[topic], data, log_time_ns,
                                      sequence=self._sequence[topic])
        self.counts[topic] += 1

    def add_metadata(self, name, data):
        """Key-value strings stored in the file (shown by ``mcap info`` and Foxglove)."""
        self._writer.add_metadata(name, {str(k): str(v) for k, v in data.items()})

    def close(self):
        if self._file.closed:
            return
        self._writer.finish()
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
