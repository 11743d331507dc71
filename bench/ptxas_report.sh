#!/usr/bin/env bash
# The GPU-free proxy of the kernels' cost: ptxas's registers, stack, spills and
# shared memory per kernel, float32 and float64, for the H200's sm_90 (compiles
# cuda/device.cu alone, about a minute each). Prints a table and writes
# bench/results/ptxas-sm90.csv (commit it when the kernels change).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nvcc=${NVCC:-nvcc}
mujoco_inc=$("$root/.venv/bin/python" -c 'import mujoco, os; print(os.path.join(os.path.dirname(mujoco.__file__), "include"))')
csv="$root/bench/results/ptxas-sm90.csv"
tmp=$(mktemp -d)
echo "precision,kernel,registers,stack_bytes,spill_store_bytes,spill_load_bytes,shared_bytes" >"$csv"
for prec in f32 f64; do
  defs=(-DFLYSIM_NVTX=1)
  [ "$prec" = f32 ] && defs+=(-DFS_REAL_FLOAT)
  "$nvcc" -O3 -std=c++17 --generate-code=arch=compute_90,code=sm_90 -lineinfo -Xptxas=-v \
    "${defs[@]}" -I"$root" -I"$root/build/generated" -I"$mujoco_inc" \
    -c "$root/cuda/device.cu" -o "$tmp/device_$prec.o" 2>"$tmp/ptxas_$prec.txt"
  # ptxas prints, per entry: "Compiling entry function 'NAME'", "N bytes stack frame, S
  # bytes spill stores, L bytes spill loads", "Used R registers, ... K bytes smem"
  awk -v p="$prec" '
    /Compiling entry function/ { match($0, /_Z[0-9]+[a-z_]+/); name = substr($0, RSTART, RLENGTH);
                                 sub(/^_Z[0-9]+/, "", name) }
    /bytes stack frame/        { stack = $1; st = $5; ld = $9 }
    /Used [0-9]+ registers/    { match($0, /Used [0-9]+/); reg = substr($0, RSTART + 5, RLENGTH - 5);
                                 smem = 0; if (match($0, /[0-9]+ bytes smem/)) smem = substr($0, RSTART, RLENGTH - 11) + 0;
                                 if (name != "") print p "," name "," reg "," stack "," st "," ld "," smem; name = "" }
  ' "$tmp/ptxas_$prec.txt" >>"$csv"
done
rm -rf "$tmp"
column -s, -t "$csv"
