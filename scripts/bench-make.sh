#!/usr/bin/env bash
# What the Make snippet (scripts/warpcheck.mk) costs a real build: a
# generated project of FILES .cu files (default 40, copies of the examples
# and of tests/fixtures/projects/app, whose files launch their kernels from
# host code, so the plugin compiles their host side for the shapes),
# built with `make -j JOBS` (default 4) by clang-19, without and then with
# $(WARPCHECK_CUDAFLAGS) (the plugin on the device side, line tables),
# RUNS times each (default 5), the two builds of a run back to back in
# alternating order. Prints each build's wall and CPU seconds (user+sys of
# every compile) and the medians of the per-run ratios (with / without).
# Target: <= 1.05.
#
# Compiles are `-c` with ptxas and the headers of scripts/cuda-toolkit.sh's
# CUDA root when it has them (a real build), else `--cuda-device-only -S`
# with warpcheck's own header, and the script says which.
#
# WARPCHECK names a warpcheck to use (its plugin is the one beside it)
# instead of a fresh release build.
#
# usage: scripts/bench-make.sh
set -euo pipefail
cd "$(dirname "$0")/.."
files=${FILES:-40}
jobs=${JOBS:-4}
runs=${RUNS:-5}
if [ -z "${WARPCHECK:-}" ]; then
  cargo build --release --quiet
  export WARPCHECK=$PWD/target/release/warpcheck
fi
root=$PWD
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

examples=(examples/*.cu tests/fixtures/projects/app/*.cu)
cp tests/fixtures/projects/app/app.h "$dir/"
for i in $(seq 1 "$files"); do
  cp "${examples[$((i % ${#examples[@]}))]}" "$dir/f$i.cu"
done
cuda=${CUDA_PATH:-${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-12.4}
if [ -x "$cuda/bin/ptxas" ]; then
  flags="--cuda-gpu-arch=sm_80 -O2 --cuda-path=$cuda -Wno-unknown-cuda-version --cuda-device-only -c"
  echo "build: clang-19 --cuda-device-only -c (ptxas from $cuda)"
else
  flags="--cuda-gpu-arch=sm_80 -O2 \$(WARPCHECK_NO_TOOLKIT_FLAGS) --cuda-device-only -S"
  echo "build: clang-19 --cuda-device-only -S (no ptxas; scripts/cuda-toolkit.sh provides one)"
fi
cat >"$dir/Makefile" <<EOF
CLANG := clang-19
include $root/scripts/warpcheck.mk
FLAGS := -x cuda $flags
ifeq (\$(PLUGIN),1)
FLAGS += \$(WARPCHECK_CUDAFLAGS)
endif
OBJS := \$(patsubst %.cu,%.o,\$(wildcard *.cu))
all: \$(OBJS)
%.o: %.cu
	\$(CLANG) \$(FLAGS) -o \$@ \$<
clean:
	rm -f *.o
EOF
# A first build of each kind, untimed: warms the file cache, and stops
# here if either does not build.
make -s -C "$dir" -j "$jobs" all >/dev/null
make -s -C "$dir" clean >/dev/null
make -s -C "$dir" -j "$jobs" PLUGIN=1 all 2>/dev/null
grep -q 'warpcheck' <(make -s -C "$dir" clean; make -C "$dir" -n PLUGIN=1 all) ||
  { echo "the plugin is not on the compile line" >&2; exit 1; }

# "WALL CPU" seconds of one clean build.
build() {
  make -s -C "$dir" clean >/dev/null
  /usr/bin/time -f '%e %U %S' -o "$dir/time" make -s -C "$dir" -j "$jobs" "$@" all \
    >/dev/null 2>&1
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$dir/time"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-4s %12s %12s %12s %12s\n' run without_s with_s without_cpu with_cpu
: >"$dir/wall"
: >"$dir/cpu"
for r in $(seq 1 "$runs"); do
  if [ $((r % 2)) -eq 1 ]; then
    read -r w0 c0 < <(build)
    read -r w1 c1 < <(build PLUGIN=1)
  else
    read -r w1 c1 < <(build PLUGIN=1)
    read -r w0 c0 < <(build)
  fi
  printf '%-4s %12s %12s %12s %12s\n' "$r" "$w0" "$w1" "$c0" "$c1"
  awk -v a="$w1" -v b="$w0" 'BEGIN { print a / b }' >>"$dir/wall"
  awk -v a="$c1" -v b="$c0" 'BEGIN { print a / b }' >>"$dir/cpu"
done
echo "make -j$jobs, $files files: median ratio with/without: wall $(median <"$dir/wall"), cpu $(median <"$dir/cpu")"
