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


@contextlib.contextmanager
def small_tmpfs(path, size, test):
    """A tmpfs of `size` (e.g. "32M") mounted at path, a disk to fill, unmounted after.
    Yields False, and says that the check is skipped, where none can be mounted (it needs
    root with CAP_SYS_ADMIN)."""
    os.makedirs(path, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                      capture_output=True).returncode != 0:
        print(f"{test}: cannot mount a small tmpfs here: the disk-full check is skipped")
        yield False
        return
    try:
        yield True
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
