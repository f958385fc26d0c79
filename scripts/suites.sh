#!/usr/bin/env bash
# warpcheck over public CUDA suites: device IR of every benchmark, then
# `check --summary --sites` and `check --compare-uniformity` on each file, then one
# table per benchmark (exit codes, time, memory, branch and access classes,
# unknown rates, branches warpcheck calls dependent and LLVM uniform).
#
# usage: scripts/suites.sh [STAGE] [NAME=]DIR...     (or SUITES_SRC="NAME=DIR ...")
#        scripts/suites.sh checkout NAME GIT_DIR [DEST]
#
# STAGE: all (default: build, check, report), build, check or report.
#
# The suites are never downloaded here. Fetch a mirror first (the session
# tool `fetch github:OWNER/REPO` leaves a bare git dir in
# /work/.mirror/OWNER+REPO/repo), then check its files out outside any
# repository with `scripts/suites.sh checkout NAME GIT_DIR` (default DEST
# /work/suites-src/NAME; it skips blobs the mirror lacks, where `git archive`
# would stop). Suites whose layout is known (scripts/suites.py LAYOUTS):
#   rodinia        github:yuhc/gpu-rodinia     benchmarks cuda/*
#   parboil        github:yuhc/gpu-parboil     benchmarks/*/src/* (e.g. bfs/cuda)
#   cuda-samples   github:NVIDIA/cuda-samples  Samples/*/*
#   polybench-gpu  github:sgrauerg/polybenchGpu CUDA/*
# Any other NAME: each top-level directory with a .cu file is a benchmark.
#
# build: for each .cu that no other file of its benchmark #includes,
#   clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=$ARCH -O2 -g with the
#   CUDA 12.4 headers of scripts/cuda-toolkit.sh, then, if that fails, with
#   its CUDA 11.8 ones (texture references, which 12.0 removed); -I the
#   benchmark's directory, those its Makefiles name, the suite's shared
#   headers and $SDK_COMMON (the samples' helper_cuda.h, which Makefiles take
#   from an SDK); -D each literal macro its Makefiles define;
#   -Wno-c++11-narrowing -Wno-reserved-user-defined-literal, as nvcc only
#   warns; a file whose host code calls nvcc's mixed-signedness min or max
#   (clang has none) is tried once more with scripts/cuda-host-minmax.h.
#   Writes $OUT/NAME/BENCH/FILE.ll and FILE.lowered.ll: the NVPTX
#   argument lowering and address-space inference, so that LLVM's
#   UniformityAnalysis sees kernel pointers as global. opt-19's -passes=
#   knows no nvptx-lower-args, but a target pass given as `-nvptx-lower-args`
#   runs under the legacy manager, with `-infer-address-spaces` after it.
#   $OUT/NAME/compile.tsv: each file's status, toolkit (current or legacy)
#   and first error under each; a file that fails both ways is skipped.
# check: for each IR file, warpcheck with -j1 under `ulimit -S -t $TIMEOUT`
#   and /usr/bin/time -v: $OUT/results/NAME/BENCH/FILE[.lowered].{check,uniformity}
#   .{json,err,rc,time} (check's JSON gzipped).
# report: $OUT/report.{md,json,tsv}; the markdown is printed.
#
# Environment: OUT (/work/suites-ir), TIMEOUT (300: CPU seconds for each
# process of a command, and the compile's wall-clock limit),
# CUDA_ROOT and CUDA_ROOT_LEGACY (default: scripts/cuda-toolkit.sh's 12.4
# and 11.8), SDK_COMMON (/work/suites-src/cuda-samples/Common, if there),
# ARCH (sm_80), CFLAGS (-O2 -g), CLANG (clang-19), OPT (opt-19), WARPCHECK
# (target/release/warpcheck, built if absent).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

OUT=${OUT:-/work/suites-ir}
TIMEOUT=${TIMEOUT:-300}
ARCH=${ARCH:-sm_80}
CFLAGS=${CFLAGS:--O2 -g}
CLANG=${CLANG:-clang-19}
OPT=${OPT:-opt-19}
WARPCHECK=${WARPCHECK:-$repo/target/release/warpcheck}
SDK_COMMON=${SDK_COMMON:-/work/suites-src/cuda-samples/Common}

die() { echo "suites.sh: $*" >&2; exit 2; }
log() { echo "suites.sh: $*" >&2; }

