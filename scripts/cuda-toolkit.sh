#!/usr/bin/env bash
# Build a minimal CUDA 12.4 root from NVIDIA's PyPI wheels, usable by clang as
# `--cuda-path=ROOT` for device-side compilation (headers, libdevice, ptxas).
#
#   [CUDA_TOOLKIT_VERSION=11.8] scripts/cuda-toolkit.sh [ROOT]
#
# CUDA_TOOLKIT_VERSION: 12.4 (default), or 11.8, the last CUDA with texture
# references, which old suites (Rodinia, Parboil) use; scripts/suites.sh
# retries a file that fails under 12.4 with it.
# Default ROOT: ${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-VERSION
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

VERSION="${CUDA_TOOLKIT_VERSION:-12.4}"
ROOT="${1:-${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-$VERSION}"
PYTHON="${PYTHON:-python3}"
STAMP=".warpcheck-cuda-complete"

die() { echo "cuda-toolkit.sh: error: $*" >&2; exit 1; }
log() { echo "cuda-toolkit.sh: $*" >&2; }

# Pinned wheels: CUDA 12.4 update 1, or 11.8 (its runtime, nvcc and cuRAND,
# whose headers clang's CUDA wrapper includes).
case "$VERSION" in
  12.4)
    CUDA_VERSION_FULL="12.4.1"
    CUDA_VERSION_MACRO=12040
    WHEELS=(
      "nvidia-cuda-runtime-cu12==12.4.127"
      "nvidia-cuda-nvcc-cu12==12.4.131"
      "nvidia-cuda-cccl-cu12==12.4.127.post1"
      "nvidia-curand-cu12==10.3.5.147"
    )
    ;;
  11.8)
    CUDA_VERSION_FULL="11.8.0"
    CUDA_VERSION_MACRO=11080
    WHEELS=(
      "nvidia-cuda-runtime-cu11==11.8.89"
      "nvidia-cuda-nvcc-cu11==11.8.89"
      "nvidia-curand-cu11==10.3.0.86"
    )
    ;;
  *) die "CUDA_TOOLKIT_VERSION=$VERSION: 12.4 or 11.8" ;;
esac

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
grep -q "^#define CUDA_VERSION $CUDA_VERSION_MACRO" "$STAGE/include/cuda.h" \
  || die "unexpected CUDA_VERSION in cuda.h"

# version.json in the format of a real CUDA 12 toolkit ("cuda"."version").
wheel_version() {  # dist-info name -> version, e.g. nvidia_cuda_nvcc_cu12 -> 12.4.131
  local d; d=$(ls -d "$WORK"/unpacked/"$1"-*.dist-info 2>/dev/null | head -n1)
  d="${d##*/$1-}"; echo "${d%.dist-info}"
}
component() {  # KEY NAME DIST: one entry, for the wheels of this version
  local v; v=$(wheel_version "$3")
  [[ -n "$v" ]] || return 0
  printf ',\n   "%s" : {\n      "name" : "%s",\n      "version" : "%s"\n   }' "$1" "$2" "$v"
}
cu="cu${VERSION%%.*}"
{
  printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   }' \
    "$CUDA_VERSION_FULL"
  component cuda_cccl "CUDA C++ Core Compute Libraries" "nvidia_cuda_cccl_$cu"
  component cuda_cudart "CUDA Runtime (cudart)" "nvidia_cuda_runtime_$cu"
  component cuda_nvcc "CUDA NVCC" "nvidia_cuda_nvcc_$cu"
  component libcurand "CUDA cuRAND" "nvidia_curand_$cu"
  printf '\n}\n'
} >"$STAGE/version.json"
touch "$STAGE/$STAMP"

# Publish. mv -T fails if another run got there first; that is fine.
[[ -d "$ROOT" ]] && rmdir "$ROOT" 2>/dev/null || true
if ! mv -T "$STAGE" "$ROOT" 2>/dev/null; then
  [[ -f "$ROOT/$STAMP" ]] || die "could not move toolkit into $ROOT"
fi
log "CUDA $CUDA_VERSION_FULL toolkit ready ($(du -sh "$ROOT" | cut -f1))"
echo "$ROOT"
