#!/usr/bin/env bash
# Pack what the GPU machine needs to run bench/device_check.sh, built HERE: the
# device machine has CUDA, CMake and Python 3.12 but no internet, no MuJoCo and
# maybe no HDF5, and is x86-64 like this one. The bundle (build-device/bundle.tar.xz,
# git-ignored, well under the device tool's 64 MiB carry limit) holds:
#   bin/    flysim, bench_cpu, the GPU tests, the NVTX injection library and checker
#   lib/    every shared library they load that is not part of glibc or the driver
#   assets/ mesh.mjb, walking_clip.h5, walking_clip_330hz.h5
# Then, from the repository root:
#   run(command="bench/device_check.sh", carry=["build-device/bundle.tar.xz"])
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${FLYSIM_BUILD_DIR:-$root/build}"
out="$root/build-device"
stage="$out/bundle"

"$root/scripts/setup.sh" >/dev/null
[ -x "$build/flysim" ] || { echo "make_device_bundle: no $build/flysim" >&2; exit 1; }
grep -q "FLYSIM_HAVE_CUDA:INTERNAL=ON\|FLYSIM_HAVE_CUDA" "$build/CMakeCache.txt" || true
[ -x "$build/tests/cuda/cuda_replay_gpu" ] ||
  { echo "make_device_bundle: the GPU tests were not built (nvcc missing?)" >&2; exit 1; }

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/assets"
bins=("$build/flysim" "$build/bench/bench_cpu" "$build/tests/cuda/cuda_stages_gpu"
      "$build/tests/cuda/cuda_replay_gpu" "$build/tests/profiling/test_nvtx_ranges")
cp "${bins[@]}" "$stage/bin/"
inject=$(find "$build/tests/profiling" -name "*nvtx_inject*.so" | head -n 1)
[ -n "$inject" ] && cp "$inject" "$stage/bin/"

# Shared libraries: everything ldd resolves except glibc's own and the CUDA driver.
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
for f in mesh.mjb walking_clip.h5 walking_clip_330hz.h5 manifest.json; do
  cp -L "$root/assets/$f" "$stage/assets/"
done
git -C "$root" rev-parse HEAD >"$stage/COMMIT" 2>/dev/null || true
tar -C "$out" -cJf "$out/bundle.tar.xz" bundle
rm -rf "$stage"
echo "make_device_bundle: $out/bundle.tar.xz ($(du -h "$out/bundle.tar.xz" | cut -f1))"