if [ "${1:-}" = checkout ]; then
  [ $# -ge 3 ] || die "usage: suites.sh checkout NAME GIT_DIR [DEST]"
  dest=${4:-/work/suites-src/$2}
  mkdir -p "$dest"
  if git -C "$dest" rev-parse --git-dir >/dev/null 2>&1; then
    rmdir "$dest" 2>/dev/null || true
    die "$dest is inside a git repository; check suites out elsewhere"
  fi
  exec python3 "$here/suites.py" checkout "$3" "$dest"
fi

stage=all
case "${1:-}" in all | build | check | report) stage=$1; shift ;; esac
specs=("$@")
if [ ${#specs[@]} -eq 0 ] && [ -n "${SUITES_SRC:-}" ]; then
  read -ra specs <<<"$SUITES_SRC"
fi
if [ ${#specs[@]} -eq 0 ] && [ "$stage" != report ]; then
  die "no suites: give [NAME=]DIR arguments or SUITES_SRC (see the header)"
fi

# build NAME DIR: the IR of every translation unit, plain and lowered.
build() {
  local name=$1 src=$2 dir=$OUT/$1 logs=$OUT/results/$1
  mkdir -p "$dir" "$logs"
  python3 "$here/suites.py" plan "$name" "$src" >"$dir/plan.tsv"
  : >"$dir/compile.tsv"
  local bench role file stem flags ok=0 failed=0 legacy=0
  local sdk=()
  [ ! -d "$SDK_COMMON" ] || sdk=(-I"$SDK_COMMON")
  read -ra cflags <<<"$CFLAGS"
  while IFS=$'\t' read -r bench role file stem flags; do
    [ "$role" = tu ] || continue
    local ll=$dir/$stem.ll status=1 used toolkit
    mkdir -p "$(dirname "$ll")" "$(dirname "$logs/$stem")"
    read -ra extra <<<"$flags"
    for used in current legacy minmax; do
      toolkit=$CUDA_ROOT
      [ $used != legacy ] || toolkit=$CUDA_ROOT_LEGACY
      local shim=()
      if [ $used = minmax ]; then
        # Host code calling nvcc's mixed min/max: once more, with them.
        grep -q "no matching function for call to '\(min\|max\)'" \
          "$logs/$stem.compile-current.log" || break
        shim=(-include "$here/cuda-host-minmax.h")
      fi
      status=0
      timeout -k 10 "$TIMEOUT" "$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch="$ARCH" \
        --cuda-path="$toolkit" "${cflags[@]}" -Wno-unknown-cuda-version \
        -Wno-c++11-narrowing -Wno-reserved-user-defined-literal -S -emit-llvm \
        "${shim[@]}" "${extra[@]}" "${sdk[@]}" "$src/$file" -o "$ll" \
        2>"$logs/$stem.compile-$used.log" || status=$?
      [ $status -ne 0 ] || break
    done
    if [ $status -eq 0 ]; then
      "$OPT" -mtriple=nvptx64-nvidia-cuda -mcpu="$ARCH" -nvptx-lower-args \
        -infer-address-spaces -S "$ll" -o "$dir/$stem.lowered.ll" \
        2>>"$logs/$stem.compile-$used.log" || status=lower-$?
    fi
    local errors=("" "")
    if [ "$status" = 0 ]; then
      ok=$((ok + 1))
      [ $used != legacy ] || legacy=$((legacy + 1))
    else
      failed=$((failed + 1))
      rm -f "$ll" "$dir/$stem.lowered.ll"
      errors=()
      for used in current legacy; do
        errors+=("$(grep -m1 error "$logs/$stem.compile-$used.log" |
          tr '\t' ' ' | cut -c1-300 || true)")
      done
      used=-
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$stem" "$status" "$used" "${errors[@]}" \
      >>"$dir/compile.tsv"
  done <"$dir/plan.tsv"
  log "$name: $ok files compiled ($legacy with CUDA 11.8), $failed failed ($dir/compile.tsv)"
}

# measure BASE COMMAND...: one run, its exit status, time and memory. The
# limit is on CPU time, which other work on the machine does not eat (an
# overrun is SIGXCPU, exit 152); four times as much wall clock is the
# backstop (exit 124).
measure() {
  local base=$1 status=0
  shift
  (
    ulimit -S -t "$TIMEOUT"
    exec /usr/bin/time -v -o "$base.time" timeout -k 10 $((4 * TIMEOUT)) "$@"
  ) >"$base.json" 2>"$base.err" || status=$?
  echo "$status" >"$base.rc"
}

# check NAME: both commands on every IR file that built.
check() {
  local name=$1 dir=$OUT/$1 stem status rest runs=0
  [ -f "$dir/compile.tsv" ] || die "$name: not built (run the build stage)"
  while IFS=$'\t' read -r stem status rest; do
    [ "$status" = 0 ] || continue
    for suffix in "" .lowered; do
      local ll=$dir/$stem$suffix.ll base=$OUT/results/$name/$stem$suffix
      mkdir -p "$(dirname "$base")"
      measure "$base.check" "$WARPCHECK" check --summary --sites --format json -j1 "$ll"
      # Some sites' ACF texts run to 100 MB (rodinia dwt2d).
      gzip -1 -f "$base.check.json"
      measure "$base.uniformity" "$WARPCHECK" check --compare-uniformity --format json -j1 "$ll"
      runs=$((runs + 2))
    done
  done <"$dir/compile.tsv"
  log "$name: $runs runs ($OUT/results/$name)"
}

if [ "$stage" = all ] || [ "$stage" = build ]; then
  CUDA_ROOT=${CUDA_ROOT:-$("$here/cuda-toolkit.sh" | tail -n1)}
  CUDA_ROOT_LEGACY=${CUDA_ROOT_LEGACY:-$(CUDA_TOOLKIT_VERSION=11.8 "$here/cuda-toolkit.sh" | tail -n1)}
fi
if [ "$stage" = all ] || [ "$stage" = check ]; then
  [ -x "$WARPCHECK" ] || (cd "$repo" && cargo build --release)
fi
for spec in "${specs[@]}"; do
  name=${spec%%=*} src=${spec#*=}
  [ "$name" != "$spec" ] || name=$(basename "$spec")
  [ -d "$src" ] || die "$src: no such directory"
  src=$(cd "$src" && pwd)
  case $stage in
    all) build "$name" "$src"; check "$name" ;;
    build) build "$name" "$src" ;;
    check) check "$name" ;;
  esac
done
if [ "$stage" = all ] || [ "$stage" = report ]; then
  python3 "$here/suites.py" report "$OUT"
fi
