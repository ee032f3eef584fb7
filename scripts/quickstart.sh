#!/usr/bin/env bash
# Sets up a fresh clone and runs the main job: install, regenerate the driver and runtime bindings
# from a CUDA toolkit's headers, build, and run the quick-start example.
# Toolkit: $CUDA_TOOLKIT, else /usr/local/cuda, else the CUDA 13.0 headers in ../shared/cuda-headers.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-19 >/dev/null || command -v clang >/dev/null || { apt-get update -qq && apt-get install -y -qq clang-19; }
[ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund
toolkit=${CUDA_TOOLKIT:-/usr/local/cuda}
if [ ! -f "$toolkit/include/cuda.h" ] || [ ! -f "$toolkit/include/cuda_profiler_api.h" ]; then
  toolkit=/tmp/cuda-ts-headers/cuda-13.0
  mkdir -p "$toolkit" && tar -xzf ../shared/cuda-headers/cuda-13.0.tar.gz -C "$toolkit"
fi
node bin/cuda-ts-gen.js --toolkit "$toolkit" --modules driver,runtime
npx tsx examples/quickstart.ts
