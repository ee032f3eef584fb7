# Sourced by scripts/quickstart.sh and .ci/run: has_clang19 succeeds when clang-21, clang-20, clang-19 or
# clang is version 19 or newer (generator/parse/clang.ts, MIN_CLANG_MAJOR; Debian 12's `clang` is 14,
# whose IR loses the headers' doc cues).
has_clang19() {
  local c v
  for c in clang-21 clang-20 clang-19 clang; do
    v=$("$c" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\)\..*/\1/p' | head -1)
    [ -n "$v" ] && [ "$v" -ge 19 ] && return 0
  done
  return 1
}
