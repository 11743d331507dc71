#!/usr/bin/env python3
"""The largest difference between the same datasets of two HDF5 files.

    compare_h5.py A.h5 B.h5 DATASET [DATASET...] [--identical]

Prints one line: for each dataset the largest |A - B| and the largest |A| (its scale),
NaNs counted as differences. Exit 1 if a dataset is missing or its shapes differ, if a
value is NaN in one file only, or, with --identical, if any value differs at all.
"""
import sys

import h5py
import numpy as np


def main():
    args = [a for a in sys.argv[1:] if a != "--identical"]
    identical = "--identical" in sys.argv
    if len(args) < 3:
        sys.exit(__doc__)
    a_path, b_path, names = args[0], args[1], args[2:]
    bad, parts = False, []
    with h5py.File(a_path, "r") as fa, h5py.File(b_path, "r") as fb:
        for n in names:
            if n not in fa or n not in fb:
                parts.append(f"{n}: missing in {a_path if n not in fa else b_path}")
                bad = True
                continue
            a, b = np.asarray(fa[n], dtype=np.float64), np.asarray(fb[n], dtype=np.float64)
            if a.shape != b.shape:
                parts.append(f"{n}: shapes {a.shape} vs {b.shape}")
                bad = True
                continue
            nan = np.isnan(a) != np.isnan(b)
            d = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
            worst = float(np.nanmax(d)) if d.size else 0.0
            scale = float(np.nanmax(np.abs(a))) if a.size else 0.0
            same = not nan.any() and worst == 0.0
            bad |= bool(nan.any()) or (identical and not same)
            parts.append(f"{n}: {'identical' if same else f'max |diff| {worst:.3g} of {scale:.3g}'}"
                         + (f", {int(nan.sum())} NaN in one only" if nan.any() else ""))
    print("; ".join(parts))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
