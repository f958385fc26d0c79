#!/usr/bin/env bash
# Fuzzes warpcheck with damaged and hostile files and values, beside
# scripts/fuzz-ir.sh (which feeds it valid random IR). Three modes, MODES
# (default "corrupt special huge") picks some:
#
#   corrupt   N damaged copies of valid bitcode (clang-19 -O2 -g device
#             bitcode of the examples), each one of: 1 to 4 flipped bits,
#             a truncation at a random offset, or 1 to 64 random bytes
#             written over it; each run through every subcommand (check,
#             check --bounds, check --compare-uniformity, bound, time,
#             simulate, report, dump-ir) and the opt plugin. Where opt
#             itself dies reading the file (its own bitcode reader, no
#             plugin involved), the plugin's run is counted as `host-crash`,
#             not as a failure: the plugin never sees the module.
#   special   a FIFO, /dev/zero and /dev/null behind symlinks, a directory
#             and an empty file, named as a .ll, .bc and .cu input, as
#             --config-file, a .warpcheck.yaml, --weights, --baseline, a
#             compile database and the plugin's WARPCHECK_CONFIG.
#   huge      the largest and most hostile values of every numeric option
#             (--grid, --block-dim, --blocks, --param, --arg, --shared-bytes,
#             --max-buffer-bytes, --max-steps, --timeout, --max-memory,
#             --budget, -j, --min-impact, --degree, --sweep, --machine).
#
# Outcomes per tool: exit0, exit1, exit2, and FAIL: an exit code of 3 or
# more, a panic or "internal error" message, a signal, or a run the outer
# timeout (TIMEOUT seconds, default 30) killed. A failing input is kept in
# OUT/failures with the tool's output; the exit code is 1 if any failed.
# JOBS (default 2) inputs run at a time; SEED (default 1) seeds the damage.
# WC and PLUGIN, when both are set, name the binary and the plugin to run
# instead of a fresh release build.
#
# usage: scripts/fuzz-files.sh N [OUT]     (OUT defaults to target/fuzz-files)
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: scripts/fuzz-files.sh N [OUT]}
out=${2:-target/fuzz-files}
export TIMEOUT=${TIMEOUT:-30}
if [ -z "${WC:-}" ] || [ -z "${PLUGIN:-}" ]; then
  cargo build --release --quiet || exit 2
  WC=$PWD/target/release/warpcheck PLUGIN=$PWD/target/release/libwarpcheck.so
fi
rm -rf "$out"
mkdir -p "$out/failures" "$out/results" "$out/seeds"
out=$(cd "$out" && pwd)
export OUT=$out WC PLUGIN
export MODES=${MODES:-corrupt special huge}
export HEADER=$PWD/src/frontend/warpcheck_cuda.h
# Runs stay out of the user's cache; each run sweeps what killed ones left.
export XDG_CACHE_HOME=$out/cache

# Runs one tool; prints "tool outcome" and keeps the input of a failure.
run_tool() {
  local tool=$1 input=$2 log=$3
  shift 3
  timeout -k 5 "$TIMEOUT" "$@" </dev/null >"$log" 2>&1
  local rc=$?
  local outcome
  case $rc in
    0 | 1 | 2) outcome=exit$rc
       if grep -q -e 'internal error' -e 'panicked' "$log"; then outcome=FAIL-internal; fi ;;
    124 | 137) outcome=FAIL-timeout ;;
    *) if [ "$rc" -gt 128 ]; then outcome=FAIL-signal$((rc - 128)); else outcome=FAIL-exit$rc; fi ;;
  esac
  echo "$tool $outcome"
  if [[ $outcome == FAIL* ]]; then
    local keep
    keep="$OUT/failures/$(basename "$input")-$tool-$RANDOM"
    mkdir -p "$keep"
    # A FIFO or a device is described, never copied (cp would read it).
    if [ -f "$input" ] && [ ! -L "$input" ]; then cp "$input" "$keep/"; else ls -l "$input" >"$keep/input"; fi
    cp "$log" "$keep/$tool.log"
  fi
}
export -f run_tool

