#!/usr/bin/env bash
# A compile database of ENTRIES entries (default 1000), each with its own
# `-D` (so each is a distinct flag set and wants its own PCH of the
# compatibility header), checked with `warpcheck check -p` in a fresh cache
# capped at CAP (WARPCHECK_CACHE_MAX, default 64M). Prints the time, the
# time per entry, the exit code, and the PCH cache's size (the bytes of its
# .pch files) and file count against the cap, sampled while it runs and at
# the end; also the largest the run's temporary directories (where PCHs are
# built, outside the cap) got.
#
# WARPCHECK names a warpcheck to use instead of a fresh release build.
#
# usage: scripts/bench-compdb.sh
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${ENTRIES:-1000}
cap=${CAP:-64M}
wc=${WARPCHECK:-}
if [ -z "$wc" ]; then
  cargo build --release --quiet
  wc=$PWD/target/release/warpcheck
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src" "$dir/cache" "$dir/tmp"
# Ten sources, each compiled under many -D values (a configuration matrix).
for i in $(seq 0 9); do
  printf '__global__ void k%d(float *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i * VARIANT] = 1.0f;\n}\n' \
    "$i" >"$dir/src/f$i.cu"
done
python3 - "$dir" "$entries" >"$dir/compile_commands.json" <<'EOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
print(json.dumps([{"directory": f"{d}/src", "file": f"f{e % 10}.cu",
                   "command": f"clang++ -x cuda --cuda-gpu-arch=sm_80 -DVARIANT={e + 1} -c f{e % 10}.cu"}
                  for e in range(n)]))
EOF
pch=$dir/cache/warpcheck/pch
# The cache's largest size while the run goes on (the .pch files' bytes;
# a file evicted mid-listing is not counted), and the temporaries'.
bytes() { find "$@" -type f -name "*.pch" -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
(
  most=0 most_tmp=0
  while sleep 0.2; do
    now=$(bytes "$pch")
    [ "$now" -gt "$most" ] && most=$now && echo "$most" >"$dir/most"
    now=$(du -sb "$dir/tmp" 2>/dev/null | cut -f1)
    [ "${now:-0}" -gt "$most_tmp" ] && most_tmp=$now && echo "$most_tmp" >"$dir/most_tmp"
  done
) &
sampler=$!
start=$(date +%s.%N)
rc=0
TMPDIR=$dir/tmp XDG_CACHE_HOME=$dir/cache WARPCHECK_CACHE_MAX=$cap "$wc" check --no-cuda --quiet -p "$dir" \
  >/dev/null 2>"$dir/err" || rc=$?
end=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
secs=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
echo "entries: $entries, exit $rc, ${secs} s, $(awk -v s="$secs" -v n="$entries" 'BEGIN { printf "%.0f", s / n * 1000 }') ms per entry"
echo "pch cache: cap $cap; at the end $(bytes "$pch") bytes in $(find "$pch" -name '*.pch' | wc -l) files; largest while running $(cat "$dir/most" 2>/dev/null || echo 0) bytes (sampled every 0.2 s)"
echo "temporary directories (PCHs being built, outside the cap): largest $(cat "$dir/most_tmp" 2>/dev/null || echo 0) bytes"
[ "$rc" -le 1 ] || { tail -5 "$dir/err" >&2; exit 1; }
