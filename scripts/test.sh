#!/usr/bin/env bash
# The README's test command: set up the environment (idempotent) and run every test with
# real rclpy over loopback-only DDS. Extra arguments go to pytest.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
bash scripts/setup_env.sh
# shellcheck disable=SC1091
source scripts/env.sh
export PYTHONUNBUFFERED=1
exec python -m pytest test -ra -p no:cacheprovider "$@"