# Every subcommand on one input file.
every_subcommand() {
  local f=$1 dir=$2
  run_tool check "$f" "$dir/log" "$WC" check "$f"
  run_tool bounds "$f" "$dir/log" "$WC" check --bounds --format json "$f"
  run_tool compare "$f" "$dir/log" "$WC" check --compare-uniformity "$f"
  run_tool bound "$f" "$dir/log" "$WC" bound "$f" --block 64
  run_tool time "$f" "$dir/log" "$WC" time "$f" --block 64
  run_tool simulate "$f" "$dir/log" "$WC" simulate "$f" --block 64 --max-steps 1000000 \
    --timeout 5
  run_tool report "$f" "$dir/log" "$WC" report "$f" -o "$dir/r.html" --sweep 32 \
    --buffer-bytes 65536 --sim-timeout 2
  run_tool dump-ir "$f" "$dir/log" "$WC" dump-ir "$f"
}
export -f every_subcommand

# The plugin on one module, or `host-crash` where opt alone dies of it.
plugin_on() {
  local f=$1 dir=$2
  timeout -k 5 "$TIMEOUT" opt-19 -passes=verify -disable-output "$f" >/dev/null 2>&1
  local alone=$?
  if [ "$alone" -gt 128 ] && [ "$alone" -ne 137 ]; then
    echo "plugin host-crash"
    return
  fi
  run_tool plugin "$f" "$dir/log" opt-19 -load-pass-plugin "$PLUGIN" -passes=warpcheck \
    -disable-output "$f"
}
export -f plugin_on

# One damaged copy of a seed: flips, a truncation or an overwrite.
damage() {
  python3 - "$@" <<'EOF'
import random, sys
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
data = bytearray(open(src, 'rb').read())
kind = seed % 3
if kind == 0:
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
elif kind == 1:
    data = data[:rng.randrange(len(data))]
else:
    i = rng.randrange(len(data))
    for j in range(i, min(len(data), i + rng.randint(1, 64))):
        data[j] = rng.randrange(256)
open(dst, 'wb').write(data)
EOF
}
export -f damage

