"""Puts ``test/support`` (helpers shared by the test folders and bench/, not installed with
the package: e.g. ``random_tree``) on ``sys.path`` before any test module is imported."""

import pathlib
import sys

SUPPORT = str(pathlib.Path(__file__).resolve().parent / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)
