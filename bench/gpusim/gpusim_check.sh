#!/usr/bin/env bash
# flysim's device code on the CPU, through the GPU simulator (GPGPU-Sim with the CUDA 13
# patch, built by the GPU simulator's build.sh into DEST), before a GPU comes:
#   bench/gpusim/gpusim_check.sh DEST [--no-build] [--jobs N]
# 1. Builds what the simulator runs (sm_80 PTX alone), in two trees:
#      build-gpusim         one warp a block (-DFLYSIM_BLOCK_THREADS=32): the simulator's
#                           shuffles read and write the first warp of a block whichever
#                           warp runs them, so any number of worlds runs only this way;
#      build-gpusim-nofma   the default block (128 threads, 4 warps) and -fmad=false:
#                           flysim alone, run with at most one warp of worlds (8 at 4
#                           lanes), float64 against the host build bit for bit.
# 2. ctest -L gpusim in build-gpusim: every GPU test program in its small mode
#    (FLYSIM_TEST_SMALL=1); the Python module's device arrays (python/tests/
#    test_device_arrays.py: __cuda_array_interface__ and __dlpack__ consumed through ctypes,
#    ctrl written through them and stepped), the module linking the shared libcudart
#    (-DFLYSIM_CUDART_SHARED=ON) and run by bench/gpusim/pyhost.c.
# 3. flysim itself on the device: replay (graph on and off, float32 and float64, 8 and 32
#    lanes a world with every intermediate on-chip), compare --backends host,cuda --stages,
#    bench (one small point, both precisions), generate with per-world models (the
#    per-world-model kernel) against the host stepper, FlyGym's blocks terrain (capsule
#    and mesh fly: culled pairs, box-capsule and box-mesh) and tethered world against the
#    host stepper; each result compared
#    with the host build's (bench/gpusim/compare_h5.py) or judged by the verb against its
#    floor.
# 4. Writes bench/results/gpusim.md (bench/gpusim/report.py): each step, its result and
#    largest error, its wall time and the kernels it ran; every kernel of the project and
#    its launches. Exit 1 if a step failed or a kernel never ran.
# The worlds start from a settled keyframe (bench/gpusim/settled_model.py: MuJoCo's state
# after FlyGym's 0.05 s warm-up) so that they touch the ground from step 0 without 500
# simulated warm-up steps. Each simulator run prints its own log under
# build-gpusim/Testing/gpusim/. About an hour on 2 cores, the two trees' builds first
# (15-20 minutes after source changes; setup.sh --no-build leaves build/ alone).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest=${1:?usage: bench/gpusim/gpusim_check.sh DEST [--no-build] [--jobs N]}
dest=$(cd "$dest" && pwd) || exit 2
shift
build_trees=1
jobs=2
while (($#)); do
  case $1 in
    --no-build) build_trees=0 ;;
    --jobs) jobs=$2; shift ;;
    *) echo "usage: bench/gpusim/gpusim_check.sh DEST [--no-build] [--jobs N]" >&2; exit 2 ;;
  esac
  shift
done
[ -f "$dest/env.sh" ] || { echo "gpusim_check: $dest holds no simulator build (no env.sh)" >&2; exit 2; }
b32="$root/build-gpusim"
b128="$root/build-gpusim-nofma"
py="$root/.venv/bin/python"
logs="$b32/Testing/gpusim"
work="$b32/gpusim-check"
steps="$work/steps.jsonl"
start_all=$SECONDS
# the commit the trees are built from (the record names it, whatever lands meanwhile)
rev="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo " (with local changes)")"

