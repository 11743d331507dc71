#!/usr/bin/env bash
# The GPU check, in one run on a machine with an NVIDIA GPU: the GPU tests (float32
# and float64), what the GPU records (tests/test_record.c), the replay at 8 and 32 lanes a
# world and with the on-chip plan against none (to the bit), flysim generate with per-world
# models on the GPU against the host stepper (h5diff), `flysim compare --backends cpu,cuda --stages` in both precisions,
# compute-sanitizer (memcheck with and without the graph, synccheck, racecheck, initcheck) on a
# short replay with contacts, the NVTX ranges of a real run, a throughput sweep over
# worlds with contacts on (flysim bench), the same at 4, 8 and 16 lanes a world and
# without the on-chip plan, the cost of recording every series beside the loop (flysim
# bench --record off,on), one Nsight Compute report of the replay kernel, and the sweep's
# points again with a bounded contact buffer (--max-contacts);
# a table last.
#
# Binaries come from a bundle built on the development machine
# (bench/make_device_bundle.sh -> build-device/bundle.tar.xz), because the GPU
# machine has no MuJoCo and maybe no HDF5. From the repository root:
#   bench/device_check.sh [BUNDLE]      (default build-device/bundle.tar.xz)
# Environment: FLYSIM_SWEEP_WORLDS ("1024 4096 16384 65536"), FLYSIM_SWEEP_STEPS (200),
# FLYSIM_CHECK_BUDGET_S (420: no new step starts after it).
#
# Made for a 10-minute call that must return a table: every step has a short
# timeout; after the first GPU failure or hang the later GPU steps are skipped (and
# said so); each result row is appended to the log as soon as it is known. Only the
# bundle's programs see its libraries (nvidia-smi and compute-sanitizer do not).
# Needs bash, tar, gzip, timeout and Python 3 (to unpack xz); not bc or xz. Writes three
# files to $OUT (or ./device-check-out): device_check.log (everything, the table last),
# results.tar.gz (flysim's own files: compare-f32/ and compare-f64/compare.h5, draw them
# with scripts/plot_compare.py; bench-f32/ and bench-f64/bench.csv and bench.json,
# scripts/plot_bench.py; ncu/step_f32.ncu-rep and its CSV pages) and logs.tar.gz (each
# step's output).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle_tar="${1:-$root/build-device/bundle.tar.xz}"
out="${OUT:-$root/device-check-out}"
worlds_list="${FLYSIM_SWEEP_WORLDS:-1024 4096 16384 65536}"
steps="${FLYSIM_SWEEP_STEPS:-200}"
budget="${FLYSIM_CHECK_BUDGET_S:-420}"
mkdir -p "$out"
work=$(mktemp -d)
logs="$work/logs"
res="$work/results" # flysim's own files (compare.h5, bench.csv/json, the ncu report)
mkdir -p "$logs" "$res"
log="$out/device_check.log"
: >"$log"
declare -a rows=()
note() { printf '%s\n' "$*" | tee -a "$log"; }
row() { rows+=("$*"); note "result: $*"; }
gpu_ok=1 # 0 after the first GPU failure or hang: later GPU steps are skipped

if [ ! -f "$bundle_tar" ]; then
  echo "device_check: no bundle at $bundle_tar; run bench/make_device_bundle.sh first" >&2
  exit 1
fi
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
  "$bundle_tar" "$work" || { echo "device_check: cannot unpack $bundle_tar" >&2; exit 1; }
b="$work/bundle"
export FLYSIM_ASSETS="$b/assets" FLYSIM_SOURCE_DIR="$root"
flysim="$b/bin/flysim"
bundled=(env "LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") # only for ours

