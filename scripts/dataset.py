"""Read a flysim generate dataset (DIR/dataset.h5) with numpy: no framework needed.

    from dataset import FlyDataset
    ds = FlyDataset("data/dataset.h5")
    print(ds.series, ds.nworld, ds.nrow, ds.params_of(0))
    for x in ds.windows(["qpos", "qvel"], window=50, worlds=range(8)):
        ...  # x["qpos"]: (50, nq) rows of one world; x["world"], x["start"]

    python scripts/dataset.py data/dataset.h5      # prints what the file holds

The layout is world-major (/worlds/<series>: worlds x rows x columns), chunked by a
block of worlds and a time window, so reading a window of one world touches one
chunk per series. `windows` yields numpy arrays and can sit behind a PyTorch
IterableDataset or a JAX input pipeline as is (open one FlyDataset per worker).
"""

import argparse
import sys

import h5py
import numpy as np


class FlyDataset:
    """A generate dataset: its series, the worlds' sampled parameters and health."""

    def __init__(self, path):
        self.path = path
        self.file = h5py.File(path, "r")
        if "worlds" not in self.file:
            raise ValueError(f"{path}: no /worlds group: not a flysim generate dataset")
        if not int(self.file.attrs.get("complete", 0)):
            raise ValueError(f"{path}: incomplete; finish it with flysim generate --resume")
        self.series = sorted(self.file["worlds"].keys())
        first = self.file["worlds"][self.series[0]]
        self.nworld, self.nrow = first.shape[0], first.shape[1]
        self.time = self.file["time"][()]
        self.param_names = [n.decode() if isinstance(n, bytes) else str(n)
                            for n in self.file["param_names"][()]]
        self.params = self.file["params"][()]
        self.problem = self.file["world_problem"][()].astype(bool)

    def params_of(self, world):
        """World w's sampled values, by axis key ('vary.model.kp': 151.2, ...)."""
        return dict(zip(self.param_names, self.params[world].tolist()))

    def world(self, world, series=None):
        """Every row of one world: {series: (rows, columns)}."""
        return {s: self.file["worlds"][s][world] for s in (series or self.series)}

    def windows(self, series=None, window=None, worlds=None, stride=None, rng=None):
        """Windows of `window` rows (default: all) of each world, in order or shuffled
        (rng: a numpy Generator); each a dict of arrays plus 'world' and 'start'."""
        series = series or self.series
        window = window or self.nrow
        stride = stride or window
        worlds = list(range(self.nworld) if worlds is None else worlds)
        keys = [(w, s0) for w in worlds for s0 in range(0, self.nrow - window + 1, stride)]
        if rng is not None:
            rng.shuffle(keys)
        for w, s0 in keys:
            x = {s: self.file["worlds"][s][w, s0:s0 + window] for s in series}
            x["world"], x["start"] = w, s0
            yield x

    def close(self):
        self.file.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path")
    a = p.parse_args()
    ds = FlyDataset(a.path)
    print(f"{a.path}: {ds.nworld} worlds x {ds.nrow} rows "
          f"({ds.time[0]:.4g} to {ds.time[-1]:.4g} s), {int(ds.problem.sum())} problem worlds")
    for s in ds.series:
        d = ds.file["worlds"][s]
        print(f"  /worlds/{s:16s} {str(d.shape):18s} chunks {d.chunks}  {d.attrs.get('units', '')}")
    varied = [n for i, n in enumerate(ds.param_names) if np.ptp(ds.params[:, i]) > 0]
    print("  varied: " + (", ".join(varied) if varied else "nothing"))
    x = next(ds.windows(["qpos"] if "qpos" in ds.series else ds.series[:1], window=min(10, ds.nrow)))
    print(f"  first window: world {x['world']}, rows {x['start']}..., "
          + ", ".join(f"{k} {v.shape}" for k, v in x.items() if isinstance(v, np.ndarray)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