say() { printf 'gpusim_check: %s\n' "$*"; }
"$root/scripts/setup.sh" --no-build >/dev/null || exit 1 # packages, venv, assets: not build/
if [ "$build_trees" = 1 ]; then
  common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80 -DFLYSIM_MPI=OFF -DFLYSIM_WERROR=ON)
  say "building $b32 (sm_80, 32 threads a block) and $b128 (sm_80, 128 threads, -fmad=false)"
  targets=(flysim _flysim test_record test_batch engine_stages_gpu engine_collision_gpu
    engine_collision_convex_gpu engine_box_collision_gpu engine_cylinder_collision_gpu engine_cull_gpu
    engine_constraint_gpu
    engine_solver_gpu engine_solver_gpu_f64 engine_replay_gpu engine_replay_contacts_gpu
    engine_replay_contacts_gpu_f64 engine_contact_bound_gpu engine_cusolver_gpu engine_cusolver_gpu_f64)
  cmake -S "$root" -B "$b32" "${common[@]}" -DFLYSIM_BLOCK_THREADS=32 -DFLYSIM_CUDART_SHARED=ON \
    >/dev/null &&
    cmake --build "$b32" -j "$(nproc)" --target "${targets[@]}" >/dev/null || exit 1
  cmake -S "$root" -B "$b128" "${common[@]}" -DFLYSIM_BLOCK_THREADS=128 -DFLYSIM_CUDA_FMAD=OFF \
    >/dev/null && cmake --build "$b128" -j "$(nproc)" --target flysim >/dev/null || exit 1
fi
rm -rf "$work" "$logs"
mkdir -p "$work" "$logs"
export FLYSIM_GPUSIM="$dest" FLYSIM_GPUSIM_STEPS="$steps" FLYSIM_ASSETS="$root/assets"
model="$work/settled.mjb"
"$py" "$root/bench/gpusim/settled_model.py" "$root/assets/mesh.mjb" "$model" || exit 1

# --- the simulator's own fault: shuffles beyond a block's first warp -------------------------
# (bench/gpusim/probe_shfl.cu: right on a GPU; where the simulator gets it right, one warp
# a block is no longer needed)
nvcc -arch=sm_80 -cudart shared -o "$work/probe_shfl" "$root/bench/gpusim/probe_shfl.cu" || exit 1
FLYSIM_GPUSIM_STEPS="$work/probe.jsonl" FLYSIM_GPUSIM_WHAT="the simulator: masked shuffles in a block's second warp" \
  "$root/bench/gpusim/ctest_run.sh" 1 "$logs" "$work/probe_shfl" >"$work/probe_shfl.out" 2>&1
"$py" - "$work/probe.jsonl" >>"$steps" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    s["status"] = "the simulator's fault" if s["rc"] else "right (the workaround may go)"
    s["result"] = ("12 worlds of 4 lanes: the second warp's shuffles run on the first warp's "
                   "threads (hence one warp a block) " + s["result"]) if s["rc"] else s["result"]
    print(json.dumps(s))
PY

# --- the simulator's own fault: a call reading its caller's locals through a pointer ---------
# (bench/gpusim/probe_call_local.cu: right on a GPU; the convex collider keeps what its
# calls read through pointers in the world's ccd_work, global memory, for this reason)
nvcc -arch=sm_80 -cudart shared -O3 -o "$work/probe_call_local" \
  "$root/bench/gpusim/probe_call_local.cu" || exit 1
FLYSIM_GPUSIM_STEPS="$work/probe2.jsonl" FLYSIM_GPUSIM_RESULT="probe_call_local" \
  FLYSIM_GPUSIM_WHAT="the simulator: a call reading its caller's local memory through a pointer" \
  "$root/bench/gpusim/ctest_run.sh" 1 "$logs" "$work/probe_call_local" >"$work/probe_call_local.out" 2>&1
"$py" - "$work/probe2.jsonl" >>"$steps" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    s["status"] = "the simulator's fault" if s["rc"] else "right"
    print(json.dumps(s))
PY

# --- 2. the GPU test programs ---------------------------------------------------------------
say "ctest -L gpusim -j $jobs (the GPU test programs, small mode)"
ctest --test-dir "$b32" -L gpusim -j "$jobs" --output-on-failure >"$work/ctest.log" 2>&1
grep -E "tests passed|Test +#|\*\*\*" "$work/ctest.log" | sed 's/^/  /'

