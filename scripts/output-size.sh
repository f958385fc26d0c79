#!/usr/bin/env bash
# Output size per corpus file (issue 23: no JSON, SARIF or HTML output
# larger than a few times the text output). For every .ll under DIRS
# (default the Rodinia, Parboil, CUDA-samples and PolyBench-GPU IR under
# /work/suites-ir), the bytes of `check` as text (stdout, the findings),
# as text with `--explain --notes`, as JSON, as SARIF, and of the HTML
# page (`report --no-simulate`); then per format the median and the
# largest ratio to the text, and the file it is largest on.
#
# A ratio is (size - header) / max(text, 1 KiB): `header` is the format's
# output for a module without kernels (SARIF's rule list, the page's
# style sheet), measured here, and the 1 KiB floor keeps a file without
# findings (empty text) from dividing by zero: there the kernels' list is
# what counts. Target: every ratio at most about 5.
#
# usage: scripts/output-size.sh [DIR...]     (TABLE=FILE keeps the table;
#        WARPCHECK=BIN skips the release build; P=N files at once, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then dirs=("$@"); else
  dirs=(/work/suites-ir/{rodinia,parboil,cuda-samples,polybench-gpu})
fi
if [ -z "${WARPCHECK:-}" ]; then
  nice -n 10 cargo build --release --quiet
  WARPCHECK=$PWD/target/release/warpcheck
fi
export WARPCHECK
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export tmp

# sizes FILE: "file text explain json sarif html" in bytes (fields 1-6).
sizes() {
  local f=$1 d
  d=$(mktemp -d -p "$tmp")
  run() { nice -n 10 timeout 300 "$WARPCHECK" "$@" 2>/dev/null || true; }
  run check -j 1 "$f" >"$d/text"
  run check -j 1 --explain --notes "$f" >"$d/explain"
  run check -j 1 --format json "$f" >"$d/json"
  run check -j 1 --format sarif "$f" >"$d/sarif"
  run report -j 1 --no-simulate -o "$d/html" "$f" >/dev/null
  [ -f "$d/html" ] || : >"$d/html"
  # One write per line: files are measured in parallel.
  local line=$f
  for x in text explain json sarif html; do line+=" $(wc -c <"$d/$x")"; done
  printf '%s\n' "$line"
  rm -rf "$d"
}
export -f sizes

# The headers: a module without kernels.
printf 'target triple = "nvptx64-nvidia-cuda"\n' >"$tmp/empty.ll"
read -r _ _ _ hjson hsarif hhtml < <(sizes "$tmp/empty.ll")

find "${dirs[@]}" -name '*.ll' | sort | xargs -P "${P:-2}" -I{} bash -c 'sizes "$1"' _ {} \
  | sort >"$tmp/table"
[ -z "${TABLE:-}" ] || cp "$tmp/table" "$TABLE"
echo "files: $(wc -l <"$tmp/table"); headers: json $hjson, sarif $hsarif, html $hhtml bytes"
printf '%-22s %8s %8s  %s\n' ratio median max "file of the max"
for spec in "json/text 4 $hjson 2" "sarif/text 5 $hsarif 2" "html/text 6 $hhtml 2" \
  "explain/text 3 0 2" "json/explain 4 $hjson 3" "sarif/explain 5 $hsarif 3" "html/explain 6 $hhtml 3"; do
  read -r name col header base <<<"$spec"
  awk -v c="$col" -v h="$header" -v b="$base" '
    { t = $b < 1024 ? 1024 : $b; r = ($c - h) / t; if (r < 0) r = 0
      print r, $1 }' "$tmp/table" | sort -g >"$tmp/r"
  n=$(wc -l <"$tmp/r")
  median=$(awk -v n="$n" 'NR == int((n + 1) / 2) { print $1 }' "$tmp/r")
  read -r max file < <(tail -1 "$tmp/r")
  printf '%-22s %8.2f %8.2f  %s\n' "$name" "$median" "$max" "$file"
done
