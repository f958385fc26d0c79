#!/usr/bin/env bash
# Output size and time (issue 23, cause 6: output that grew exponentially).
#
#   scripts/bench-output.sh mirror [STEPS...]   the unrolled mirror loop
#       (tests/fixtures/output/mirror.cu, compiled by clang-19 first) at
#       each step count: seconds and peak memory of `check --format json`
#       on its IR, and the JSON's size.
#   scripts/bench-output.sh corpus DIR          every .ll under DIR: the
#       sizes of `check` as text (plain and --explain --notes), JSON, SARIF
#       and the HTML page (`report --no-simulate`), seconds for JSON, and
#       the worst ratios of each rich format to the text outputs.
#
# WARPCHECK (default target/release/warpcheck) is the binary. Runs niced:
# the machine is shared.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
W=${WARPCHECK:-$root/target/release/warpcheck}
[ -x "$W" ] || { echo "bench-output: no $W (cargo build --release, or set WARPCHECK)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# secs_mem OUT CMD...: runs CMD with stdout to OUT; prints "seconds KiB".
secs_mem() {
  local out=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" nice -n 10 "$@" >"$out" 2>/dev/null || true
  echo $(cat "$tmp/time")
}

case ${1:-} in
mirror)
  shift
  steps=${*:-8 12 16 20 24 32}
  printf '%-6s %8s %10s %10s\n' steps seconds peak_KiB json_bytes
  fe=$root/src/frontend
  for n in $steps; do
    # Compiled first, so the time is warpcheck's alone.
    nice -n 10 "${CLANG:-clang-19}" --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -g -S -emit-llvm \
      -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx75 -include "$fe/warpcheck_cuda.h" \
      -isystem "$fe/include" -DSTEPS="$n" "$root/tests/fixtures/output/mirror.cu" -o "$tmp/m.ll"
    read -r s kib < <(secs_mem "$tmp/m.json" "$W" check --format json "$tmp/m.ll")
    printf '%-6s %8s %10s %10s\n' "$n" "$s" "$kib" "$(wc -c <"$tmp/m.json")"
  done
  ;;
corpus)
  dir=${2:?usage: bench-output.sh corpus DIR}
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' file text explain json sarif html json_s
  find "$dir" -name '*.ll' | sort | while read -r f; do
    nice -n 10 "$W" check "$f" >"$tmp/t" 2>/dev/null || true
    nice -n 10 "$W" check --explain --notes "$f" >"$tmp/e" 2>/dev/null || true
    read -r js _ < <(secs_mem "$tmp/j" "$W" check --format json "$f")
    nice -n 10 "$W" check --format sarif --explain "$f" >"$tmp/s" 2>/dev/null || true
    rm -f "$tmp/h"
    nice -n 10 "$W" report --no-simulate -o "$tmp/h" "$f" >/dev/null 2>&1 || true
    [ -f "$tmp/h" ] || : >"$tmp/h"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${f#"$dir"/}" "$(wc -c <"$tmp/t")" "$(wc -c <"$tmp/e")" \
      "$(wc -c <"$tmp/j")" "$(wc -c <"$tmp/s")" "$(wc -c <"$tmp/h")" "$js"
  done >"$tmp/table"
  cat "$tmp/table"
  # Ratios over max(size, 1 KiB) of the text: an empty text report (no
  # findings) would make any ratio infinite.
  awk -F'\t' '
    function r(a, b) { return a / (b > 1024 ? b : 1024) }
    { for (i = 4; i <= 6; i++) {
        x = r($i, $2); if (x > worst[i]) { worst[i] = x; wf[i] = $1 }
        y = r($i, $3); if (y > worste[i]) { worste[i] = y; wfe[i] = $1 } }
      if ($7 > slow) { slow = $7; sf = $1 }
      big = $4 > big ? $4 : big }
    END {
      split("json sarif html", n, " ")
      for (i = 4; i <= 6; i++)
        printf "worst %s/text %.1f (%s); %s/explain-text %.1f (%s)\n", n[i-3], worst[i], wf[i], n[i-3], worste[i], wfe[i]
      printf "largest JSON %d bytes; slowest JSON %.2f s (%s)\n", big, slow, sf
    }' "$tmp/table"
  ;;
*)
  sed -n '2,14p' "$0"
  exit 2
  ;;
esac
