#!/usr/bin/env bash
# The GPU check, in one run on a machine with an NVIDIA GPU: the GPU tests,
# compute-sanitizer (memcheck, racecheck) on a short replay, the NVTX ranges of a
# real run, and a throughput sweep over worlds; a short table last.
#
# Binaries come from a bundle built on the development machine
# (bench/make_device_bundle.sh -> build-device/bundle.tar.xz), because the GPU
# machine has no MuJoCo and maybe no HDF5. From the repository root:
#   bench/device_check.sh [BUNDLE]      (default build-device/bundle.tar.xz)
# Environment: FLYSIM_SWEEP_WORLDS ("1024 4096 16384 65536"), FLYSIM_SWEEP_STEPS (1000).
# Results: a table on stdout and CSV in $OUT (or ./device-check-out).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle_tar="${1:-$root/build-device/bundle.tar.xz}"
out="${OUT:-$root/device-check-out}"
worlds_list="${FLYSIM_SWEEP_WORLDS:-1024 4096 16384 65536}"
steps="${FLYSIM_SWEEP_STEPS:-1000}"
mkdir -p "$out"
work=$(mktemp -d)
declare -a summary_rows=()
note() { printf '%s\n' "$*" | tee -a "$out/device_check.log"; }
row() { summary_rows+=("$*"); }

if [ ! -f "$bundle_tar" ]; then
  echo "device_check: no bundle at $bundle_tar; run bench/make_device_bundle.sh first" >&2
  exit 1
fi
tar -C "$work" -xJf "$bundle_tar"
b="$work/bundle"
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FLYSIM_ASSETS="$b/assets" FLYSIM_SOURCE_DIR="$root"
flysim="$b/bin/flysim"

note "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 |
  tee -a "$out/device_check.log"
note "bundle commit $(cat "$b/COMMIT" 2>/dev/null)"
if ldd "$flysim" | grep -q "not found"; then
  note "device_check: libraries missing:"; ldd "$flysim" | grep "not found"; exit 1
fi
"$flysim" --version | tee -a "$out/device_check.log"

# 1. GPU tests.
note "== GPU tests"
for t in cuda_stages_gpu cuda_replay_gpu; do
  start=$(date +%s.%N)
  timeout 300 "$b/bin/$t" >"$out/$t.log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  status=$([ $rc -eq 0 ] && echo passed || ([ $rc -eq 77 ] && echo skipped || echo "FAILED rc=$rc"))
  note "$t: $status (${secs%.*} s)"; tail -n 12 "$out/$t.log" | tee -a "$out/device_check.log"
  row "test $t: $status"
done

# 2. compute-sanitizer on a short replay (graph and no graph).
short=(replay --backend cuda --disable contact --worlds 64 --sim-steps 20 --warmup-sec 0.001 --quiet)
note "== compute-sanitizer"
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$flysim" "${short[@]}" \
      >"$out/sanitizer_$tool.log" 2>&1
    rc=$?
    note "$tool: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_$tool.log" | tail -n 1)"
    row "compute-sanitizer $tool: $([ $rc -eq 0 ] && echo clean || echo "rc=$rc, see sanitizer_$tool.log")"
  done
  FLYSIM_NO_GRAPH=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$flysim" \
    "${short[@]}" >"$out/sanitizer_memcheck_nograph.log" 2>&1
  rc=$?
  row "compute-sanitizer memcheck, no graph: $([ $rc -eq 0 ] && echo clean || echo "rc=$rc")"
else
  row "compute-sanitizer: not on PATH"
fi

# 3. NVTX ranges of a real run, through the injection library.
note "== NVTX"
inject=$(ls "$b"/bin/*nvtx_inject*.so 2>/dev/null | head -n 1)
if [ -n "$inject" ]; then
  NVTX_INJECTION64_PATH="$inject" FLYSIM_NVTX_LOG="$out/nvtx.log" timeout 120 "$flysim" \
    replay --backend cuda --disable contact --worlds 256 --sim-steps 50 --quiet >/dev/null 2>&1
  "$b/bin/test_nvtx_ranges" --check "$out/nvtx.log" 0 50 >"$out/nvtx_check.log" 2>&1
  rc=$?
  row "NVTX ranges (warmup, timed_run, 50 x step): $([ $rc -eq 0 ] && echo ok || echo "FAILED, see nvtx_check.log")"
fi

# 4. Throughput sweep (contacts disabled until part 2), graph and no graph.
note "== sweep: $steps steps, worlds: $worlds_list"
echo "backend,graph,worlds,steps,wall_s,world_steps_per_s,realtime_x,problem_worlds" >"$out/sweep.csv"
sweep_one() {  # graph worlds
  local env=() line
  [ "$1" = no ] && env=(FLYSIM_NO_GRAPH=1)
  line=$(env "${env[@]}" timeout 300 "$flysim" replay --backend cuda --disable contact \
    --worlds "$2" --sim-steps "$steps" --quiet 2>>"$out/sweep.err" | grep '^summary ')
  if [ -z "$line" ]; then row "sweep worlds=$2 graph=$1: failed (see sweep.err)"; return; fi
  local v
  v() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  echo "cuda,$1,$2,$(v steps),$(v wall_s),$(v world_steps_per_s),$(v realtime_x),$(v problem_worlds)" >>"$out/sweep.csv"
  row "$(printf 'cuda  graph=%-3s worlds=%-7s %12s world-steps/s  %9s x realtime  problems=%s' \
    "$1" "$2" "$(v world_steps_per_s)" "$(v realtime_x)" "$(v problem_worlds)")"
}
for n in $worlds_list; do sweep_one yes "$n"; done
sweep_one no 16384

# CPU on this machine's cores, for scale (same contact-free model, then with contacts).
ncpu=$(nproc)
for args in "--disable contact" ""; do
  # shellcheck disable=SC2086
  line=$(timeout 300 "$flysim" replay --backend cpu $args --worlds $((2 * ncpu)) --sim-steps 1000 \
    --quiet | grep '^summary ')
  row "cpu   ${args:-with contacts}: $(sed -n 's/.*world_steps_per_s=\([^ ]*\).*/\1/p' <<<"$line") world-steps/s on $ncpu threads"
done

note ""
note "== device check summary"
for r in "${summary_rows[@]}"; do note "  $r"; done
rm -rf "$work"
