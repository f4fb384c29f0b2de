"""What the sync benchmarks share: the built tools, a scratch folder, commands, counts and CPU time.

    from benchkit import add_build_arguments, built_tools, machine, run, scratch

    parser = argparse.ArgumentParser()
    add_build_arguments(parser, extension=True)
    args = parser.parse_args()
    cli, extension = built_tools(args, extension=True)
    print(f"machine: {machine()}")
    with scratch("vecsync-example-") as work:
        run([cli, "track", "--db", os.path.join(work, "a.db"), "--table", "photos"])
"""
import contextlib
import os
import platform
import resource
import shutil
import sqlite3
import subprocess
import tempfile
import time


def add_build_arguments(parser, extension=False):
    """--build and --cli (which vecsync-cli to measure); with extension, --sqlite3 too."""
    what = "vecsync-cli and libvecsync.so" if extension else "vecsync-cli"
    parser.add_argument("--build", default=".build/release", help=f"folder with {what}")
    parser.add_argument("--cli", help="the vecsync-cli to measure (default: BUILD/vecsync-cli)")
    if extension:
        parser.add_argument("--sqlite3", default="sqlite3", help="the sqlite3 shell that loads the extension")


def built_tools(args, extension=False):
    """The vecsync-cli to run, and with extension the library's path as `.load` takes it (no
    `.so`); exits saying how to build whichever is missing."""
    cli = args.cli or os.path.join(args.build, "vecsync-cli")
    needed = {cli: "swift build -c release --product vecsync-cli"}
    library = os.path.join(args.build, "libvecsync")
    if extension:
        needed[library + ".so"] = "swift build -c release --product vecsync"
    for path, command in needed.items():
        if not os.path.exists(path):
            raise SystemExit(f"{path} is missing: run `{command}` first")
    return (cli, library) if extension else cli


def machine():
    """The machine, as each benchmark's first line names it."""
    return f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}, SQLite {sqlite3.sqlite_version}"


@contextlib.contextmanager
def scratch(prefix):
    """A temporary folder, removed afterwards whatever happened."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(cmd, **kwargs):
    """Runs cmd and returns its standard output; exits with both outputs when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def count(path, sql):
    """The single value `sql` returns on the database at path."""
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def folder_bytes(folder, suffix=""):
    """The bytes of the files under folder whose names end with suffix."""
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(folder) for name in names if name.endswith(suffix))


def timed_sync(cli, path, folder, cpu_limit=0):
    """CPU seconds (user + system), wall seconds and output of one `vecsync-cli sync`; the CPU
    seconds are None when the sync was stopped at cpu_limit."""
    def limit():
        if cpu_limit:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run([cli, "sync", "--db", path, "--folder", folder, "--no-progress"],
                            capture_output=True, text=True, preexec_fn=limit)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        if cpu_limit and cpu >= cpu_limit - 1:
            return None, wall, result.stdout
        raise SystemExit(f"sync failed:\n{result.stdout}\n{result.stderr}")
    return cpu, wall, result.stdout


def vec0_index_sql(name, dims):
    """A vec0 table over cosine embeddings keyed by a text id, as the apps' indexes are."""
    return (f"CREATE VIRTUAL TABLE {name} USING vec0(id text primary key, "
            f"embedding float[{dims}] distance_metric=cosine);")


def index_registry_sql(name, table, dims):
    """Registers the vec0 table name as the index of table's embedding column, so that a merge
    refreshes it (the rows VectorIndex.create writes)."""
    return ("CREATE TABLE IF NOT EXISTS vecsync_vector_indexes(name TEXT PRIMARY KEY, source_table TEXT NOT NULL, "
            "primary_key TEXT NOT NULL, embedding_column TEXT NOT NULL, dimensions INTEGER NOT NULL, "
            "metric TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '[]');"
            f"INSERT INTO vecsync_vector_indexes VALUES ('{name}', '{table}', 'id', 'embedding', {dims}, 'cosine', '[]');")
