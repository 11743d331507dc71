#!/usr/bin/env bash
# Pack what the GPU machine needs to run bench/device_check.sh, built HERE: the
# device machine has CUDA, CMake and Python 3.12 but no internet, no MuJoCo and
# maybe no HDF5, and is x86-64 like this one. The bundle (build-device/bundle.tar.xz,
# git-ignored; it must stay under the device tool's 64 MiB carry limit: xz, not gzip,
# and binaries built for the H200's sm_90 alone in build-device/build (the default
# build's sm_80 + sm_90 fatbins made it 73 MiB), without MPI) holds:
#   bin/    flysim, every GPU test (float32 and float64) including the two cuSOLVER
#           oracle tests, test_record, the NVTX injection library and checker, h5diff
#   lib/    the shared libraries they load that the device may lack (MuJoCo, HDF5,
#           ...), not glibc's, the C++ runtime (libstdc++, libgcc_s) or the CUDA
#           driver: the device's own are newer, and a bundled glibc part
#           (libresolv) breaks on a newer glibc; nor the CUDA math libraries the
#           cuSOLVER tests load (libcusolver, libcublas, libcublasLt, libcusparse,
#           libnvJitLink: about 900 MiB): device_check.sh finds the device's toolkit
#   assets/ mesh.mjb, capsule.mjb, walking_clip.h5, walking_clip_330hz.h5,
#           worlds/blocks.mjb and the capsule fly's blocks, gapped and mixed terrains
#   python/ the flysim package (its Python files and the module built here, CUDA's
#           runtime linked in) and the venv's mujoco package without its experimental/
#           viewer (the wheel is 30 MB of zip; unzipped, xz stores its libmujoco once with
#           lib/'s), for the device image's python3 (3.12, with numpy, h5py, pytest, torch
#           and CuPy)
#   wheels/ the rest that python3 lacks, at scripts/requirements.txt's pins: gymnasium,
#           Farama-Notifications, array-api-compat (device_check.sh installs them with pip
#           --no-index into a scratch folder)
# Then, from the repository root:
#   run(command="bench/device_check.sh", carry=["build-device/bundle.tar.xz"])
# (device_check.sh unpacks it with Python's tarfile where xz is not installed.)
#
#   bench/make_device_bundle.sh               the GPU bundle: sm_90, build-device/build,
#                                             build-device/bundle.tar.xz
#   bench/make_device_bundle.sh --simulator   the same for GPGPU-Sim (sm_80 only: the
#                                             simulator parses one architecture's PTX;
#                                             one warp a block, FLYSIM_BLOCK_THREADS=32:
#                                             its shuffles act on a block's first warp,
#                                             bench/gpusim/gpusim_check.sh), build-device/build-sim,
#                                             build-device/bundle-sim.tar.xz, for
#                                             bench/device_check.sh --simulator DEST
# FLYSIM_BUILD_DIR=dir packs an existing build instead of building (it must hold every
# target below). Runs scripts/setup.sh --no-build first: the packages (h5diff from
# hdf5-tools), the venv's MuJoCo and the assets, without building build/ (its CUDA tree
# for every architecture: 15-20 minutes this bundle does not use).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/build-device"
arch=90 suffix="" block=()
case "${1:-}" in
  "") ;;
  --simulator) arch=80 suffix="-sim" block=(-DFLYSIM_BLOCK_THREADS=32) ;;
  *) echo "usage: bench/make_device_bundle.sh [--simulator]" >&2; exit 2 ;;
esac
build="${FLYSIM_BUILD_DIR:-$out/build$suffix}"
stage="$out/stage$suffix" # the tarball's top folder is bundle/ in both modes
mkdir -p "$out"
tarball="$out/bundle$suffix.tar.xz"

# What setup.sh provides (a no-op when present; it fails, saying why, where it cannot
# make the venv or the assets): never build without it.
"$root/scripts/setup.sh" --no-build >/dev/null ||
  { echo "make_device_bundle: scripts/setup.sh --no-build failed (run it to see why)" >&2; exit 1; }
# device_check.sh's bit-equality rows (on-chip plan, lanes, generate vs host) compare
# HDF5 files with h5diff; a bundle without it loses them.
h5diff=$(command -v h5diff || true)
[ -n "$h5diff" ] || {
  echo "make_device_bundle: no h5diff on PATH; install hdf5-tools (scripts/setup.sh does):" \
    "without it the device check cannot compare to the bit" >&2
  exit 1
}

tests=(engine_stages_gpu engine_replay_gpu engine_collision_gpu engine_collision_convex_gpu
       engine_box_collision_gpu engine_cylinder_collision_gpu engine_cull_gpu engine_constraint_gpu engine_solver_gpu engine_solver_gpu_f64 engine_replay_contacts_gpu engine_replay_contacts_gpu_f64
       engine_contact_bound_gpu engine_cusolver_gpu engine_cusolver_gpu_f64)
