#!/usr/bin/env bash
# The GPU check, in one run on a machine with an NVIDIA GPU, the most valuable steps
# first (bench/README.md, "The device check", lists each row and its time):
#   1. the device: nvidia-smi, the bundle's commit, its libraries, where the tools are
#   2. correctness: the GPU tests (float32 and float64), cuSOLVER's Cholesky as the
#      oracle of the solver's (the device's own CUDA libraries), what the GPU records
#      (tests/test_record.c), the Python package's device arrays and the gym env on
#      torch tensors (python/tests, the image's python3), `flysim compare --backends cpu,cuda --stages` in both
#      precisions, the replay at 8 and 32 lanes a world and with the on-chip plan
#      against none (to the bit, h5diff), flysim generate with per-world models on the
#      GPU against the host stepper (h5diff)
#   3. the main throughput sweep: flysim bench over worlds, float32 (graph on, off)
#      and float64, contacts on
#   4. optional: compute-sanitizer (memcheck with and without the graph, synccheck,
#      racecheck, initcheck) on a short replay with contacts, the NVTX ranges of a real
#      run, the sweep at 4, 8, 16 (and 32, every intermediate on-chip) lanes a world
#      and without the on-chip plan, the cost of recording every series beside the
#      loop (bench --record off,on), one Nsight Compute report of the step kernel,
#      the sweep's points with a bounded contact buffer (--max-contacts), MuJoCo on
#      the CPU for scale;
# a table last.
#
# Binaries come from a bundle built on the development machine
# (bench/make_device_bundle.sh -> build-device/bundle.tar.xz), because the GPU
# machine has no MuJoCo and maybe no HDF5. From the repository root:
#   bench/device_check.sh [BUNDLE]                   (default build-device/bundle.tar.xz)
#   bench/device_check.sh --simulator DEST [BUNDLE]  the rehearsal: every CUDA program
#       under GPGPU-Sim (bench/gpusim/run.sh DEST), tiny sizes, FLYSIM_TEST_SMALL=1
#       for the GPU tests, timeouts x 20, a 6-hour budget
#       (default build-device/bundle-sim.tar.xz: make_device_bundle.sh --simulator)
# Environment:
#   FLYSIM_CHECK_BUDGET_S (420; simulator 21600): seconds for the whole check; each
#       step's timeout is clamped to what is left, a step is skipped (and said so) when
#       less than FLYSIM_CHECK_MIN_S (15; simulator 120) is left
#   FLYSIM_SWEEP_WORLDS ("1024 4096 16384 65536"), FLYSIM_SWEEP_STEPS (200): the bench
#   FLYSIM_CHECK_ONLY: sections to run, space-separated (device always runs): gpu_tests
#       cusolver record python compare onchip generate bench terrains sanitizer nvtx lanes
#       bench_record ncu bounded cpu
#   FLYSIM_CHECK_TIMEOUT_PCT (100; simulator 2000): every step's timeout in percent of
#       its own (each step names its own below)
#   FLYSIM_CHECK_SKIP: steps not to run, space-separated names or globs (each a row
#       saying so), e.g. "cuda_*_gpu* test_record"
#   FLYSIM_CHECK_GO_ON (0; simulator 1): 1 runs the later GPU steps even after a hang, a
#       crash or a CUDA error (the simulator's device is per program: none carries over)
#   FLYSIM_CHECK_CUDA_ROOTS: folders to look in for the CUDA toolkit's libraries
#       (cuSOLVER's) and tools (compute-sanitizer, ncu) when they are not on PATH;
#       default: nvcc's install, /usr/local/cuda*, /opt/nvidia/*, and (only then)
#       ldconfig's cache and Python's nvidia-* wheels
#
# Made for a 10-minute call that must return its files: every step has a timeout
# clamped to the budget; a failed step is a FAIL row and the check goes on; only a
# hang, a signal or a CUDA error that leaves the device unusable (cudaErrorIllegalAddress,
# ...) stops the later GPU steps (each then says skipped, and why); each result row is
# appended to the log as soon as it is known, and the two archives and the table are
# rewritten after every step, so that a kill at any moment returns what was done. Only
# the bundle's programs see its libraries (nvidia-smi and compute-sanitizer do not).
# Needs bash, tar, gzip, timeout and Python 3 (to unpack xz); not bc or xz. Writes three
# files to $OUT (or ./device-check-out): device_check.log (everything, the table last),
# results.tar.gz (flysim's own files: compare-f32/ and compare-f64/compare.h5, draw them
# with scripts/plot_compare.py; bench-*/bench.csv and bench.json, scripts/plot_bench.py;
# generate-cuda/ and generate-host/; ncu/step_f32.ncu-rep and its CSV pages) and
# logs.tar.gz (each step's output, table.txt: the rows so far).
set -u
shopt -s nullglob
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { echo "usage: bench/device_check.sh [--simulator DEST] [BUNDLE]"; }
sim="" bundle_tar=""
while [ $# -gt 0 ]; do
  case $1 in
    --simulator)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      sim=$(cd "$2" && pwd) || { echo "device_check: no simulator at $2" >&2; exit 2; }
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) bundle_tar=$1; shift ;;
  esac
