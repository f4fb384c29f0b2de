"""A connection with the installed vecsync package loaded, through either module Python
reaches SQLite with: the standard library's sqlite3 (where the interpreter allows
extension loading) or apsw. Every test here opens its connections with it."""
import sqlite3

import pytest

import vecsync

try:
    import apsw
except ImportError:  # pragma: no cover - make test-python installs it
    apsw = None


class LoadedConnection:
    """One connection, `kind` "sqlite3" or "apsw", on `path` (in memory by default; with
    `read_only`, the file opened read-only), with the extension loaded. sqlite3's runs
    in autocommit mode, as the shell does: statements are not wrapped in transactions."""

    def __init__(self, kind, path=":memory:", read_only=False):
        self.kind = kind
        if kind == "sqlite3":
            if read_only:
                conn = sqlite3.connect("file:%s?mode=ro" % path, uri=True, isolation_level=None)
            else:
                conn = sqlite3.connect(path, isolation_level=None)
            if not hasattr(conn, "enable_load_extension"):
                pytest.skip("this Python's sqlite3 module was built without extension loading "
                            "(no enable_load_extension): the apsw cases cover it")
            self.error = sqlite3.Error
        else:
            if apsw is None:
                pytest.fail("apsw is not installed (pip install apsw)")
            flags = apsw.SQLITE_OPEN_READONLY if read_only else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
            conn = apsw.Connection(path, flags=flags)
            self.error = apsw.Error
        conn.enable_load_extension(True)
        vecsync.load(conn)
        conn.enable_load_extension(False)
        self.conn = conn

    def rows(self, sql, params=()):
        """The rows of one statement, as tuples."""
        return [tuple(r) for r in self.conn.execute(sql, params)]

    def close(self):
        self.conn.close()
