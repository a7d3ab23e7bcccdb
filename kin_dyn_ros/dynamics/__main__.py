"""``python -m kin_dyn_ros.dynamics``: compile (or load from numba's cache) the kernels now
and print which path runs (:func:`.compiled.main`)."""

from .compiled import main

main()
