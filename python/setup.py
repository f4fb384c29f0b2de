"""Builds VecSync's SQLite extension for the Python package, with the platform C compiler.

    pip install ./python          # from the repository
    pip wheel ./python            # a wheel: vecsync/libvecsync.so inside, py3-none-<platform>

The C sources are the repository's own (../CSources/vecsync), read where they are: nothing
is copied into python/. An sdist (python -m build --sdist) carries a copy of them in csrc/,
made when the sdist is assembled, so it builds away from the repository; it carries the
tests too (tests/, with a copy of the repository's Tests/SQLCases in tests/SQLCases), so
`pip install` of it and `pytest tests` in it run away from the repository.

The extension is one shared library compiled from every .c file, as the Swift package
builds it, with -ffp-contract=off (GCC ignores the sources' FP_CONTRACT pragma) and linked
against the system BLAS (-lblas -lm -lpthread on Linux: Debian's libblas-dev; Accelerate on
Apple platforms). It needs SQLite's sqlite3ext.h (Debian: libsqlite3-dev). It links no
Python and no libsqlite3: it reaches SQLite through the routines its entry point is given,
so one wheel serves every Python 3 of the platform. It carries no debug information (-g0),
so no path of the machine that built it.

CC, CFLAGS, LDSHARED and LDFLAGS choose another compiler and flags, as for any setuptools
build: scripts/test-wheel.sh builds the manylinux wheel so, with zig's clang for an old
glibc, then bundles the BLAS with auditwheel.
"""
import os
import re
import shutil
import sys

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_SOURCES = os.path.join(HERE, "..", "CSources", "vecsync")
SDIST_SOURCES = os.path.join(HERE, "csrc")
# The SQL cases tests/test_sql_cases.py runs: the repository's, copied into an sdist.
REPO_CASES = os.path.join(HERE, "..", "Tests", "SQLCases")
SDIST_CASES = os.path.join("tests", "SQLCases")
LIBRARY = "libvecsync"
HINT = ("building vecsync needs a C compiler, SQLite's headers (sqlite3ext.h) and a CBLAS "
        "library: on Debian or Ubuntu, apt-get install gcc libsqlite3-dev libblas-dev")


def c_sources_dir():
    """The C sources: an sdist's copy, or the repository's."""
    for d in (SDIST_SOURCES, REPO_SOURCES):
        if os.path.isfile(os.path.join(d, "vecsync_int.h")):
            return os.path.normpath(d)
    sys.exit("vecsync: the C sources are not in %s nor %s (build from the repository, or "
             "from an sdist made by this setup.py)" % (REPO_SOURCES, SDIST_SOURCES))


def extension_version():
    """The version the extension reports (VECSYNC_VERSION): one number for both."""
    with open(os.path.join(c_sources_dir(), "vecsync_int.h")) as f:
        m = re.search(r'#define\s+VECSYNC_VERSION\s+"([^"]+)"', f.read())
    if not m:
        sys.exit("vecsync: VECSYNC_VERSION not found in vecsync_int.h")
    return m.group(1)


class build_vecsync(Command):
    """Compile the C sources into vecsync/libvecsync.so (.dylib on Apple platforms)."""

    description = "build VecSync's SQLite extension"
    user_options = []

    def initialize_options(self):
        self.build_lib = None
        self.build_temp = None

    def finalize_options(self):
        self.set_undefined_options("build", ("build_lib", "build_lib"), ("build_temp", "build_temp"))

    def run(self):
        # setuptools' compiler classes (its copy of distutils): CC, CFLAGS, LDFLAGS apply.
        from distutils.ccompiler import new_compiler
        from distutils.errors import CompileError, LinkError
        from distutils.sysconfig import customize_compiler

        src = c_sources_dir()
        sources = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".c"))
        cc = new_compiler()
        customize_compiler(cc)
        # After Python's own CFLAGS, which have -g: -g0 wins.
        macros, args, libraries, link_args = [], ["-std=c11", "-O2", "-g0", "-ffp-contract=off"], [], []
        if sys.platform == "darwin":
            macros.append(("VECSYNC_ACCELERATE", "1"))
            link_args += ["-framework", "Accelerate"]
            suffix = ".dylib"
        else:
            libraries += ["blas", "m", "pthread"]
            suffix = ".so"
        # Objects under build_temp, named after the sources but not after their path.
        temp = os.path.join(self.build_temp, "vecsync")
        self.mkpath(temp)
        try:
            objects = cc.compile(sources, output_dir=temp, macros=macros,
                                 include_dirs=[src, os.path.join(src, "include")],
                                 extra_preargs=args)
        except CompileError as e:
            sys.exit("vecsync: %s\n%s" % (e, HINT))
        out = os.path.join(self.build_lib, "vecsync", LIBRARY + suffix)
        self.mkpath(os.path.dirname(out))
        try:
            cc.link_shared_object(objects, out, libraries=libraries, extra_postargs=link_args)
        except LinkError as e:
            sys.exit("vecsync: %s\n%s" % (e, HINT))


class build_with_extension(build):
    sub_commands = build.sub_commands + [("build_vecsync", None)]


class sdist_with_sources(sdist):
    """An sdist that builds and tests anywhere: the repository's C sources copied in as
    csrc/, its SQL cases as tests/SQLCases (MANIFEST.in adds the rest of tests/)."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        src = c_sources_dir()
        dest = os.path.join(base_dir, "csrc")
        if os.path.exists(dest):
            shutil.rmtree(dest)
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("*.o", "*.so", "*.dylib"))
        # From the repository; an sdist rebuilt from an sdist has them in tests/ already.
        if os.path.isdir(REPO_CASES):
            dest = os.path.join(base_dir, SDIST_CASES)
            if os.path.exists(dest):
                shutil.rmtree(dest)
            shutil.copytree(REPO_CASES, dest, ignore=shutil.ignore_patterns("*~", ".*"))


class platform_wheel(bdist_wheel):
    """A wheel for one platform and any Python 3: the library links no Python."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(
    version=extension_version(),
    distclass=BinaryDistribution,
    cmdclass={
        "build": build_with_extension,
        "build_vecsync": build_vecsync,
        "sdist": sdist_with_sources,
        "bdist_wheel": platform_wheel,
    },
)
