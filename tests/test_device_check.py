#!/usr/bin/env python3
"""bench/device_check.sh's control flow without a GPU: a fake bundle whose programs
are shell stubs that pass, fail (rc 1), print a CUDA error, hang, or exit 77, as each
case's rules say, and the returned files read back.

Usage: test_device_check.py SOURCE_DIR

What it catches (deliberate breakage that makes it fail):
- any non-zero exit stopping the later GPU steps again (fix 2 reverted: gpu_ok=0 on
  every failure): test_flow's "a FAIL row does not stop the later steps";
- a CUDA error or a hang no longer stopping them: test_cuda_error, test_hang;
- a hung program outliving its killed wrapper (bench/gpusim/run.sh's case): test_hang;
- the timeout no longer clamped to the budget (a 60-s step at a 6-s budget): test_budget_clamp
  overruns its limit;
- the archives written only at the end: test_kill (SIGKILL mid-run) finds no archive;
- h5diff or the CUDA toolkit missing silently (no row): test_flow;
- compute-sanitizer / ncu not found in the CUDA roots, ncu's ERR_NVGPUCTRPERM stopping the
  check, the cuSOLVER tests without the toolkit's folder on LD_LIBRARY_PATH: test_tools;
- h5diff comparing the file a crashed run left: test_simulator;
- --simulator not wrapping the CUDA programs (or wrapping h5diff and MuJoCo), rows
  that cannot run there not saying so, or a simulator crash stopping the rehearsal:
  test_simulator.
"""

import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

import cliutil
from cliutil import check

SOURCE = sys.argv[1]
SCRIPT = os.path.join(SOURCE, "bench", "device_check.sh")

# Every program device_check.sh runs from the bundle's bin/.
PROGRAMS = ["flysim", "test_record", "test_nvtx_ranges", "engine_stages_gpu", "engine_collision_gpu",
            "engine_constraint_gpu", "engine_solver_gpu", "engine_solver_gpu_f64", "engine_replay_gpu",
            "engine_replay_contacts_gpu", "engine_replay_contacts_gpu_f64", "engine_contact_bound_gpu",
            "engine_cusolver_gpu", "engine_cusolver_gpu_f64"]

# A stub: logs its command line, LD_LIBRARY_PATH, PATH and a few variables, then does
# the first action of $FAKE_RULES (lines "GLOB<TAB>ACTION", matched against "NAME ARGS")
# that matches, else passes (writing the files a passing flysim writes).
STUB = r"""#!/usr/bin/env bash
name=$(basename "$0")
line="$name${*:+ $*}"
printf '%s\tLD=%s\tPATH=%s\tSIM=%s\tSMALL=%s\n' "$line" "${LD_LIBRARY_PATH:-}" "$PATH" \
  "${FAKE_SIM:-}" "${FLYSIM_TEST_SMALL:-}" >>"$FAKE_LOG"
action=pass
while IFS=$'\t' read -r pat act; do
  # shellcheck disable=SC2053
  if [[ $line == $pat ]]; then action=$act; break; fi
done <"$FAKE_RULES"
case $action in
  fail) echo "$name: FAIL: a numeric check"; exit 1 ;;
  cuda) echo "CUDA error cudaErrorIllegalAddress (an illegal memory access was encountered)" \
          "in cudaStreamSynchronize(s) at cuda/backend_cuda.cu:123"; exit 1 ;;
  assert) echo "step_kernel: block: [0,0,0], thread: [3,0,0] Assertion failed."
          echo "error: device-side assert triggered"; exit 1 ;;
  hang) echo $$ >>"$FAKE_LOG.pids"; exec sleep 300 ;;
  wrapped) # a hang under a wrapper that dies on TERM, as run.sh does; the program does not
    (trap '' TERM; exec sleep 300) &
    echo $! >>"$FAKE_LOG.pids"
    wait ;;
  skip) echo "no GPU"; exit 77 ;;
  ctrperm) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access" \
             "NVIDIA GPU Performance Counters"; exit 1 ;;
  race) echo "========= RACECHECK SUMMARY: 1 hazard displayed"; exit 9 ;;
  nocusolver) echo "tests/engine/test_cusolver.c:100: cusolverDnCreate(&h): cusolver status 1"
              exit 1 ;;
  abort) abort=1 ;; # below: its files written, as a crash-safe recorder leaves them
esac
if [ "$name" = compute-sanitizer ]; then # run what it checks
  while [ $# -gt 0 ] && [ "$1" != env ]; do shift; done
  exec "$@"
fi
prev=""
for a in "$@"; do # the files flysim writes
  case $prev in
    --save-data) mkdir -p "$a" && : >"$a/replay.h5" ;;
    --save) mkdir -p "$a" && : >"$a/compare.h5" ;;
    --out) mkdir -p "$a" && : >"$a/bench.csv" && : >"$a/dataset.h5" ;;
  esac
  prev=$a
done
[ -n "${abort:-}" ] && kill -ABRT $$
case $line in
  "flysim compare"*) echo "summary ratio=1.2 stages=passed" ;;
  "flysim bench"*) echo "cuda  f32  4096  1.0e7 world-steps/s" ;;
  "flysim replay --backend cpu"*) echo "summary world_steps_per_s=9000" ;;
esac
echo "$name: passed"
"""


