#!/usr/bin/env bash
# Installs what warpcheck needs to build and run, idempotently.
# On Debian/Ubuntu it uses apt; elsewhere it names what is missing.
#   bash scripts/setup.sh            LLVM/Clang 19 (the default build)
#   bash scripts/setup.sh --llvm22   also LLVM/Clang 22, for the llvm22 build
#                                    (or WARPCHECK_SETUP_LLVM22=1)
set -euo pipefail

llvm22="${WARPCHECK_SETUP_LLVM22:-0}"
for arg in "$@"; do
  case "$arg" in
    --llvm22) llvm22=1 ;;
    *) echo "setup: unknown option $arg (known: --llvm22)" >&2; exit 2 ;;
  esac
done

# libclang-*-dev: the headers and library of warpcheck's frontend action
# (the launches' block shapes, read from the AST with -fplugin).
packages=(llvm-19-dev llvm-19 clang-19 libclang-19-dev libclang-cpp19-dev coinor-libcbc-dev pkg-config zlib1g-dev libzstd-dev g++ cmake make)
# The HTML report's test renders the page with headless Chromium.
packages+=(chromium)
[ "$llvm22" = 1 ] && packages+=(llvm-22-dev llvm-22 clang-22 libclang-22-dev libclang-cpp22-dev)
# The CUDA-toolkit tests fetch header wheels with pip.
python3 -m pip --version >/dev/null 2>&1 || packages+=(python3 python3-pip)

have_llvm() {
  command -v "clang-$1" >/dev/null && command -v "opt-$1" >/dev/null &&
    [ -x "/usr/lib/llvm-$1/bin/llvm-config" ] &&
    [ -f "/usr/lib/llvm-$1/include/clang/Frontend/FrontendPluginRegistry.h" ] &&
    [ -e "/usr/lib/llvm-$1/lib/libclang-cpp.so" ]
}

have_all() {
  have_llvm 19 && pkg-config --exists cbc 2>/dev/null && command -v cmake >/dev/null &&
    command -v chromium >/dev/null && { [ "$llvm22" != 1 ] || have_llvm 22; }
}

if have_all && command -v cargo >/dev/null; then
  echo "setup: everything is already installed"
  exit 0
fi

if command -v apt-get >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  missing=()
  for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: no apt-get here. Install these yourself:" >&2
  echo "  LLVM 19 with clang and opt (llvm-config at /usr/lib/llvm-19/bin, or set LLVM_SYS_191_PREFIX)" >&2
  [ "$llvm22" = 1 ] && echo "  LLVM 22 with clang and opt (llvm-config at /usr/lib/llvm-22/bin, or set LLVM_SYS_221_PREFIX)" >&2
  echo "  COIN-OR CBC development files (pkg-config cbc), pkg-config, a C++ compiler, python3 with pip" >&2
  have_all || exit 1
fi

if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found: install Rust from your distribution or rustup" >&2
  exit 1
fi
echo "setup: done"
