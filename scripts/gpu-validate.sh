#!/usr/bin/env bash
# Hardware counters beside the simulator's figures: every fixture and
# example kernel launched once on a GPU (nvcc, Nsight Compute's ncu) and in
# `warpcheck simulate`, tabled per kernel: global sectors per request,
# shared wavefronts, divergent branches, instructions.
#
#   scripts/gpu-validate.sh [FILES...]            # needs a GPU, nvcc and ncu
#   scripts/gpu-validate.sh --dry-run [FILES...]  # no GPU: launches, harnesses, simulator figures
#   scripts/gpu-validate.sh --parse-ncu report.csv
#
# Options: --grid X,Y,Z --block X,Y,Z --int N (integer arguments) --arch
# sm_XX --warpcheck PATH (default target/release/warpcheck).
set -euo pipefail
exec python3 "$(dirname "$0")/gpu_validate.py" "$@"
