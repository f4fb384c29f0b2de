#!/usr/bin/env bash
# fuzz/fuzz.sh: build, replay and run VecSync's libFuzzer harnesses (the Makefile's fuzz
# targets call it; run it from the repository's top folder).
#
#   fuzz/fuzz.sh build              build every fuzz/fuzz_*.c into .build/fuzz/
#   fuzz/fuzz.sh replay             run every file of fuzz/corpus/<h>/ and
#                                   fuzz/regressions/<h>/ once through harness <h>
#   fuzz/fuzz.sh run SECONDS        fuzz each harness for SECONDS, one after another
#
# Environment: CC (default clang, which needs the libFuzzer runtime: the Swift toolchain's
# clang has it), FUZZ_HARNESSES (default: all), FUZZ_MAX_LEN (default 4096), FUZZ_SEED (a
# fixed libFuzzer seed, for a run that repeats; default: a new one each run), FUZZ_SRC (the
# extension sources, default CSources/vecsync: point it at a copy to fuzz another version).
#
# A run copies the committed seeds into a working corpus, .build/fuzz/corpus/<h>/, so the
# repository is never written to; what a run finds goes to .build/fuzz/findings/<h>/
# (crash-*, leak-*, timeout-*, oom-*), and its log to .build/fuzz/logs/<h>.log. Copy a
# crash worth keeping to fuzz/regressions/<h>/crash-<short-name>: every replay runs it.
set -euo pipefail
cd "$(dirname "$0")/.."          # paths below are relative to the repository

CC=${CC:-clang}
OUT=.build/fuzz
SRC_DIR=${FUZZ_SRC:-CSources/vecsync}
MAX_LEN=${FUZZ_MAX_LEN:-4096}
HARNESSES=${FUZZ_HARNESSES:-$(cd fuzz && ls fuzz_*.c | sed 's/\.c$//' | tr '\n' ' ')}

CFLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
        -I"$SRC_DIR" -I"$SRC_DIR/include" -Ifuzz)
LIBS=(-lsqlite3 -lblas -lm -lpthread)

# Sanitizer settings for every run: stop at the first report, with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:symbolize=1}

die(){ echo "fuzz.sh: $*" >&2; exit 2; }

build(){
  mkdir -p "$OUT"
  command -v "$CC" >/dev/null || die "no $CC on PATH"
  # lld, when the compiler has it, links without gold's warnings about ASan's symbols.
  local ldflags=()
  if echo 'int main(void){return 0;}' | "$CC" -x c - -fuse-ld=lld -o "$OUT/.ldcheck" 2>/dev/null; then
    ldflags=(-fuse-ld=lld)
  fi
  rm -f "$OUT/.ldcheck"
  local h
  for h in $HARNESSES; do
    echo "  CC  $OUT/$h"
    "$CC" "${CFLAGS[@]}" "${ldflags[@]}" -o "$OUT/$h" "fuzz/$h.c" "$SRC_DIR"/*.c "${LIBS[@]}"
  done
}

# The seed and regression files of harness $1, one per line.
inputs(){
  local d
  for d in "fuzz/corpus/$1" "fuzz/regressions/$1"; do
    [ -d "$d" ] && find "$d" -type f ! -name '.gitkeep' ! -name 'README*' | sort
  done
  return 0
}

replay(){
  local h failed=0
  for h in $HARNESSES; do
    [ -x "$OUT/$h" ] || die "$OUT/$h is not built: run make fuzz-build"
    local files=() f
    while IFS= read -r f; do files+=("$f"); done < <(inputs "$h")
    if [ ${#files[@]} -eq 0 ]; then echo "== $h: no inputs"; continue; fi
    mkdir -p "$OUT/logs"
    # One process per file: a crash names its input, and the others still run.
    local nFail=0
    for f in "${files[@]}"; do
      if ! ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" "$OUT/$h" -runs=1 -timeout=25 -rss_limit_mb=2048 "$f" >"$OUT/logs/$h.replay.log" 2>&1; then
        echo "== $h: FAILED on $f (log $OUT/logs/$h.$(basename "$f").log)"
        cp "$OUT/logs/$h.replay.log" "$OUT/logs/$h.$(basename "$f").log"
        grep -E 'ERROR: |runtime error' "$OUT/logs/$h.replay.log" | head -1 | sed 's/^/     /'
        grep -E '^ *#[0-9]+ 0x' "$OUT/logs/$h.replay.log" \
          | grep -v -E 'libFuzzer|fuzzer::|__sanitizer|__asan|__ubsan|libsqlite3|in (malloc|free|calloc|realloc) ' \
          | head -3 | sed 's/^/     /'
        nFail=$((nFail+1))
      fi
    done
    echo "== $h: replayed ${#files[@]} inputs, $nFail failed"
    [ $nFail -eq 0 ] || failed=1
  done
  return $failed
}

run(){
  local secs=$1 h failed=0 summary=""
  for h in $HARNESSES; do
    [ -x "$OUT/$h" ] || die "$OUT/$h is not built: run make fuzz-build"
    local corpus="$OUT/corpus/$h" findings="$OUT/findings/$h" log="$OUT/logs/$h.log"
    mkdir -p "$corpus" "$findings" "$OUT/logs"
    [ -d "fuzz/corpus/$h" ] && find "fuzz/corpus/$h" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
    local before
    before=$(find "$findings" -type f | wc -l)
    echo "== $h: fuzzing for ${secs}s (corpus $corpus, findings $findings/, log $log)"
    local rc=0
    "$OUT/$h" "$corpus" -max_len="$MAX_LEN" -max_total_time="$secs" -timeout=25 \
      ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
      >"$log" 2>&1 || rc=$?
    local execs speed after new
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    after=$(find "$findings" -type f | wc -l)
    new=$((after-before))
    if [ $rc -ne 0 ]; then
      failed=1
      echo "   FINDING (exit $rc): $(grep -E 'ERROR: |runtime error' "$log" | head -1)"
      grep -E '^ *#[0-9]+ 0x' "$log" | grep -v -E 'libFuzzer|fuzzer::|__sanitizer|__asan|__ubsan' | head -6 | sed 's/^/   /'
      grep -E 'Test unit written to' "$log" | sort -u | sed 's/^/   /'
    fi
    summary+=$(printf '%-22s %10s execs %8s exec/s  %s new finding(s), exit %s' \
               "$h" "${execs:-?}" "${speed:-?}" "$new" "$rc")$'\n'
  done
  echo "== summary (findings under $OUT/findings/<harness>/)"
  printf '%s' "$summary"
  return $failed
}

case "${1:-}" in
  build)  build ;;
  replay) replay ;;
  run)    run "${2:-1200}" ;;
  *)      die "usage: fuzz/fuzz.sh build | replay | run SECONDS" ;;
esac