# step NAME TIMEOUT_S COMMAND...: run a GPU step into logs/NAME.log and record it.
step() {
  local name=$1 tmo=$2 rc status start
  shift 2
  if [ "$gpu_ok" = 0 ] || [ "$SECONDS" -ge "$budget" ]; then
    row "$name: skipped ($([ "$gpu_ok" = 0 ] && echo "after an earlier failure" || echo "time budget spent"))"
    return 1
  fi
  start=$SECONDS
  timeout -k 5 "$tmo" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  case $rc in
    0) status=passed ;;
    77) status="skipped (no device)" ;;
    124 | 137) status="HUNG (killed after ${tmo} s)"; gpu_ok=0 ;;
    *) status="FAILED (rc $rc)"; gpu_ok=0 ;;
  esac
  row "$name: $status, $((SECONDS - start)) s"
  tail -n 6 "$logs/$name.log" >>"$log"
  [ "$rc" = 0 ]
}

note "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | tee -a "$log"
note "bundle commit $(cat "$b/COMMIT" 2>/dev/null)"
if "${bundled[@]}" ldd "$flysim" | grep -q "not found"; then
  note "device_check: libraries missing:"
  "${bundled[@]}" ldd "$flysim" | grep "not found" | tee -a "$log"
  gpu_ok=0
fi
"${bundled[@]}" "$flysim" --version 2>&1 | tee -a "$log"

note "== GPU tests"
for t in cuda_stages_gpu cuda_collision_gpu cuda_constraint_gpu cuda_solver_gpu \
  cuda_solver_gpu_f64 cuda_replay_gpu cuda_replay_contacts_gpu cuda_replay_contacts_gpu_f64 \
  cuda_contact_bound_gpu; do
  step "$t" 150 "${bundled[@]}" "$b/bin/$t"
done

note "== what the GPU records: every series and the video's states vs the state and MuJoCo"
step test_record 120 "${bundled[@]}" "$b/bin/test_record"

note "== lanes per world and the on-chip plan: the replay with contacts at 8 and 32 lanes a world;"
note "   the default plan vs everything in global memory, to the bit (h5diff, no delta)"
for l in 8 32; do
  step "cuda_replay_contacts_gpu_lanes$l" 150 "${bundled[@]}" FLYSIM_WORLD_LANES=$l \
    "$b/bin/cuda_replay_contacts_gpu"
done
for chip in default 0; do
  step "onchip_$chip" 90 "${bundled[@]}" FLYSIM_ONCHIP_BYTES=$([ $chip = 0 ] && echo 0) \
    "$flysim" replay --backend cuda --worlds 64 --sim-steps 400 --warmup-sec 0.005 --quiet \
    --save-data "$res/onchip-$chip" --record angles,qpos,qvel,forces,legs --no-video --no-plots || true
done
if [ -x "$b/bin/h5diff" ]; then
  for d in /qpos /qvel /actuator_force /leg_contact_force; do
    step "onchip_same${d//\//_}" 30 "${bundled[@]}" "$b/bin/h5diff" \
      "$res/onchip-default/replay.h5" "$res/onchip-0/replay.h5" "$d"
  done
fi
note "   every intermediate on-chip (32 lanes a world, 18 contacts: 38 KiB a world in float32)"
note "   against none at the same width, to the bit"
for chip in all 0; do
  step "onchip32_$chip" 90 "${bundled[@]}" FLYSIM_WORLD_LANES=32 FLYSIM_ONCHIP_BYTES=$chip \
    "$flysim" replay --backend cuda --worlds 64 --sim-steps 400 --warmup-sec 0.005 --quiet \
    --max-contacts 18 --save-data "$res/onchip32-$chip" --record angles,qpos,qvel,forces,legs \
    --no-video --no-plots || true
done
if [ -x "$b/bin/h5diff" ]; then
  for d in /qpos /qvel /leg_contact_force; do
    step "onchip32_same${d//\//_}" 30 "${bundled[@]}" "$b/bin/h5diff" \
      "$res/onchip32-all/replay.h5" "$res/onchip32-0/replay.h5" "$d"
  done
fi

