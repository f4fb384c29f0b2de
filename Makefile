# VecSync: make demo · make test · make bench · make fuzz · make check-c
#
# Each target first makes sure the system packages it needs are installed: as root on
# Debian it installs them with apt-get, anywhere else it says what to install.

SWIFT      ?= swift
# The loadable extension is libvecsync.dylib on macOS, libvecsync.so elsewhere; off Debian
# (a Mac) the package steps skip themselves and `make test` runs the Mac subset below.
UNAME_S    := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
LIB_SUFFIX := dylib
else
LIB_SUFFIX := so
endif
EXTENSION  := .build/libvecsync.$(LIB_SUFFIX)
# The sqlite3 shell of the demo; on macOS one that loads extensions: Homebrew's when it is
# there (Apple's /usr/bin/sqlite3 cannot). SQLITE3=... chooses another.
ifeq ($(UNAME_S),Darwin)
SQLITE3    ?= $(firstword $(wildcard /opt/homebrew/opt/sqlite/bin/sqlite3 /usr/local/opt/sqlite/bin/sqlite3) sqlite3)
else
SQLITE3    ?= sqlite3
endif
# Debian packages: the SQLite headers the C code and GRDB build against, the sqlite3 shell
# the demo and the shell tests run, the system BLAS (libblas-dev to link; OpenBLAS behind
# the libblas.so.3 alternative, whose sgemm answers batches of queries 1.6x faster than
# our tiled kernel on the reference BLAS, and whose sgemv serves CPUs without AVX2).
DEB_PACKAGES := libsqlite3-dev sqlite3 libblas-dev libopenblas0-pthread zlib1g-dev
# g++ compiles hnswlib at pip install (bench/requirements.txt: it has no wheel for Linux).
BENCH_DEB_PACKAGES := python3-venv g++
# bench-ivf builds sqlite-vec 0.1.10 from source (bench/peers.sh): make, a C compiler,
# envsubst for its header template and the SQLite headers.
IVF_DEB_PACKAGES := $(BENCH_DEB_PACKAGES) make gcc gettext-base libsqlite3-dev git
# The fuzz harnesses link the C sources with the system SQLite and BLAS; check-c also
# reads aarch64 glibc headers from Debian's cross package (no cross compiler needed).
FUZZ_DEB_PACKAGES := libsqlite3-dev libblas-dev
CHECK_C_DEB_PACKAGES := libsqlite3-dev libc6-dev-arm64-cross

