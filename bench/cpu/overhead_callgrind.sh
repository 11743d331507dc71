#!/usr/bin/env bash
# The CPU harness's overhead in instructions (valgrind's callgrind counts them the
# same whatever else the machine does): flysim's stepper against the bare mj_step
# loop, 1 world, 1 thread, both after the same warm-up. Each is run for S and 2S
# steps; the difference is the cost of S steps with set-up and warm-up cancelled.
#   bench/cpu/overhead_callgrind.sh [S]     (default 500; about a minute per 500 steps)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench="${FLYSIM_BUILD_DIR:-$root/build}/bench/bench_cpu"
s=${1:-500}
tmp=$(mktemp -d)
count() {  # mode steps -> instructions of the whole process
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bench" --only "$1" \
    --steps "$2" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  sed -n 's/^summary: *//p; s/^totals: *//p' "$tmp/cg.out" | head -n 1
}
b1=$(count bare "$s"); b2=$(count bare $((2 * s)))
f1=$(count flysim "$s"); f2=$(count flysim $((2 * s)))
bare=$((b2 - b1)); ours=$((f2 - f1))
echo "instructions per step: bare mj_step loop $((bare / s)), flysim stepper $((ours / s))"
awk -v b="$bare" -v o="$ours" 'BEGIN { printf "harness overhead: %+.3f %% of the instructions\n", 100 * (o - b) / b }'
rm -rf "$tmp"
