"""kin_dyn_ros: floating-base kinematics and dynamics of humanoid robots for ROS 2.

- :mod:`kin_dyn_ros.dynamics`: the ROS-free NumPy core (``KinDynComputations``).
- :mod:`kin_dyn_ros.node`: ``kin_dyn_node``, the thin ROS 2 layer over the core.
- :mod:`kin_dyn_ros.demo`: ``python -m kin_dyn_ros.demo``, the live humanoid demo.
"""
