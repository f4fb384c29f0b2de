"""VecSync's SQLite extension for Python: vec0 KNN tables and libSQL's vector SQL.

    import sqlite3, vecsync
    conn = sqlite3.connect("photos.db")
    conn.enable_load_extension(True)
    vecsync.load(conn)
    conn.enable_load_extension(False)

Works with any connection that has load_extension(): Python's sqlite3 (where the
interpreter was built with extension loading) and apsw.Connection.

A vector binds as a blob of its values in the machine's byte order, as sqlite-vec's
package makes it (serialize_float32, serialize_int8), or as a numpy array of float32 or
int8 (pip install "vecsync[numpy]"); or as JSON text, '[1, 0, 0]'.
"""
import atexit
import os
import shutil
import struct
import tempfile
import threading

__all__ = ["load", "loadable_path", "serialize_float32", "serialize_int8"]

_lock = threading.Lock()
_paths = {}   # SQLite module ("sqlite3", "apsw", ...) -> the library its connections load


def loadable_path():
    """The path of the compiled extension, without its suffix, as load_extension() takes it
    (SQLite adds .so or .dylib and finds the entry point sqlite3_vecsync_init)."""
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libvecsync"))


def _library_for(conn):
    """The library to load into conn: loadable_path() for the first SQLite module that loads
    it, a private copy for each other one. A loaded extension keeps the routines of the
    SQLite that loaded it in one global pointer, so one copy of the library must never serve
    two SQLite libraries (apsw carries its own): a second load would point the first
    module's connections at the second's SQLite, and they would crash on close."""
    base = type(conn).__mro__[-2] if len(type(conn).__mro__) > 1 else type(conn)
    module = base.__module__.split(".")[0]
    with _lock:
        if module not in _paths:
            if not _paths:
                _paths[module] = loadable_path()
            else:
                original = loadable_path()
                suffix = ".dylib" if os.path.exists(original + ".dylib") else ".so"
                folder = tempfile.mkdtemp(prefix="vecsync-%s-" % module)
                atexit.register(shutil.rmtree, folder, True)
                # The copy keeps the file name (SQLite derives the entry point from it) and
                # its place beside vecsync.libs/, the libraries a manylinux wheel bundles
                # (auditwheel: the BLAS), which the library finds at $ORIGIN/../vecsync.libs.
                copy = os.path.join(folder, "vecsync")
                os.mkdir(copy)
                shutil.copy2(original + suffix, os.path.join(copy, "libvecsync" + suffix))
                bundled = os.path.join(os.path.dirname(os.path.dirname(original)), "vecsync.libs")
                if os.path.isdir(bundled):
                    os.symlink(bundled, os.path.join(folder, "vecsync.libs"))
                _paths[module] = os.path.join(copy, "libvecsync")
        return _paths[module]


def load(conn):
    """Load the extension into conn (sqlite3.Connection or apsw.Connection), whose extension
    loading must be enabled: conn.enable_load_extension(True)."""
    if not hasattr(conn, "load_extension"):
        raise RuntimeError(
            "this connection cannot load extensions: Python's sqlite3 module was built "
            "without them (no Connection.load_extension); pip install apsw and pass an "
            "apsw.Connection (after conn.enable_load_extension(True)) instead")
    conn.load_extension(_library_for(conn))


def serialize_float32(vector):
    """The blob of a float[N] vector: each value as a 4-byte float, in the machine's byte
    order, as vec0 reads it; the same bytes as sqlite_vec.serialize_float32. struct.error
    for a value that is not a number."""
    return struct.pack("%df" % len(vector), *vector)


def serialize_int8(vector):
    """The blob of an int8[N] vector (bind it as vec_int8(?)): each value as one signed
    byte; the same bytes as sqlite_vec.serialize_int8. struct.error for a value that is not
    an integer or is outside -128..127."""
    return struct.pack("%db" % len(vector), *vector)
