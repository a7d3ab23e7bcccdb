"""The ROS 2 layer: ``kin_dyn_node`` over the dynamics core (:mod:`kin_dyn_ros.dynamics`).

One job per module:

- :mod:`.kin_dyn_node`: :class:`KinDynNode`, the wiring of the pieces below, and ``main``;
- :mod:`.sensor_thread`, :mod:`.cdr`: the sensor inputs taken off rclpy's executor and read
  from their bytes;
- :mod:`.conversions`: messages to arrays and back, and the joint-state merger;
- :mod:`.outputs`, :mod:`.markers`: the per-tick messages (serialised templates inside);
- :mod:`.services`, :mod:`.service_host`, :mod:`.state_share`: the planners' services, in a
  process of their own that reads the last tick's state from shared memory (or in the
  node's, from a snapshot);
- :mod:`.contact_mechanics`: support polygon, margin, equilibrium torques;
- :mod:`.rates`, :mod:`.realtime`: /tf's rate by stamps; real-time scheduling;
- :mod:`.settings`: the parameters; :mod:`.diagnostics`: /diagnostics;
- :mod:`.throttle`, :mod:`.spinning`: throttled logs, spinning until shutdown.
"""

from .kin_dyn_node import KinDynNode, main

__all__ = ["KinDynNode", "main"]
