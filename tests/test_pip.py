#!/usr/bin/env python3
"""flysim for Python as pip builds it (test_pip.py SOURCE_DIR ASSETS).

`pip wheel SOURCE_DIR` (scikit-build-core, pyproject.toml) makes a wheel; a fresh venv
installs it with numpy and the mujoco wheel FlyGym pins, from PyPI; there, `import flysim`
loads the mujoco package's libmujoco (one MuJoCo in the process) and drives 64 worlds in
closed loop on host. The wheel is built without the cuda backend here (FLYSIM_CUDA=OFF:
the same build less nvcc's minutes; the default build has it where nvcc is) and without
build isolation (this venv has the build requirements).
"""
import os
import subprocess
import sys
import tempfile

src, assets = sys.argv[1:3]
tmp = tempfile.mkdtemp(prefix="flysim-pip-")


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        print(r.stdout[-4000:], r.stderr[-4000:], flush=True)
        sys.exit("test_pip: FAILED")
    return r


run([sys.executable, "-m", "pip", "wheel", src, "--no-build-isolation", "--no-deps", "-w", tmp,
     "-C", "cmake.define.FLYSIM_CUDA=OFF", "-C", f"build-dir={tmp}/build"])
wheel = [f for f in os.listdir(tmp) if f.startswith("flysim-") and f.endswith(".whl")]
assert len(wheel) == 1, os.listdir(tmp)
print("wheel:", wheel[0])
venv = os.path.join(tmp, "venv")
run([sys.executable, "-m", "venv", venv])
py = os.path.join(venv, "bin", "python")
run([py, "-m", "pip", "install", "-q", os.path.join(tmp, wheel[0])])
script = f"""
import numpy as np, mujoco, flysim, os
m = mujoco.MjModel.from_binary_path({os.path.join(assets, 'mesh.mjb')!r})
with flysim.Batch(m, worlds=64, backend="host") as b:
    b.reset()
    target = b.qpos[:, 7:].copy()  # hold the keyframe's pose: a PD loop on the joints
    for t in range(20):
        b.ctrl[:, :42] = target[:, :42] + 0.5 * (target[:, :42] - b.qpos[:, 7:49])
        b.step(5)
    assert np.isfinite(b.qpos).all() and (b.problems == 0).all()
    maps = open("/proc/self/maps").read()
    libs = {{l.split()[-1] for l in maps.splitlines() if "libmujoco" in l}}
    assert len(libs) == 1, libs  # one MuJoCo: the mujoco wheel's
    print("ok", flysim.version(), b.info()["description"].split(",")[0], libs.pop())
"""
r = run([py, "-c", script], cwd=tmp)
print(r.stdout.strip())
print("test_pip: passed")
