"""What the command-line tests share: checks that collect failures, running flysim,
and reading its summary line."""

import contextlib
import os
import subprocess
import sys

failures = []


def check(cond, what):
    """Record a failed check (the test goes on, and fails at the end)."""
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(flysim, *args, env=None, timeout=300):
    """flysim's exit status, stdout and stderr (env: variables added)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([flysim, *args], capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


# The kinds of small disk a disk-full check runs on (small_disk): each that can be had here.
DISK_KINDS = ("tmpfs", "preload")


class SmallDisk:
    """A disk of a given size at a folder: a tmpfs mounted there, or (kind "preload") the
    folder that tests/full_disk.c makes one for the processes run with env."""

    def __init__(self, path, size, kind):
        self.path, self.kind, self.env = path, kind, {}
        if kind == "preload":
            self._preload(size)

    def resize(self, size):
        """The disk's size from now on (e.g. "64M"; preload: for the processes started
        after)."""
        if self.kind == "tmpfs":
            subprocess.run(["mount", "-o", f"remount,size={size}", self.path], check=True)
        else:
            self._preload(size)

    def _preload(self, size):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        preload = os.environ.get("LD_PRELOAD", "")
        asan = os.environ.get("ASAN_OPTIONS", "")
        self.env = {"LD_PRELOAD": os.environ["FLYSIM_FULL_DISK_LIB"] +
                    (":" + preload if preload else ""),
                    "FLYSIM_FULL_DISK": f"{os.path.realpath(self.path)}:{nbytes}",
                    # the sanitizer build: flysim's ASan runtime after the preloaded library
                    "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}

    def fill(self):
        """Fill the disk, as another program may."""
        if self.kind == "preload":
            open(os.path.join(self.path, ".full"), "w").close()
            return
        with open(os.path.join(self.path, "filler"), "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError:
                pass


def small_disks(parent, name, size, test):
    """Each kind of small disk (DISK_KINDS) that can be had here, in turn: (kind, its folder
    parent/name-kind, the SmallDisk of `size`), for a disk-full check to run on each."""
    for kind in DISK_KINDS:
        path = os.path.join(parent, f"{name}-{kind}")
        with small_disk(path, size, test, kind) as disk:
            if disk:
                yield kind, path, disk


@contextlib.contextmanager
def small_disk(path, size, test, kind):
    """A SmallDisk of `size` (e.g. "32M") at path, of `kind`: "tmpfs" mounted there (root
    with CAP_SYS_ADMIN) and unmounted after, or "preload", write failures injected below
    HDF5 by tests/full_disk.c (FLYSIM_FULL_DISK_LIB names it; ctest sets it). Yields None,
    and says that the check is skipped, where that kind cannot be had."""
    os.makedirs(path, exist_ok=True)
    if kind == "preload":
        if not os.path.exists(os.environ.get("FLYSIM_FULL_DISK_LIB", "")):
            print(f"{test}: no FLYSIM_FULL_DISK_LIB: the preloaded disk-full check is skipped")
            yield None
            return
        yield SmallDisk(path, size, kind)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                      capture_output=True).returncode != 0:
        print(f"{test}: cannot mount a small tmpfs here: the tmpfs disk-full check is skipped "
              "(the preloaded one runs)")
        yield None
        return
    try:
        yield SmallDisk(path, size, kind)
    finally:
        subprocess.run(["umount", path], capture_output=True)


def no_cuda(text):
    """Whether text is the cuda backend's refusal where it cannot run: no device (a CUDA
    build without a GPU) or no CUDA in the build (-DFLYSIM_CUDA=OFF, or no nvcc)."""
    return "no CUDA device" in text or "built without CUDA" in text


def summary(stdout):
    """The last line's key=value pairs."""
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    check(last.startswith("summary "), f"last line is the summary: {last!r}")
    return dict(kv.split("=", 1) for kv in last.split()[1:])


def finish(name):
    """Exit 1 if any check failed."""
    if failures:
        print(f"{name}: FAILED ({len(failures)} checks)", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: passed")
