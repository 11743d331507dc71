#!/usr/bin/env python3
"""`flysim bench` as a user runs it: a small sweep of cpu and host with the FlyGym
peer, the table and ratios, bench.csv / bench.json / throughput.png, usage errors,
and a point that cannot run (cuda without a GPU) reported without losing the rest.

Usage: test_bench.py FLYSIM_BINARY
"""

import csv
import json
import os
import sys
import tempfile

import cliutil
from cliutil import check, summary

FLYSIM = sys.argv[1]


def run(*args, timeout=600):
    return cliutil.run(FLYSIM, "bench", *args, timeout=timeout)


def test_usage():
    rc, out, _ = run("--help")
    check(rc == 0, "bench --help exits 0")
    for opt in ["--backends", "--precision", "--graph", "--worlds", "--repeat", "--peer", "--out",
                "Exit status"]:
        check(opt in out, f"bench --help documents {opt}")
    for args, text in [(["--backends", "tpu"], "'tpu' is not cpu, host or cuda; fix:"),
                       (["--worlds", "0"], "'0' is not a number of worlds from 1 to 16777216"),
                       (["--precision", "f16"], "'f16'"),
                       (["--precision", "f32,f64,f32"], "more than the two precisions"),
                       (["--graph", "on,off,on"], "--graph: at most 2 values"),
                       (["--backends", "cpu", "--max-contacts", "8"],
                        "--max-contacts bounds the buffers of flysim's stepper"),
                       (["--graph", "maybe"], "--graph: 'maybe' is not on or off; fix:"),
                       (["--peer", "mjx2"], "not a peer"),
                       (["--peer", "rollout", "--targets", "sine"], "not flysim's sine; fix:"),
                       (["--no-plot"], "--no-plot only applies with --out"),
                       (["--repeat", "0"], "--repeat"),
                       (["--lanes", "--peer", "flygym"], "drop --peer"),
                       (["--ncu", "x"], "profiles one point of the GPU stepper"),
                       (["--profile", "x", "--backends", "cuda", "--worlds", "1,2"],
                        "profiles one point")]:
        rc, _, err = run(*args)
        check(rc == 2 and text in err, f"bench {' '.join(args)}: exit {rc} (2), {err!r}")