done
out="${OUT:-$root/device-check-out}"
only=" ${FLYSIM_CHECK_ONLY:-} "
only=${only//,/ }
read -r -a skip_pats <<<"${FLYSIM_CHECK_SKIP:-}"
# Sizes: the real GPU's, or the simulator's (about 0.6 M instructions a second: a world-
# step with contacts takes seconds, parsing flysim's PTX about a minute).
if [ -z "$sim" ]; then
  bundle_tar="${bundle_tar:-$root/build-device/bundle.tar.xz}"
  budget="${FLYSIM_CHECK_BUDGET_S:-420}" min_s="${FLYSIM_CHECK_MIN_S:-15}"
  pct="${FLYSIM_CHECK_TIMEOUT_PCT:-100}"
  worlds_list="${FLYSIM_SWEEP_WORLDS:-1024 4096 16384 65536}" steps="${FLYSIM_SWEEP_STEPS:-200}"
  repeat=3 warm=0.005 big=16384 bounded_worlds=16384,65536 f64_worlds=1024,16384
  replay_w=64 replay_s=400 gen_w=8 gen_s=500 cmp_w=8 cmp_s=2000 nvtx_w=256 nvtx_s=50 tcmp_s=500
  # bench warms up 500 steps as replay does by default; the check keeps 50 (warm) so
  # that its sweeps fit their step budgets (420 s in all)
  cmp_warm=() bench_warm=(--warmup-sec "$warm") cpu_s=500 go_on="${FLYSIM_CHECK_GO_ON:-0}"
else
  bundle_tar="${bundle_tar:-$root/build-device/bundle-sim.tar.xz}"
  budget="${FLYSIM_CHECK_BUDGET_S:-21600}" min_s="${FLYSIM_CHECK_MIN_S:-120}"
  pct="${FLYSIM_CHECK_TIMEOUT_PCT:-2000}"
  worlds_list="${FLYSIM_SWEEP_WORLDS:-4}" steps="${FLYSIM_SWEEP_STEPS:-8}"
  repeat=1 warm=0.0005 big=4 bounded_worlds=4 f64_worlds=4
  replay_w=4 replay_s=8 gen_w=4 gen_s=10 cmp_w=1 cmp_s=8 nvtx_w=4 nvtx_s=10 tcmp_s=4
  cmp_warm=(--warmup-sec "$warm") bench_warm=(--warmup-sec "$warm") cpu_s=50
  go_on="${FLYSIM_CHECK_GO_ON:-1}"
  export FLYSIM_TEST_SMALL=1 # the GPU tests' few worlds and steps
fi
mkdir -p "$out"
work=$(mktemp -d)
logs="$work/logs"
res="$work/results"   # flysim's own files (compare.h5, bench.csv/json, the ncu report)
scratch="$work/scratch" # inputs of the bit-equality rows (replay.h5 files), not returned
mkdir -p "$logs" "$res" "$scratch"
log="$out/device_check.log"
: >"$log"
declare -a rows=()
declare -A passed=() # the steps that passed: what the bit-equality rows may compare
note() { printf '%s\n' "$*" | tee -a "$log"; }
row() { rows+=("$*"); note "result: $*"; }
stopped="" # set to why (a step's name and cause) once the device is unusable
child=""   # the running step's timeout process

# The returned files, rewritten whole after every step (each through a temporary name,
# so that a kill mid-write leaves the previous one): the table so far, the logs, and
# the results when something in them changed (always with "last").
refresh() { # [last [NOTE]]
  { printf 'device check, %s s of the %s-s budget%s\n' "$SECONDS" "$budget" "${2:-}"
    for r in "${rows[@]}"; do printf '  %s\n' "$r"; done; } >"$logs/table.txt"
  tar -C "$work" -czf "$out/.logs.tar.gz" logs && mv -f "$out/.logs.tar.gz" "$out/logs.tar.gz"
  if [ "${1:-}" = last ] || [ ! -e "$out/results.tar.gz" ] ||
    [ -n "$(find "$res" -newer "$out/results.tar.gz" -print -quit)" ]; then
    tar -C "$work" -czf "$out/.results.tar.gz" results &&
      mv -f "$out/.results.tar.gz" "$out/results.tar.gz"
  fi
}
finish() { # the table last, the archives, the scratch folder gone
  note ""
  note "== device check summary ($SECONDS s of the $budget-s budget${1:-})"
  for r in "${rows[@]}"; do note "  $r"; done
  refresh last "${1:-}"
  rm -rf "$work"
}
on_signal() { # the device tool's kill, or Ctrl-C: stop the step, return what was done
  trap - TERM INT HUP
  if [ -n "$child" ]; then # the step's whole process group (timeout made it): TERM, then KILL
    kill -TERM -- "-$child" 2>/dev/null
    sleep 2
    kill -KILL -- "-$child" 2>/dev/null
  fi
  row "interrupted by SIG$1 at $SECONDS s"
  finish ", interrupted"
  exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP
refresh # the archives exist from the start

# Why a failed step failed, where its log says: a CUDA error that leaves the device
# unusable (the name our programs print, `CUDA error <name> (<string>) in <call> at
# file:line`, or the runtime's string), or a known cause that is no fault of ours.
poison='cudaErrorIllegalAddress|cudaErrorLaunchFailure|cudaErrorIllegalInstruction|cudaErrorMisalignedAddress'
poison+='|cudaErrorHardwareStackError|cudaErrorECCUncorrectable|cudaErrorDevicesUnavailable'
poison+='|cudaErrorNoDevice|cudaErrorLaunchTimeout|device-side assert|an illegal memory access'
poison+='|unspecified launch failure'
cause() { # LOG: one line, empty when nothing known
  if grep -q ERR_NVGPUCTRPERM "$1"; then
    echo "no permission for the GPU's performance counters (ERR_NVGPUCTRPERM)"
  elif grep -q "error while loading shared libraries" "$1"; then
    grep -m 1 -o "error while loading shared libraries: [^:]*" "$1"
  fi
}

# step [--host] NAME TIMEOUT_S COMMAND...: run COMMAND into logs/NAME.log and record
# the row. TIMEOUT_S (times FLYSIM_CHECK_TIMEOUT_PCT / 100, at least 1) is clamped to what is
# left of the budget; with under FLYSIM_CHECK_MIN_S left the step is skipped. A GPU step
# (the default) is skipped once the device is unusable; a --host step (h5diff, MuJoCo)
# is not. Returns 0 when the command passed.
step() {
  local kind=gpu name tmo t left need rc status start hit why pat
  [ "$1" = --host ] && { kind=host; shift; }
  name=$1 tmo=$2
  shift 2
  for pat in "${skip_pats[@]}"; do
    # shellcheck disable=SC2053 # a glob
    if [[ $name == $pat ]]; then row "$name: skipped (FLYSIM_CHECK_SKIP)"; return 1; fi
  done
  tmo=$((tmo * pct / 100 > 0 ? tmo * pct / 100 : 1))
  if [ $kind = gpu ] && [ -n "$stopped" ]; then
    row "$name: skipped (the device is unusable after $stopped)"
    refresh
    return 1
  fi
  left=$((budget - SECONDS)) need=$((tmo < min_s ? tmo : min_s))
  if [ "$left" -lt "$need" ]; then
    row "$name: skipped ($((left > 0 ? left : 0)) s of the budget left, under the $need s it needs)"
    refresh
    return 1
  fi
  t=$((left < tmo ? left : tmo))
  start=$SECONDS
  timeout -k 5 "$t" "$@" >"$logs/$name.log" 2>&1 </dev/null &
  child=$!
  wait "$child"
  rc=$?
  # timeout returns once its own child has gone; what that child started may live on in
  # timeout's process group (under the simulator, run.sh's program after a hang): end it
  kill -KILL -- "-$child" 2>/dev/null
  child=""
  why=""
  case $rc in
    0) status=passed ;;
    77) status="skipped (rc 77: the program found no GPU)" ;;
    124 | 137) # 124: timeout's TERM; 137: its KILL 5 s later, or a SIGKILL before it
      if [ "$rc" = 137 ] && [ $((SECONDS - start)) -lt "$t" ]; then
        status="CRASHED (signal 9: out of memory?)" why="$name was killed"
      elif [ "$t" -lt "$tmo" ]; then # no time left for the next steps anyway
        status="TIMED OUT (killed after $t s, at the budget's end)"
      else
        status="HUNG (killed after $t s)" why="$name hung"
      fi ;;
    *)
      if [ "$rc" -gt 128 ]; then
        status="CRASHED (signal $((rc - 128)))" why="$name crashed"
      else
        status="FAIL (rc $rc)"
        hit=$(grep -oE "$poison" "$logs/$name.log" | head -n 1)
        if [ -n "$hit" ]; then status+=": $hit" why="$name's $hit"
        elif [ -n "$sim" ] && grep -q "cusolverDnCreate.*status" "$logs/$name.log"; then
          # cuSOLVER's own kernels and set-up are not in the program's PTX
          status="not under the simulator (cusolverDnCreate failed, rc $rc)"
        else hit=$(cause "$logs/$name.log"); [ -n "$hit" ] && status+=": $hit"; fi
      fi ;;
  esac
  if [ $kind = gpu ] && [ -n "$why" ]; then
    if [ "$go_on" = 1 ]; then status+="; on a GPU the later GPU steps would be skipped"
    else stopped=$why status+="; later GPU steps are skipped"; fi
  fi
  row "$name: $status, $((SECONDS - start)) s"
  [ "$rc" = 0 ] && passed[$name]=1
  [ "$rc" = 0 ] || tail -n 6 "$logs/$name.log" | sed 's/^/    /' >>"$log"
  refresh
  [ "$rc" = 0 ]
}
# section NAME TITLE: whether NAME runs (FLYSIM_CHECK_ONLY), its title in the log
section() {
  if [ "$only" != "  " ] && [[ $only != *" $1 "* ]]; then return 1; fi
  note "== $2"
}
# same NAME "STEP_A STEP_B" A B DATASET [h5diff options]: DATASET of the files A and B
# that STEP_A and STEP_B wrote, to the bit (a host step); only when both steps passed (a
# crashed run leaves a file too: the recorder is crash-safe)
same() {
  local name=$1 from=$2 a=$3 b=$4 d=$5 s
  shift 5
  if [ ! -x "$bb/bin/h5diff" ]; then
    row "$name: not run: no h5diff in the bundle (the building machine lacked hdf5-tools)"
    return
  fi
  for s in $from; do
    [ -n "${passed[$s]:-}" ] || { row "$name: not run: $s did not pass"; return; }
  done
  step --host "$name" 20 "${ours[@]}" "$bb/bin/h5diff" "$@" "$a" "$b" "$d"
}
# rows_from NAME PATTERN [PREFIX]: a step's result lines (e.g. bench's table) as rows
rows_from() {
  local line
  while read -r line; do row "  ${3:-}$line"; done < <(grep -sE "$2" "$logs/$1.log")
}