# The cuSOLVER oracle: cuSOLVER's kernels and its driver-API set-up are not in the program's
# PTX; if cusolverDnCreate fails under the simulator, the step says so (not a failure of
# ours: the device check runs it on the GPU).
for p in "" _f64; do
  FLYSIM_TEST_SMALL=1 FLYSIM_GPUSIM_STEPS="$work/cusolver.jsonl" \
    FLYSIM_GPUSIM_WHAT="the Hessian factor vs cuSOLVER's batched Cholesky" \
    "$root/bench/gpusim/ctest_run.sh" 1 "$logs" "$b32/tests/engine/engine_cusolver_gpu$p" \
    >"$work/cusolver$p.out" 2>&1
done
"$py" - "$work/cusolver.jsonl" "$logs" >>"$steps" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    out = open(f"{sys.argv[2]}/{s['name']}.log.program").read()
    if s["rc"] != 0 and "cusolverDnCreate" in out:
        s["rc"] = 77
        s["result"] = ("the simulator cannot run cuSOLVER: cusolverDnCreate returns "
                       "CUSOLVER_STATUS_NOT_INITIALIZED (its kernels are not in the program's "
                       "PTX); the device check runs it on the GPU")
    print(json.dumps(s))
PY

# --- 3. flysim on the device ----------------------------------------------------------------
# sim NAME WHAT [ENV=VALUE...] -- FLYSIM ARGS: one run of a flysim under the simulator
# (bench/gpusim/ctest_run.sh: its log, its line in steps.jsonl), in the background, at most
# $jobs at once.
sim() {
  local name=$1 what=$2 envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  env "${envs[@]}" FLYSIM_GPUSIM_NAME="$name" FLYSIM_GPUSIM_WHAT="$what" \
    "$root/bench/gpusim/ctest_run.sh" 1 "$logs" "$@" >"$work/$name.out" 2>&1 &
}
# check NAME WHAT PRECISION -- COMMAND: a comparison of files the runs wrote, as a step
check() {
  local name=$1 what=$2 prec=$3 out rc
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" >"$work/$name.out"
  "$py" -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "what": sys.argv[2],
    "precision": sys.argv[3], "rc": int(sys.argv[4]), "wall_s": 0.0, "kernels": {},
    "result": sys.argv[5][:300]}))' "$name" "$what" "$prec" $rc "$out" >>"$steps"
  say "$name: $([ $rc = 0 ] && echo ok || echo "FAILED ($rc)"): $out"
}

# The Python module's device arrays: Python runs as pyhost (the simulator reads the CUDA
# version of a program from its libcudart, and takes an executable named python for PyTorch),
# the PTX the simulator extracts is the module's (PYTORCH_BIN), the module links the shared
# libcudart (FLYSIM_CUDART_SHARED=ON above): 2 worlds, a step a batch, f64 and f32.
pyvar() { "$py" -c "import sysconfig; print(sysconfig.$1)"; }
if [ "$(pyvar 'get_config_var("Py_ENABLE_SHARED")')" = 1 ]; then
  cc -O1 -o "$work/pyhost" "$root/bench/gpusim/pyhost.c" -I"$(pyvar 'get_paths()["include"]')" \
    -L"$(pyvar 'get_config_var("LIBDIR")')" -Wl,-rpath,"$(pyvar 'get_config_var("LIBDIR")')" \
    -lpython"$(pyvar 'get_config_var("LDVERSION")')" -Wl,--no-as-needed \
    -L"$(dirname "$(command -v nvcc)")/../lib64" -lcudart || exit 1
  sim python_device_arrays "the Python module's cuda arrays: CAI and DLPack consumed, ctrl written through them, stepped, vs Batch.write and a host batch" \
    PYTORCH_BIN="$(ls "$b32"/python/flysim/_flysim*.so)" \
    PYTHONPATH="$b32/python:$(pyvar 'get_paths()["purelib"]')" -- "$work/pyhost" -m pytest -q -rP \
    --durations=0 -p no:cacheprovider "$root/python/tests/test_device_arrays.py"