def write_exe(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def make_bundle(tmp, h5diff=True):
    """bundle.tar.xz with the stubs (and an h5diff stub unless told not to)."""
    stage = os.path.join(tmp, "stage-h5" if h5diff else "stage")
    for p in PROGRAMS + (["h5diff"] if h5diff else []):
        write_exe(os.path.join(stage, "bundle", "bin", p), STUB)
    open(os.path.join(stage, "bundle", "bin", "libflysim_nvtx_inject.so"), "w").close()
    os.makedirs(os.path.join(stage, "bundle", "lib"))
    os.makedirs(os.path.join(stage, "bundle", "assets"))
    with open(os.path.join(stage, "bundle", "COMMIT"), "w") as f:
        f.write("0123abc\n")
    tar = os.path.join(tmp, "bundle-h5.tar.xz" if h5diff else "bundle.tar.xz")
    with tarfile.open(tar, "w:xz") as t:
        t.add(os.path.join(stage, "bundle"), arcname="bundle")
    return tar


class Case:
    """One run of device_check.sh: its own $OUT, rules and stub log."""

    def __init__(self, tmp, name, rules=(), env=None):
        self.dir = os.path.join(tmp, name)
        self.out = os.path.join(self.dir, "out")
        os.makedirs(self.out)
        self.rules = os.path.join(self.dir, "rules")
        with open(self.rules, "w") as f:
            f.writelines(f"{glob}\t{action}\n" for glob, action in rules)
        self.fake_log = os.path.join(self.dir, "stub.log")
        open(self.fake_log, "w").close()
        tools = os.path.join(tmp, "tools") # nvidia-smi, python3; not nvcc, ncu, ...
        self.env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"
                    and not k.startswith(("FLYSIM_CHECK_", "FLYSIM_TEST_", "FLYSIM_SWEEP_"))}
        self.env.update({"OUT": self.out, "FAKE_RULES": self.rules, "FAKE_LOG": self.fake_log,
                         "PATH": f"{tools}:/usr/bin:/bin", "FLYSIM_CHECK_CUDA_ROOTS": "",
                         "TMPDIR": self.dir})  # what a killed check leaves goes with tmp
        self.env.update(env or {})

    def start(self, *args):
        return subprocess.Popen(["bash", SCRIPT, *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def run(self, *args, limit=40):
        """rc and wall seconds (rc None when it overran limit: then killed)."""
        t0 = time.monotonic()
        p = self.start(*args)
        try:
            p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            check(False, f"{self.dir}: device_check.sh finished within {limit} s")
            return None, time.monotonic() - t0
        return p.returncode, time.monotonic() - t0

    def log(self):
        path = os.path.join(self.out, "device_check.log")
        return open(path).read() if os.path.exists(path) else ""

    def rows(self):
        """The result rows as logged, in order."""
        return [ln[len("result: "):] for ln in self.log().splitlines() if ln.startswith("result: ")]

    def row(self, prefix):
        return next((r for r in self.rows() if r.startswith(prefix)), None)

    def ran(self):
        return open(self.fake_log).read().splitlines()

    def archive(self, name):
        """The member names of $OUT/NAME (None when it is missing or unreadable)."""
        try:
            with tarfile.open(os.path.join(self.out, name)) as t:
                return t.getnames()
        except (OSError, tarfile.TarError):
            return None


def kill_hangs(case):
    """The hanging stubs a killed check leaves (their timeout is in its own process group)."""
    pids = case.fake_log + ".pids"
    for pid in open(pids).read().split() if os.path.exists(pids) else []:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def expect_row(case, prefix, *words):
    r = case.row(prefix)
    check(r is not None and all(w in r for w in words),
          f"{os.path.basename(case.dir)}: a row {prefix!r} saying {words}: {r!r}")
    return r


def test_flow(tmp, bundle):
    """A FAIL and a 77 do not stop the later steps; no h5diff, no toolkit, no tools are rows."""
    c = Case(tmp, "flow", rules=[("engine_stages_gpu", "fail"), ("engine_constraint_gpu", "skip")])
    rc, wall = c.run(bundle)
    check(rc == 0, f"flow: exit status 0 ({rc})")
    expect_row(c, "engine_stages_gpu:", "FAIL (rc 1)")
    check("later GPU steps" not in (c.row("engine_stages_gpu:") or ""), "flow: a FAIL stops nothing")
    # fix 2: the later steps run after a FAIL
    for name in ["engine_collision_gpu", "test_record", "compare_f32", "bench_f32", "bench_bounded"]:
        expect_row(c, f"{name}:", "passed")
    check(not any("unusable" in r for r in c.rows()), "flow: no step says the device is unusable")
    expect_row(c, "engine_constraint_gpu:", "skipped (rc 77")
    expect_row(c, "engine_cusolver_gpu", "not run", "no CUDA toolkit libraries")
    expect_row(c, "onchip_same_qpos:", "not run", "no h5diff in the bundle")
    expect_row(c, "generate_compare:", "not run", "no h5diff")
    expect_row(c, "python:", "not run", "no python/flysim or wheels/")
    expect_row(c, "compute-sanitizer:", "not found")
    expect_row(c, "ncu:", "not found")
    expect_row(c, "nvtx_check:", "passed")
    nvtx = [ln for ln in c.ran() if ln.startswith("test_nvtx_ranges")]
    check(len(nvtx) == 1 and "--worlds 256 --sim-steps 50\t" in nvtx[0],
          f"flow: test_nvtx_ranges --check LOG --worlds 256 --sim-steps 50: {nvtx}")
    expect_row(c, "  cpu:", "9000 world-steps/s")
    # the order: correctness first, then the main bench, the optional steps last
    names = [r.split(":")[0] for r in c.rows()]
    order = ["engine_stages_gpu", "engine_contact_bound_gpu", "engine_cusolver_gpu, _f64",
             "test_record", "compare_f32", "onchip_default", "generate_cuda", "bench_f32",
             "bench_f64", "compute-sanitizer", "nvtx_run", "bench_lanes4", "bench_record",
             "ncu", "bench_bounded", "cpu"]
    where = [names.index(n) if n in names else -1 for n in order]
    check(-1 not in where and where == sorted(where), f"flow: the sections' order {where}")
    log = c.log()
    check("== device check summary" in log and log.rstrip().endswith(c.rows()[-1]),
          "flow: the table is last")
    logs = c.archive("logs.tar.gz")
    check(logs is not None and "logs/engine_stages_gpu.log" in logs and "logs/table.txt" in logs,
          f"flow: logs.tar.gz holds each step's log and the table: {logs}")
    results = c.archive("results.tar.gz")
    check(results is not None and "results/compare-f64/compare.h5" in results
          and "results/bench-f32/bench.csv" in results,
          f"flow: results.tar.gz holds flysim's files: {results}")
    check(wall < 30, f"flow: {wall:.1f} s")


def test_cuda_error(tmp, bundle):
    """A CUDA error that leaves the device unusable stops the later GPU steps, not the host's."""
    c = Case(tmp, "cuda", rules=[("engine_collision_gpu", "cuda")])
    rc, _ = c.run(bundle)
    check(rc == 0, f"cuda: exit status 0 ({rc})")
    expect_row(c, "engine_collision_gpu:", "FAIL (rc 1)", "cudaErrorIllegalAddress",
               "later GPU steps are skipped")
    for name in ["engine_constraint_gpu", "test_record", "bench_f32", "bench_bounded"]:
        expect_row(c, f"{name}:", "skipped (the device is unusable after engine_collision_gpu")
    check(not any(ln.startswith(("engine_constraint_gpu", "flysim bench")) for ln in c.ran()),
          "cuda: the skipped programs did not run")
    for name in ["generate_host", "cpu"]:  # host steps go on
        expect_row(c, f"{name}:", "passed")
    # the runtime's own string, without our "CUDA error NAME" line
    c = Case(tmp, "assert", rules=[("engine_stages_gpu", "assert")],
             env={"FLYSIM_CHECK_ONLY": "gpu_tests"})
    c.run(bundle)
    expect_row(c, "engine_stages_gpu:", "device-side assert", "later GPU steps are skipped")
    expect_row(c, "engine_collision_gpu:", "skipped (the device is unusable")
    check(c.row("test_record") is None, "assert: FLYSIM_CHECK_ONLY=gpu_tests runs that section")


def test_budget_clamp(tmp, bundle):
    """A step that would overrun the budget is killed at its end; the later ones skip; the
    files are written."""
    budget = 6
    c = Case(tmp, "clamp", rules=[("engine_collision_gpu", "hang")],
             env={"FLYSIM_CHECK_BUDGET_S": str(budget), "FLYSIM_CHECK_MIN_S": "1"})
    rc, wall = c.run(bundle, limit=budget + 20)
    kill_hangs(c)
    r = expect_row(c, "engine_collision_gpu:", "TIMED OUT", "at the budget's end")
    if r:
        killed = int(r.split("killed after ")[1].split(" ")[0])
        check(killed <= budget, f"clamp: killed after {killed} s, within the {budget}-s budget")
    check(wall < budget + 10, f"clamp: the check ends near the budget ({wall:.1f} s)")
    expect_row(c, "engine_constraint_gpu:", "skipped (0 s of the budget left")
    expect_row(c, "cpu:", "skipped (0 s of the budget left")
    check(c.archive("logs.tar.gz") is not None and c.archive("results.tar.gz") is not None,
          "clamp: both archives written")
    check("== device check summary" in c.log(), "clamp: the table written")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_hang(tmp, bundle):
    """A step past its own timeout (60 s at 5 %: 3 s) is HUNG and stops the later GPU steps;
    what it left in its process group is ended."""
    c = Case(tmp, "hang", rules=[("engine_collision_gpu", "wrapped")],
             env={"FLYSIM_CHECK_TIMEOUT_PCT": "5", "FLYSIM_CHECK_MIN_S": "1",
                  "FLYSIM_CHECK_ONLY": "gpu_tests cpu"})
    rc, wall = c.run(bundle, limit=30)
    time.sleep(0.2)
    pids = open(c.fake_log + ".pids").read().split()
    check(pids and not any(alive(p) for p in pids),
          f"hang: the program under the wrapper ended: {pids}")
    kill_hangs(c)
    expect_row(c, "engine_collision_gpu:", "HUNG (killed after 3 s)", "later GPU steps are skipped")
    expect_row(c, "engine_constraint_gpu:",
               "skipped (the device is unusable after engine_collision_gpu hung")
    expect_row(c, "cpu:", "passed")


def test_kill(tmp, bundle):
    """SIGKILL mid-run (the device tool's limit): the archives hold what was done; SIGTERM:
    the table too."""
    for sig in [signal.SIGKILL, signal.SIGTERM]:
        c = Case(tmp, f"kill{int(sig)}",
                 rules=[("flysim bench --backends cuda --precision f32 *", "hang")])
        p = c.start(bundle)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and not any(ln.startswith("flysim bench")
                                                      for ln in c.ran()):
            time.sleep(0.1)
        time.sleep(0.3)
        if sig == signal.SIGKILL:
            os.killpg(p.pid, sig)  # everything, as a killed call
        else:
            os.kill(p.pid, sig)  # the script alone: it stops its step
        try:
            p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            check(False, f"kill: SIG{sig.name} ends the check")
        kill_hangs(c)
        logs, results = c.archive("logs.tar.gz"), c.archive("results.tar.gz")
        check(logs is not None and "logs/compare_f64.log" in logs,
              f"kill {sig.name}: logs.tar.gz holds the steps done: {logs}")
        check(results is not None and "results/compare-f64/compare.h5" in results,
              f"kill {sig.name}: results.tar.gz holds their files: {results}")
        check("result: compare_f64: passed" in c.log(), f"kill {sig.name}: the rows are in the log")
        if sig == signal.SIGTERM:
            check("interrupted by SIGTERM" in c.log() and "== device check summary" in c.log(),
                  "kill SIGTERM: the table, saying interrupted")
            check(p.returncode == 143, f"kill SIGTERM: exit status 143 ({p.returncode})")
            time.sleep(0.5)
            check(not any(ln.startswith("cpu") for ln in c.ran()),
                  "kill SIGTERM: nothing ran after")


def test_tools(tmp, bundle_h5):
    """Tools and the toolkit found off PATH in a CUDA root; ncu's ERR_NVGPUCTRPERM and a
    sanitizer's finding are rows; the cuSOLVER tests get the toolkit's folder."""
    cuda = os.path.join(tmp, "fake-cuda")
    write_exe(os.path.join(cuda, "bin", "compute-sanitizer"), STUB)
    write_exe(os.path.join(cuda, "bin", "ncu"), "#!/bin/sh\nexit 0\n")
    os.makedirs(os.path.join(cuda, "lib64"))
    open(os.path.join(cuda, "lib64", "libcusolver.so.12"), "w").close()
    c = Case(tmp, "tools", env={"FLYSIM_CHECK_CUDA_ROOTS": cuda},
             rules=[("compute-sanitizer --tool racecheck *", "race"),
                    ("flysim bench * --ncu *", "ctrperm")])
    rc, _ = c.run(bundle_h5)
    log = c.log()
    check(f"compute-sanitizer: {cuda}/bin/compute-sanitizer" in log
          and f"ncu: {cuda}/bin/ncu" in log, "tools: the log says where the tools were found")
    expect_row(c, "sanitizer_racecheck:", "FAIL (rc 9)")
    expect_row(c, "sanitizer_initcheck:", "passed")
    expect_row(c, "ncu_step:", "FAIL (rc 1)", "ERR_NVGPUCTRPERM")
    expect_row(c, "bench_bounded:", "passed")
    ncu = [ln for ln in c.ran() if ln.startswith("flysim bench") and "--ncu" in ln]
    check(len(ncu) == 1 and f"PATH={cuda}/bin:" in ncu[0],
          f"tools: ncu's folder on flysim's PATH: {ncu}")
    cus = [ln for ln in c.ran() if ln.startswith("engine_cusolver_gpu")]
    check(len(cus) == 2 and all(f"{cuda}/lib64" in ln.split("\tLD=")[1] for ln in cus),
          f"tools: the cuSOLVER tests see the toolkit's libraries: {cus}")
    expect_row(c, "engine_cusolver_gpu_f64:", "passed")
    for name in ["onchip_same_qpos", "onchip32_same_qvel", "generate_compare"]:
        expect_row(c, f"{name}:", "passed")  # h5diff in the bundle


def test_simulator(tmp, bundle_h5):
    """--simulator DEST: the CUDA programs through bench/gpusim/run.sh (a fake DEST whose
    env.sh marks them), FLYSIM_TEST_SMALL=1, tiny sizes, the rows that cannot run there."""
    dest = os.path.join(tmp, "fake-gpusim")
    os.makedirs(os.path.join(dest, "config"))
    open(os.path.join(dest, "config", "gpgpusim.config"), "w").close()
    write_exe(os.path.join(dest, "cuda118", "bin", "nvdisasm"), "#!/bin/sh\n")
    with open(os.path.join(dest, "env.sh"), "w") as f:
        f.write("export FAKE_SIM=1\n")
    cuda = os.path.join(tmp, "fake-cuda-sim")  # the toolkit's cuSOLVER: it runs, and fails there
    os.makedirs(os.path.join(cuda, "lib"))
    open(os.path.join(cuda, "lib", "libcusolver.so.12"), "w").close()
    c = Case(tmp, "sim", rules=[("engine_stages_gpu", "cuda"),
                                ("flysim replay * */onchip-0", "abort"),
                                ("engine_cusolver_gpu*", "nocusolver")],
             env={"FLYSIM_CHECK_SKIP": "engine_replay_contacts_gpu_lanes*",
                  "FLYSIM_CHECK_CUDA_ROOTS": cuda})
    rc, _ = c.run("--simulator", dest, bundle_h5)
    check(rc == 0, f"sim: exit status 0 ({rc})")
    # the simulator's device is per program: a CUDA error says what a GPU would do, and goes on
    expect_row(c, "engine_stages_gpu:", "cudaErrorIllegalAddress",
               "on a GPU the later GPU steps would")
    expect_row(c, "engine_collision_gpu:", "passed")
    expect_row(c, "engine_replay_contacts_gpu_lanes8:", "skipped (FLYSIM_CHECK_SKIP)")
    # a crashed run's file is not compared (the recorder leaves one)
    expect_row(c, "onchip_0:", "CRASHED (signal 6)")
    expect_row(c, "onchip_same_qpos:", "not run: onchip_0 did not pass")
    expect_row(c, "onchip32_same_qpos:", "passed")
    for name in ["nvidia-smi", "compute-sanitizer", "ncu", "engine_cusolver_gpu_f64"]:
        expect_row(c, f"{name}:", "not under the simulator")
    ran = c.ran()
    gpu = [ln for ln in ran if ln.startswith(("cuda_", "test_record", "flysim bench",
                                              "flysim compare", "flysim replay --backend cuda"))
           or (ln.startswith("flysim generate") and "gen-cuda.yaml" in ln)]
    check(len(gpu) > 20 and all("\tSIM=1\t" in ln and "\tSMALL=1" in ln for ln in gpu),
          f"sim: every CUDA program under the simulator, FLYSIM_TEST_SMALL=1 ({len(gpu)})")
    host = [ln for ln in ran if ln.startswith(("test_nvtx_ranges", "flysim replay --backend cpu",
                                               "h5diff"))
            or (ln.startswith("flysim generate") and "gen-host.yaml" in ln)]
    check(len(host) == 7 and all("\tSIM=\t" in ln for ln in host),
          f"sim: the host programs not under it: {host}")
    bench = [ln for ln in ran
             if ln.startswith("flysim bench --backends cuda --precision f32 --graph")]
    check(len(bench) == 1 and "--worlds 4 " in bench[0] and "--repeat 1 " in bench[0],
          f"sim: a single small bench point: {bench}")
    expect_row(c, "bench_f32:", "passed")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-devcheck-") as tmp:
        tools = os.path.join(tmp, "tools")
        write_exe(os.path.join(tools, "nvidia-smi"),
                  "#!/bin/sh\necho 'name, memory.total [MiB]'\necho 'NVIDIA H200, 143771 MiB'\n")
        os.symlink(os.path.realpath(sys.executable), os.path.join(tools, "python3"))
        bundle, bundle_h5 = make_bundle(tmp, h5diff=False), make_bundle(tmp, h5diff=True)
        test_flow(tmp, bundle)
        test_cuda_error(tmp, bundle)
        test_budget_clamp(tmp, bundle)
        test_hang(tmp, bundle)
        test_kill(tmp, bundle)
        test_tools(tmp, bundle_h5)
        test_simulator(tmp, bundle_h5)
    cliutil.finish("test_device_check")


if __name__ == "__main__":
    main()
