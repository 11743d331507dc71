#!/usr/bin/env python3
"""libflysim as a user gets it: installed, then used from another project.

  test_install.py BUILD_DIR SOURCE_DIR FLYSIM ASSETS [C_FLAGS]

1. `cmake --install BUILD_DIR` into a fresh prefix: the header, libflysim.so and .a, the
   CMake package and flysim.pc are there.
2. The shared library exports the public API and nothing else; every global symbol the
   static archive defines strongly is flysim's (fs_...), but NVTX's injection hook, which
   every program using NVTX shares by design, and the compiler's and AddressSanitizer's.
3. examples/ as a separate CMake project finding the installed package
   (find_package(flysim) -> flysim::flysim) builds; its closed-loop tracker over 256
   worlds with gain 0 ends on the qpos that `flysim replay` records, to the bit of the
   float32 record, on cpu, host f64 and host f32; with gain it tracks differently.
4. The CPG example builds with pkg-config alone (cc ... $(pkg-config --cflags --libs
   flysim)) and walks its worlds on cpu and host.
C_FLAGS: added to the consumers' compiles and links (the sanitizer build's flags).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

build, source, flysim, assets = sys.argv[1:5]
cflags = sys.argv[5] if len(sys.argv) > 5 else ""
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("$", " ".join(cmd), "\n", r.stdout[-3000:], r.stderr[-3000:], flush=True)
    return r


tmp = tempfile.mkdtemp(prefix="flysim-install-")
prefix = os.path.join(tmp, "prefix")
r = run(["cmake", "--install", build, "--prefix", prefix])
check(r.returncode == 0, "cmake --install")
lib = os.path.join(prefix, "lib")
for f in ["include/flysim/flysim.h", "lib/libflysim.a", "lib/cmake/flysim/flysimConfig.cmake",
          "lib/cmake/flysim/flysimTargets.cmake", "lib/pkgconfig/flysim.pc"]:
    check(os.path.exists(os.path.join(prefix, f)), "installed " + f)
so = [f for f in os.listdir(lib) if f.startswith("libflysim.so")]
check(len(so) > 0, "installed libflysim.so")

# 2. symbols
exported = run(["nm", "-D", "--defined-only", os.path.join(lib, "libflysim.so")]).stdout.split("\n")
names = [l.split()[-1] for l in exported if len(l.split()) == 3]
public = open(os.path.join(source, "include/flysim/flysim.h")).read()
check(len(names) > 10 and all(n.startswith("fs_") for n in names),
      "libflysim.so exports only fs_ symbols (%d): %s" % (len(names),
                                                          [n for n in names if not n.startswith("fs_")]))
check(all(n + "(" in public for n in names), "every exported symbol is declared in flysim.h")
check("fs_batch_open" in names and "fs_model_build_f32" not in names,
      "the public API exported, the internals hidden")
archive = run(["nm", "-g", "--defined-only", os.path.join(lib, "libflysim.a")]).stdout.split("\n")
glob = [l.split() for l in archive if len(l.split()) == 3]
# strong definitions only: weak ones (W, V: C++ inline functions, NVTX's implementation) are
# folded by the linker and clash with nothing
foreign = [s for t, s in ((x[1], x[2]) for x in glob)
           if t not in "WVu" and not s.startswith(("fs_", "DW.ref.", "__odr_asan.", "__asan"))
           and s != "InitializeInjectionNvtx2_fnptr"]
check(len(glob) > 100 and not foreign, "libflysim.a's strong global symbols are all fs_ (but "
      "NVTX's injection hook): %s" % foreign[:10])

# 3. the examples as a CMake project
ex = os.path.join(tmp, "examples")
env = dict(os.environ, CFLAGS=cflags, LDFLAGS=cflags)
r = run(["cmake", "-S", os.path.join(source, "examples"), "-B", ex,
         "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"], env=env)
check(r.returncode == 0, "examples configure against the installed package")
r = run(["cmake", "--build", ex], env=env)
check(r.returncode == 0, "examples build (find_package(flysim), flysim::flysim)")
model = os.path.join(assets, "mesh.mjb")
clip = os.path.join(assets, "walking_clip.h5")
N, S, W = 256, 40, 40
for backend, prec in [("cpu", "f64"), ("host", "f64"), ("host", "f32")]:
    out = os.path.join(tmp, "pd-%s-%s.bin" % (backend, prec))
    r = run([os.path.join(ex, "pd_tracker"), model, clip, "--backend", backend, "--precision",
             prec, "--worlds", str(N), "--steps", str(S), "--warmup", str(W), "--out", out])
    check(r.returncode == 0 and "0 problem worlds" in r.stdout,
          "pd_tracker %s %s: %s" % (backend, prec, r.stdout.strip()))
    save = os.path.join(tmp, "replay-%s-%s" % (backend, prec))
    cmd = [flysim, "replay", "--backend", backend, "--worlds", str(N), "--sim-steps", str(S),
           "--warmup-sec", str(W * 1e-4), "--save-data", save, "--record", "qpos", "--no-video",
           "--no-plots", "--quiet"]
    if backend != "cpu":
        cmd += ["--precision", prec]
    r = run(cmd)
    if r.returncode or not os.path.exists(out):
        check(False, "flysim replay %s %s" % (backend, prec))
        continue
    q = np.fromfile(out).reshape(N, -1)
    rec = h5py.File(os.path.join(save, "replay.h5"))["qpos"][-1]
    check(q.shape == rec.shape and np.array_equal(q.astype(np.float32), rec),
          "pd_tracker %s %s's qpos = flysim replay's, every world (largest |diff| %.3g)"
          % (backend, prec, np.abs(q - rec).max()))
out = os.path.join(tmp, "pd-gain.bin")
r = run([os.path.join(ex, "pd_tracker"), model, clip, "--backend", "host", "--worlds", "16",
         "--steps", str(S), "--warmup", str(W), "--gain", "0.5", "--out", out])
check(r.returncode == 0 and "gain 0.5" in r.stdout, "pd_tracker with feedback runs")

# 4. pkg-config alone
pc = dict(os.environ, PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"))
flags = run(["pkg-config", "--cflags", "--libs", "flysim"], env=pc)
check(flags.returncode == 0 and "-lflysim" in flags.stdout, "pkg-config flysim: " + flags.stdout.strip())
cpg = os.path.join(tmp, "cpg")
r = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", *cflags.split(),
         os.path.join(source, "examples", "cpg.c"), "-o", cpg, *flags.stdout.split(), "-lm"])
check(r.returncode == 0, "cpg builds with pkg-config's flags")
for backend in ["cpu", "host"]:
    r = run([cpg, model, "--backend", backend, "--worlds", "8", "--seconds", "0.02"])
    check(r.returncode == 0 and "8 of 8 worlds healthy" in r.stdout,
          "cpg on %s: %s" % (backend, r.stdout.strip().split("\n")[-1] if r.stdout else r.stderr))

if not failures:
    shutil.rmtree(tmp, ignore_errors=True)
print("test_install: %s" % ("passed" if not failures else "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
