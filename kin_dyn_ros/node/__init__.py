"""The ROS 2 layer: ``kin_dyn_node`` over the dynamics core (:mod:`kin_dyn_ros.dynamics`).

One job per module:

- :mod:`.kin_dyn_node`: :class:`KinDynNode`, the wiring of the pieces below, and ``main``;
- :mod:`.sensor_thread`, :mod:`.cdr`: the sensor inputs taken off rclpy's executor and read
  from their bytes;
- :mod:`.conversions`: messages to arrays and back, and the joint-state merger;
- :mod:`.outputs`, :mod:`.markers`: the per-tick messages (serialised templates inside);
- :mod:`.services`: the planners' services, answered from a snapshot off the tick path;
- :mod:`.contact_mechanics`: support polygon, margin, equilibrium torques and their service;
- :mod:`.settings`: the parameters; :mod:`.diagnostics`: /diagnostics;
- :mod:`.throttle`, :mod:`.spinning`: throttled logs, spinning until shutdown.
"""

from .kin_dyn_node import KinDynNode, main

__all__ = ["KinDynNode", "main"]
