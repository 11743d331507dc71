#!/usr/bin/env bash
# Pack what the GPU machine needs to run bench/device_check.sh, built HERE: the
# device machine has CUDA, CMake and Python 3.12 but no internet, no MuJoCo and
# maybe no HDF5, and is x86-64 like this one. The bundle (build-device/bundle.tar.xz,
# git-ignored; it must stay under the device tool's 64 MiB carry limit: xz, not gzip,
# and binaries built for the H200's sm_90 alone in build-device/build (the default
# build's sm_80 + sm_90 fatbins made it 73 MiB), without MPI) holds:
#   bin/    flysim, every GPU test (float32 and float64), test_record, the NVTX
#           injection library and checker, h5diff
#   lib/    the shared libraries they load that the device may lack (MuJoCo, HDF5,
#           ...), not glibc's, the C++ runtime (libstdc++, libgcc_s) or the CUDA
#           driver: the device's own are newer, and a bundled glibc part
#           (libresolv) breaks on a newer glibc
#   assets/ mesh.mjb, capsule.mjb, walking_clip.h5, walking_clip_330hz.h5
# Then, from the repository root:
#   run(command="bench/device_check.sh", carry=["build-device/bundle.tar.xz"])
# (device_check.sh unpacks it with Python's tarfile where xz is not installed.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/build-device"
build="${FLYSIM_BUILD_DIR:-$out/build}"
stage="$out/bundle"

"$root/scripts/setup.sh" >/dev/null
if [ -z "${FLYSIM_BUILD_DIR:-}" ]; then # the device's arch only, no MPI: a smaller bundle
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DFLYSIM_MPI=OFF -DFLYSIM_WERROR=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target flysim test_record test_nvtx_ranges flysim_nvtx_inject \
    cuda_stages_gpu cuda_replay_gpu cuda_collision_gpu cuda_constraint_gpu cuda_solver_gpu \
    cuda_solver_gpu_f64 cuda_replay_contacts_gpu cuda_replay_contacts_gpu_f64 \
    cuda_contact_bound_gpu >/dev/null
fi
[ -x "$build/flysim" ] || { echo "make_device_bundle: no $build/flysim" >&2; exit 1; }
tests=(cuda_stages_gpu cuda_replay_gpu cuda_collision_gpu cuda_constraint_gpu cuda_solver_gpu
       cuda_solver_gpu_f64 cuda_replay_contacts_gpu cuda_replay_contacts_gpu_f64
       cuda_contact_bound_gpu)
for t in "${tests[@]}"; do
  [ -x "$build/tests/cuda/$t" ] ||
    { echo "make_device_bundle: $t was not built (nvcc missing?)" >&2; exit 1; }
done

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/assets"
bins=("$build/flysim" "$build/tests/profiling/test_nvtx_ranges" "$build/tests/test_record")
h5diff=$(command -v h5diff || true) # the device check compares generate's datasets with it
[ -n "$h5diff" ] && bins+=("$h5diff")
for t in "${tests[@]}"; do bins+=("$build/tests/cuda/$t"); done
cp "${bins[@]}" "$stage/bin/"
inject=$(find "$build/tests/profiling" -name "*nvtx_inject*.so" | head -n 1)
[ -n "$inject" ] && cp "$inject" "$stage/bin/"

# Shared libraries: what ldd resolves, but glibc's, the C++ runtime and the driver.
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux* | libresolv.so* | \
      libutil.so* | libnsl.so* | libanl.so* | libstdc++.so* | libgcc_s.so* | libcuda.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
for f in mesh.mjb capsule.mjb walking_clip.h5 walking_clip_330hz.h5 manifest.json; do
  cp -L "$root/assets/$f" "$stage/assets/"
done
git -C "$root" rev-parse HEAD >"$stage/COMMIT" 2>/dev/null || true
rm -f "$out/bundle.tar.gz"
tar -C "$out" -cJf "$out/bundle.tar.xz" bundle
rm -rf "$stage"
size=$(stat -c %s "$out/bundle.tar.xz")
echo "make_device_bundle: $out/bundle.tar.xz ($((size / 1048576)) MiB)"
if [ "$size" -gt $((64 * 1048576)) ]; then
  echo "make_device_bundle: over the device tool's 64 MiB carry limit" >&2
  exit 1
fi
