# VecSync: make demo · make test · make bench
#
# Each target first makes sure the system packages it needs are installed: as root on
# Debian it installs them with apt-get, anywhere else it says what to install.

SWIFT      ?= swift
SQLITE3    ?= sqlite3
EXTENSION  := .build/release/libvecsync.so
# Debian packages: the SQLite headers the C code and GRDB build against, the sqlite3 shell
# the demo and the shell tests run, the system BLAS (libblas-dev to link; OpenBLAS behind
# the libblas.so.3 alternative, whose sgemm answers batches of queries 1.6x faster than
# our tiled kernel on the reference BLAS, and whose sgemv serves CPUs without AVX2).
DEB_PACKAGES := libsqlite3-dev sqlite3 libblas-dev libopenblas0-pthread
BENCH_DEB_PACKAGES := python3-venv

.PHONY: all deps extension demo test bench clean

all: extension

deps:
	@./scripts/ensure-packages $(DEB_PACKAGES)

# The loadable extension, as the sqlite3 shell and Python load it. SwiftPM links every
# dynamic product with the Swift runtime's start-up object and libswiftCore, which the C
# extension never calls; a second link in its own build folder leaves them out, so the .so
# loads on machines without a Swift runtime. It replaces the first one in .build/release.
extension: deps
	$(SWIFT) build -c release --product vecsync
	$(SWIFT) build -c release --product vecsync --scratch-path .build/extension \
	  -Xswiftc -nostartfiles -Xswiftc -static-stdlib
	cp .build/extension/release/libvecsync.so $(EXTENSION)

demo: extension
	$(SWIFT) build -c release --product vecsync-cli
	@echo "== sql/demo.sql in the sqlite3 shell, with .load $(EXTENSION:.so=) =="
	$(SQLITE3) -batch -cmd ".load $(EXTENSION:.so=)" :memory: < sql/demo.sql
	@# Every statement of demo-errors.sql fails on purpose: the shell's exit status is 1.
	@$(SQLITE3) -batch -cmd ".load $(EXTENSION:.so=)" :memory: < sql/demo-errors.sql 2>&1 || true
	@echo
	@echo "== vecsync-cli demo: a message and photo library, searched and synced from Swift =="
	.build/release/vecsync-cli demo

test: extension
	VECSYNC_EXTENSION=$(CURDIR)/$(EXTENSION) $(SWIFT) test

bench: extension
	@./scripts/ensure-packages $(BENCH_DEB_PACKAGES)
	bash bench/setup.sh
	bench/.venv/bin/python bench/run.py --extension $(EXTENSION)
	$(SWIFT) build -c release --product vecsync-cli
	python3 bench/sync/run.py --build .build/release

clean:
	rm -rf .build
