#!/usr/bin/env bash
# Sets up a fresh clone and runs the main job: install, regenerate the driver and runtime bindings
# from a CUDA toolkit's headers, build, and run the quick-start example.
# Toolkit: $CUDA_TOOLKIT (must hold include/cuda.h), else /usr/local/cuda, else the CUDA 13.0 headers
# in ../shared/cuda-headers. Tool output goes to a log and is shown only when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
log=${TMPDIR:-/tmp}/cuda-ts-setup.log
: >"$log"

fail() { # fail "what went wrong" "how to fix it"
  echo "setup failed: $1" >&2
  echo "  fix: $2" >&2
  exit 1
}

# step "what" command...: runs quietly, shows the log's tail when it fails.
step() {
  local what=$1
  shift
  echo "$what"
  if ! "$@" >>"$log" 2>&1; then
    echo "setup failed: $what (last lines of $log):" >&2
    tail -15 "$log" >&2
    exit 1
  fi
}

. "$(dirname "${BASH_SOURCE[0]}")/clang-version.sh"
if ! has_clang19; then
  command -v apt-get >/dev/null || fail "clang 19 or newer is not installed and there is no apt-get to install it" "install clang (19 or newer) with your package manager, then run npm run setup again"
  step "installing clang-19 with apt (log: $log)" bash -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq clang-19'
fi
[ -d node_modules ] || step "installing dependencies (npm ci)" npm ci --ignore-scripts --no-audit --no-fund

if [ -n "${CUDA_TOOLKIT:-}" ]; then
  # An explicit choice is never silently replaced by another toolkit.
  [ -e "$CUDA_TOOLKIT" ] || fail "CUDA_TOOLKIT=$CUDA_TOOLKIT does not exist" \
    "set CUDA_TOOLKIT to a CUDA toolkit folder (the one holding include/cuda.h, e.g. /usr/local/cuda-13.0), or unset it to use /usr/local/cuda or the bundled CUDA 13.0 headers"
  [ -d "$CUDA_TOOLKIT" ] || fail "CUDA_TOOLKIT=$CUDA_TOOLKIT is a file, not a folder" \
    "set CUDA_TOOLKIT to a CUDA toolkit folder (the one holding include/cuda.h, e.g. /usr/local/cuda-13.0), or unset it to use /usr/local/cuda or the bundled CUDA 13.0 headers"
  [ -f "$CUDA_TOOLKIT/include/cuda.h" ] || fail "CUDA_TOOLKIT=$CUDA_TOOLKIT has no include/cuda.h" \
    "set CUDA_TOOLKIT to the toolkit's top folder (the parent of include/), or unset it to use /usr/local/cuda or the bundled CUDA 13.0 headers"
  toolkit=$CUDA_TOOLKIT
elif [ -f /usr/local/cuda/include/cuda.h ] && [ -f /usr/local/cuda/include/cuda_profiler_api.h ]; then
  toolkit=/usr/local/cuda
else
  headers=../shared/cuda-headers/cuda-13.0.tar.gz
  [ -f "$headers" ] || fail "no CUDA headers: CUDA_TOOLKIT is not set, /usr/local/cuda/include/cuda.h does not exist, and $headers is missing" \
    "install the CUDA toolkit, or set CUDA_TOOLKIT to one (CUDA_TOOLKIT=/usr/local/cuda-13.0 npm run setup)"
  toolkit=${TMPDIR:-/tmp}/cuda-ts-headers/cuda-13.0
  mkdir -p "$toolkit"
  step "unpacking the bundled CUDA 13.0 headers" tar -xzf "$headers" -C "$toolkit"
fi

echo "generating the driver and runtime bindings from $toolkit"
node bin/cuda-ts-gen.js --toolkit "$toolkit" --modules driver,runtime
npx tsx examples/quickstart.ts