note "== flysim generate with per-world models (kp, friction, mass): cuda f64 vs host f64"
for be in cuda host; do
  cat >"$work/gen-$be.yaml" <<SPEC
backend: $be
precision: f64
worlds: 8
steps: 500
record_every: 5
block_worlds: 8
warmup_sec: 0.005
seed: 3
record: [angles, qpos, legs]
vary:
  clip: {start_row: {uniform: [0, 15000]}}
  model: {kp: {uniform: [120, 180]}, friction_scale: {uniform: [0.8, 1.2]}, mass_scale: {uniform: [0.9, 1.1]}}
  initial: {spawn_height: {uniform: [0, 0.2]}}
SPEC
  step "generate_$be" 180 "${bundled[@]}" "$flysim" generate "$work/gen-$be.yaml" \
    --out "$res/generate-$be" --quiet || true
done
if [ -x "$b/bin/h5diff" ]; then
  step generate_compare 60 "${bundled[@]}" "$b/bin/h5diff" --delta=1e-6 \
    "$res/generate-host/dataset.h5" "$res/generate-cuda/dataset.h5" /worlds/qpos_joint
fi

note "== flysim compare: cpu,cuda on NeuroMechFly (contacts, noslip), both precisions, --stages"
for p in f32 f64; do
  if step "compare_$p" 240 "${bundled[@]}" "$flysim" compare --backends cpu,cuda --precision "$p" \
    --worlds 8 --sim-steps 2000 --stages --save "$res/compare-$p" --no-plot --quiet; then :; fi
  line=$(grep -s '^summary ' "$logs/compare_$p.log" | cut -c9-)
  [ -n "$line" ] && row "  $line"
done

note "== compute-sanitizer (a short replay with contacts)"
short=(replay --backend cuda --worlds 64 --sim-steps 10 --warmup-sec 0.001 --quiet)
if command -v compute-sanitizer >/dev/null; then
  san() { # NAME TOOL [env...] -- flysim args
    local name=$1 tool=$2
    shift 2
    step "$name" 180 compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 9 \
      env LD_LIBRARY_PATH="$b/lib" "$@" "$flysim" "${short[@]}"
  }
  san sanitizer_memcheck memcheck
  san sanitizer_memcheck_nograph memcheck FLYSIM_NO_GRAPH=1
  san sanitizer_synccheck synccheck
  san sanitizer_racecheck racecheck
  san sanitizer_initcheck initcheck
  step sanitizer_memcheck_f64 180 compute-sanitizer --tool memcheck --target-processes all \
    --error-exitcode 9 env LD_LIBRARY_PATH="$b/lib" "$flysim" "${short[@]}" --precision f64
else
  row "compute-sanitizer: not on PATH"
fi

