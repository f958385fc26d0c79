#!/usr/bin/env bash
# Cost bounds: analysis time per kernel (all four metrics, with loop and
# line attribution, release build), then each evaluation kernel's bound
# next to RaCuda's published one (POPL 2021, Tables 5-7) and the simulated
# largest per-warp cost at the same parameters.
# Usage: scripts/bench-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/warpcheck
fx=tests/fixtures/cu

echo "== analysis time per kernel (check --bounds: 4 metrics + attribution) =="
printf '%-14s %-8s %8s %8s %9s\n' kernel block "LP vars" "LP rows" seconds
for spec in addsub:64 vector_add:256 matmul:32,32 reduce:256 histogram:64 mandelbrot:32 triangular:32; do
  f=${spec%%:*}
  b=${spec#*:}
  "$bin" check --bounds --format json --block-dim "$b" "$fx/cost_$f.cu" |
    python3 -c '
import json, sys
for k in json.load(sys.stdin)["kernels"]:
    b = k["bounds"]
    name = k["name"].split("(")[0]
    cols = (name, sys.argv[1], b["lp_variables"], b["lp_rows"], b["seconds"])
    print("%-14s %-8s %8d %8d %9.3f" % cols)
' "$b"
done

echo
echo "== bounds against RaCuda's and the simulator (per warp; RaCuda's as published) =="
# kernel | file | block | grid | params | shared bytes | RaCuda sectors | steps | divwarps
rows=(
  "vectorAdd|vector_add|256|4|N=1000|0|12⌈N/32⌉|27|1"
  "matMul|matmul|32,32|4,4|N=128|0|(4 + 10(31+N)/32)⌈N/32⌉|75 + 1621(31+N)/32|0"
  "reduce0|reduce|256|4|n=1024|1024|5⌈N/32⌉|6412|257"
  "reduce1|reduce|256|4|n=1024|1024|5⌈N/32⌉|30892|257"
  "reduce2|reduce|256|4|n=1024|1024|5⌈N/32⌉|n/b|n/b"
  "reduce3|reduce|256|4|n=2048|1024|9⌈N/32⌉|n/b|n/b"
  "histogram256|histogram|64|4|n=4096|0|(5740 + 10(63+N))/64|383.75 + 128(63+N)/64|0"
  "mandelbrot|mandelbrot|32|4,16|w=128 h=16 max_iter=100|0|36N|n/b|n/b"
  "addSub0|addsub|64|2|w=100 h=64|0|132w⌈h/32⌉|7 + 177w|w"
  "addSub1|addsub|64|2|w=100 h=64|0|132w⌈h/64⌉|7 + 183w|0"
  "addSub2|addsub|64|2|w=128 h=64|0|14(h+1)⌈w/32⌉|14 + 32(h+1)|0"
  "addSub3|addsub|64|2|w=128 h=64|0|(4 + 10(h+1))⌈w/32⌉|—|0"
  "triangular|triangular|32|2|n=40|0|—|—|—"
)
printf '%-12s %-9s %-36s %10s %10s  %s\n' kernel metric "warpcheck bound (per warp)" "at params" simulated "RaCuda"
for row in "${rows[@]}"; do
  IFS='|' read -r k f b g params shared rs rst rdw <<<"$row"
  args=()
  for p in $params; do args+=(--param "$p"); done
  for metric in sectors steps divwarps; do
    case $metric in sectors) theirs=$rs ;; steps) theirs=$rst ;; *) theirs=$rdw ;; esac
    "$bin" bound "$fx/cost_$f.cu" --kernel "$k" --metric "$metric" --block-dim "$b" --grid "$g" \
      "${args[@]}" --simulate --shared-bytes "$shared" --format json |
      python3 -c '
import json, sys
j = json.load(sys.stdin)
v = "—" if j["value"] is None else "%g" % j["value"]
cols = (j["kernel"], j["metric"], j["bound"], v, str(j.get("simulated", "—")), sys.argv[1])
print("%-12s %-9s %-36s %10s %10s  %s" % cols)
' "$theirs"
  done
done
