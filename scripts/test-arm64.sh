#!/usr/bin/env bash
# test-arm64.sh: the extension built for aarch64 and run under qemu-aarch64, against the
# x86-64 build of the same sources (make test-arm64).
#
#   scripts/test-arm64.sh [--seed N]        # arguments go to scripts/arm64_differential.py
#   scripts/test-arm64.sh --swift-suites 'Vec0ShellTests|SQLCaseFilesTests'
#
# 1. An aarch64 userland from Debian's arm64 packages (libc6, sqlite3 and its libraries,
#    the reference BLAS and OpenBLAS), downloaded once with apt-get through a private
#    configuration (its own lists, cache and empty status: the host's dpkg architectures
#    and packages are left as they are) and unpacked with dpkg -x into .build/arm64/root.
# 2. Both builds with clang, the same flags (the Swift package's C compiler, so the
#    sources' own pragmas are what is tested): .build/arm64/aarch64/libvecsync.so
#    (--target=aarch64-linux-gnu, linked against the arm64 libblas.so.3) and
#    .build/arm64/x86_64/libvecsync.so, in parallel.
# 3. scripts/arm64_differential.py: the sql/ scripts and a seeded workload in both shells,
#    the aarch64 one under qemu-aarch64 with OpenBLAS (ARM64_BLAS=blas for the reference
#    BLAS); rows and rowids exact, distances to 1e-5 relative, codecs bit for bit.
#    Or, with --swift-suites REGEX, instead: those Swift suites' shell cases, their expected
#    rows and errors, with the aarch64 shell and build (SQLITE3 and VECSYNC_EXTENSION, read
#    by Tests/VecSyncCoreTests/ExtensionShell.swift) through `swift test --skip-build`, so
#    the test build must exist (make test-arm64-shell builds it first). Their in-process
#    cases run too, on the host.
#
# Host packages (installed by make test-arm64 when root): qemu-user, the cross binutils
# and crt files (gcc-aarch64-linux-gnu), libsqlite3-dev for sqlite3ext.h.
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG=${CLANG:-clang}
ARM64_BLAS=${ARM64_BLAS:-openblas-pthread}
OUT=.build/arm64
ROOT=$OUT/root
APT=$OUT/apt
# What the aarch64 sqlite3 shell and the extension need at run time.
ARM64_PACKAGES="libc6 libgcc-s1 libsqlite3-0 sqlite3 libreadline8 libtinfo6 zlib1g
  libblas3 libopenblas0-pthread libgfortran5"
CFLAGS="-std=c11 -O2 -g0 -fPIC -shared -Wall -Wextra -Werror -ICSources/vecsync -ICSources/vecsync/include"
start=$(date +%s)
swift_suites=""
if [ "${1:-}" = --swift-suites ]; then swift_suites=${2:?--swift-suites takes a regex}; shift 2; fi

fetch_userland() {
  [ -x "$ROOT/usr/bin/sqlite3" ] && [ -e "$ROOT/usr/lib/aarch64-linux-gnu/blas/libblas.so.3" ] && return 0
  echo "== Debian arm64 packages into $ROOT (once)"
  mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/debs"
  : > "$APT/status"
  local opts=(-o APT::Architecture=arm64 -o "APT::Architectures::=arm64"
              -o "Dir::State::Lists=$PWD/$APT/lists" -o "Dir::State::status=$PWD/$APT/status"
              -o "Dir::Cache=$PWD/$APT/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -qq update
  (cd "$APT/debs" && apt-get "${opts[@]}" -qq download $ARM64_PACKAGES)
  rm -rf "$ROOT" && mkdir -p "$ROOT"
  for deb in "$APT"/debs/*.deb; do dpkg -x "$deb" "$ROOT"; done
}

build() {   # build ARCH: .build/arm64/ARCH/libvecsync.so
  local arch=$1 dir=$OUT/$1
  mkdir -p "$dir"
  if [ "$arch" = aarch64 ]; then
    # sqlite3ext.h is the same on every architecture: the host's, after the cross headers.
    $CLANG --target=aarch64-linux-gnu $CFLAGS -idirafter /usr/include CSources/vecsync/*.c \
      -o "$dir/libvecsync.so" "$ROOT/usr/lib/aarch64-linux-gnu/blas/libblas.so.3" -lm -lpthread
  else
    $CLANG $CFLAGS CSources/vecsync/*.c -o "$dir/libvecsync.so" -lblas -lm -lpthread
  fi
}

fetch_userland
if [ -n "$swift_suites" ]; then
  echo "== clang build: aarch64"
  build aarch64
else
  echo "== clang builds: aarch64 and x86-64"
  build aarch64 & arm_pid=$!
  build x86_64 & x86_pid=$!
  wait $arm_pid
  wait $x86_pid
fi
echo "   built in $(( $(date +%s) - start )) s"

arm_shell="qemu-aarch64 -L $ROOT -E LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu/$ARM64_BLAS $ROOT/usr/bin/sqlite3"
echo "== aarch64 build under qemu-aarch64 ($ARM64_BLAS)"
$arm_shell -batch -cmd ".load $OUT/aarch64/libvecsync" :memory: "select vecsync_debug();" | sed 's/^/   /'
if [ -n "$swift_suites" ]; then
  # One command for the tests to run as their sqlite3: the aarch64 shell under qemu.
  printf '#!/bin/sh\nexec %s "$@"\n' "qemu-aarch64 -L $PWD/$ROOT -E LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu/$ARM64_BLAS $PWD/$ROOT/usr/bin/sqlite3" \
    > "$OUT/sqlite3-aarch64"
  chmod +x "$OUT/sqlite3-aarch64"
  echo "== shell cases of $swift_suites with the aarch64 shell and build"
  SQLITE3="$PWD/$OUT/sqlite3-aarch64" VECSYNC_EXTENSION="$PWD/$OUT/aarch64/libvecsync.so" \
    ${SWIFT:-swift} test --skip-build --filter "$swift_suites"
else
  echo "== against x86-64"
  python3 scripts/arm64_differential.py --host-shell "${SQLITE3:-sqlite3}" \
    --host-ext "$OUT/x86_64/libvecsync" --arm-shell "$arm_shell" --arm-ext "$OUT/aarch64/libvecsync" "$@"
fi
echo "test-arm64: $(( $(date +%s) - start )) s"
