"""The raw-subscription callback of the benchmarks' receivers (not a test): it records, per
message, the stamp read from its CDR header and when it arrived."""

import struct
import time

__all__ = ["stamp_recorder"]

_STAMP = struct.Struct('<iI').unpack_from


def stamp_recorder(records, offset, with_info):
    """A callback of a raw subscription appending to ``records``, per message, its
    header.stamp [ns] (at byte ``offset`` of the CDR data, the 4-byte encapsulation header
    included) and: with ``with_info`` (the message info rclpy gives on Jazzy and newer) the
    middleware's reception time, the writer's source time and sequence number, ``(stamp,
    received, written, sequence)``; without it (Humble) when the callback runs, ``(stamp,
    received)``; all times wall clock [ns]."""
    if with_info:
        def callback(data, info):
            sec, nsec = _STAMP(data, offset)
            records.append((sec * 1_000_000_000 + nsec, info['received_timestamp'],
                            info['source_timestamp'],
                            info.get('publication_sequence_number')))
    else:
        def callback(data):
            sec, nsec = _STAMP(data, offset)
            records.append((sec * 1_000_000_000 + nsec, time.time_ns()))
    return callback