def test_sweep(tmp):
    out_dir = os.path.join(tmp, "bench")
    # a short warm-up (the bench's own is replay's 0.05 s: 500 steps a point and repeat, long
    # under the sanitizers; test_bench_repeat checks what the warm-up settles)
    rc, out, err = run("--backends", "cpu,host", "--precision", "f32,f64", "--worlds", "1,2",
                       "--sim-steps", "100", "--repeat", "2", "--warmup-sec", "0.005", "--peer",
                       "flygym", "--out", out_dir, "--quiet")
    check(rc == 0, f"bench cpu,host: exit {rc}: {err}\n{out}")
    s = summary(out)
    check(s.get("points") == "8" and s.get("failed") == "0", f"bench summary: {s}")
    for text in ["world-steps/s", "host:f64", "flygym", "against the peers", "x flygym",
                 "against MuJoCo's mj_step (cpu)", "x cpu"]:
        check(text in out, f"bench table shows {text!r}")
    with open(os.path.join(out_dir, "bench.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 8, f"bench.csv rows: {len(rows)}")
    # the CPU steppers' points of one number of worlds are measured together: rows by worlds
    order = [(r["stepper"], r["worlds"]) for r in rows if r["peer"] == "0"]
    check(order == [(st, w) for w in ("1", "2") for st in ("cpu", "host:f32", "host:f64")],
          f"the CPU points by worlds, then stepper: {order}")
    for r in rows:
        check(r["ok"] == "1" and float(r["world_steps_per_s"]) > 100
              and float(r["world_steps_per_s_min"]) <= float(r["world_steps_per_s"])
              <= float(r["world_steps_per_s_max"]), f"bench.csv row {r['stepper']} {r['worlds']}")
        if r["peer"] == "0":
            check(float(r["world_bytes"]) > 1000, f"memory per world for {r['stepper']}")
    with open(os.path.join(out_dir, "bench.json")) as f:
        j = json.load(f)
    check(j["machine"]["cores"] >= 1 and j["mujoco_version"].startswith("3.")
          and "bench" in j["command_line"] and len(j["rows"]) == 8, "bench.json run record")
    png = os.path.join(out_dir, "throughput.png")
    check(os.path.exists(png) and os.path.getsize(png) > 10000, "throughput.png written")


def test_rollout(tmp):
    """--peer rollout: MuJoCo's mujoco.rollout at the CPU points' worlds, a run each turn of
    their repeats, and the ratios against it, turn by turn."""
    out_dir = os.path.join(tmp, "rollout")
    rc, out, err = run("--backends", "host", "--worlds", "1,2", "--sim-steps", "50", "--repeat",
                       "2", "--warmup-sec", "0.01", "--peer", "rollout", "--out", out_dir,
                       "--no-plot", "--quiet")
    check(rc == 0, f"bench --peer rollout: exit {rc}: {err}\n{out}")
    with open(os.path.join(out_dir, "bench.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["stepper"] == "rollout"]
    check([(r["worlds"], r["threads"], r["ok"]) for r in rows] == [("1", "1", "1"), ("2", "2", "1")]
          and all(float(r["world_steps_per_s_min"]) <= float(r["world_steps_per_s"])
                  <= float(r["world_steps_per_s_max"]) for r in rows),
          f"rollout rows at 1 and 2 worlds, on the points' threads: {rows}")
    check("x rollout" in out and "turn by turn" in out,
          f"the table's ratio against rollout, paired turn by turn: {out}")


def test_record(tmp):
    """--record off,on: the same point with every series recorded to HDF5 beside it,
    the cost line, the column in the files, and no recording left behind."""
    out_dir = os.path.join(tmp, "record")
    rc, out, err = run("--backends", "host", "--worlds", "2", "--sim-steps", "200", "--repeat",
                       "1", "--record", "off,on", "--out", out_dir, "--no-plot", "--quiet")
    check(rc == 0, f"bench --record off,on: exit {rc}: {err}\n{out}")
    check("recording every series" in out and "the loop without it" in out,
          f"the recording's cost is printed: {out}")
    with open(os.path.join(out_dir, "bench.csv")) as f:
        rows = list(csv.DictReader(f))
    check([r["record"] for r in rows] == ["off", "on"] and all(r["ok"] == "1" for r in rows),
          f"bench.csv record column: {rows}")
    check(not [n for n in os.listdir(out_dir) if n.endswith(".h5")],
          f"the recording is removed: {os.listdir(out_dir)}")
    # --max-contacts: the host's worlds hold that many (the column), the cpu's no bound
    rc, out, err = run("--backends", "cpu,host", "--worlds", "1", "--sim-steps", "50", "--repeat",
                       "1", "--max-contacts", "24", "--out", out_dir, "--no-plot", "--quiet")
    with open(os.path.join(out_dir, "bench.csv")) as f:
        rows = {r["stepper"]: r for r in csv.DictReader(f)}
    check(rc == 0 and rows["host:f32"]["contacts_per_world"] == "24"
          and rows["cpu"]["contacts_per_world"] == "0" and "at most 24 a world" in out,
          f"bench --max-contacts 24: {rc} {rows} {err!r}")
    rc, _, err = run("--record", "maybe")
    check(rc == 2 and "--record" in err, f"--record maybe: {rc} {err!r}")


def test_failed_point(tmp):
    rc, out, err = run("--backends", "cpu,cuda", "--worlds", "1", "--sim-steps", "20",
                       "--repeat", "1", "--out", os.path.join(tmp, "cuda"), "--no-plot",
                       "--quiet")
    if "failed" in out:  # no GPU here: the cuda point fails, the cpu row stays
        check(rc == 1 and cliutil.no_cuda(out) and "fix:" in out, f"cuda without GPU: {out}")
        s = summary(out)
        check(s.get("points") == "2" and s.get("failed") == "1", f"summary: {s}")
        with open(os.path.join(tmp, "cuda", "bench.csv")) as f:
            rows = list(csv.DictReader(f))
        check([r["ok"] for r in rows] == ["1", "0"], "the failed point is saved with its error")
    # the MJX peer with a Python that lacks jax (the venv's, unless FLYSIM_MJX_PYTHON
    # points elsewhere): a failed row that names the fix
    rc, out, _ = cliutil.run(FLYSIM, "bench", "--backends", "cpu", "--worlds", "1",
                             "--sim-steps", "10", "--repeat", "1", "--peer", "mjx", "--quiet",
                             env={"FLYSIM_MJX_PYTHON": sys.executable})
    try:
        import jax  # noqa: F401
    except ImportError:
        check(rc == 1 and "mjx" in out and "FLYSIM_MJX_PYTHON" in out and "mujoco-mjx" in out,
              f"mjx peer without jax: exit {rc}, {out}")
    rc, _, err = run("--backends", "cpu", "--worlds", "1", "--sim-steps", "10", "--repeat", "1",
                     "--out", "/proc/forbidden/x")
    check(rc == 1 and "/proc/forbidden" in err, f"unwritable --out: {rc} {err!r}")


FAKE_NCU = r"""#!/usr/bin/env python3
# A stand-in Nsight Compute: records the profiling run's command line and guard, and
# for --import answers with canned CSV pages in ncu's layout.
import os, sys
args = sys.argv[1:]
if "--import" in args:
    page = args[args.index("--page") + 1]
    if page == "details":
        print('"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"')
        for name, unit, value in [("Duration", "us", "812.5"),
                                  ("Registers Per Thread", "register/thread", "255"),
                                  ("Achieved Occupancy", "%", "11.9"),
                                  ("Theoretical Occupancy", "%", "12.5"),
                                  ("Memory Throughput", "%", "41.2"),
                                  ("Elapsed Cycles", "cycle", "1")]:
            print(f'"0","step_kernel","S","{name}","{unit}","{value}"')
    else:
        stalls = ["long_scoreboard", "barrier", "wait", "math_pipe_throttle", "lg_throttle",
                  "no_instruction"]
        head = ['"ID"', '"Kernel Name"'] + [
            f'"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio"' for s in stalls]
        print(",".join(head))
        print(",".join(['""', '""'] + ['"ratio"'] * len(stalls)))
        print(",".join(['"0"', '"step_kernel"'] + [f'"{v}"' for v in (9.5, 3.1, 2.2, 1.0, 0.5, 0.1)]))
    sys.exit(0)
with open(os.environ["FAKE_NCU_LOG"], "w") as f:
    f.write(os.environ.get("FLYSIM_UNDER_NCU", "") + "\n" + "\n".join(args) + "\n")
out = args[args.index("--export") + 1]
open(out + ".ncu-rep", "w").close()
"""


def test_ncu(tmp):
    """--ncu with a stand-in ncu first on PATH: the command it runs, and the numbers
    printed from its report."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    ncu = os.path.join(bindir, "ncu")
    with open(ncu, "w") as f:
        f.write(FAKE_NCU)
    os.chmod(ncu, 0o755)
    log = os.path.join(tmp, "ncu.log")
    env = {"PATH": bindir + ":" + os.environ["PATH"], "FAKE_NCU_LOG": log}
    rc, out, err = cliutil.run(FLYSIM, "bench", "--backends", "cuda", "--worlds", "4096",
                               "--ncu", os.path.join(tmp, "prof", "step"), "--repeat", "1",
                               env=env)
    check(rc == 0, f"bench --ncu with a stand-in ncu: exit {rc}: {err}")
    with open(log) as f:
        guard, *args = f.read().split("\n")
    check(guard == "1", "the profiled run has FLYSIM_UNDER_NCU=1")
    # skipped: the warm-up's 500 steps (62 launches of 8 steps and 4 of one) and two more
    for a, b in [("--kernel-name", "regex:step_kernel"), ("--launch-skip", "68"),
                 ("--launch-count", "1"), ("--export", os.path.join(tmp, "prof", "step"))]:
        check(a in args and args[args.index(a) + 1] == b, f"ncu {a} {b}: {args}")
    check("WarpStateStats" in args and "SourceCounters" in args and "--ncu" not in args
          and "bench" in args and "--worlds" in args, f"ncu command line: {args}")
    for text in ["Achieved Occupancy", "11.9", "Registers Per Thread", "stall: long_scoreboard",
                 "9.5"]:
        check(text in out, f"bench --ncu prints {text!r}: {out}")
    check("Elapsed Cycles" not in out and "stall: no_instruction" not in out,
          "only the numbers that matter, the top five stalls")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-bench-") as tmp:
        test_usage()
        test_sweep(tmp)
        test_rollout(tmp)
        test_record(tmp)
        test_failed_point(tmp)
        test_ncu(tmp)
    cliutil.finish("test_bench")


if __name__ == "__main__":
    main()
