#!/usr/bin/env bash
# Fuzzes warpcheck with random IR: llvm-stress-19 modules (seeds FIRST.. N of them,
# sizes from SIZES, default "10 25 50 100 200 400 1000" instructions, by
# seed) retargeted to NVPTX kernels that read threadIdx.x
# (scripts/fuzz-ir-retarget.py), each run through
#
#   check            warpcheck check
#   bounds           warpcheck check --bounds (cost and time notes)
#   bound            warpcheck bound (steps at the simulated launch's parameters)
#   time             warpcheck time (one block of 64 threads)
#   compare          warpcheck check --compare-uniformity
#   simulate         warpcheck simulate (1 block of 64 threads, 1 MiB buffers)
#   plugin           opt-19 -load-pass-plugin libwarpcheck.so -passes=warpcheck
#   plugin-bounds    the same with WARPCHECK_BOUNDS=1
#
# and every other subcommand and output format:
#
#   json             check --format json --summary --notes --bounds
#   sarif            check --format sarif --bounds
#   explain          check --explain --notes --summary (text)
#   compare-json     check --compare-uniformity --format json
#   bound-metrics    bound --format json --attribution, for sectors, conflicts and divwarps
#                    (--simulate on the last, so the oracle runs beside it)
#   time-json        time --format json --simulate (cycle mode, the simulator's budgets)
#   simulate-json    simulate --format json --cycles
#   report           report -o FILE.html (its sweep of simulated launches, short)
#
# TOOLS (default: all of them) runs a subset, e.g. TOOLS="bounds bound time";
# FIRST (default 1) is the first seed, for a campaign that goes on. WC and
# PLUGIN, when both are set, name the binary and the plugin to run instead of
# a fresh release build (a copy, so that rebuilding during a long campaign
# does not change what it runs).
#
# usage: scripts/fuzz-ir.sh N [OUT]     (OUT defaults to target/fuzz-ir)
#
# Outcomes per tool: ok (exit 0), findings (exit 0 with a warning), exit1
# (a run error or exhausted budget, e.g. an out-of-bounds access that
# llvm-stress wrote; the simulator's as exit1-STATUS: exit1-memory-error,
# exit1-trap, exit1-deadlock, exit1-livelock, exit1-step-limit,
# exit1-timeout), exit2 (a clear error: unsupported or malformed
# input), and FAIL: an exit code of 3 or more, an "internal error" message
# (a panic caught for one kernel or module), a signal, or a run the outer
# timeout (TIMEOUT seconds, default 30) killed. A failing module is kept in
# OUT/failures with the tool's output; the exit code is 1 if any failed.
# JOBS (default 2) modules run at a time. When `simulate --help` lists
# --max-steps or --timeout, they are passed too.
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: scripts/fuzz-ir.sh N [OUT]}
out=${2:-target/fuzz-ir}
export TIMEOUT=${TIMEOUT:-30}
if [ -z "${WC:-}" ] || [ -z "${PLUGIN:-}" ]; then
  cargo build --release --quiet || exit 2
  WC=$PWD/target/release/warpcheck PLUGIN=$PWD/target/release/libwarpcheck.so
fi
rm -rf "$out"
mkdir -p "$out/failures" "$out/results"
out=$(cd "$out" && pwd)
export OUT=$out WC PLUGIN
export RETARGET=$PWD/scripts/fuzz-ir-retarget.py

budget=()
help=$("$WC" simulate --help)
grep -q -- '--max-steps' <<<"$help" && budget+=(--max-steps 20000000)
grep -q -- '--timeout' <<<"$help" && budget+=(--timeout 10)
export SIM_BUDGET="${budget[*]}"

# Runs one tool on one module; appends "tool outcome" to the module's result.
run_tool() {
  local tool=$1 ll=$2 log=$3
  shift 3
  timeout -k 5 "$TIMEOUT" "$@" >"$log" 2>&1
  local rc=$?
  local outcome
  case $rc in
    # A caught panic (a kernel's bound, a plugin module) is still a bug.
    0) if grep -q 'internal error' "$log"; then outcome=FAIL-internal
       elif grep -q 'warning:' "$log"; then outcome=findings; else outcome=ok; fi ;;
    1) # The simulator names why it stopped: `stopped (memory-error): ...`.
       local why
       why=$(grep -o -m1 '^stopped ([a-z-]*)' "$log" | tr -d '()' | cut -d' ' -f2)
       outcome=exit1${why:+-$why} ;;
    2) outcome=exit2 ;;
    124 | 137) outcome=FAIL-timeout ;;
    *) if [ "$rc" -gt 128 ]; then outcome=FAIL-signal$((rc - 128)); else outcome=FAIL-exit$rc; fi ;;
  esac
  echo "$tool $outcome"
  if [[ $outcome == FAIL* ]]; then
    local keep="$OUT/failures/$(basename "$ll" .ll)"
    mkdir -p "$keep"
    cp "$ll" "$keep/"
    cp "$log" "$keep/$tool.log"
  fi
}
export -f run_tool