else
  say "python_device_arrays: not run: $py has no shared libpython for pyhost to link"
fi

flysim="$b32/flysim"
rep=(replay --model "$model" --sim-steps 8 --warmup-sec 0 --quiet --no-video --no-plots
  --record angles,qpos,qvel,forces,legs --worlds) # then the worlds
say "flysim replay, compare, bench, generate under the simulator"
# (the test programs engine_replay_*_gpu run the graph and the launches in both precisions)
for p in f32 f64; do
  sim "replay_$p" "flysim replay --backend cuda (graph)" -- "$flysim" "${rep[@]}" 2 --backend cuda \
    --precision $p --save-data "$work/replay-$p"
  "$flysim" "${rep[@]}" 2 --backend host --precision $p --save-data "$work/host-$p" >/dev/null 2>&1
done
sim replay_f32_nograph "flysim replay --backend cuda, FLYSIM_NO_GRAPH=1" FLYSIM_NO_GRAPH=1 -- \
  "$flysim" "${rep[@]}" 2 --backend cuda --precision f32 --save-data "$work/replay-f32-nograph"
sim compare_f64_nofma "compare --backends host,cuda --stages: 128-thread blocks (one warp of worlds), -fmad=false" \
  -- "$b128/flysim" compare --backends host,cuda --precision f64 --model "$model" --worlds 4 \
  --sim-steps 8 --warmup-sec 0 --stages --save "$work/compare-f64-nofma" --no-plot --quiet
sim replay_f32_lanes32_onchip "flysim replay, 32 lanes a world, every intermediate on-chip, 18 contacts" \
  FLYSIM_WORLD_LANES=32 FLYSIM_ONCHIP_BYTES=all -- "$flysim" "${rep[@]}" 2 --backend cuda \
  --precision f32 --max-contacts 18 --save-data "$work/replay-f32-l32"
sim replay_f32_lanes8 "flysim replay, 8 lanes a world" FLYSIM_WORLD_LANES=8 -- "$flysim" \
  "${rep[@]}" 2 --backend cuda --precision f32 --save-data "$work/replay-f32-l8"
# host,cuda --stages: the stepper's stages on the device; cuda,host: the floor is the
# device's own run from its state perturbed through fs_batch_read/fs_batch_write
sim compare_f32 "flysim compare --backends host,cuda --stages" -- "$flysim" compare \
  --backends host,cuda --precision f32 --model "$model" --worlds 2 --sim-steps 8 \
  --warmup-sec 0 --stages --save "$work/compare-f32" --no-plot --quiet
for p in f32 f64; do
  sim "compare_${p}_cuda_floor" "flysim compare --backends cuda,host (the device's floor)" -- \
    "$flysim" compare --backends cuda,host --precision $p --model "$model" --worlds 2 \
    --sim-steps 8 --warmup-sec 0 --save "$work/compare-$p-cuda-floor" --no-plot --quiet
done
# FlyGym's worlds beside the flat one: the blocks terrain (capsule fly: box-capsule pairs,
# the static pair culling on the device) and the tethered fly (a mocap thorax), each from
# its own settled keyframe, host against cuda (the terrain's stages too, in float32)
for w in blocks_capsule blocks tethered; do
  "$py" "$root/bench/gpusim/settled_model.py" "$root/assets/worlds/$w.mjb" "$work/settled-$w.mjb" ||
    exit 1
