"""What the server benchmarks share: a vecsync-server on a fresh SQLite store with one space
and a token, serving on a free loopback port, stopped and removed afterwards."""
import re
import shutil
import signal
import subprocess
import tempfile


def new_store(server, space):
    """A fresh SQLite store in a temporary folder with space `space`: (folder, the `--data`
    arguments, a token of the space)."""
    data = tempfile.mkdtemp(prefix=f"vecsync-{space}-")
    store = ["--data", data]
    subprocess.run([server, "space", "create", space, *store], check=True, stdout=subprocess.DEVNULL)
    token = subprocess.run([server, "token", "issue", "--space", space, *store], check=True,
                           capture_output=True, text=True).stdout.split()[-1]
    return data, store, token


def serve(server, arguments, **popen):
    """`vecsync-server serve --port 0 ARGUMENTS…` started: (the process, its port)."""
    process = subprocess.Popen([server, "serve", "--port", "0", *arguments], stdout=subprocess.PIPE, text=True,
                               **popen)
    return process, int(re.search(r":(\d+) ", process.stdout.readline()).group(1))


def stop(process, data):
    """SIGTERM, up to 30 s to exit, then the store's folder removed."""
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    shutil.rmtree(data, ignore_errors=True)
