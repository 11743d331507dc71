#!/usr/bin/env bash
# A ctest `gpusim` test: PROGRAM's device code under GPGPU-Sim (bench/gpusim/run.sh), when
# FLYSIM_GPUSIM names the simulator's build folder (the DEST of the GPU simulator's build.sh)
# and this build is one the simulator runs (sm_80 PTX only, one warp a block:
# bench/gpusim/gpusim_check.sh configures such a build); otherwise 77 (skipped).
#   ctest_run.sh READY LOGDIR PROGRAM [ARGS...]
# READY is 1 for such a build (CMake knows). The simulator's whole output goes to
# LOGDIR/<name>.log; the program's own lines pass through, then one line: the exit
# status, the wall time and the kernels the simulator executed (bench/gpusim/launches.py).
set -u
ready=$1 logdir=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${FLYSIM_GPUSIM:-}" ]; then
  echo "skipped: FLYSIM_GPUSIM is not set (the GPU simulator's build folder; see bench/gpusim/gpusim_check.sh)"
  exit 77
fi
if [ "$ready" != 1 ]; then
  echo "skipped: this build is not one the simulator runs; configure it with" \
    "-DCMAKE_CUDA_ARCHITECTURES=80 -DFLYSIM_BLOCK_THREADS=32 (bench/gpusim/gpusim_check.sh does)"
  exit 77
fi
if [ ! -f "$FLYSIM_GPUSIM/env.sh" ]; then
  echo "FLYSIM_GPUSIM=$FLYSIM_GPUSIM holds no simulator build (no env.sh); fix: build it" \
    "with the GPU simulator's build.sh SRC DEST and set FLYSIM_GPUSIM=DEST" >&2
  exit 1
fi
name=${FLYSIM_GPUSIM_NAME:-$(basename "$1")}
mkdir -p "$logdir"
log="$logdir/$name.log"
start=$SECONDS
"$here/run.sh" "$FLYSIM_GPUSIM" "$@" >"$log" 2>&1
rc=$?
wall=$((SECONDS - start))
"$here/program_lines.sh" "$log" | tee "$log.program"
echo "gpusim: $name: exit $rc, $wall s, kernels: $(python3 "$here/launches.py" "$log")"
# FLYSIM_GPUSIM_STEPS: a file that gets this run's line for bench/gpusim/report.py (what
# it ran, FLYSIM_GPUSIM_WHAT; its result, the last line of its output that gives an error,
# a verdict or a summary)
if [ -n "${FLYSIM_GPUSIM_STEPS:-}" ]; then
  result=$(grep -E "${FLYSIM_GPUSIM_RESULT:-worst|max \|dq\||FAILED|passed|CUDA error|Assertion|^summary}" \
    "$log.program" | tail -n 1 | cut -c1-300)
  [ $rc -gt 128 ] && result="killed by signal $((rc - 128)): $(grep -m1 -E "Assertion|ERROR" "$log" | sed 's/.*\(Assertion\)/\1/' | cut -c1-120)"
  python3 "$here/launches.py" --step "$name" "${FLYSIM_GPUSIM_WHAT:-$name}" $rc $wall "$result" \
    "$log" >>"$FLYSIM_GPUSIM_STEPS"
fi
exit $rc