done
for p in f32 f64; do
  stages=()
  [ $p = f32 ] && stages=(--stages)
  sim "compare_blocks_$p" "compare --backends host,cuda on FlyGym's blocks terrain (capsule fly, culled pairs)" \
    -- "$flysim" compare --backends host,cuda --precision $p --model "$work/settled-blocks_capsule.mjb" \
    --worlds 2 --sim-steps 8 --warmup-sec 0 "${stages[@]}" --save "$work/compare-blocks-$p" \
    --no-plot --quiet
done
# The mesh fly on the blocks terrain: box-mesh pairs (GJK, EPA, multiccd) in the device step
# (step_kernel<Convex>), both precisions
for p in f32 f64; do
  sim "compare_blocks_mesh_$p" "compare --backends host,cuda on FlyGym's blocks terrain (mesh fly: box-mesh pairs)" \
    -- "$flysim" compare --backends host,cuda --precision $p --model "$work/settled-blocks.mjb" \
    --worlds 2 --sim-steps 8 --warmup-sec 0 --save "$work/compare-blocks-mesh-$p" --no-plot --quiet
done
sim compare_tethered_f64 "compare --backends host,cuda on FlyGym's tethered world (mocap thorax)" -- \
  "$flysim" compare --backends host,cuda --precision f64 --model "$work/settled-tethered.mjb" \
  --worlds 2 --sim-steps 8 --warmup-sec 0 --save "$work/compare-tethered-f64" --no-plot --quiet
sim bench "flysim bench --backends cuda, f32 and f64, one point" -- "$flysim" bench \
  --backends cuda --precision f32,f64 --model "$model" --worlds 2 --sim-steps 8 --repeat 1 \
  --warmup-sec 0 --out "$work/bench" --no-plot --quiet
for p in f32 f64; do
  for be in cuda host; do
    cat >"$work/gen-$be-$p.yaml" <<SPEC
model: $model
backend: $be
precision: $p
worlds: 2
steps: 8
record_every: 1
block_worlds: 2
warmup_sec: 0
seed: 3
record: [angles, qpos, legs]
vary:
  clip: {start_row: {uniform: [0, 15000]}}
  model: {kp: {uniform: [120, 180]}, friction_scale: {uniform: [0.8, 1.2]}, mass_scale: {uniform: [0.9, 1.1]}}
SPEC
  done
  sim "generate_$p" "flysim generate, per-world models (kp, friction, mass)" -- "$flysim" \
    generate "$work/gen-cuda-$p.yaml" --out "$work/generate-cuda-$p" --quiet
  "$flysim" generate "$work/gen-host-$p.yaml" --out "$work/generate-host-$p" --quiet \
    >/dev/null 2>&1
done
wait

# --- the runs' files against each other and against the host build ------------------------
ds=(/qpos /qvel /actuator_force /leg_contact_force)
# (the replay's series are float32: the float64 runs agree with the host's to float32 in
# them; compare's max_dq_b, from the states in float64, says how far they differ)
check graph_vs_nograph_f32 "the graph and the launches, bit for bit" f32 -- "$py" \
  "$root/bench/gpusim/compare_h5.py" "$work/replay-f32/replay.h5" \
  "$work/replay-f32-nograph/replay.h5" "${ds[@]}" --identical
for p in f32 f64; do
  check "cuda_vs_host_$p" "the simulator's replay vs the host build's (float32 series)" $p -- \
    "$py" "$root/bench/gpusim/compare_h5.py" "$work/host-$p/replay.h5" \
    "$work/replay-$p/replay.h5" "${ds[@]}"
done
for v in l32 l8; do
  check "cuda_vs_host_f32_$v" "lanes and on-chip variant vs the host build's" f32 -- "$py" \
    "$root/bench/gpusim/compare_h5.py" "$work/host-f32/replay.h5" \
    "$work/replay-f32-$v/replay.h5" "${ds[@]}"
done
for p in f32 f64; do
  check "generate_cuda_vs_host_$p" "generate: per-world models on the device vs the host" $p \
    -- "$py" "$root/bench/gpusim/compare_h5.py" "$work/generate-host-$p/dataset.h5" \
    "$work/generate-cuda-$p/dataset.h5" /worlds/qpos /worlds/leg_contact_force
