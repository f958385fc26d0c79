#!/usr/bin/env bash
# Build a minimal CUDA 12.4 root from NVIDIA's PyPI wheels, usable by clang as
# `--cuda-path=ROOT` for device-side compilation (headers, libdevice, ptxas).
#
#   scripts/cuda-toolkit.sh [ROOT]
#
# Default ROOT: ${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-12.4
# Idempotent: if ROOT is already complete it only prints ROOT.
# The last line of stdout is always ROOT; progress goes to stderr.
#
# Layout produced (what clang's CudaInstallationDetector looks for):
#   ROOT/bin/ptxas                         (clang requires ROOT/bin to exist)
#   ROOT/include/cuda.h ...                (clang reads CUDA_VERSION from cuda.h)
#   ROOT/nvvm/libdevice/libdevice.10.bc    (required unless -nocudalib)
#   ROOT/lib64/libcudart.so.12 ...
#   ROOT/version.json                      (written here; the wheels have none)
set -euo pipefail

ROOT="${1:-${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-12.4}"
PYTHON="${PYTHON:-python3}"
STAMP=".warpcheck-cuda-complete"

# Pinned wheels (CUDA 12.4 update 1).
CUDA_VERSION_FULL="12.4.1"
WHEELS=(
  "nvidia-cuda-runtime-cu12==12.4.127"
  "nvidia-cuda-nvcc-cu12==12.4.131"
  "nvidia-cuda-cccl-cu12==12.4.127.post1"
  "nvidia-curand-cu12==10.3.5.147"
)

die() { echo "cuda-toolkit.sh: error: $*" >&2; exit 1; }
log() { echo "cuda-toolkit.sh: $*" >&2; }

# Fast path: already built.
if [[ -f "$ROOT/$STAMP" ]]; then
  echo "$ROOT"
  exit 0
fi
if [[ -e "$ROOT" ]] && [[ -n "$(ls -A "$ROOT" 2>/dev/null)" ]]; then
  die "$ROOT exists but is not a complete toolkit built by this script; remove it and re-run"
fi

command -v "$PYTHON" >/dev/null || die "$PYTHON not found (set PYTHON=...)"
mkdir -p "$(dirname "$ROOT")"
ROOT="$(cd "$(dirname "$ROOT")" && pwd)/$(basename "$ROOT")"

# Build in a sibling temp dir, then rename into place atomically.
WORK="$(mktemp -d "$ROOT.tmp.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
STAGE="$WORK/root"
mkdir -p "$STAGE"/{bin,include,lib64,nvvm}

log "downloading ${#WHEELS[@]} wheels into $WORK/wheels"
if ! "$PYTHON" -m pip download --no-deps --quiet --disable-pip-version-check \
      --only-binary=:all: --platform manylinux2014_x86_64 \
      -d "$WORK/wheels" "${WHEELS[@]}" >&2; then
  die "pip download failed (need network access to PyPI and '$PYTHON -m pip')"
fi

log "unpacking"
for whl in "$WORK"/wheels/*.whl; do
  "$PYTHON" -m zipfile -e "$whl" "$WORK/unpacked" || die "cannot unpack $whl"
done

# Merge nvidia/<component>/{include,lib,bin,nvvm} into the CUDA-style root.
for comp in "$WORK"/unpacked/nvidia/*/; do
  for sub in include:include lib:lib64 bin:bin nvvm:nvvm; do
    if [[ -d "$comp/${sub%%:*}" ]]; then
      cp -a "$comp/${sub%%:*}/." "$STAGE/${sub##*:}/"
    fi
  done
done
# Drop the Python package leftovers (and cccl's cmake dir, useless here).
find "$STAGE" \( -name '__init__.py' -o -name '__pycache__' \) -prune -exec rm -rf {} +
rm -rf "$STAGE/lib64/cmake"
chmod +x "$STAGE"/bin/* 2>/dev/null || true
ln -s lib64 "$STAGE/lib"
# Unversioned .so links, as a regular toolkit has (libcudart.so -> libcudart.so.12).
for so in "$STAGE"/lib64/*.so.*; do
  [[ -e "$so" ]] || continue
  base="${so%%.so.*}.so"
  if [[ ! -e "$base" ]]; then ln -s "$(basename "$so")" "$base"; fi
done

# Sanity checks: what clang needs.
for f in include/cuda.h include/cuda_runtime.h nvvm/libdevice/libdevice.10.bc; do
  [[ -f "$STAGE/$f" ]] || die "wheels did not provide $f"
done
grep -q '^#define CUDA_VERSION 12040' "$STAGE/include/cuda.h" \
  || die "unexpected CUDA_VERSION in cuda.h"

# version.json in the format of a real CUDA 12 toolkit ("cuda"."version").
wheel_version() {  # dist-info name -> version, e.g. nvidia_cuda_nvcc_cu12 -> 12.4.131
  local d; d=$(ls -d "$WORK"/unpacked/"$1"-*.dist-info 2>/dev/null | head -n1)
  d="${d##*/$1-}"; echo "${d%.dist-info}"
}
cat >"$STAGE/version.json" <<EOF
{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "$CUDA_VERSION_FULL"
   },
   "cuda_cccl" : {
      "name" : "CUDA C++ Core Compute Libraries",
      "version" : "$(wheel_version nvidia_cuda_cccl_cu12)"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "$(wheel_version nvidia_cuda_runtime_cu12)"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "$(wheel_version nvidia_cuda_nvcc_cu12)"
   },
   "libcurand" : {
      "name" : "CUDA cuRAND",
      "version" : "$(wheel_version nvidia_curand_cu12)"
   }
}
EOF
touch "$STAGE/$STAMP"

# Publish. mv -T fails if another run got there first; that is fine.
[[ -d "$ROOT" ]] && rmdir "$ROOT" 2>/dev/null || true
if ! mv -T "$STAGE" "$ROOT" 2>/dev/null; then
  [[ -f "$ROOT/$STAMP" ]] || die "could not move toolkit into $ROOT"
fi
log "CUDA $CUDA_VERSION_FULL toolkit ready ($(du -sh "$ROOT" | cut -f1))"
echo "$ROOT"
