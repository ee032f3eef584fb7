#!/usr/bin/env bash
# Runs every example in examples/ (all *.ts but gpu-check.ts) one after another, prints each one's
# final line, and exits non-zero if any exited non-zero (failed, or skipped for want of a GPU).
#   bash examples/run-all.sh               # from anywhere
#   VERBOSE=1 bash examples/run-all.sh     # also print each example's full output
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
if [ -x node_modules/.bin/tsx ]; then tsx=(node_modules/.bin/tsx); else tsx=(npx --yes tsx); fi

passed=0
failed=()
for file in examples/*.ts; do
  name="$(basename "$file" .ts)"
  [ "$name" = gpu-check ] && continue
  start=$(date +%s.%N)
  output="$("${tsx[@]}" "$file" 2>&1)"
  rc=$?
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  if [ "${VERBOSE:-0}" != 0 ]; then
    printf '\n===== %s =====\n%s\n' "$file" "$output"
  fi
  last="$(printf '%s\n' "$output" | grep -v '^[[:space:]]*$' | tail -n 1)"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    printf '[ ok ] %-18s %5ss  %s\n' "$name" "$secs" "$last"
  else
    failed+=("$name")
    tag=FAIL
    [ "$rc" -eq 2 ] && tag=skip # requireGpu: no usable GPU
    printf '[%s] %-18s %5ss  exit %s: %s\n' "$tag" "$name" "$secs" "$rc" "$last"
  fi
done

echo
if [ "${#failed[@]}" -eq 0 ]; then
  echo "run-all: all $passed example(s) passed"
  exit 0
fi
echo "run-all: $passed passed, ${#failed[@]} did not: ${failed[*]}"
exit 1
