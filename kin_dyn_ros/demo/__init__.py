"""The live humanoid demo: ``python -m kin_dyn_ros.demo --help``.

A motion source (:mod:`.motion`, pure NumPy) drives ``kin_dyn_node`` with joint states,
odometry and contact wrenches; the demo records everything to MCAP (:mod:`.recorder`) and
plots it (:mod:`.plots`); :mod:`.runner` wires it together with rclpy.
"""