note "== NVTX"
inject=$(ls "$b"/bin/*nvtx_inject*.so 2>/dev/null | head -n 1)
if [ -n "$inject" ]; then
  step nvtx_run 90 "${bundled[@]}" NVTX_INJECTION64_PATH="$inject" FLYSIM_NVTX_LOG="$logs/nvtx.log" \
    "$flysim" replay --backend cuda --worlds 256 --sim-steps 50 --warmup-sec 0.001 --quiet &&
    step nvtx_check 30 "${bundled[@]}" "$b/bin/test_nvtx_ranges" --check "$logs/nvtx.log" 0 8 # 50 steps: 6 launches of 8, 2 of 1
fi

note "== flysim bench: worlds $worlds_list, $steps steps x 3 repeats, contacts on"
# float32 with the graph on and off, float64; bench.csv / bench.json come back whole
if step bench_f32 300 "${bundled[@]}" "$flysim" bench --backends cuda --precision f32 \
  --graph on,off --worlds "${worlds_list// /,}" --sim-steps "$steps" --repeat 3 \
  --out "$res/bench-f32" --no-plot --quiet; then :; fi
while read -r line; do row "  $line"; done < <(grep -sE '^cuda' "$logs/bench_f32.log")
if step bench_f64 240 "${bundled[@]}" "$flysim" bench --backends cuda --precision f64 \
  --worlds 1024,16384 --sim-steps "$steps" --repeat 3 --out "$res/bench-f64" --no-plot --quiet; then :; fi
while read -r line; do row "  $line"; done < <(grep -sE '^cuda' "$logs/bench_f64.log")

note "== lanes per world (FLYSIM_WORLD_LANES) and on-chip bytes (float32, 16384 worlds); last,"
note "   every intermediate on-chip at 32 lanes a world and 18 contacts (4 worlds an SM)"
for cfg in "4 - 0" "8 - 0" "16 - 0" "4 0 0" "32 all 18"; do
  set -- $cfg
  name="bench_lanes$1$([ "$2" = 0 ] && echo _noonchip)$([ "$2" = all ] && echo _allonchip)"
  bound=()
  [ "$3" != 0 ] && bound=(--max-contacts "$3")
  if step "$name" 150 "${bundled[@]}" FLYSIM_WORLD_LANES=$1 \
    FLYSIM_ONCHIP_BYTES=$([ "$2" != - ] && echo "$2") "$flysim" bench --backends cuda \
    --precision f32 "${bound[@]}" --worlds 16384 --sim-steps "$steps" --repeat 3 \
    --out "$res/$name" --no-plot --quiet; then :; fi
  while read -r line; do row "  $name: $line"; done < <(grep -sE '^cuda' "$logs/$name.log")
done

note "== recording every series to HDF5 beside the loop (float32, 16384 worlds)"
if step bench_record 240 "${bundled[@]}" "$flysim" bench --backends cuda --precision f32 \
  --record off,on --worlds 16384 --sim-steps "$steps" --repeat 3 --out "$res/bench-record" \
  --no-plot --quiet; then :; fi
while read -r line; do row "  $line"; done < <(grep -sE '^(cuda|  cuda)' "$logs/bench_record.log")

note "== Nsight Compute: one timed launch of the replay kernel (float32, 16384 worlds)"
if command -v ncu >/dev/null; then
  if step ncu_step 240 "${bundled[@]}" "$flysim" bench --backends cuda --precision f32 \
    --worlds 16384 --sim-steps 50 --repeat 1 --ncu "$res/ncu/step_f32" --quiet; then
    while read -r line; do row "  $line"; done < <(grep -E '^  ' "$logs/ncu_step.log")
  fi
else
  row "ncu: not on PATH"
fi

note "== a bounded contact buffer (--max-contacts 24: the walk's worlds make at most 18):"
note "   memory per world and throughput, both precisions, 16384 and 65536 worlds"
if step bench_bounded 200 "${bundled[@]}" "$flysim" bench --backends cuda --precision f32,f64 \
  --max-contacts 24 --worlds 16384,65536 --sim-steps 100 --repeat 3 --out "$res/bench-bounded" \
  --no-plot --quiet; then :; fi
while read -r line; do row "  bounded: $line"; done < <(grep -sE '^cuda' "$logs/bench_bounded.log")

note "== CPU for scale: MuJoCo's mj_step, contacts on, one world per thread"
ncpu=$(nproc)
if timeout 120 env LD_LIBRARY_PATH="$b/lib" "$flysim" replay --backend cpu --worlds "$ncpu" \
  --sim-steps 500 --warmup-sec 0.005 --quiet >"$logs/cpu.log" 2>&1; then
  row "cpu: $(sed -n 's/.*world_steps_per_s=\([^ ]*\).*/\1/p' "$logs/cpu.log") world-steps/s on $ncpu threads"
else
  row "cpu: failed, see logs/cpu.log"
fi

note ""
note "== device check summary ($SECONDS s)"
for r in "${rows[@]}"; do note "  $r"; done
tar -C "$work" -czf "$out/results.tar.gz" results
tar -C "$work" -czf "$out/logs.tar.gz" logs
rm -rf "$work"