corrupt_one() {
  local i=$1
  local seeds=("$OUT"/seeds/*.bc)
  local seed=${seeds[$((i % ${#seeds[@]}))]}
  local dir
  dir=$(mktemp -d)
  local f="$dir/$(basename "$seed" .bc)-$i.bc"
  damage "$seed" "$f" "$((SEED * 1000003 + i))"
  {
    every_subcommand "$f" "$dir"
    plugin_on "$f" "$dir"
  } >"$OUT/results/corrupt-$i"
  rm -rf "$dir"
}
export -f corrupt_one

start=$(date +%s)
export SEED=${SEED:-1}

if [[ " $MODES " == *" corrupt "* ]]; then
  for cu in examples/*.cu; do
    clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib \
      -Xclang -target-feature -Xclang +ptx75 -include "$HEADER" -isystem src/frontend/include \
      -O2 -g -emit-llvm -c -o "$out/seeds/$(basename "$cu" .cu).bc" "$cu" || exit 2
  done
  seq 1 "$n" | xargs -P "${JOBS:-2}" -I{} bash -c 'corrupt_one {}'
fi

if [[ " $MODES " == *" special "* ]]; then
  s=$(mktemp -d)
  mkfifo "$s/fifo"
  ln -s /dev/zero "$s/zero"
  ln -s /dev/null "$s/null"
  mkdir "$s/dir"
  : >"$s/empty"
  good=$PWD/examples/vector_add.cu
  {
    for what in fifo zero null dir empty; do
      for ext in ll bc cu; do
        ln -s "$s/$what" "$s/$what-input.$ext" 2>/dev/null || cp -r "$s/$what" "$s/$what-input.$ext"
        every_subcommand "$s/$what-input.$ext" "$s" | sed "s/^/$what.$ext-/"
      done
      run_tool "$what-config-file" "$s/$what" "$s/log" "$WC" check --config-file "$s/$what" "$good"
      run_tool "$what-weights" "$s/$what" "$s/log" "$WC" bound --weights "$s/$what" "$good"
      run_tool "$what-baseline" "$s/$what" "$s/log" "$WC" check --baseline "$s/$what" "$good"
      run_tool "$what-compdb" "$s/$what" "$s/log" "$WC" check -p "$s/$what"
      mkdir -p "$s/p-$what"
      cp "$good" "$s/p-$what/k.cu"
      ln -s "$s/$what" "$s/p-$what/.warpcheck.yaml"
      run_tool "$what-yaml" "$s/$what" "$s/log" "$WC" check "$s/p-$what/k.cu"
      for ext in yaml conf; do
        ln -sf "$s/$what" "$s/env.$ext"
        run_tool "$what-plugin-config-$ext" "$s/$what" "$s/log" env WARPCHECK_CONFIG="$s/env.$ext" \
          opt-19 -load-pass-plugin "$PLUGIN" -passes=warpcheck -disable-output \
          tests/fixtures/ir/loader.ll
      done
    done
  } >"$OUT/results/special"
  rm -rf "$s"
fi

if [[ " $MODES " == *" huge "* ]]; then
  h=$(mktemp -d)
  k=$PWD/examples/vector_add.cu
  big=18446744073709551615
  sim=(simulate "$k" --kernel vector_add --arg a=buf:4096 --arg b=buf:4096 --arg c=buf:4096 --arg n=1000)
  {
    i=0
    while read -r -a v; do
      i=$((i + 1))
      run_tool "huge-$i-${v[0]}" "$k" "$h/log" "$WC" "${v[@]}"
    done <<EOF
${sim[*]} --grid $big
${sim[*]} --grid 2147483647,65535,65535 --max-steps 100000
${sim[*]} --grid 2147483647,65535,65535 --timeout 2
${sim[*]} --grid 2147483647 --blocks 0-300000000 --timeout 2
${sim[*]} --grid 2147483647 --blocks 0-$big
${sim[*]} --grid 2147483647 --blocks $big-0
${sim[*]} --grid 2147483647 --max-memory 1 --timeout 20
${sim[*]} --blocks 99999999999999999999999
${sim[*]} --block-dim $big
${sim[*]} --block-dim 1025
${sim[*]} --block-dim 0
${sim[*]} --shared-bytes $big
${sim[*]} --max-buffer-bytes $big --shared-bytes $big
${sim[*]} --max-steps $big --timeout 10
${sim[*]} --timeout 1e400
${sim[*]} --timeout -1
${sim[*]} --timeout nan
${sim[*]} --max-memory $big --timeout 10
${sim[*]} --seed $big
${sim[*]} --dump a:f32 --dump nope
${sim[*]} --cycles --machine sms=$big
${sim[*]} --cycles --machine issue_rate=1e400
simulate $k --kernel vector_add --arg a=buf:$big --arg b=buf:1 --arg c=buf:1 --arg n=1
simulate $k --kernel vector_add --arg a=buf:$big --arg b=buf:1 --arg c=buf:1 --arg n=1 --max-buffer-bytes $big
simulate $k --kernel vector_add --arg a=buf:1 --arg b=buf:1 --arg c=buf:1 --arg n=1e400
simulate $k --kernel vector_add --arg a=buf:1 --arg b=buf:1 --arg c=buf:1 --arg n=$big$big
check $k --param n=1.5
check $k --param n=1e400
check $k --param =5
check $k --param n=$big$big
check $k --block-dim $big
check $k --block-dim 4294967296,1,1
check $k -j $big
check $k --budget memory=$big
check $k --budget time=1e400
check $k --budget acf-exprs=$big$big
check $k --min-impact 1e400
check $k --min-impact nan
bound $k --kernel vector_add --param n=1.5
bound $k --kernel vector_add --param n=1e400
bound $k --kernel vector_add --param =5
bound $k --kernel vector_add --degree $big
bound $k --kernel vector_add --grid $big
bound $k --kernel vector_add --buffer-bytes $big --simulate
time $k --kernel vector_add --param n=1.5
time $k --kernel vector_add --param =5
time $k --kernel vector_add --grid 2147483647,65535,65535 --param n=$big
time $k --kernel vector_add --machine issue_rate=$big
report $k -o $h/r.html --sweep $big
report $k -o $h/r.html --sweep 0
report $k -o $h/r.html -j $big
EOF
  } >"$OUT/results/huge"
  rm -rf "$h"
fi
secs=$(($(date +%s) - start))

corrupted=$(find "$out/results" -name 'corrupt-*' | wc -l)
echo "fuzz-files: $corrupted corrupted files, modes: $MODES, ${secs}s"
cat "$out"/results/* | sort | sed 's/^\([a-z]*\)[^ ]* /\1 /' | sort | uniq -c |
  awk '{ count[$2] = count[$2] sprintf(" %s=%d", $3, $1) } END { for (t in count) print "  " t ":" count[t] }' | sort
fails=$(find "$out/failures" -mindepth 1 -maxdepth 1 | wc -l)
echo "failures: $fails (kept in $out/failures)"
[ "$fails" -eq 0 ]
