#!/usr/bin/env bash
# Builds bench/native/bench.c into OUT_DIR (default /tmp/cuda-ts-bench): the program `bench` (kernels.ptx
# copied beside it) and libbench.so, the same passes for a JavaScript process to time (optional: a failure
# is only reported). Prints the program's path.
#
# Usage: bash bench/native/build.sh [OUT_DIR]
# Env:   CUDA_HOME (default /usr/local/cuda), CC (default gcc), LIBCUDA (a libcuda to link against, tried
#        first; else the toolkit's stub, else the driver's libcuda.so.1). Either way the driver's
#        libcuda.so.1 is what runs.
set -euo pipefail

out=${1:-/tmp/cuda-ts-bench}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}

die() { echo "build.sh: $*" >&2; exit 1; }

command -v "$cc" >/dev/null 2>&1 || die "C compiler '$cc' not found (install gcc or set CC)"
[ -f "$cuda_home/include/cuda.h" ] || die "cuda.h not found in $cuda_home/include (set CUDA_HOME)"

mkdir -p "$out"
cflags=(-O2 -std=c11 -Wall -Wextra -I"$cuda_home/include")

# Candidates: "-L<dir>" (then -lcuda) or the path of a library file.
cands=()
[ -n "${LIBCUDA:-}" ] && cands+=("$LIBCUDA")
for d in "$cuda_home"/lib64/stubs "$cuda_home"/targets/*/lib/stubs "$cuda_home"/lib/stubs; do
  [ -f "$d/libcuda.so" ] && cands+=("-L$d")
done
if command -v ldconfig >/dev/null 2>&1; then
  while read -r p; do [ -n "$p" ] && cands+=("$p"); done < <(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF}')
fi
for f in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64/libcuda.so.1 \
         /usr/lib/aarch64-linux-gnu/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1; do
  [ -f "$f" ] && cands+=("$f")
done
[ ${#cands[@]} -gt 0 ] || die "libcuda not found: no stub in $cuda_home/{lib64,targets/*/lib}/stubs and no libcuda.so.1 from the driver (ldconfig -p, /usr/lib/x86_64-linux-gnu, /usr/local/nvidia/lib64). Set LIBCUDA=/path/to/libcuda.so.1"

link_with() { if [[ "$1" == -L* ]]; then link=("$1" -lcuda); else link=("$1"); fi; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
built=""
for c in "${cands[@]}"; do
  link_with "$c"
  if "$cc" "${cflags[@]}" "$here/bench.c" -o "$out/bench" "${link[@]}" >"$log" 2>&1; then
    built="$c"; break
  fi
  echo "build.sh: link with '$c' failed:" >&2; sed 's/^/  /' "$log" >&2
done
[ -n "$built" ] || die "could not build bench.c against any libcuda candidate (${cands[*]})"

link_with "$built"
if "$cc" "${cflags[@]}" -Wno-unused-function -fPIC -shared -DBENCH_SHARED "$here/bench.c" -o "$out/libbench.so" "${link[@]}" >"$log" 2>&1; then
  echo "build.sh: built $out/libbench.so (in-process passes)" >&2
else
  echo "build.sh: libbench.so failed (in-process C rows will be skipped):" >&2; sed 's/^/  /' "$log" >&2
fi

cp "$here/kernels.ptx" "$out/kernels.ptx"
echo "build.sh: built $out/bench (linked with $built); kernels.ptx copied beside it" >&2
echo "$out/bench"
