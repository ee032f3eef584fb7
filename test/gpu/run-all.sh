#!/usr/bin/env bash
# Everything that needs a GPU, in one go (for a lent GPU machine: few, full calls).
#   bash test/gpu/run-all.sh [parts...]     parts: suites modules examples bench multigpu (default: all but multigpu)
# Logs go to $OUT (or ./gpu-logs): suites.log, modules.log, examples.log, bench.log (+ bench.json).
# The library smoke tests run one per process, so a crash in one library's binding names that library.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
parts=${*:-suites modules examples bench}
export NCCL_NVLS_ENABLE=0 # never NVLink multicast on shared machines
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/suites.log" 2>&1

for part in $parts; do
  case $part in
  suites)
    npx jest --selectProjects gpu --testPathIgnorePatterns modules.gpu multigpu.gpu 2>&1 | tail -150 >>"$out/suites.log"
    ;;
  modules)
    names=$(grep -oP "^  test\('\K[^']+" test/gpu/modules.gpu.test.ts)
    while IFS= read -r name; do
      pattern=$(printf '%s' "$name" | sed 's/[][\\.*^$()+?{}|]/\\&/g')
      log=$(npx jest test/gpu/modules.gpu.test.ts --selectProjects gpu -t "^CUDA library modules \(13.0 bindings\) $pattern\$" 2>&1)
      status=$?
      verdict=$(printf '%s\n' "$log" | grep -E '^Tests:' | tail -1)
      printf '=== %s: exit %s; %s\n' "$name" "$status" "${verdict:-no summary (crashed?)}" >>"$out/modules.log"
      [ "$status" -eq 0 ] || printf '%s\n' "$log" | tail -40 >>"$out/modules.log"
      printf '%s\n' "$log" | grep -E '^\s+(console\.log|[a-z]+: [0-9]+ of [0-9]+ exported)' -A2 >>"$out/modules.log" || true
    done <<<"$names"
    ;;
  examples)
    VERBOSE=1 bash examples/run-all.sh >"$out/examples.log" 2>&1
    ;;
  bench)
    OUT=$out timeout 420 npx tsx bench/run.ts >"$out/bench.log" 2>&1
    ;;
  multigpu)
    npx jest test/gpu/multigpu.gpu.test.ts --selectProjects gpu --runInBand 2>&1 | tail -80 >"$out/multigpu.log"
    timeout 300 npx tsx bench/multigpu.ts >>"$out/multigpu.log" 2>&1
    ;;
  esac
done