# clang from PATH: the fuzz targets need its libFuzzer runtime (the Swift toolchain's
# clang has it). FUZZ_SECONDS: how long make fuzz runs each harness; FUZZ_SMOKE_SECONDS:
# the same for make fuzz-smoke.
CLANG              ?= clang
FUZZ_SECONDS       ?= 1200
FUZZ_SMOKE_SECONDS ?= 12
# The smoke run's libFuzzer seed: fixed, so that make test fails or passes the same way on
# the same code; the long runs of make fuzz draw a new one each time.
FUZZ_SMOKE_SEED    ?= 1
FUZZ               := CC=$(CLANG) $(CURDIR)/fuzz/fuzz.sh
C_SOURCES          := $(wildcard CSources/vecsync/*.c)
CHECK_C_FLAGS      := -Wall -Wextra -Werror -fsyntax-only -ICSources/vecsync -ICSources/vecsync/include
# Debian's libc6-dev-arm64-cross puts aarch64 glibc headers here; sqlite3ext.h comes from
# /usr/include after them.
AARCH64_SYSROOT    ?= /usr/aarch64-linux-gnu

.PHONY: all deps extension demo soak check check-sqlcipher-shape test test-mac test-apple-sqlite check-darwin test-example test-all test-server server test-sanitized sanitized-extension bench bench-quantized bench-quick bench-ivf bench-ivf-scale clean fuzz-build fuzz fuzz-smoke check-c check-maps test-arm64 test-arm64-shell test-python test-wheel test-wheel-arm64 check-docs test-python-clients

all: extension

deps:
	@./scripts/ensure-packages $(DEB_PACKAGES)

# The loadable extension, as the sqlite3 shell and Python load it. SwiftPM links every
# dynamic product with the Swift runtime's start-up object and libswiftCore, which the C
# extension never calls; this build, in its own folder, leaves them out, so the .so loads on
# machines without a Swift runtime (a plain `swift build -c release --product vecsync` writes
# .build/release/libvecsync.so, which needs the runtime beside it).
# On macOS the Swift runtime is part of the OS: the plain build serves.
extension: deps
ifeq ($(UNAME_S),Darwin)
	$(SWIFT) build -c release --product vecsync --scratch-path .build/extension
else
	$(SWIFT) build -c release --product vecsync --scratch-path .build/extension \
	  -Xswiftc -nostartfiles -Xswiftc -static-stdlib
endif
	@# A new file renamed into place: a process that has the old one loaded keeps it (copying
	@# over it in place would change the pages it runs from, and kill it with SIGBUS).
	cp .build/extension/release/libvecsync.$(LIB_SUFFIX) $(EXTENSION).new
	mv -f $(EXTENSION).new $(EXTENSION)

demo: extension
	$(SWIFT) build -c release --product vecsync-cli
	@echo "== sql/demo.sql in the sqlite3 shell, with .load $(EXTENSION:.$(LIB_SUFFIX)=) =="
	$(SQLITE3) -batch -cmd ".load $(EXTENSION:.$(LIB_SUFFIX)=)" :memory: < sql/demo.sql
	@# Every statement of demo-errors.sql after its table fails on purpose: the exit status is 1.
	@$(SQLITE3) -batch -cmd ".load $(EXTENSION:.$(LIB_SUFFIX)=)" :memory: < sql/demo-errors.sql 2>&1 || true
	@echo
	@echo "== vecsync-cli demo: a message and photo library, searched and synced from Swift =="
	.build/release/vecsync-cli demo

# Every test of the package: the C checked (check-c), for Apple's toolchain too
# (check-darwin), and the maps (check-maps); the C fuzzed briefly (fuzz-smoke: every seed
# and crash reproducer replayed, then FUZZ_SMOKE_SECONDS a harness); the core suites with
# their shell cases loading an ASan/UBSan build (test-sanitized), the other Swift suites
# once, then the examples of README.md and docs/ (check-docs); every Swift suite,
# vecsync-cli demo and the example app again under Apple's SQLite behaviour
# (test-apple-sqlite); the example app as is (test-example); the Python package
# (test-python), its manylinux wheel installed where no compiler is (test-wheel), real
# clients of sqlite-vec run with it in sqlite-vec's place (test-python-clients) and the
# aarch64 build under qemu (test-arm64).
# The sync server is its own package with its own command (test-server); test-all runs
# both, as CI does. On macOS, `make test` is test-mac.
ifeq ($(UNAME_S),Darwin)
test: test-mac
else
test: extension check-c check-darwin check-maps fuzz-smoke test-sanitized
	VECSYNC_EXTENSION=$(CURDIR)/$(EXTENSION) $(SWIFT) test --skip VecSyncCoreTests
	$(MAKE) check-docs
	$(MAKE) test-apple-sqlite test-example test-python test-wheel test-python-clients test-arm64
endif

# What a Mac runs (no apt, no root, no LD_PRELOAD, no qemu): every Swift suite on the
# system SQLite, which is Apple's, so the per-connection installation is what they test;
# the shell cases need a sqlite3 that loads extensions (Homebrew's: SQLITE3=... or on PATH
# before /usr/bin; they skip, saying so, otherwise); the example app and the Python package.
test-mac: extension check-maps
	VECSYNC_EXTENSION=$(CURDIR)/$(EXTENSION) $(SWIFT) test
	$(MAKE) test-example test-python

# Apple's SQLite simulated over Debian's: a preloaded shim (scripts/apple-sqlite/) makes
# sqlite3_auto_extension() return SQLITE_MISUSE and register nothing, and extension loading
# fail. Every Swift suite runs again in-process under it (their sqlite3 shell children stand
# for Homebrew's and run without it), then vecsync-cli demo and the example app.
APPLE_SQLITE_SHIM := .build/apple-sqlite/libapplesqlite.so
APPLE_SQLITE_ENV   = LD_PRELOAD=$(CURDIR)/$(APPLE_SQLITE_SHIM) VECSYNC_APPLE_SQLITE=1

$(APPLE_SQLITE_SHIM): scripts/apple-sqlite/apple_sqlite_shim.c
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -o $@ $<

test-apple-sqlite: extension $(APPLE_SQLITE_SHIM)
	$(SWIFT) build --build-tests
	$(APPLE_SQLITE_ENV) VECSYNC_EXTENSION=$(CURDIR)/$(EXTENSION) $(SWIFT) test --skip-build
	$(APPLE_SQLITE_ENV) .build/debug/vecsync-cli demo > .build/apple-sqlite/demo.log
	@tail -n 3 .build/apple-sqlite/demo.log
	$(MAKE) test-example EXAMPLE_ENV='$(APPLE_SQLITE_ENV)'

# Examples/PhotoSearch, an app package that depends on VecSync by path: built and run.
EXAMPLE_ENV ?=
test-example: deps
	$(SWIFT) build --package-path Examples/PhotoSearch
	$(EXAMPLE_ENV) Examples/PhotoSearch/.build/debug/PhotoSearch

# The C as Apple's toolchain builds it (arm64 and x86_64 macOS, arm64 iOS; host and loadable
# builds; -Werror; only SQLite, CBLAS and libSystem symbols undefined) and the SQLite 3.39
# floor (scripts/check-darwin.py), with zig's clang and macOS headers from PyPI
# (scripts/requirements-zig.txt) in a venv of its own.
ZIG_VENV := .build/venv-zig

$(ZIG_VENV)/bin/ziglang-installed: scripts/requirements-zig.txt
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES) libsqlite3-dev
	python3 -m venv $(ZIG_VENV)
	$(ZIG_VENV)/bin/pip install -q -r scripts/requirements-zig.txt
	touch $@

check-darwin: $(ZIG_VENV)/bin/ziglang-installed
	python3 scripts/check-darwin.py --zig "$(ZIG_VENV)/bin/python -m ziglang"

# VecSync and vecsync-cli built against GRDB set up as for SQLCipher (its GRDBSQLite target
# deleted, the SQLite module under another name): about 5 minutes, a full build of the
# package's dependencies, so not in make test, whose check-maps refuses any mention of
# GRDBSQLite in Sources/ and Package.swift (scripts/check-sqlcipher-shape.sh).
check-sqlcipher-shape: deps
	SWIFT=$(SWIFT) ./scripts/check-sqlcipher-shape.sh

# Open-ended exploration, run for a while before submitting (not in CI): the randomised
# suites draw new seeds (VECSYNC_EXPLORE=1) and the convergence property test tries
# SOAK_RUNS histories. A seed that fails is printed with the command that replays it; it
# becomes a fixed case (ConvergencePropertyTests' historiesThatOnceDivergedConverge), so
# that make test replays it on every run.
SOAK_RUNS ?= 400
soak: extension
	VECSYNC_EXPLORE=1 VECSYNC_PROPERTY_RUNS=$(SOAK_RUNS) VECSYNC_EXTENSION=$(CURDIR)/$(EXTENSION) \
	  $(SWIFT) test --filter 'Convergence|Vec0KNNTests|Vec0MutationTests|ExtensionRoundTripPropertyTests|VectorTopK'

test-all: test
	$(MAKE) test-server

# The sync server (its own package, Server/) on both back ends: its Swift suites, then the
# raw-socket fuzzer and schemathesis over docs/openapi.yaml against the server on SQLite and
# on PostgreSQL (scripts/test-server.sh). schemathesis, at the versions of
# scripts/requirements-schemathesis.txt, lives in a venv of its own under .build/.
# A throw-away PostgreSQL (installed from Debian's postgresql package when missing) runs on
# a loopback port for the length of the tests and is stopped afterwards, also when they
# fail. The CLI test and the client's memory check run the root package's vecsync-cli,
# built here first. Last, the examples of docs/ that need a running vecsync-server
# (scripts/check-docs.py --server).
# The debug build shares the root package's .build (--scratch-path): SwiftNIO, BoringSSL,
# GRDB and the library, which both packages use, are compiled once.
SERVER := $(SWIFT) build --package-path Server
SCHEMATHESIS_VENV := .build/venv-schemathesis
test-server: deps $(SCHEMATHESIS_VENV)/bin/schemathesis
	$(SWIFT) build --product vecsync-cli
	./scripts/postgres-test-server.sh env VECSYNC_CLI=$(CURDIR)/.build/debug/vecsync-cli SWIFT=$(SWIFT) \
	  SCHEMATHESIS=$(CURDIR)/$(SCHEMATHESIS_VENV)/bin/schemathesis ./scripts/test-server.sh
	python3 scripts/check-docs.py --run --server .build/debug/vecsync-server \
	  --cli .build/debug/vecsync-cli --sqlite3 $(SQLITE3)

$(SCHEMATHESIS_VENV)/bin/schemathesis: scripts/requirements-schemathesis.txt
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES)
	python3 -m venv $(SCHEMATHESIS_VENV)
	$(SCHEMATHESIS_VENV)/bin/pip install -q -r scripts/requirements-schemathesis.txt
	touch $@

# The server for production: Server/.build/release/vecsync-server.
server: deps
	$(SERVER) -c release --product vecsync-server

# The extension built with AddressSanitizer and UndefinedBehaviorSanitizer (any report
# aborts), loaded by the real sqlite3 shell with the sanitizer runtime preloaded: the
# core suites' shell cases run against it (their in-process cases run the normal build).
SANITIZED_EXTENSION := .build/sanitize/libvecsync.so
SANITIZER_RUNTIME    = $(shell $(CLANG) -print-file-name=libclang_rt.asan-$(shell uname -m).so)

sanitized-extension: deps
	@mkdir -p $(dir $(SANITIZED_EXTENSION))
	$(CLANG) -std=c11 -g -O1 -fPIC -shared -fno-omit-frame-pointer \
	  -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -ICSources/vecsync -ICSources/vecsync/include $(C_SOURCES) \
	  -o $(SANITIZED_EXTENSION) -lblas -lm -lpthread

test-sanitized: extension sanitized-extension
	VECSYNC_EXTENSION=$(CURDIR)/$(SANITIZED_EXTENSION) VECSYNC_SHELL_PRELOAD=$(SANITIZER_RUNTIME) \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(SWIFT) test --filter VecSyncCoreTests

# The quantized-scan and 1M-row benchmarks' extra rows: our quantized tables at oversample
# values besides their defaults (int8 8, bit 16). --pragma-rows adds rows with a PRAGMA on
# the connection (e.g. mmap_size=2147483648).
QUANTIZED_ARGS ?= --oversample 8,16
SCALE_ARGS     ?= --oversample 8
# A new process's first query on 100,000 x 384 in a file, page cache dropped and cached,
# beside sqlite-vec's and sqlite-vector's: the median of 5 processes each (bench/cold-start/).
COLD_START_ARGS ?= --n 100000 --systems vecsync-vec0,sqlite-vec,sqliteai-vector --oversample '' \
  --repeat 5 --out-dir bench/cold-start

bench: extension
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES)
	bash bench/setup.sh
	bench/.venv/bin/python bench/run.py --extension $(EXTENSION)
	cd bench && .venv/bin/python concurrent.py --extension ../$(EXTENSION)
	bench/.venv/bin/python bench/quantized.py --extension $(EXTENSION) $(QUANTIZED_ARGS)
	bench/.venv/bin/python bench/scale.py --extension $(EXTENSION) $(SCALE_ARGS)
	bench/.venv/bin/python bench/scale.py --extension $(EXTENSION) $(COLD_START_ARGS)
	$(MAKE) bench-ivf
	$(SWIFT) build -c release --product vecsync-cli
	python3 bench/sync/run.py --build .build/release
	python3 bench/sync/progress.py --build .build/release
	/usr/bin/python3 bench/sync/choir.py --build .build/release --extension $(EXTENSION)

# Only the quantized-scan benchmark (bench/QUANTIZED.md: int8 and bit re-scoring beside
# faiss, sqlite-vec and sqlite-vector, on synthetic clusters and real sentence embeddings)
# and the 1,000,000 x 384 one (bench/SCALE.md: import, cold and warm queries).
bench-quantized: extension
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES)
	bash bench/setup.sh
	bench/.venv/bin/python bench/quantized.py --extension $(EXTENSION) $(QUANTIZED_ARGS)
	bench/.venv/bin/python bench/scale.py --extension $(EXTENSION) $(SCALE_ARGS)

# The same two, small (a smoke test of the wiring, under two minutes once bench/.venv
# exists): results go to bench/data/quick/, the published ones stay.
bench-quick: extension
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES)
	bash bench/setup.sh
	bench/.venv/bin/python bench/quantized.py --quick --extension $(EXTENSION) $(QUANTIZED_ARGS)
	bench/.venv/bin/python bench/scale.py --quick --extension $(EXTENSION) $(SCALE_ARGS)

# Our ivf index beside the approximate indexes people would use instead (bench/IVF.md):
# faiss IVF-Flat, IVF-SQ8 and HNSW, hnswlib, usearch, vectorlite, sqlite-vec 0.1.10's ivf
# and diskann, libSQL's DiskANN; clustered 100,000 x 768 and the MiniLM embeddings. The
# slow peers (sqlite-vec's indexes, libSQL's DiskANN) take many minutes each at 100,000
# rows. sqlite-vec 0.1.10 is built from a clone of its repository: SQLITE_VEC_REPO names
# one, or bench/peers.sh clones it into bench/data/peers/. IVF_ARGS adds options, e.g.
# IVF_ARGS='--systems libsql-diskann --merge' to run one peer again into the same JSON.
IVF_ARGS ?=
bench-ivf: extension
	@./scripts/ensure-packages $(IVF_DEB_PACKAGES)
	bash bench/setup.sh
	bash bench/peers.sh $(SQLITE_VEC_REPO)
	bench/.venv/bin/python bench/ivf.py --extension $(EXTENSION) --json bench/ivf.json $(IVF_ARGS)

# Our ivf index alone at 10,000,000 x 384 (bench/ivf_scale.py; its section of bench/IVF.md):
# the data memory-mapped (15 GB on disk), the table built under a memory budget, then a new
# process's first answer, recall and latency, and resident memory. About 40 minutes, and
# 35 GB of disk under bench/data/ while it runs. IVF_SCALE_ARGS='--rows 1000000' for a
# smaller one.
IVF_SCALE_ARGS ?=
bench-ivf-scale: extension
	bash bench/setup.sh
	bench/.venv/bin/python bench/ivf_scale.py --extension $(EXTENSION) --json bench/ivf-10m.json \
	  $(IVF_SCALE_ARGS)

# The libFuzzer harnesses fuzz/fuzz_*.c, each compiled with all of CSources/vecsync/*.c
# under ASan and UBSan, into .build/fuzz/.
fuzz-build:
	@./scripts/ensure-packages $(FUZZ_DEB_PACKAGES)
	$(FUZZ) build

# Fuzz each harness for FUZZ_SECONDS, as many at once as there are CPUs (FUZZ_JOBS=N to
# choose), from a copy of the committed seeds in .build/fuzz/corpus/; prints executions
# and findings per harness and fails if any harness found a crash, leaving it in
# .build/fuzz/findings/<harness>/.
fuzz: fuzz-build
	$(FUZZ) run $(FUZZ_SECONDS)

# Replay every seed (fuzz/corpus/) and crash reproducer (fuzz/regressions/) once, then
# fuzz each harness for FUZZ_SMOKE_SECONDS; fails on any finding.
fuzz-smoke: fuzz-build
	$(FUZZ) replay
	FUZZ_SEED=$(FUZZ_SMOKE_SEED) $(FUZZ) run $(FUZZ_SMOKE_SECONDS)

# Warnings are errors, on the host and for aarch64 (where the x86 SIMD code must not
# compile): a syntax-only pass over every C file, nothing is built.
check-c:
	@./scripts/ensure-packages $(CHECK_C_DEB_PACKAGES)
	@status=0; for f in $(C_SOURCES); do \
	  $(CLANG) -std=c11 $(CHECK_C_FLAGS) $$f || { echo "check-c: $$f fails on the host"; status=1; }; \
	  $(CLANG) --target=aarch64-linux-gnu --sysroot=$(AARCH64_SYSROOT) -idirafter /usr/include \
	    $(CHECK_C_FLAGS) $$f || { echo "check-c: $$f fails for aarch64"; status=1; }; \
	done; \
	if [ $$status = 0 ]; then echo "check-c: $(words $(C_SOURCES)) files clean on the host and for aarch64"; fi; \
	exit $$status

# The smoke tier, before each commit (about a minute on two cores once .build/ is warm;
# the first build of a fresh clone takes about 5 minutes more): the maps, the C under
# every warning on the host and for aarch64, the docs' blocks matched to what runs them,
# the Swift build with its tests, then in-process (no sqlite3 shell, no loadable
# extension: those cases say they are skipped) the SQL cases of Tests/SQLCases/ and one
# quick suite or more of each test target. make test is the whole run.
CHECK_SUITES := SQLCaseFilesTests|SQLCaseFileTests|ExtensionInstallTests|Vec0KNNTests|MergeTests|CaptureTests|KeyTests|ChangeSetFormatTests|CLICommandTests|PhotoStoreTests
check: check-maps check-c
	python3 scripts/check-docs.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter '$(CHECK_SUITES)'

# The README and the pages of docs/ (scripts/check-docs.py): every swift block is a region of
# Tests/DocExamplesTests (compiled and run by the Swift tests), every sh and console block runs
# here with the built extension and vecsync-cli (a console block's output compared line by
# line), every sql block says what it prints (SQLCaseFilesTests runs it), the README stays
# within 250 lines and links every page. The python blocks run in test-python.
check-docs: extension
	$(SWIFT) build --product vecsync-cli
	python3 scripts/check-docs.py --run --cli .build/debug/vecsync-cli --extension $(EXTENSION) --sqlite3 $(SQLITE3)

# docs/architecture.md's Layout, CONTRIBUTING's "Where does X happen?" table and vecsync_int.h's file map
# name only files and symbols that exist; the C files call each other in no cycle, each
# only files the file map lists before it (scripts/check-c-calls.py).
check-maps:
	python3 scripts/check-maps.py
	python3 scripts/check-c-calls.py

# The extension built for aarch64 with clang, run under qemu-aarch64 in an arm64 userland
# unpacked from Debian's packages into .build/arm64/root (nothing of the host replaced), and
# compared with the x86-64 build: the sql/ scripts and a seeded workload, rowids exact,
# distances to 1e-5 relative, codecs bit for bit (scripts/test-arm64.sh).
ARM64_DEB_PACKAGES := qemu-user gcc-aarch64-linux-gnu libsqlite3-dev sqlite3 libblas-dev python3

test-arm64:
	@./scripts/ensure-packages $(ARM64_DEB_PACKAGES)
	CLANG=$(CLANG) ./scripts/test-arm64.sh

# The shell cases of these Swift suites (their expected rows and errors) with the aarch64
# sqlite3 shell and build under qemu-aarch64; `swift build --build-tests` first (nothing
# to do after make test's Swift tests).
ARM64_SWIFT_SUITES ?= SQLCaseFilesTests|SQLiteVecConformanceTests|Vec0ShellTests|VectorTopKShellTests

test-arm64-shell: deps
	@./scripts/ensure-packages $(ARM64_DEB_PACKAGES)
	$(SWIFT) build --build-tests
	CLANG=$(CLANG) SWIFT=$(SWIFT) ./scripts/test-arm64.sh --swift-suites '$(ARM64_SWIFT_SUITES)'

# The Python package (python/): a wheel built with pip from the C sources (the platform C
# compiler, the system BLAS, no Swift), installed in a fresh venv with pytest and apsw,
# python/tests run against it, loaded through sqlite3 and apsw (scripts/test-python.sh).
PYTHON_DEB_PACKAGES := python3 python3-venv gcc libsqlite3-dev libblas-dev

test-python:
	@./scripts/ensure-packages $(PYTHON_DEB_PACKAGES)
	./scripts/test-python.sh

# The wheel a user without a compiler installs: sdist, then a manylinux wheel from it (zig's
# clang for glibc 2.17, from $(ZIG_VENV); the reference BLAS bundled by auditwheel), checked
# (tag, LICENSE, no build path), installed and tested in a mount namespace where compilers,
# BLAS libraries, SQLite headers and the repository are hidden (scripts/test-wheel.sh).
# gcc gives libgcc's CPU detection, binutils readelf and strings, util-linux unshare.
WHEEL_DEB_PACKAGES := python3 python3-venv gcc libsqlite3-dev libblas-dev binutils util-linux

test-wheel: $(ZIG_VENV)/bin/ziglang-installed
	@./scripts/ensure-packages $(WHEEL_DEB_PACKAGES)
	ZIG="$(CURDIR)/$(ZIG_VENV)/bin/python -m ziglang" ./scripts/test-wheel.sh

# The same for aarch64, from this x86-64 machine: the wheel cross-built by zig against
# Debian's arm64 libblas3, repaired by auditwheel, installed for Debian's arm64 python3.11
# (unpacked under .build/arm64-wheel/, no BLAS and no compiler beside it) and tested by it
# under qemu-aarch64. About 2 minutes (3.5 the first time), one of them pytest under qemu:
# not in make test, whose test-arm64 already runs the aarch64 build under qemu.
test-wheel-arm64: $(ZIG_VENV)/bin/ziglang-installed
	@./scripts/ensure-packages $(WHEEL_DEB_PACKAGES) qemu-user
	ZIG="$(CURDIR)/$(ZIG_VENV)/bin/python -m ziglang" ./scripts/test-wheel.sh --arch aarch64

# Real clients of sqlite-vec from PyPI (python/tests/clients/requirements.txt: LangChain's
# SQLiteVec, sqlite-utils with its sqlite-vec plugin, sqlite-vec-client and its own test
# suite), each run on sqlite-vec 0.1.9 and with the wheel's VecSync in its place, their
# rows, ids and distances compared (scripts/test-python-clients.sh).
test-python-clients:
	@./scripts/ensure-packages $(PYTHON_DEB_PACKAGES)
	./scripts/test-python-clients.sh

clean:
	rm -rf .build Server/.build
