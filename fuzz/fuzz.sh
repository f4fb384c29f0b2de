#!/usr/bin/env bash
# fuzz/fuzz.sh: build, replay and run VecSync's libFuzzer harnesses (the Makefile's fuzz
# targets call it; run it from the repository's top folder).
#
#   fuzz/fuzz.sh build              build every fuzz/fuzz_*.c into .build/fuzz/
#   fuzz/fuzz.sh replay             run every file of fuzz/corpus/<h>/ and
#                                   fuzz/regressions/<h>/ once through harness <h>
#   fuzz/fuzz.sh run SECONDS        fuzz each harness for SECONDS
#
# Harnesses run FUZZ_JOBS at a time (default: the number of CPUs), each in its own
# process; their reports are printed in harness order once all have finished.
#
# Environment: CC (default clang, which needs the libFuzzer runtime: the Swift toolchain's
# clang has it), FUZZ_HARNESSES (default: all), FUZZ_MAX_LEN (default 4096), FUZZ_SEED (a
# fixed libFuzzer seed, for a run that repeats; default: a new one each run), FUZZ_SRC (the
# extension sources, default CSources/vecsync: point it at a copy to fuzz another version),
# FUZZ_RSS_LIMIT_MB and FUZZ_MALLOC_LIMIT_MB (peak memory of one input, below).
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
JOBS=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
# Peak memory of one input: a process past FUZZ_RSS_LIMIT_MB, or a single allocation past
# FUZZ_MALLOC_LIMIT_MB, is a finding. The extension's largest allocation is one block
# (VEC0_MAX_BLOCK_BYTES, 256 MiB); SQLite's heap is capped at 256 MiB (fuzz_common.h);
# ASan's shadow memory takes the rest.
RSS_LIMIT_MB=${FUZZ_RSS_LIMIT_MB:-1536}
MALLOC_LIMIT_MB=${FUZZ_MALLOC_LIMIT_MB:-320}

# VEC0_PARALLEL_MIN_ROWS=1: a KNN scan of a table of two chunks or more runs on as many
# threads as its connection allows (fuzz_vec0 sets 0 to 3 helpers), however small.
CFLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
        -DVEC0_PARALLEL_MIN_ROWS=1 -I"$SRC_DIR" -I"$SRC_DIR/include" -Ifuzz)
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

# Runs "$1 <harness> [args…]" for every harness, JOBS at a time, each one's output kept in
# a file and printed in harness order; fails when any of them failed.
each_harness(){
  local fn=$1 h failed=0
  shift
  mkdir -p "$OUT/logs"
  for h in $HARNESSES; do
    [ -x "$OUT/$h" ] || die "$OUT/$h is not built: run make fuzz-build"
  done
  local pids=() names=()
  for h in $HARNESSES; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    ( "$fn" "$h" "$@" >"$OUT/logs/$h.$fn.out" 2>&1 ) &
    pids+=($!); names+=("$h")
  done
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$OUT/logs/${names[$i]}.$fn.out"
  done
  return $failed
}

replay_one(){
  local h=$1
  local files=() f
  while IFS= read -r f; do files+=("$f"); done < <(inputs "$h")
  if [ ${#files[@]} -eq 0 ]; then echo "== $h: no inputs"; return 0; fi
  # One process per file: a crash names its input, and the others still run.
  local nFail=0
  for f in "${files[@]}"; do
    if ! ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" "$OUT/$h" -runs=1 -timeout=25 -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" "$f" >"$OUT/logs/$h.replay.log" 2>&1; then
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
  [ $nFail -eq 0 ]
}

replay(){ each_harness replay_one; }

run_one(){
  local h=$1 secs=$2
  local corpus="$OUT/corpus/$h" findings="$OUT/findings/$h" log="$OUT/logs/$h.log"
  mkdir -p "$corpus" "$findings"
  [ -d "fuzz/corpus/$h" ] && find "fuzz/corpus/$h" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
  local before
  before=$(find "$findings" -type f | wc -l)
  echo "== $h: fuzzed for ${secs}s (corpus $corpus, findings $findings/, log $log)"
  local rc=0
  "$OUT/$h" "$corpus" -max_len="$MAX_LEN" -max_total_time="$secs" -timeout=25 \
    ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
    -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$log" 2>&1 || rc=$?
  local execs speed after
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  after=$(find "$findings" -type f | wc -l)
  if [ $rc -ne 0 ]; then
    echo "   FINDING (exit $rc): $(grep -E 'ERROR: |runtime error' "$log" | head -1)"
    grep -E '^ *#[0-9]+ 0x' "$log" | grep -v -E 'libFuzzer|fuzzer::|__sanitizer|__asan|__ubsan' | head -6 | sed 's/^/   /'
    grep -E 'Test unit written to' "$log" | sort -u | sed 's/^/   /'
  fi
  printf '   %s execs, %s exec/s, %s new finding(s), exit %s\n' \
    "${execs:-?}" "${speed:-?}" "$((after-before))" "$rc"
  [ $rc -eq 0 ]
}

run(){
  echo "== fuzzing each harness for $1s, $JOBS at a time"
  local rc=0
  each_harness run_one "$1" || rc=$?
  echo "== findings, if any, are under $OUT/findings/<harness>/"
  return $rc
}

case "${1:-}" in
  build)  build ;;
  replay) replay ;;
  run)    run "${2:-1200}" ;;
  *)      die "usage: fuzz/fuzz.sh build | replay | run SECONDS" ;;
esac
