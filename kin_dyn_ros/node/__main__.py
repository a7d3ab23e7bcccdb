"""``python -m kin_dyn_ros.node``: run ``kin_dyn_node`` (as the ``kin_dyn_node`` entry point)."""

from .kin_dyn_node import main

raise SystemExit(main())
