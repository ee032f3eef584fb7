#!/usr/bin/env bash
# Everything that needs a GPU, in one go (for a lent GPU machine: few, full calls). Suites run one file at
# a time, each in a process of its own: they measure device memory, which suites running beside them would
# disturb, and a sticky CUDA error or a hang in one file then costs that file alone.
#   bash test/gpu/run-all.sh [parts...]     parts: suites modules examples bench multigpu (default: all but multigpu)
# Logs go to $OUT (or ./gpu-logs, git-ignored): doctor.log, suites.log, modules.log, examples.log, bench.log
# (+ bench.json). Without a GPU it says "no GPU: <why>" and exits 1; it exits 1 when any part fails.
# The library smoke tests run one per process, so a crash in one library's binding names that library.
# CUDA_TS_RUNTIME=node|bun|deno picks the JavaScript runtime of the doctor, the suites (Jest runs under
# all three) and the examples (through scripts/run-ts.cjs); BUN / DENO name their binaries (default: on
# PATH, else /tmp/bun/bun, /tmp/deno/deno). Logs then carry the runtime's name: suites-bun.log, ….
# The bench part always runs bench/run.ts under Node, plus bench/runtimes.ts (Node/Bun/Deno columns)
# and bench/kernel-cache.ts (a compile in a second process, from the on-disk cache).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
parts=${*:-suites modules examples bench}
export NCCL_NVLS_ENABLE=0 # never NVLink multicast on shared machines
runtime=${CUDA_TS_RUNTIME:-node}
case $runtime in
node) rt=(node); rt_eval=(node -e); suffix='' ;;
bun) rt=("${BUN:-$(command -v bun || echo /tmp/bun/bun)}"); rt_eval=("${rt[0]}" -e); suffix=-bun ;;
deno) rt=("${DENO:-$(command -v deno || echo /tmp/deno/deno)}" run --allow-all); rt_eval=("${rt[0]}" eval); suffix=-deno ;;
*) echo "CUDA_TS_RUNTIME must be node, bun or deno, not '$runtime'" >&2; exit 2 ;;
esac
if ! "${rt[0]}" --version >/dev/null 2>&1; then
  echo "CUDA_TS_RUNTIME=$runtime: ${rt[0]} does not run (install it: npm install --prefix /tmp/$runtime $runtime; or set ${runtime^^})" >&2
  exit 2
fi
export CUDA_TS_RUNTIME=$runtime
jest=("${rt[@]}" node_modules/jest/bin/jest.js)
# No GPU, no run: say why in one line (the doctor's first error) and fail, before spending minutes.
# The GPU count decides (a doctor complaint about something else is shown, not fatal).
"${rt[@]}" bin/cuda-ts.js doctor >"$out/doctor$suffix.log" 2>&1
doctor_status=$?
gpus=$("${rt[@]}" bin/cuda-ts.js doctor --json 2>/dev/null | "${rt_eval[@]}" 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { console.log(JSON.parse(s).gpus.length); } catch { console.log(0); } });')
reason=$(grep -m1 -E '^  ERROR: ' "$out/doctor$suffix.log" | sed 's/^  ERROR: //')
if [ "${gpus:-0}" -eq 0 ]; then
  echo "no GPU: ${reason:-cuda-ts doctor found none} (full report: $out/doctor$suffix.log)" >&2
  exit 1
fi
[ "$doctor_status" -eq 0 ] || echo "cuda-ts doctor: ${reason:-exit $doctor_status} (see $out/doctor$suffix.log); running anyway on $gpus GPU(s)" >&2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/suites$suffix.log" 2>&1
echo "runtime: $runtime $("${rt[0]}" --version | head -1)" >>"$out/suites$suffix.log"
failed=()

# The examples under Bun or Deno, as examples/run-all.sh runs them under Node (its exit 2: no GPU).
run_examples() {
  local bad=0 file rc
  for file in examples/*.ts; do
    [ "$(basename "$file" .ts)" = gpu-check ] && continue
    printf '\n===== %s (%s) =====\n' "$file" "$runtime"
    "${rt[@]}" scripts/run-ts.cjs "$file" 2>&1
    rc=$?
    echo "exit $rc"
    [ "$rc" -eq 0 ] || bad=1
  done
  return $bad
}

for part in $parts; do
  case $part in
  suites)
    for file in test/gpu/*.gpu.test.ts; do
      case $file in *modules.gpu* | *multigpu.gpu*) continue ;; esac
      log=$(timeout 600 "${jest[@]}" "$file" --selectProjects gpu --forceExit 2>&1)
      status=$?
      verdict=$(printf '%s\n' "$log" | grep -E '^Tests:' | tail -1)
      printf '=== %s: exit %s; %s\n' "$file" "$status" "${verdict:-no summary (crashed or timed out?)}" >>"$out/suites$suffix.log"
      [ "$status" -eq 0 ] || { printf '%s\n' "$log" | tail -60 >>"$out/suites$suffix.log"; failed+=("suites:$(basename "$file" .gpu.test.ts)"); }
    done
    ;;
  modules)
    names=$(grep -oP "^  test\('\K[^']+" test/gpu/modules.gpu.test.ts)
    while IFS= read -r name; do
      pattern=$(printf '%s' "$name" | sed 's/[][\\.*^$()+?{}|]/\\&/g')
      log=$("${jest[@]}" test/gpu/modules.gpu.test.ts --selectProjects gpu -t "^CUDA library modules \(13.0 bindings\) $pattern\$" 2>&1)
      status=$?
      verdict=$(printf '%s\n' "$log" | grep -E '^Tests:' | tail -1)
      printf '=== %s: exit %s; %s\n' "$name" "$status" "${verdict:-no summary (crashed?)}" >>"$out/modules$suffix.log"
      [ "$status" -eq 0 ] || { printf '%s\n' "$log" | tail -40 >>"$out/modules$suffix.log"; failed+=("modules:$name"); }
      printf '%s\n' "$log" | grep -E '^\s+(console\.log|[a-z]+: [0-9]+ of [0-9]+ exported)' -A2 >>"$out/modules$suffix.log" || true
    done <<<"$names"
    ;;
  examples)
    if [ "$runtime" = node ]; then
      VERBOSE=1 bash examples/run-all.sh >"$out/examples.log" 2>&1 || failed+=(examples)
    else
      run_examples >"$out/examples$suffix.log" 2>&1 || failed+=(examples)
    fi
    ;;
  bench)
    OUT=$out timeout 420 npx tsx bench/run.ts >"$out/bench.log" 2>&1 || failed+=(bench)
    OUT=$out timeout 300 npx tsx bench/runtimes.ts >>"$out/bench.log" 2>&1 || failed+=(bench:runtimes)
    OUT=$out timeout 300 npx tsx bench/kernel-cache.ts >>"$out/bench.log" 2>&1 || failed+=(bench:kernel-cache)
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