done

# --- 4. the record ----------------------------------------------------------------------------
head="$work/header.md"
cat >"$head" <<MD
# The device code under the GPU simulator

\`bench/gpusim/gpusim_check.sh\` at $rev, $(date -u +%Y-%m-%d), on $(nproc) cores of
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'): GPGPU-Sim (accel-sim/gpgpu-sim_distribution 667834cf) with
the CUDA 13 patch, functional mode, an sm_86 configuration running our sm_80 PTX. Small sizes (the test
programs' small mode, 2 worlds of the replay for 8 steps from a settled keyframe): the
simulator runs about 0.6 M instructions a second.

How it is run, and why (the simulator's faults, worked around in how it runs):
- \`bench/gpusim/run.sh\` rewrites the PTX the simulator parses (\`bench/gpusim/ptx_fix.py\`):
  its lexer reads integer literals into a C int, so a 64-bit literal loses its upper half
  (nvcc stores every float64 1.0 through \`mov.u64 %rd, 4607182418800017408\`: the
  kinematics wrote 0 for the world's orientation, the replay's first step saw 167 contacts
  and NaN). Such literals become 0d literals of the same bits, which it reads whole.
- It cannot load a \`trap\` (it asks the instruction for a type it has none of, and aborts
  while loading the PTX): \`ptx_fix.py\` writes \`exit\` for it. Our kernels trap only where
  the backend never goes (a step kernel variant without the convex collider handed a model
  with convex pairs); there a thread would exit instead of failing.
- The simulator's \`shfl.sync\` reads and writes the threads of a block's first warp
  whichever warp executes it (its warp id is never set in functional mode): any kernel with
  more than one warp a block gets other worlds' lane sums, or aborts. build-gpusim runs one
  warp a block (\`-DFLYSIM_BLOCK_THREADS=32\`); the default 128-thread block runs in
  build-gpusim-nofma with one warp of worlds.
- Distinct names for the two precisions' PTX files and kernels (the build's): the simulator
  binds a launch by kernel name and extracts PTX by file name.
- The Python module (python_device_arrays): the simulator reads a program's PTX from its
  executable and its CUDA version from the libcudart.so.N the executable links, and takes
  an executable named python for PyTorch (the version never read: CUDA 11's layouts for
  CUDA 13's device properties). Python runs as \`bench/gpusim/pyhost.c\` (its main, linked
  with libcudart), \`PYTORCH_BIN\` names the module as the file holding the PTX, and the
  module links the shared libcudart (\`-DFLYSIM_CUDART_SHARED=ON\`) that the simulator
  replaces.
- A call (not inlined) that reads its caller's local memory through a pointer reads other
  memory (probe_call_local). Worked around in our code, not in how it runs: the convex
  collider keeps its shapes and contacts, which its calls read so, in its scratch in the
  world's \`ccd_work\` (global memory), with its GJK and EPA state.
- Its PTX parser has no \`bfind.shiftamt\` (what nvcc makes of \`__ffs\`): a module holding it
  fails to load and every program aborts (\`add_ptxinfo: Assertion s != NULL\`). Worked
  around in our code: the candidates' lowest set bit is a population count of the bits
  below it (\`fsi_lowest_bit\`), the same few instructions on a GPU.
- What it cannot check: races and missing \`__syncwarp\`s (a warp runs in lockstep: the lane
  emulation under ThreadSanitizer is that check), out-of-bounds accesses (no faults),
  shared-memory limits and carveouts, occupancy and timing.
MD
"$py" "$root/bench/gpusim/report.py" --header "$head" "$steps" \
  "$root/bench/results/ptxas-sm90.csv" "$root/bench/results/gpusim.md"
rc=$?
say "done in $(((SECONDS - start_all) / 60)) min; bench/results/gpusim.md"
exit $rc
