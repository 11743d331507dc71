#!/usr/bin/env bash
# The GPU-free proxy of the kernels' cost: ptxas's registers, stack, spills and
# shared memory per kernel, float32 and float64, from the reports the build keeps
# next to each CUDA object (cmake/ptxas_log.sh; no extra compile). Writes
# bench/results/ptxas-sm90.csv (the H200's arch: what the cuda_ptxas test holds the
# build to; commit it when the kernels change, with the reason) and
# bench/results/ptxas.txt (every arch, as a table).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="${FLYSIM_BUILD_DIR:-$root/build}"
py="$root/.venv/bin/python"
"$py" "$root/bench/proxies/ptxas_table.py" "$build" >"$root/bench/results/ptxas.txt"
"$py" "$root/bench/proxies/ptxas_table.py" "$build" --arch sm_90 --write "$root/bench/results/ptxas-sm90.csv"
