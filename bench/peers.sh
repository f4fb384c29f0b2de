#!/usr/bin/env bash
# Build the peer of bench/ivf.py that is not on PyPI: sqlite-vec 0.1.10 with its IVF and
# DiskANN indexes, as a loadable extension, into bench/data/peers/sqlite-vec-0.1.10/vec0.so (git-ignored).
#
#   bash bench/peers.sh [SQLITE_VEC_REPO [REV]]   # REV defaults to v0.1.10-alpha.3
#
# SQLITE_VEC_REPO is a clone of github.com/asg017/sqlite-vec (a bare one will do); without
# it, a bare clone is made once in bench/data/peers/sqlite-vec.git. The
# source at REV is exported into bench/data/peers/sqlite-vec-REV/ and built with its own
# `make loadable`, adding -DSQLITE_VEC_EXPERIMENTAL_IVF_ENABLE=1: the IVF index is compiled
# out by default in 0.1.10 (DiskANN is in). It needs a C compiler, make, envsubst and the
# SQLite headers (Debian: build-essential, gettext-base, libsqlite3-dev). Nothing of
# sqlite-vec is kept in this repository.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/data/peers"
repo="${1:-$out/sqlite-vec.git}"
rev="${2:-v0.1.10-alpha.3}"
src="$out/sqlite-vec-$rev"

if [ -z "${1:-}" ] && [ ! -d "$repo" ]; then
    mkdir -p "$out"
    git clone --bare https://github.com/asg017/sqlite-vec "$repo" >&2
fi

if [ -d "$repo/.git" ]; then repo="$repo/.git"; fi
commit="$(git --git-dir="$repo" rev-parse "$rev^{commit}")"
mkdir -p "$out"
if [ ! -f "$src/.commit" ] || [ "$(cat "$src/.commit")" != "$commit" ]; then
    rm -rf "$src"
    mkdir -p "$src"
    git --git-dir="$repo" archive "$commit" | tar -x -C "$src"
    echo "$commit" > "$src/.commit"
fi

# sqlite-vec.h is generated from its template; the Makefile's rule reads the commit date
# of VERSION from git, which an exported tree does not have: write it here instead.
version="$(cat "$src/VERSION")"
VERSION="$version" DATE="$(git --git-dir="$repo" log -1 --format=%cI "$commit")" \
    SOURCE="$commit" VERSION_MAJOR="$(echo "$version" | cut -d. -f1)" \
    VERSION_MINOR="$(echo "$version" | cut -d. -f2)" \
    VERSION_PATCH="$(echo "$version" | cut -d. -f3 | cut -d- -f1)" \
    envsubst < "$src/sqlite-vec.h.tmpl" > "$src/sqlite-vec.h"

# The define rides on CC so that the Makefile keeps its own CFLAGS (-lm, its SIMD choice).
make -C "$src" loadable CC="${CC:-cc} -DSQLITE_VEC_EXPERIMENTAL_IVF_ENABLE=1" >&2
# Named vec0.so, so that SQLite finds its entry point (sqlite3_vec_init) from the file name.
mkdir -p "$out/sqlite-vec-0.1.10"
cp "$src/dist/vec0.so" "$out/sqlite-vec-0.1.10/vec0.so"
printf '%s\n' "$rev $commit" > "$out/sqlite-vec-0.1.10/VERSION"
echo "bench/data/peers/sqlite-vec-0.1.10/vec0.so ($rev, $commit)" >&2
