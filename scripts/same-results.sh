#!/usr/bin/env bash
# Checks that a change (an optimisation, say) left every result alone: runs
# `warpcheck check --format json --explain --bounds` (stdout, stderr and
# exit status) on the examples, the fixtures and three generated modules
# (templated reduction, ACF and taint benchmarks), under the kernels' own
# block shapes and under 48 (a partial warp), 16,8 and 1024 threads, with
# the binary built from REV and with the working tree's, and compares the
# two byte for byte (all but the bounds' solver times, which vary).
#
# usage: scripts/same-results.sh [REV]      (default: main)
#
# REV's outputs are kept in target/same-results/<commit>/, so only the
# first comparison against a commit builds it (in a temporary worktree,
# sharing this target directory).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rev=${1:-main}
commit=$(git rev-parse --verify "$rev^{commit}")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
store=$CARGO_TARGET_DIR/same-results
inputs=$store/inputs
mkdir -p "$inputs"

# Generated inputs live at fixed paths so that both binaries print the same names.
python3 scripts/bench-plugin-gen.py 120 >"$inputs/templated_reduction.cu"
clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -nocudainc \
  -nocudalib -Xclang -target-feature -Xclang +ptx75 \
  -include src/frontend/warpcheck_cuda.h -I src/frontend/include \
  -emit-llvm -S -o "$inputs/templated_reduction.ll" "$inputs/templated_reduction.cu"
python3 scripts/bench-acf-gen.py 40 >"$inputs/acf_generated.cu"
python3 scripts/bench-taint-gen.py 60 3 >"$inputs/taint_generated.ll"

files=(examples/*.cu tests/fixtures/cu/*.cu tests/fixtures/hangs/*.cu
  tests/fixtures/ir/*.ll tests/fixtures/regress/*.ll
  "$inputs/templated_reduction.ll" "$inputs/acf_generated.cu" "$inputs/taint_generated.ll")
shapes=(kernel 48 16,8 1024)

# Paths print relative to the checkout (and the store), so a record made in
# one worktree compares with a run in another.
unroot() { find "$1" -type f -exec sed -i -e "s|$inputs/|<inputs>/|g" -e "s|$root/|<root>/|g" {} +; }

# record BINARY DIR: one output file per input and shape.
record() {
  local bin=$1 out=$2
  rm -rf "$out.partial"
  mkdir -p "$out.partial"
  for f in "${files[@]}"; do
    for shape in "${shapes[@]}"; do
      local args=(check --format json --explain --bounds)
      [ "$shape" = kernel ] || args+=(--block-dim "$shape")
      local name
      name=$(echo "$f-$shape" | tr '/,' '__')
      {
        status=0
        "$bin" "${args[@]}" "$f" 2>"$out.partial/$name.stderr" || status=$?
        echo "exit $status"
      } | sed -E 's/"seconds": [0-9.e+-]+/"seconds": "(timed)"/' >"$out.partial/$name.stdout"
    done
  done
  unroot "$out.partial"
  mv "$out.partial" "$out"
}

before=$store/$commit
if [ ! -d "$before" ]; then
  echo "building $rev ($commit)" >&2
  tree=$(mktemp -d)
  trap 'git -C "$root" worktree remove --force "$tree"' EXIT
  git worktree add --quiet --detach "$tree" "$commit"
  (cd "$tree" && cargo build --release --quiet --bin warpcheck)
  cp "$CARGO_TARGET_DIR/release/warpcheck" "$store/warpcheck-$commit"
  record "$store/warpcheck-$commit" "$before"
fi

cargo build --release --quiet --bin warpcheck
after=$store/working-tree
rm -rf "$after"
record "$CARGO_TARGET_DIR/release/warpcheck" "$after"
if diff -r "$before" "$after" >"$store/diff.txt"; then
  echo "same results as $rev: $(find "$after" -name '*.stdout' | wc -l) runs"
else
  echo "results differ from $rev (diff in $store/diff.txt):" >&2
  diff -rq "$before" "$after" | head -20 >&2
  exit 1
fi
