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
    for args, text in [(["--backends", "tpu"], "'tpu' is not a value"),
                       (["--worlds", "0"], "'0' is not a value"),
                       (["--precision", "f16"], "'f16'"),
                       (["--graph", "maybe"], "'maybe'"),
                       (["--peer", "mjx2"], "not a peer"),
                       (["--no-plot"], "--no-plot only applies with --out"),
                       (["--repeat", "0"], "--repeat"),
                       (["--lanes", "--peer", "flygym"], "drop --peer")]:
        rc, _, err = run(*args)
        check(rc == 2 and text in err, f"bench {' '.join(args)}: exit {rc} (2), {err!r}")


def test_sweep(tmp):
    out_dir = os.path.join(tmp, "bench")
    rc, out, err = run("--backends", "cpu,host", "--precision", "f32,f64", "--worlds", "1,2",
                       "--sim-steps", "100", "--repeat", "2", "--peer", "flygym", "--out", out_dir,
                       "--quiet")
    check(rc == 0, f"bench cpu,host: exit {rc}: {err}\n{out}")
    s = summary(out)
    check(s.get("points") == "8" and s.get("failed") == "0", f"bench summary: {s}")
    for text in ["world-steps/s", "host:f64", "flygym", "against the peers", "x flygym"]:
        check(text in out, f"bench table shows {text!r}")
    with open(os.path.join(out_dir, "bench.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 8, f"bench.csv rows: {len(rows)}")
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


def test_failed_point(tmp):
    rc, out, err = run("--backends", "cpu,cuda", "--worlds", "1", "--sim-steps", "20",
                       "--repeat", "1", "--out", os.path.join(tmp, "cuda"), "--no-plot",
                       "--quiet")
    if "failed" in out:  # no GPU here: the cuda point fails, the cpu row stays
        check(rc == 1 and "no CUDA device" in out and "fix:" in out, f"cuda without GPU: {out}")
        s = summary(out)
        check(s.get("points") == "2" and s.get("failed") == "1", f"summary: {s}")
        with open(os.path.join(tmp, "cuda", "bench.csv")) as f:
            rows = list(csv.DictReader(f))
        check([r["ok"] for r in rows] == ["1", "0"], "the failed point is saved with its error")
    rc, _, err = run("--backends", "cpu", "--worlds", "1", "--sim-steps", "10", "--repeat", "1",
                     "--out", "/proc/forbidden/x")
    check(rc == 1 and "/proc/forbidden" in err, f"unwritable --out: {rc} {err!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-bench-") as tmp:
        test_usage()
        test_sweep(tmp)
        test_failed_point(tmp)
    cliutil.finish("test_bench")


if __name__ == "__main__":
    main()
