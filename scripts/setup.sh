#!/usr/bin/env bash
# flysim set-up: Debian packages, the pinned Python 3.12 venv, the NeuroMechFly
# assets and the build. Each step checks what is already there and does only what
# is missing, so running it twice costs a few seconds.
#
#   scripts/setup.sh              everything, Release build in build/
#   scripts/setup.sh --no-build   packages, venv and assets only (for scripts that build
#                                 their own trees: bench/gpusim/gpusim_check.sh)
#   FLYSIM_BUILD_DIR=dir ...      build somewhere else
#   FLYSIM_CMAKE_ARGS="..."       extra configure arguments (first configure only)
# After the default build the venv imports flysim (step 5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
assets="$root/assets"
build="${FLYSIM_BUILD_DIR:-$root/build}"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

build_tree=1
for arg in "$@"; do
  case $arg in
    --no-build) build_tree=0 ;;
    *) die "unknown argument '$arg' (usage: scripts/setup.sh [--no-build])" ;;
  esac
done

# --- 1. Debian packages -------------------------------------------------------
# compilers and CMake, HDF5 (library, headers and h5dump), ffmpeg (video),
# EGL/OpenGL headers (headless rendering), perf (sampling profiles), libyaml
# (flysim generate's spec), Open MPI (flysim generate over ranks).
packages=(build-essential cmake pkg-config libhdf5-dev hdf5-tools ffmpeg
          libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri linux-perf libyaml-dev
          openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null ||
      die "need root to install: ${missing[*]} (run: apt-get install ${missing[*]})"
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  say "Debian packages: present"
fi

# --- 2. Python 3.12 venv with the pinned packages -----------------------------
find_python312() {
  # pyenv's own builds first (its shims may not select 3.12), then PATH.
  local c
  for c in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/bin/python3.12 \
    /root/.pyenv/versions/3.12*/bin/python3.12 "$(command -v python3.12 || true)"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    if "$c" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      echo "$c"
      return 0
    fi
  done
  return 1
}
req="$root/scripts/requirements.txt"
req_hash=$(sha256sum "$req" | cut -d' ' -f1)
stamp="$venv/.flysim-requirements"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$req_hash" ]; then
  say "Python venv: present ($venv)"
else
  py=$(find_python312) ||
    die "FlyGym needs Python 3.12 and none was found (try: pyenv install 3.12)"
  say "creating the Python venv with $py"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -r "$req"
  echo "$req_hash" >"$stamp"
fi

# --- 2b. Test models no one here wrote: dm_control's suite --------------------------
# The dm-control wheel for its MJCF (dm_control/suite/*.xml, the conformance test),
# without its dependencies (its Python needs none of them here).
dmc=$(sed -n 's/^dm-control==//p' "$root/scripts/requirements-models.txt")
have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("dm-control"))' \
  2>/dev/null || true)
if [ "$have" = "$dmc" ]; then
  say "dm_control's models: present (dm-control $dmc)"
else
  say "installing dm_control's models (dm-control $dmc, --no-deps)"
  "$venv/bin/python" -m pip install -q --no-deps -r "$root/scripts/requirements-models.txt"
fi

# --- 3. Assets exported from the pinned FlyGym ----------------------------------
exporter="$root/scripts/export_assets.py"
want=$(sha256sum "$exporter" | cut -d' ' -f1)
have=$("$venv/bin/python" - "$assets/manifest.json" <<'EOF' 2>/dev/null || true
import json, sys
print(json.load(open(sys.argv[1])).get("exporter_sha256", ""))
EOF
)
if [ "$have" = "$want" ] && [ -f "$assets/mesh.mjb" ] && [ -f "$assets/walking_clip.h5" ] &&
  [ -f "$assets/worlds/tethered.mjb" ] && [ -f "$assets/worlds/gapped.mjb" ] &&
  [ -f "$assets/worlds/blocks.mjb" ] && [ -f "$assets/worlds/mixed.mjb" ]; then
  say "assets: present ($assets)"
else
  say "exporting assets"
  tmp="$assets.partial"
  rm -rf "$tmp"
  "$venv/bin/python" "$exporter" "$tmp"
  rm -rf "$assets"
  mv "$tmp" "$assets"
fi

# --- 4. Configure and build -------------------------------------------------------
if [ "$build_tree" = 0 ]; then
  say "done (--no-build: $build not built)"
  exit 0
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring $build"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${FLYSIM_CMAKE_ARGS:-}
fi
say "building $build"
cmake --build "$build" -j "$(nproc)"

# --- 5. The venv imports flysim ---------------------------------------------------------
# A path file in the venv's site-packages names the Release build's package (build/python:
# the module and the package's sources, rebuilt with the tree), so that `.venv/bin/python`
# imports flysim with no PYTHONPATH. Not for other build folders (the sanitizers' module
# needs their runtimes preloaded; ctest gives each build's tests its own PYTHONPATH, which
# comes first).
if [ "$build" = "$root/build" ]; then
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$build/python" >"$site/flysim-build.pth"
  say "the venv imports flysim from $build/python ($site/flysim-build.pth)"
fi
say "done"
