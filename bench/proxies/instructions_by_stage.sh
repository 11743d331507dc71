#!/usr/bin/env bash
# Where the instructions go: instructions per world-step by stage and by solver phase
# (valgrind's callgrind, inclusive costs) of flysim's host stepper in float32 and float64
# and of MuJoCo's mj_step (the cpu backend), on NeuroMechFly with contacts, 1 world, 1
# thread, the runs of bench/proxies/instructions_callgrind.sh: each runs S and 2S steps and a
# row's difference over S is its cost per world-step, set-up and warm-up cancelled.
# bench/proxies/instructions_by_stage.py maps the functions onto the stages (its STAGES table)
# and attributes inlined code through the debug information of a Release build with -g
# (the same code as build/: the same instruction count), which this script configures
# in FLYSIM_BUILD_DIR (default build-cg: no CUDA, no MPI) if it is not there, and brings
# up to date (the flysim target).
#   bench/proxies/instructions_by_stage.sh [S]   (default 200; 6 runs, about 2 minutes in all)
# Prints the table and writes bench/results/instructions-by-stage.csv.
#
# --model PATH instead counts one world of any model the host stepper takes (the test
# suite's held models: tests/models/NAME.xml) as bench/cpu/per_core.py runs it: from its first
# keyframe, controls included, W warm-up steps (--warmup, default 1000), then S or 2S
# (bench/proxies/step_one.c, through the public API); the table goes to
# bench/results/instructions-by-stage-NAME.csv.
#   bench/proxies/instructions_by_stage.sh [S] --model tests/models/walker.xml [--warmup W]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="${FLYSIM_BUILD_DIR:-$root/build-cg}"
flysim="$build/flysim"
s=200
model=""
warmup=1000
while (($#)); do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    [0-9]*) s="$1"; shift ;;
    *) echo "usage: bench/proxies/instructions_by_stage.sh [S] [--model PATH [--warmup W]]" >&2; exit 2 ;;
  esac
done
csv="$root/bench/results/instructions-by-stage.csv"
if [ -n "$model" ]; then
  [ -f "$model" ] || { echo "instructions_by_stage: $model: no such model file" >&2; exit 1; }
  name=$(basename "$model")
  csv="$root/bench/results/instructions-by-stage-${name%.*}.csv"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g \
    -DCMAKE_CXX_FLAGS=-g -DFLYSIM_CUDA=OFF -DFLYSIM_MPI=OFF >/dev/null
fi
target=flysim
[ -n "$model" ] && target=step_one && flysim="$build/bench/step_one"
cmake --build "$build" --target "$target" >/dev/null
if ! readelf -S -W "$flysim" | grep -q '\.debug_info'; then
  echo "instructions_by_stage: $flysim has no debug information; fix: a build with -g" \
    "(unset FLYSIM_BUILD_DIR: this script makes build-cg)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # backend precision steps -> $tmp/backend-precision-steps.out
  local prec=()
  [ "$1" = host ] && prec=(--precision "$2")
  local cmd=("$flysim" replay --backend "$1" "${prec[@]}" --worlds 1 --threads 1 --sim-steps "$3"
    --warmup-sec 0.005 --quiet)
  [ -n "$model" ] && cmd=("$flysim" "$model" "$1" "$2" "$warmup" "$3")
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$tmp/$1-$2-$3.out" \
    "${cmd[@]}" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}
for v in "cpu f64" "host f32" "host f64"; do
  read -r backend prec <<<"$v"
  run "$backend" "$prec" "$s"
  run "$backend" "$prec" $((2 * s))
done
python3 "$root/bench/proxies/instructions_by_stage.py" --steps "$s" --csv "$csv" \
  --host-f32 "$tmp/host-f32-$s.out" "$tmp/host-f32-$((2 * s)).out" \
  --host-f64 "$tmp/host-f64-$s.out" "$tmp/host-f64-$((2 * s)).out" \
  --mujoco "$tmp/cpu-f64-$s.out" "$tmp/cpu-f64-$((2 * s)).out"
