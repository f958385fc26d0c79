#!/usr/bin/env bash
# Memory in proportion to the input: builds NVPTX modules of about SIZES
# megabytes of .ll text (default "20 60 200") from copies of the examples
# and the larger fixtures (clang-19 -O2 -g, every defined symbol renamed per
# copy by scripts/bench-memory-gen.py, joined with llvm-link-19), then runs
# `warpcheck check` on each (MODES, default "text json bounds": plain
# text, `--format json`, and `--bounds`; also `sites` for `--format json
# --sites` (every kernel's sites listed), `report` for `warpcheck report
# --no-simulate`, and `plugin` for `opt-19 -load-pass-plugin` with the pass
# plugin) and prints its peak resident memory
# (/usr/bin/time's maximum RSS), the peak per MB of input, and the time;
# `opt-19 -passes=verify` on the same file is LLVM's own footprint.
#
# Target: a 200 MB module within 4 GB, and a module over the memory budget
# (--budget memory=MB) stopped with a message naming the file, never an
# abort. LIMIT_MB (default 3000) is the budget of one more run on the
# largest module that must stop cleanly (exit 2, or notes) below it.
#
# usage: scripts/bench-memory.sh        (KEEP=DIR keeps the modules there;
#        WARPCHECK and PLUGIN name a warpcheck and a libwarpcheck.so to use)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES:-20 60 200}
modes=${MODES:-text json bounds}
[ -n "${WARPCHECK:-}" ] && [ -n "${PLUGIN:-}" ] || cargo build --release --quiet
wc=${WARPCHECK:-$PWD/target/release/warpcheck}
plugin=${PLUGIN:-$PWD/target/release/libwarpcheck.so}
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT

mkdir -p "$dir/base"
for f in examples/*.cu tests/fixtures/cu/{acf_tile,cost_tiled,acf_shared,sim_coalescing,acf_branches}.cu; do
  clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -g -nocudainc -nocudalib \
    -Xclang -target-feature -Xclang +ptx75 -include src/frontend/warpcheck_cuda.h \
    -isystem src/frontend/include -S -emit-llvm -o "$dir/base/$(basename "$f" .cu).ll" "$f"
done

# Peak RSS in MB and seconds of one command, as "MB SECONDS EXIT".
peak() {
  local rc=0
  /usr/bin/time -f '%M %e' -o "$dir/time" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
  awk -v rc="$rc" '{ printf "%.0f %s %s\n", $1 / 1024, $2, rc }' "$dir/time"
}

printf '%-10s %8s %-8s %10s %10s %8s %5s\n' module kernels mode peak_MB MB_per_MB seconds exit
largest=
for mb in $sizes; do
  ll=$dir/module-$mb.ll
  if [ ! -s "$ll" ]; then
    rm -rf "$dir/copies" && mkdir "$dir/copies"
    python3 scripts/bench-memory-gen.py "$mb" "$dir/copies" "$dir"/base/*.ll >/dev/null
    # In groups of 500, then the groups: one llvm-link of thousands of
    # files grows quadratically.
    (cd "$dir/copies" && ls copy*.ll | split -l 500 - group.)
    for g in "$dir"/copies/group.*; do
      (cd "$dir/copies" && xargs llvm-link-19 -o "$g.bc" <"$g")
    done
    llvm-link-19 -S -o "$ll" "$dir"/copies/group.*.bc
    rm -rf "$dir/copies"
  fi
  largest=$ll
  size=$(awk -v b="$(stat -c %s "$ll")" 'BEGIN { printf "%.1f", b / 1e6 }')
  kernels=$(grep -c '!"kernel", i32 1' "$ll" || true)
  read -r m s rc < <(peak opt-19 -passes=verify -disable-output "$ll")
  printf '%-10s %8s %-8s %10s %10.1f %8s %5s\n' "${size}MB" "$kernels" opt-19 "$m" \
    "$(awk -v m="$m" -v s="$size" 'BEGIN { print m / s }')" "$s" "$rc"
  for mode in $modes; do
    case $mode in
      text) cmd=("$wc" check --quiet "$ll") ;;
      json) cmd=("$wc" check --quiet --format json "$ll") ;;
      sites) cmd=("$wc" check --quiet --format json --sites "$ll") ;;
      bounds) cmd=("$wc" check --quiet --bounds "$ll") ;;
      report) cmd=("$wc" report --no-simulate -o "$dir/report.html" "$ll") ;;
      plugin) cmd=(opt-19 -load-pass-plugin "$plugin" -passes=warpcheck -disable-output "$ll") ;;
      *) echo "unknown mode $mode" >&2; exit 2 ;;
    esac
    read -r m s rc < <(peak "${cmd[@]}")
    printf '%-10s %8s %-8s %10s %10.1f %8s %5s\n' "${size}MB" "$kernels" "$mode" "$m" \
      "$(awk -v m="$m" -v s="$size" 'BEGIN { print m / s }')" "$s" "$rc"
  done
done

# Over the budget: a clean stop (exit 2 naming the file, or per-kernel
# notes), never an abort.
limit=${LIMIT_MB:-3000}
read -r m s rc < <(peak "$wc" check --quiet --budget "memory=$limit" "$largest")
echo "largest module under --budget memory=$limit: peak ${m} MB, exit $rc, $(grep -c 'not analysed' "$dir/out" || true) kernels not analysed"
grep -h -m1 'memory budget' "$dir/err" "$dir/out" || true
