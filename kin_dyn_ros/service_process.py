"""``python -m kin_dyn_ros.service_process FD NODE_FQN NAME NAMESPACE``: the services'
process of a kin_dyn_node (:mod:`kin_dyn_ros.node.service_host`), started by the node."""

from .node.service_host import main

if __name__ == "__main__":
    raise SystemExit(main())
