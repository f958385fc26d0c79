#!/usr/bin/env bash
# Installs warpcheck under a prefix with one pass plugin per LLVM major, so
# that clang 19 and clang 22 builds each find theirs:
#
#   scripts/install.sh PREFIX [BUILD_DIR...]
#
# Each BUILD_DIR holds a built `warpcheck` and `libwarpcheck.so` (default:
# target/release and target/llvm22/release, those that exist). Installs
#   PREFIX/bin/warpcheck-llvmN, PREFIX/lib/libwarpcheck-llvmN.so and
#   PREFIX/lib/libwarpcheck-frontend-llvmN.so  (each build: the pass and
#   the frontend action that reads launches from the AST)
#   PREFIX/bin/warpcheck, PREFIX/lib/libwarpcheck.so  (the first build's)
#   PREFIX/lib/cmake/warpcheck/  (find_package(warpcheck CONFIG))
#   PREFIX/share/warpcheck/warpcheck.mk
#   PREFIX/share/warpcheck/warpcheck_cuda.h and include/ (cooperative_groups):
#     the headers a clang build without a CUDA toolkit compiles with; the
#     CMake package and the Make snippet name them in
#     WARPCHECK_NO_TOOLKIT_FLAGS
# `PREFIX/bin/warpcheck print-plugin-path --clang clang-N` then names the
# plugin for clang N.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 PREFIX [BUILD_DIR...]" >&2; exit 2; }
prefix="$1"; shift
builds=("$@")
if [ ${#builds[@]} -eq 0 ]; then
  for d in "$root/target/release" "$root/target/llvm22/release"; do
    [ -f "$d/libwarpcheck.so" ] && builds+=("$d")
  done
fi
[ ${#builds[@]} -gt 0 ] || { echo "install: no build found: cargo build --release first" >&2; exit 2; }

mkdir -p "$prefix/bin" "$prefix/lib/cmake/warpcheck" "$prefix/share/warpcheck"
first=""
for d in "${builds[@]}"; do
  [ -x "$d/warpcheck" ] && [ -f "$d/libwarpcheck.so" ] ||
    { echo "install: $d has no warpcheck and libwarpcheck.so" >&2; exit 2; }
  # The LLVM major is the one the plugin links.
  major=$(grep -aom1 'libLLVM\.so\.[0-9]*' "$d/libwarpcheck.so" | sed 's/.*\.//')
  [ -n "$major" ] || { echo "install: cannot tell the LLVM major of $d/libwarpcheck.so" >&2; exit 2; }
  install -m 755 "$d/warpcheck" "$prefix/bin/warpcheck-llvm$major"
  install -m 755 "$d/libwarpcheck.so" "$prefix/lib/libwarpcheck-llvm$major.so"
  [ -f "$d/libwarpcheck-frontend.so" ] ||
    { echo "install: $d has no libwarpcheck-frontend.so" >&2; exit 2; }
  install -m 755 "$d/libwarpcheck-frontend.so" "$prefix/lib/libwarpcheck-frontend-llvm$major.so"
  echo "install: LLVM $major from $d"
  [ -n "$first" ] || first="$major"
done
ln -sf "warpcheck-llvm$first" "$prefix/bin/warpcheck"
ln -sf "libwarpcheck-llvm$first.so" "$prefix/lib/libwarpcheck.so"
ln -sf "libwarpcheck-frontend-llvm$first.so" "$prefix/lib/libwarpcheck-frontend.so"
install -m 644 "$root"/cmake/*.cmake "$prefix/lib/cmake/warpcheck/"
install -m 644 "$root/scripts/warpcheck.mk" "$prefix/share/warpcheck/"
install -m 644 "$root/src/frontend/warpcheck_cuda.h" "$prefix/share/warpcheck/"
(cd "$root/src/frontend" && find include -type f -name '*.h' -print0) |
  while IFS= read -r -d '' h; do
    install -D -m 644 "$root/src/frontend/$h" "$prefix/share/warpcheck/$h"
  done
echo "install: done ($prefix/bin/warpcheck is the LLVM $first build)"