if [ ! -f "$bundle_tar" ]; then
  row "no bundle at $bundle_tar; run bench/make_device_bundle.sh${sim:+ --simulator} first"
  finish
  exit 1
fi
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
  "$bundle_tar" "$work" || { row "cannot unpack $bundle_tar"; finish; exit 1; }
bb="$work/bundle"
export FLYSIM_ASSETS="$bb/assets" FLYSIM_SOURCE_DIR="$root"
flysim="$bb/bin/flysim"
# ours: a host program of the bundle with its libraries; gpu: a CUDA program, the same
# or under the simulator (its setup puts its libcudart first). Either takes VAR=VALUE
# arguments before the program, as env does.
ours=(env "LD_LIBRARY_PATH=$bb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
gpu_prefix() { # LIBDIRS: sets pre, the prefix of a CUDA program with LIBDIRS first
  pre=(env "LD_LIBRARY_PATH=$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  [ -z "$sim" ] || pre+=("$root/bench/gpusim/run.sh" "$sim" env)
}
gpu_prefix "$bb/lib"
gpu=("${pre[@]}")

# Where a CUDA install may be: the toolkit's libraries (cuSOLVER's) and tools
# (compute-sanitizer, ncu), which a fresh machine may have off PATH.
system=0
if [ -n "${FLYSIM_CHECK_CUDA_ROOTS+set}" ]; then
  read -r -a roots <<<"$FLYSIM_CHECK_CUDA_ROOTS"
else
  system=1 roots=()
  nvcc=$(command -v nvcc) && roots+=("$(dirname "$(dirname "$(readlink -f "$nvcc")")")")
  for r in /usr/local/cuda /usr/local/cuda-* /opt/nvidia /opt/nvidia/*; do
    [ -d "$r" ] && [[ " ${roots[*]} " != *" $(readlink -f "$r") "* ]] && roots+=("$(readlink -f "$r")")
  done
fi
find_tool() { # NAME: its path, PATH first
  local r c
  command -v "$1" && return 0
  for r in "${roots[@]}"; do
    for c in "$r/bin/$1" "$r/$1" "$r/compute-sanitizer/$1" "$r"/nsight-compute*/"$1" \
      "$r"/nsight-compute*/*/"$1"; do
      [ -f "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
  done
  return 1
}
cuda_lib_dirs() { # the folders holding the CUDA math libraries, ':'-joined
  local r d c seen=":" cands=()
  for r in "${roots[@]}"; do cands+=("$r/lib64" "$r/lib" "$r/targets/x86_64-linux/lib"); done
  if [ "$system" = 1 ]; then
    while read -r c; do cands+=("$(dirname "$c")"); done < <(ldconfig -p 2>/dev/null |
      awk '/lib(cusolver|cublas|cublasLt|cusparse|nvJitLink)\.so/{print $NF}')
    for c in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
      cands+=("$c"/nvidia/*/lib)
    done
  fi
  for d in "${cands[@]}"; do
    c=$(readlink -f "$d") || continue
    [[ $seen == *":$c:"* ]] && continue
    set -- "$c"/libcusolver.so* "$c"/libcublas*.so* "$c"/libcusparse.so* "$c"/libnvJitLink.so*
    [ $# -gt 0 ] && seen+="$c:"
  done
  seen=${seen#:}
  echo "${seen%:}"
}

note "== device"
if [ -n "$sim" ]; then
  note "simulator: $sim (GPGPU-Sim: the programs' device code on this CPU; FLYSIM_TEST_SMALL=1)"
  row "nvidia-smi: not under the simulator"
elif smi=$(command -v nvidia-smi); then
  smi_out=$(timeout 30 "$smi" --query-gpu=name,memory.total,driver_version,clocks.max.sm \
    --format=csv 2>&1)
  rc=$?
  note "$smi_out"
  [ "$rc" = 0 ] || row "nvidia-smi: FAIL (rc $rc)"
else
  row "nvidia-smi: not found"
fi
arch=$(cat "$bb/ARCH" 2>/dev/null)
note "bundle $(basename "$bundle_tar"): $arch, commit $(tr '\n' ' ' <"$bb/COMMIT" 2>/dev/null)"
want=$([ -n "$sim" ] && echo sm_80 || echo sm_90)
[ -z "$arch" ] || [ "$arch" = "$want" ] ||
  row "bundle: built for $arch, not $want (bench/make_device_bundle.sh${sim:+ --simulator})"
if "${ours[@]}" ldd "$flysim" | grep -q "not found"; then
  row "bundle: libraries missing: $("${ours[@]}" ldd "$flysim" | awk '/not found/{print $1}' | tr '\n' ' ')"
fi
timeout 30 "${ours[@]}" "$flysim" --version 2>&1 | tee -a "$log"
if [ -z "$sim" ]; then
  for tool in compute-sanitizer ncu; do
    if p=$(find_tool "$tool"); then note "$tool: $p"; else note "$tool: not found (PATH, ${roots[*]})"; fi
  done
fi
note "budget $budget s, steps skipped with under $min_s s left; $(nproc) CPUs"

if section gpu_tests "the GPU tests: each stage, the solver and the replay against MuJoCo"; then
  for t in engine_stages_gpu:60 engine_collision_gpu:60 engine_collision_convex_gpu:60 \
    engine_box_collision_gpu:60 engine_cylinder_collision_gpu:60 engine_cull_gpu:60 \
    engine_constraint_gpu:60 engine_solver_gpu:90 \
    engine_solver_gpu_f64:90 engine_replay_gpu:60 engine_replay_contacts_gpu:90 \
    engine_replay_contacts_gpu_f64:90 engine_contact_bound_gpu:90; do
    step "${t%:*}" "${t#*:}" "${gpu[@]}" "$bb/bin/${t%:*}"
  done
  # the public API on the device: views, masked reset, per-world parameters, the control
  # sequence, recordings, health, each against MuJoCo (tests/api/test_batch.c)
  for p in f32 f64; do
    step "test_batch_cuda_$p" 60 "${gpu[@]}" "$bb/bin/test_batch" cuda "$p"
  done
fi

if section cusolver "cuSOLVER's batched Cholesky as the oracle of the GPU's Hessian factor and solve"; then
  libdirs=$(cuda_lib_dirs)
  if [ -z "$libdirs" ]; then
    where="${roots[*]:-no folder (FLYSIM_CHECK_CUDA_ROOTS is empty)}"
    [ "$system" = 1 ] && where+=", ldconfig's cache, Python's nvidia wheels"
    row "engine_cusolver_gpu, _f64: not run: no CUDA toolkit libraries (libcusolver, libcublas)" \
      "on this machine (looked in $where)"
  else
    note "   the toolkit's libraries from $libdirs"
    gpu_prefix "$bb/lib:$libdirs"
    for t in engine_cusolver_gpu engine_cusolver_gpu_f64; do
      missing=$(LD_LIBRARY_PATH="$bb/lib:$libdirs" ldd "$bb/bin/$t" 2>/dev/null |
        awk '/not found/{printf "%s ", $1}')
      if [ -n "$missing" ]; then
        row "$t: not run: $libdirs lacks ${missing% } (another CUDA version than the bundle's)"
      else
        step "$t" 60 "${pre[@]}" "$bb/bin/$t"
      fi
    done
  fi
fi

if section record "what the GPU records: every series and the video's states vs the state and MuJoCo"; then
  step test_record 60 "${gpu[@]}" "$bb/bin/test_record"
fi

if section python "the Python package on the GPU: flysim.Batch's device arrays (DLPack, __cuda_array_interface__), and the gym env on torch tensors (device recording, device-mask resets) against its numpy round trips, to the bit"; then
  site="$work/site"
  if [ -n "$sim" ]; then
    row "python: not run under the simulator (bench/gpusim/gpusim_check.sh runs" \
      "test_device_arrays.py through its own host program)"
  elif [ ! -d "$bb/python/flysim" ] || [ -z "$(echo "$bb"/wheels/*.whl)" ]; then
    row "python: not run: the bundle holds no python/flysim or wheels/ (make it again with" \
      "bench/make_device_bundle.sh)"
  elif ! python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" \
    "$bb"/wheels/*.whl >"$logs/python_install.log" 2>&1; then
    row "python: not run: the bundle's wheels did not install with $(command -v python3)" \
      "($(tail -n 1 "$logs/python_install.log"))"
  else
    # MUJOCO_GL=disable: no rendering back end is looked for (the image has no glfw)
    step python_device 150 env "PYTHONPATH=$bb/python:$site" MUJOCO_GL=disable \
      "LD_LIBRARY_PATH=$bb/python/mujoco:$bb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" python3 -m pytest -q -rs -p no:cacheprovider \
      "$root/python/tests/test_device_arrays.py" "$root/python/tests/test_gym.py" -k \
      "device or cuda"
    rows_from python_device "^(SKIPPED|[0-9]+ (passed|failed|skipped))" "python_device: "
  fi
fi

if section compare "flysim compare: cpu,cuda on NeuroMechFly (contacts, noslip) and on our fixed-tendon actuators, both precisions, --stages"; then
  for p in f32 f64; do
    step "compare_$p" 120 "${gpu[@]}" "$flysim" compare --backends cpu,cuda --precision "$p" \
      --worlds "$cmp_w" --sim-steps "$cmp_s" "${cmp_warm[@]}" --stages --save "$res/compare-$p" \
      --no-plot --quiet
    line=$(grep -s '^summary ' "$logs/compare_$p.log" | cut -c9-) # drift vs the floor, stages
    [ -n "$line" ] && row "  compare_$p: $line"
  done
  # the device's paths since the last GPU session, on our models: actuators on fixed tendons
  for p in f32 f64; do
    step "compare_tendon_$p" 120 "${gpu[@]}" "$flysim" compare \
      --model "$root/tests/models/tendon_fixed.xml" --targets sine --backends cpu,cuda \
      --precision "$p" --worlds "$cmp_w" --sim-steps "$tcmp_s" "${cmp_warm[@]}" --stages \
      --no-plot --quiet
    line=$(grep -s '^summary ' "$logs/compare_tendon_$p.log" | cut -c9-)
    [ -n "$line" ] && row "  compare_tendon_$p: $line"
  done
fi

if section onchip "lanes per world and the on-chip plan: the replay with contacts at 8 and 32 lanes a world; the default plan vs everything in global memory, to the bit (h5diff, no delta)"; then
  for l in 8 32; do
    step "engine_replay_contacts_gpu_lanes$l" 90 "${gpu[@]}" FLYSIM_WORLD_LANES=$l \
      "$bb/bin/engine_replay_contacts_gpu"
  done
  replay=(replay --backend cuda --worlds "$replay_w" --sim-steps "$replay_s" --warmup-sec "$warm"
          --quiet --record "angles,qpos,qvel,forces,legs" --no-video --no-plots)
  step onchip_default 60 "${gpu[@]}" "$flysim" "${replay[@]}" --save-data "$scratch/onchip-default"
  step onchip_0 60 "${gpu[@]}" FLYSIM_ONCHIP_BYTES=0 "$flysim" "${replay[@]}" \
    --save-data "$scratch/onchip-0"
  for d in /qpos /qvel /actuator_force /leg_contact_force; do
    same "onchip_same${d//\//_}" "onchip_default onchip_0" "$scratch/onchip-default/replay.h5" \
      "$scratch/onchip-0/replay.h5" "$d"
  done
  note "   every intermediate on-chip (32 lanes a world, 18 contacts: 38 KiB a world in float32)"
  note "   against none at the same width, to the bit"
  for chip in all 0; do
    step "onchip32_$chip" 60 "${gpu[@]}" FLYSIM_WORLD_LANES=32 FLYSIM_ONCHIP_BYTES=$chip \
      "$flysim" "${replay[@]}" --max-contacts 18 --save-data "$scratch/onchip32-$chip"
  done
  for d in /qpos /qvel /leg_contact_force; do
    same "onchip32_same${d//\//_}" "onchip32_all onchip32_0" "$scratch/onchip32-all/replay.h5" \
      "$scratch/onchip32-0/replay.h5" "$d"
  done
fi

if section generate "flysim generate with per-world models (kp, friction, mass): cuda f64 vs host f64"; then
  for be in cuda host; do
    cat >"$work/gen-$be.yaml" <<SPEC
backend: $be
precision: f64
worlds: $gen_w
steps: $gen_s
record_every: 5
block_worlds: $gen_w
warmup_sec: $warm
seed: 3
record: [angles, qpos, legs]
vary:
  clip: {start_row: {uniform: [0, 15000]}}
  model: {kp: {uniform: [120, 180]}, friction_scale: {uniform: [0.8, 1.2]}, mass_scale: {uniform: [0.9, 1.1]}}
  initial: {spawn_height: {uniform: [0, 0.2]}}
SPEC
  done
  step generate_cuda 90 "${gpu[@]}" "$flysim" generate "$work/gen-cuda.yaml" \
    --out "$res/generate-cuda" --quiet
  step --host generate_host 90 "${ours[@]}" "$flysim" generate "$work/gen-host.yaml" \
    --out "$res/generate-host" --quiet
  same generate_compare "generate_host generate_cuda" "$res/generate-host/dataset.h5" \
    "$res/generate-cuda/dataset.h5" /worlds/qpos_joint --delta=1e-6
fi

if section bench "flysim bench: worlds $worlds_list, $steps steps x $repeat repeats, contacts on"; then
  # float32 with the graph on and off, float64; bench.csv / bench.json come back whole
  step bench_f32 180 "${gpu[@]}" "$flysim" bench --backends cuda --precision f32 \
    --graph on,off --worlds "${worlds_list// /,}" --sim-steps "$steps" --repeat "$repeat" \
    "${bench_warm[@]}" --out "$res/bench-f32" --no-plot --quiet
  rows_from bench_f32 '^cuda'
  step bench_f64 120 "${gpu[@]}" "$flysim" bench --backends cuda --precision f64 \
    --worlds "$f64_worlds" --sim-steps "$steps" --repeat "$repeat" "${bench_warm[@]}" \
    --out "$res/bench-f64" --no-plot --quiet
  rows_from bench_f64 '^cuda'
fi

if section terrains "FlyGym's blocks terrain beside the flat world (bench_f32): the capsule fly (culled pairs, box-capsule) and the mesh fly (box-mesh: GJK, EPA, multiccd), float32, $big worlds; the mesh fly on host and cuda"; then
  for w in blocks_capsule blocks; do
    step "bench_$w" 120 "${gpu[@]}" "$flysim" bench --backends cuda --precision f32 --world "$w" \
      --worlds "$big" --sim-steps "$steps" --repeat "$repeat" "${bench_warm[@]}" \
      --out "$res/bench-$w" --no-plot --quiet
    rows_from "bench_$w" '^cuda' "$w: "
  done
  step compare_blocks_mesh 120 "${gpu[@]}" "$flysim" compare --world blocks --backends host,cuda \
    --precision f32 --worlds "$cmp_w" --sim-steps "$tcmp_s" "${cmp_warm[@]}" \
    --save "$res/compare-blocks" --no-plot --quiet
  line=$(grep -s '^summary ' "$logs/compare_blocks_mesh.log" | cut -c9-)
  [ -n "$line" ] && row "  compare_blocks_mesh: $line"
fi

if section sanitizer "compute-sanitizer (a short replay with contacts)"; then
  if [ -n "$sim" ]; then
    row "compute-sanitizer: not under the simulator"
  elif ! san=$(find_tool compute-sanitizer); then
    row "compute-sanitizer: not found (PATH, ${roots[*]}): memcheck, synccheck, racecheck, initcheck not run"
  else
    short=(replay --backend cuda --worlds 64 --sim-steps 10 --warmup-sec 0.001 --quiet)
    san() { # NAME TOOL [VAR=VALUE...] [-- flysim options]: one tool on the short replay
      local name=$1 tool=$2 vars=()
      shift 2
      while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
      [ $# -gt 0 ] && shift
      step "sanitizer_$name" 120 "$san" --tool "$tool" --target-processes all \
        --error-exitcode 9 "${ours[@]}" "${vars[@]}" "$flysim" "${short[@]}" "$@"
    }
    san memcheck memcheck
    san memcheck_nograph memcheck FLYSIM_NO_GRAPH=1
    san synccheck synccheck
    san racecheck racecheck
    san initcheck initcheck
    san memcheck_f64 memcheck -- --precision f64
  fi
fi

if section nvtx "NVTX: the ranges of a real run, one a launch (the timed run's counted; the warm-up's inside warmup)"; then
  inject=("$bb"/bin/*nvtx_inject*.so)
  if [ ${#inject[@]} = 0 ]; then
    row "nvtx: not run: no NVTX injection library in the bundle"
  elif step nvtx_run 60 "${gpu[@]}" NVTX_INJECTION64_PATH="${inject[0]}" \
    FLYSIM_NVTX_LOG="$logs/nvtx.log" "$flysim" replay --backend cuda --worlds "$nvtx_w" \
    --sim-steps "$nvtx_s" --warmup-sec "$warm" --quiet; then
    step --host nvtx_check 20 "${ours[@]}" "$bb/bin/test_nvtx_ranges" --check "$logs/nvtx.log" \
      --worlds "$nvtx_w" --sim-steps "$nvtx_s"
  else
    row "nvtx_check: not run: nvtx_run did not pass"
  fi
fi

if section lanes "lanes per world (FLYSIM_WORLD_LANES) and on-chip bytes (float32, $big worlds); last, every intermediate on-chip at 32 lanes a world and 18 contacts (4 worlds an SM)"; then
  for cfg in "4 - 0" "8 - 0" "16 - 0" "4 0 0" "32 all 18"; do
    read -r lanes chip bound <<<"$cfg"
    name="bench_lanes$lanes$([ "$chip" = 0 ] && echo _noonchip)$([ "$chip" = all ] && echo _allonchip)"
    vars=(FLYSIM_WORLD_LANES="$lanes")
    [ "$chip" != - ] && vars+=(FLYSIM_ONCHIP_BYTES="$chip")
    bound_arg=()
    [ "$bound" != 0 ] && bound_arg=(--max-contacts "$bound")
    step "$name" 90 "${gpu[@]}" "${vars[@]}" "$flysim" bench --backends cuda --precision f32 \
      "${bound_arg[@]}" --worlds "$big" --sim-steps "$steps" --repeat "$repeat" "${bench_warm[@]}" \
      --out "$res/$name" --no-plot --quiet
    rows_from "$name" '^cuda' "$name: "
  done
fi

if section bench_record "recording every series to HDF5 beside the loop (float32, $big worlds)"; then
  step bench_record 120 "${gpu[@]}" "$flysim" bench --backends cuda --precision f32 \
    --record off,on --worlds "$big" --sim-steps "$steps" --repeat "$repeat" "${bench_warm[@]}" \
    --out "$res/bench-record" --no-plot --quiet
  rows_from bench_record '^(cuda|  cuda)'
fi

if section ncu "Nsight Compute: one timed launch of the step kernel (float32, $big worlds)"; then
  if [ -n "$sim" ]; then
    row "ncu: not under the simulator"
  elif ! ncu=$(find_tool ncu); then
    row "ncu: not found (PATH, ${roots[*]})"
  elif step ncu_step 180 "${gpu[@]}" PATH="$(dirname "$ncu"):$PATH" "$flysim" bench \
    --backends cuda --precision f32 --worlds "$big" --sim-steps 50 --repeat 1 \
    --ncu "$res/ncu/step_f32" --quiet; then
    rows_from ncu_step '^  '
  fi
fi

if section bounded "a bounded contact buffer (--max-contacts 24: the walk's worlds make at most 18): memory per world and throughput, both precisions, $bounded_worlds worlds"; then
  step bench_bounded 150 "${gpu[@]}" "$flysim" bench --backends cuda --precision f32,f64 \
    --max-contacts 24 --worlds "$bounded_worlds" --sim-steps "$((steps < 100 ? steps : 100))" \
    --repeat "$repeat" "${bench_warm[@]}" --out "$res/bench-bounded" --no-plot --quiet
  rows_from bench_bounded '^cuda' "bounded: "
fi

if section cpu "CPU for scale: MuJoCo's mj_step, contacts on, one world per thread"; then
  ncpu=$(nproc)
  if step --host cpu 60 "${ours[@]}" "$flysim" replay --backend cpu --worlds "$ncpu" \
    --sim-steps "$cpu_s" --warmup-sec "$warm" --quiet; then
    row "  cpu: $(sed -n 's/.*world_steps_per_s=\([^ ]*\).*/\1/p' "$logs/cpu.log") world-steps/s on $ncpu threads"
  fi
fi

finish
