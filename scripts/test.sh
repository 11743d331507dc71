#!/usr/bin/env bash
# flysim's test command: set up what is missing (scripts/setup.sh, a no-op when
# everything is there), then run the test suite with ctest.
#
#   scripts/test.sh              the Release build in build/
#   scripts/test.sh --sanitize   an AddressSanitizer + UBSan build in build-asan/, without
#                                the cuda backend: the sanitizers instrument the C code
#                                (the engine, its host and lane builds, the verbs), never
#                                nvcc's, and the cuda backend's host side runs only where
#                                a GPU is; the Release build compiles and tests it
#   scripts/test.sh [...] -- ARGS   extra ctest arguments (e.g. -R cuda)
#
# Tests that need a GPU report "Skipped" (exit 77) on machines without one.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"
cmake_args="-DFLYSIM_WERROR=ON"
extra=()
while (($#)); do
  case "$1" in
    --sanitize)
      build="$root/build-asan"
      cmake_args="-DFLYSIM_WERROR=ON -DFLYSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DFLYSIM_CUDA=OFF"
      ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/test.sh [--sanitize] [-- ctest args]" >&2; exit 2 ;;
  esac
  shift
done
FLYSIM_BUILD_DIR="$build" FLYSIM_CMAKE_ARGS="$cmake_args" "$root/scripts/setup.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${extra[@]}"
