"""What the benchmark ran on: CPU, cores, memory, OS, and the build of our extension."""

import os
import platform
import subprocess


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def physical_cores() -> int | None:
    cores = set()
    phys = core = None
    for line in _read("/proc/cpuinfo").splitlines() + [""]:
        if line.startswith("physical id"):
            phys = line.split(":", 1)[1].strip()
        elif line.startswith("core id"):
            core = line.split(":", 1)[1].strip()
        elif not line.strip():
            if core is not None:
                cores.add((phys, core))
            phys = core = None
    return len(cores) or None


def memory_gib() -> float | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / (1 << 20)
    return None


def os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def cache_sizes() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    parts = []
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("L2 cache", "L3 cache"):
            parts.append(f"{key.strip().split()[0]} {value.strip()}")
    return ", ".join(parts)


def git_revision(repo: str) -> str:
    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True).stdout.strip()

    try:
        rev = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "CSources", "Package.swift")
    except OSError:
        return "unknown"
    if not rev:
        return "unknown"
    sources = git("log", "-1", "--format=%h", "--", "CSources", "Package.swift")
    text = rev if sources == rev else f"{rev} (extension sources last changed in {sources})"
    return text + (" + uncommitted changes to the extension" if dirty else "")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other work competing for the cores."""
    return " ".join(_read("/proc/loadavg").split()[:3]) or "unknown"


def describe(repo: str) -> dict:
    return {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": physical_cores(),
        "caches": cache_sizes(),
        "memory_gib": memory_gib(),
        "os": os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "revision": git_revision(repo),
        "load_at_start": load_average(),
    }
