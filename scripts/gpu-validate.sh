#!/usr/bin/env bash
# Hardware counters beside the simulator's figures and the static findings:
# every fixture and example kernel launched once on a GPU (nvcc, Nsight
# Compute's ncu), in `warpcheck simulate` and under `warpcheck check`,
# tabled per kernel and compared per source line. See gpu_validate.py.
#
#   scripts/gpu-validate.sh prepare DIR [FILES...]  # no GPU: harnesses, simulator, check
#   scripts/gpu-validate.sh gpu DIR OUT             # GPU, nvcc and ncu; no warpcheck needed
#   scripts/gpu-validate.sh compare DIR OUT         # the tables and the differences
#   scripts/gpu-validate.sh all DIR OUT [FILES...]  # all three where everything exists
set -euo pipefail
exec python3 "$(dirname "$0")/gpu_validate.py" "$@"