if [ -z "${FLYSIM_BUILD_DIR:-}" ]; then # one arch only, no MPI: a smaller bundle
  blog="$out/build$suffix.log" # the compiler's output, shown when the build fails
  { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=$arch \
      -DFLYSIM_MPI=OFF -DFLYSIM_WERROR=ON "${block[@]}" &&
    cmake --build "$build" -j "$(nproc)" --target flysim test_record test_batch test_nvtx_ranges \
      flysim_nvtx_inject _flysim "${tests[@]}"; } >"$blog" 2>&1 ||
    { tail -n 30 "$blog" >&2; echo "make_device_bundle: the build failed (all of it in $blog)" >&2; exit 1; }
fi
[ -x "$build/flysim" ] || { echo "make_device_bundle: no $build/flysim" >&2; exit 1; }
for t in "${tests[@]}"; do
  [ -x "$build/tests/engine/$t" ] ||
    { echo "make_device_bundle: $t was not built (nvcc missing?)" >&2; exit 1; }
done

rm -rf "$stage"
mkdir -p "$stage/bundle/bin" "$stage/bundle/lib" "$stage/bundle/assets"
bins=("$build/flysim" "$build/tests/profiling/test_nvtx_ranges" "$build/tests/test_record"
      "$build/tests/api/test_batch" "$h5diff")
for t in "${tests[@]}"; do bins+=("$build/tests/engine/$t"); done
cp "${bins[@]}" "$stage/bundle/bin/"
inject=$(find "$build/tests/profiling" -name "*nvtx_inject*.so" | head -n 1)
[ -n "$inject" ] && cp "$inject" "$stage/bundle/bin/"

# Shared libraries: what ldd resolves, but glibc's, the C++ runtime, the driver and
# the CUDA math libraries (the device's toolkit has its own; see above).
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux* | libresolv.so* | \
      libutil.so* | libnsl.so* | libanl.so* | libstdc++.so* | libgcc_s.so* | libcuda.so* | \
      libcusolver*.so* | libcublas*.so* | libcusparse*.so* | libnvJitLink*.so*) ;;
    *) cp -L "$lib" "$stage/bundle/lib/" ;;
  esac
done
for f in mesh.mjb capsule.mjb walking_clip.h5 walking_clip_330hz.h5 manifest.json; do
  cp -L "$root/assets/$f" "$stage/bundle/assets/"
done
# FlyGym's terrains for the terrains section and engine_cull_gpu (their meshes are mesh.mjb's: xz's
# window stores them once)
mkdir -p "$stage/bundle/assets/worlds"
for f in blocks.mjb blocks_capsule.mjb gapped_capsule.mjb mixed_capsule.mjb; do
  cp -L "$root/assets/worlds/$f" "$stage/bundle/assets/worlds/"
done
# the Python package, and the wheels of its needs that the device's python3 lacks
module=$(find "$build/python/flysim" -name "_flysim*.so" | head -n 1)
[ -n "$module" ] || { echo "make_device_bundle: no $build/python/flysim/_flysim*.so (nanobind" \
  "missing from the venv?)" >&2; exit 1; }
mkdir -p "$stage/bundle/python/flysim" "$stage/bundle/wheels"
cp "$module" "$root"/python/flysim/*.py "$stage/bundle/python/flysim/"
mj=$("$root/.venv/bin/python" -c 'import mujoco, os; print(os.path.dirname(mujoco.__file__))')
cp -r "$mj" "$stage/bundle/python/mujoco"
rm -rf "$stage/bundle/python/mujoco/experimental" "$stage/bundle/python/mujoco/__pycache__"
pins=$(grep -iE '^(gymnasium|farama-notifications|array-api-compat)==' \
  "$root/scripts/requirements.txt")
[ "$(echo "$pins" | wc -l)" = 3 ] ||
  { echo "make_device_bundle: scripts/requirements.txt lacks a pin of:" \
    "gymnasium farama-notifications array-api-compat" >&2; exit 1; }
# shellcheck disable=SC2086 # one pin a word
"$root/.venv/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$out/wheels" $pins ||
  { echo "make_device_bundle: pip download of the wheels failed ($pins)" >&2; exit 1; }
for pin in $pins; do
  name=${pin%%==*} version=${pin#*==}
  whl=$(find "$out/wheels" -iname "$(echo "$name" | tr - _)-$version-*.whl" | head -n 1)
  [ -n "$whl" ] || { echo "make_device_bundle: no wheel of $pin in $out/wheels" >&2; exit 1; }
  cp "$whl" "$stage/bundle/wheels/"
done
git -C "$root" rev-parse HEAD >"$stage/bundle/COMMIT" 2>/dev/null || true
# the working tree may differ from HEAD: say so in the bundle (device_check.log shows it)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
  echo "(built from a working tree with uncommitted changes)" >>"$stage/bundle/COMMIT"
echo "sm_$arch" >"$stage/bundle/ARCH"
rm -f "$out/bundle$suffix.tar.gz"
# xz -9: a 64 MiB window, so that the CUDA modules every program links (about 17 MB each)
# are stored once; the default 8 MiB window stores each again (57 MiB in all, against 27)
tar -C "$stage" -cf - bundle | xz -9 -T1 >"$tarball"
rm -rf "$stage"
size=$(stat -c %s "$tarball")
echo "make_device_bundle: $tarball ($((size / 1048576)) MiB)"
if [ "$size" -gt $((64 * 1048576)) ]; then
  echo "make_device_bundle: over the device tool's 64 MiB carry limit" >&2
  exit 1
fi
