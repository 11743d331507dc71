#!/usr/bin/env bash
# Instructions per world-step (valgrind's callgrind: the same count whatever else the
# machine does), the GPU-free proxy of the stage code's cost: flysim's host stepper in
# float32 and float64 (the kernels' code on one lane) and MuJoCo's mj_step (the cpu
# backend) on NeuroMechFly with contacts, 1 world, 1 thread. Each runs S and 2S steps;
# the difference is S steps with set-up and warm-up cancelled.
#   bench/proxies/instructions_callgrind.sh [S]   (default 200; about a minute in all)
# Prints a table and writes bench/results/instructions.csv.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
flysim="${FLYSIM_BUILD_DIR:-$root/build}/flysim"
s=${1:-200}
csv="$root/bench/results/instructions.csv"
tmp=$(mktemp -d)
count() { # backend precision steps -> instructions of the whole process
  local prec=()
  [ "$1" = host ] && prec=(--precision "$2")
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$flysim" replay --backend "$1" \
    "${prec[@]}" --worlds 1 --threads 1 --sim-steps "$3" --warmup-sec 0.005 --quiet \
    >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  sed -n 's/^summary: *//p; s/^totals: *//p' "$tmp/cg.out" | head -n 1
}
echo "stepper,precision,steps,instructions_per_world_step" >"$csv"
for v in "cpu f64" "host f32" "host f64"; do
  set -- $v
  a=$(count "$1" "$2" "$s")
  b=$(count "$1" "$2" $((2 * s)))
  per=$(((b - a) / s))
  echo "$1,$2,$s,$per" >>"$csv"
  printf '%-5s %s  %12d instructions per world-step\n' "$1" "$2" "$per"
done
rm -rf "$tmp"
