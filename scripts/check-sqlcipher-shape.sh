#!/usr/bin/env bash
# check-sqlcipher-shape.sh: VecSync builds against GRDB set up as its SQLCipher instructions
# say, without GRDB's GRDBSQLite target (make check-sqlcipher-shape).
#
#   scripts/check-sqlcipher-shape.sh [work folder, default .build/sqlcipher-shape]
#
# GRDB's README sets it up for SQLCipher (or a custom SQLite build) by deleting its
# GRDBSQLite product, target and dependency and importing another SQLite module instead. An
# app so set up must still build VecSync: no module of ours may name GRDBSQLite, and the C
# must reach SQLite through the symbols the app links. This script makes that GRDB from the
# release VecSync requires (its Package.swift edited as those instructions say, the SQLite
# module renamed SQLCipher, over the system's libsqlite3 since SQLCipher itself is not
# available here) and builds VecSync's library and vecsync-cli against it, from a copy of
# the package whose GRDB dependency is that folder.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=${1:-.build/sqlcipher-shape}
swift=${SWIFT:-swift}
version=$(sed -n 's|.*github.com/groue/GRDB.swift", from: "\([0-9.]*\)".*|\1|p' Package.swift)
[ -n "$version" ] || { echo "check-sqlcipher-shape: no GRDB version in Package.swift" >&2; exit 1; }
rm -rf "$work/GRDB.swift" "$work/VecSync"
mkdir -p "$work"
git clone -q https://github.com/groue/GRDB.swift "$work/GRDB.swift"
git -C "$work/GRDB.swift" checkout -q "$version"

python3 - "$work/GRDB.swift" <<'PY'
import os, re, shutil, sys
root = sys.argv[1]
path = os.path.join(root, "Package.swift")
text = open(path).read()
def replace(old, new):
    global text
    if old not in text:
        sys.exit("check-sqlcipher-shape: GRDB's Package.swift has no %r: its layout changed" % old)
    text = text.replace(old, new)
# What GRDB's SQLCipher instructions delete and uncomment; the SQLCipher package becomes a
# system-library target of that name over the system's SQLite.
replace('.library(name: "GRDBSQLite", targets: ["GRDBSQLite"]),', '')
replace('name: "GRDBSQLite",\n            providers', 'name: "SQLCipher",\n            path: "Sources/SQLCipher",\n            providers')
replace('.target(name: "GRDBSQLite"),', '.target(name: "SQLCipher"),\n                .target(name: "GRDBSQLCipher"),')
replace('''        //.target(
        //    name: "GRDBSQLCipher",
        //    dependencies: [.product(name: "SQLCipher", package: "SQLCipher.swift")]
        //),''', '''        .target(
            name: "GRDBSQLCipher",
            dependencies: [.target(name: "SQLCipher")]
        ),''')
replace('let package = Package(', 'swiftSettings.append(.define("SQLCipher"))\n\nlet package = Package(')
open(path, "w").write(text)
src = os.path.join(root, "Sources", "GRDBSQLite")
dst = os.path.join(root, "Sources", "SQLCipher")
shutil.copytree(src, dst)
shutil.rmtree(src)
# GRDB's SQLCipher shim includes SQLCipher's header; here the SQLite under that name is the
# system's.
shim = os.path.join(root, "Sources", "GRDBSQLCipher", "include", "SQLCipher_config.h")
header = open(shim).read()
if "<SQLCipher/sqlite3.h>" not in header:
    sys.exit("check-sqlcipher-shape: GRDB's SQLCipher shim changed")
open(shim, "w").write(header.replace("<SQLCipher/sqlite3.h>", "<sqlite3.h>"))
modulemap = os.path.join(dst, "module.modulemap")
declaration = open(modulemap).read()
open(modulemap, "w").write(declaration.replace("module GRDBSQLite", "module SQLCipher"))
PY

mkdir -p "$work/VecSync"
cp -R Package.swift Sources CSources Tests "$work/VecSync/"
python3 - "$work/VecSync/Package.swift" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
text, n = re.subn(r'\.package\(url: "https://github.com/groue/GRDB.swift", from: "[0-9.]+"\)',
                  '.package(name: "GRDB.swift", path: "../GRDB.swift")', text)
if n != 1:
    sys.exit("check-sqlcipher-shape: cannot point VecSync's GRDB dependency at the edited GRDB")
open(path, "w").write(text)
PY
if grep -rn "GRDBSQLite" "$work/VecSync/Sources" "$work/VecSync/Package.swift" | grep -v "^[^:]*:[0-9]*:\s*//"; then
  echo "check-sqlcipher-shape: the lines above name GRDBSQLite" >&2
  exit 1
fi
"$swift" build --package-path "$work/VecSync" --product vecsync-cli
echo "check-sqlcipher-shape: VecSync and vecsync-cli build against GRDB $version without GRDBSQLite"
