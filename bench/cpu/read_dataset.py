"""How fast a generate dataset reads, world-major (flysim generate's layout) against
the time-major layout of `replay --save-data` holding the same numbers.

    python bench/cpu/read_dataset.py DIR/dataset.h5 [--series qpos] [--window 100] [--reads 500]

It writes a time-major copy of one series beside the dataset ((rows, worlds, columns),
chunked as the replay recorder chunks: a block of rows by a slice of worlds, shuffle +
deflate as the dataset), then times, on both, with h5py:
  - random windows: `--reads` reads of `--window` consecutive rows of one random world
    (what a training loader does), reads/s;
  - a sequential scan: every world's whole trajectory, in world order, MB/s.
The files are read through the page cache (warm: the second pass of each is timed),
so the figures compare decompression and chunk overhead, not the disk.
"""

import argparse
import os
import sys
import time

import h5py
import numpy as np


def time_major_copy(src, series, path):
    with h5py.File(src, "r") as f:
        data = f["worlds"][series][()]  # (N, R, C)
        chunks = f["worlds"][series].chunks
    n, r, c = data.shape
    block = max(1, min(r, 1000))
    wslice = max(1, min(n, (1 << 20) // (block * c * 4)))
    with h5py.File(path, "w") as f:
        f.create_dataset(series, data=np.ascontiguousarray(data.transpose(1, 0, 2)),
                         chunks=(block, wslice, c), shuffle=True, compression="gzip",
                         compression_opts=4)
    return data.shape, chunks, (block, wslice, c)


def random_windows(get, n, r, window, reads, rng):
    worlds = rng.integers(0, n, reads)
    starts = rng.integers(0, r - window + 1, reads)
    t0 = time.perf_counter()
    for w, s in zip(worlds, starts):
        get(w, s, window)
    return reads / (time.perf_counter() - t0)


def scan(get, n, r, nbytes):
    t0 = time.perf_counter()
    for w in range(n):
        get(w, 0, r)
    return nbytes / 1e6 / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--series", default="qpos")
    p.add_argument("--window", type=int, default=100)
    p.add_argument("--reads", type=int, default=500)
    a = p.parse_args()
    tm_path = os.path.join(os.path.dirname(os.path.abspath(a.dataset)), "time_major.h5")
    (n, r, c), wchunks, tchunks = time_major_copy(a.dataset, a.series, tm_path)
    nbytes = n * r * c * 4
    rng = np.random.default_rng(0)
    print(f"{a.dataset}: /worlds/{a.series} {n} worlds x {r} rows x {c} columns "
          f"({nbytes / 1e6:.1f} MB raw); windows of {a.window} rows, {a.reads} reads")
    print(f"{'layout':12s} {'chunks':>18s} {'MB':>8s} {'windows/s':>10s} {'scan MB/s':>10s}")
    with h5py.File(a.dataset, "r") as fw, h5py.File(tm_path, "r") as ft:
        dw, dt = fw["worlds"][a.series], ft[a.series]
        sizes = {"world-major": dw.id.get_storage_size(), "time-major": dt.id.get_storage_size()}
        layouts = [("world-major", wchunks, a.dataset, lambda w, s, k: dw[w, s:s + k]),
                   ("time-major", tchunks, tm_path, lambda w, s, k: dt[s:s + k, w])]
        for name, chunks, path, get in layouts:
            for _ in range(2):  # the second pass, warm
                rate = random_windows(get, n, r, a.window, a.reads, rng)
                mbs = scan(get, n, r, nbytes)
            size = sizes[name] / 1e6
            print(f"{name:12s} {str(chunks):>18s} {size:8.1f} {rate:10.0f} {mbs:10.1f}")
    os.unlink(tm_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
