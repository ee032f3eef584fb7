#!/usr/bin/env bash
# Everything that needs a GPU, in one go (for a lent GPU machine: few, full calls). Suites run one file at
# a time (--runInBand): they measure device memory, which suites running beside them would disturb.
#   bash test/gpu/run-all.sh [parts...]     parts: suites modules examples bench multigpu (default: all but multigpu)
# Logs go to $OUT (or ./gpu-logs, git-ignored): doctor.log, suites.log, modules.log, examples.log, bench.log
# (+ bench.json). Without a GPU it says "no GPU: <why>" and exits 1; it exits 1 when any part fails.
# The library smoke tests run one per process, so a crash in one library's binding names that library.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
parts=${*:-suites modules examples bench}
export NCCL_NVLS_ENABLE=0 # never NVLink multicast on shared machines
# No GPU, no run: say why in one line (the doctor's first error) and fail, before spending minutes.
# The GPU count decides (a doctor complaint about something else is shown, not fatal).
node bin/cuda-ts.js doctor >"$out/doctor.log" 2>&1
doctor_status=$?
gpus=$(node bin/cuda-ts.js doctor --json 2>/dev/null | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { console.log(JSON.parse(s).gpus.length); } catch { console.log(0); } });')
reason=$(grep -m1 -E '^  ERROR: ' "$out/doctor.log" | sed 's/^  ERROR: //')
if [ "${gpus:-0}" -eq 0 ]; then
  echo "no GPU: ${reason:-cuda-ts doctor found none} (full report: $out/doctor.log)" >&2
  exit 1
fi
[ "$doctor_status" -eq 0 ] || echo "cuda-ts doctor: ${reason:-exit $doctor_status} (see $out/doctor.log); running anyway on $gpus GPU(s)" >&2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/suites.log" 2>&1
failed=()

for part in $parts; do
  case $part in
  suites)
    npx jest --selectProjects gpu --runInBand --testPathIgnorePatterns modules.gpu multigpu.gpu 2>&1 | tail -150 >>"$out/suites.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=(suites)
    ;;
  modules)
    names=$(grep -oP "^  test\('\K[^']+" test/gpu/modules.gpu.test.ts)
    while IFS= read -r name; do
      pattern=$(printf '%s' "$name" | sed 's/[][\\.*^$()+?{}|]/\\&/g')
      log=$(npx jest test/gpu/modules.gpu.test.ts --selectProjects gpu -t "^CUDA library modules \(13.0 bindings\) $pattern\$" 2>&1)
      status=$?
      verdict=$(printf '%s\n' "$log" | grep -E '^Tests:' | tail -1)
      printf '=== %s: exit %s; %s\n' "$name" "$status" "${verdict:-no summary (crashed?)}" >>"$out/modules.log"
      [ "$status" -eq 0 ] || { printf '%s\n' "$log" | tail -40 >>"$out/modules.log"; failed+=("modules:$name"); }
      printf '%s\n' "$log" | grep -E '^\s+(console\.log|[a-z]+: [0-9]+ of [0-9]+ exported)' -A2 >>"$out/modules.log" || true
    done <<<"$names"
    ;;
  examples)
    VERBOSE=1 bash examples/run-all.sh >"$out/examples.log" 2>&1 || failed+=(examples)
    ;;
  bench)
    OUT=$out timeout 420 npx tsx bench/run.ts >"$out/bench.log" 2>&1 || failed+=(bench)
    ;;
  multigpu)
    npx jest test/gpu/multigpu.gpu.test.ts --selectProjects gpu --runInBand 2>&1 | tail -80 >"$out/multigpu.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=(multigpu)
    timeout 300 npx tsx bench/multigpu.ts >>"$out/multigpu.log" 2>&1 || failed+=(bench:multigpu)
    ;;
  *)
    echo "unknown part $part (parts: suites modules examples bench multigpu)" >&2
    exit 2
    ;;
  esac
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]} (logs in $out)" >&2
  exit 1
fi
echo "all parts passed: $parts (logs in $out)"