export TOOLS=${TOOLS:-check bounds bound time compare simulate plugin plugin-bounds json sarif explain compare-json bound-metrics time-json simulate-json report}
export SIZES=${SIZES:-10 25 50 100 200 400 1000}

# Whether TOOLS names $1.
wanted() { [[ " $TOOLS " == *" $1 "* ]]; }
export -f wanted

one() {
  local seed=$1
  local sizes
  read -ra sizes <<<"$SIZES"
  local size=${sizes[$((seed % ${#sizes[@]}))]}
  local name="stress-$seed-$size"
  local dir
  dir=$(mktemp -d)
  local ll="$dir/$name.ll"
  llvm-stress-19 -seed="$seed" -size="$size" -o - | python3 "$RETARGET" "$seed" >"$ll"
  if ! opt-19 -passes=verify -disable-output "$ll" 2>"$dir/verify.log"; then
    echo "generator invalid" >"$OUT/results/$name"
    rm -rf "$dir"
    return
  fi
  local args=(--arg arg0=buf:1M:iota:i32 --arg arg1=buf:1M:random:i32
    --arg arg2=buf:1M:zero:i32 --arg arg3=7 --arg arg4=100 --arg arg5=3)
  {
    wanted check && run_tool check "$ll" "$dir/log" "$WC" check "$ll"
    wanted bounds && run_tool bounds "$ll" "$dir/log" "$WC" check --bounds "$ll"
    wanted bound && run_tool bound "$ll" "$dir/log" "$WC" bound "$ll" --block 64 \
      --param arg3=7 --param arg4=100 --param arg5=3
    wanted time && run_tool time "$ll" "$dir/log" "$WC" time "$ll" --block 64 \
      --param arg3=7 --param arg4=100 --param arg5=3
    wanted compare && run_tool compare "$ll" "$dir/log" "$WC" check --compare-uniformity "$ll"
    # shellcheck disable=SC2086
    wanted simulate && run_tool simulate "$ll" "$dir/log" "$WC" simulate "$ll" --grid 1 \
      --block 64 "${args[@]}" $SIM_BUDGET
    wanted plugin && run_tool plugin "$ll" "$dir/log" opt-19 -load-pass-plugin "$PLUGIN" \
      -passes=warpcheck -disable-output "$ll"
    wanted plugin-bounds && run_tool plugin-bounds "$ll" "$dir/log" env WARPCHECK_BOUNDS=1 \
      opt-19 -load-pass-plugin "$PLUGIN" -passes=warpcheck -disable-output "$ll"
    wanted json && run_tool json "$ll" "$dir/log" "$WC" check --format json --summary --notes \
      --bounds "$ll"
    wanted sarif && run_tool sarif "$ll" "$dir/log" "$WC" check --format sarif --bounds "$ll"
    wanted explain && run_tool explain "$ll" "$dir/log" "$WC" check --explain --notes --summary "$ll"
    wanted compare-json && run_tool compare-json "$ll" "$dir/log" "$WC" check \
      --compare-uniformity --format json "$ll"
    if wanted bound-metrics; then
      local metric
      for metric in sectors conflicts divwarps; do
        local sim=()
        [ "$metric" = divwarps ] && sim=(--simulate "${args[@]}" $SIM_BUDGET)
        # shellcheck disable=SC2086
        run_tool "bound-$metric" "$ll" "$dir/log" "$WC" bound "$ll" --block 64 --metric "$metric" \
          --format json --attribution --param arg3=7 --param arg4=100 --param arg5=3 "${sim[@]}"
      done
    fi
    # shellcheck disable=SC2086
    wanted time-json && run_tool time-json "$ll" "$dir/log" "$WC" time "$ll" --block 64 \
      --format json --simulate "${args[@]}" $SIM_BUDGET
    # shellcheck disable=SC2086
    wanted simulate-json && run_tool simulate-json "$ll" "$dir/log" "$WC" simulate "$ll" --grid 1 \
      --block 64 --format json --cycles "${args[@]}" $SIM_BUDGET
    wanted report && run_tool report "$ll" "$dir/log" "$WC" report "$ll" -o "$dir/report.html" \
      --sweep 32,64 --buffer-bytes 1048576 --sim-timeout 2
  } >"$OUT/results/$name"
  rm -rf "$dir"
}
export -f one

start=$(date +%s)
first=${FIRST:-1}
seq "$first" "$((first + n - 1))" | xargs -P "${JOBS:-2}" -I{} bash -c 'one {}'
secs=$(( $(date +%s) - start ))

echo "fuzz-ir: $n modules in ${secs}s ($(grep -l 'generator invalid' "$out"/results/* | wc -l) rejected by opt -passes=verify); budgets: ${SIM_BUDGET:-none}"
cat "$out"/results/* | grep -v 'generator invalid' | sort | uniq -c |
  awk '{ count[$2] = count[$2] sprintf(" %s=%d", $3, $1) } END { for (t in count) print "  " t ":" count[t] }' | sort
fails=$(find "$out/failures" -mindepth 1 -maxdepth 1 | wc -l)
echo "failing modules: $fails (kept in $out/failures)"
[ "$fails" -eq 0 ]
