#!/usr/bin/env python3
"""Instructions per world-step by stage and by solver phase, from callgrind's raw output
(bench/proxies/instructions_by_stage.sh runs callgrind and calls this): flysim's host stepper
(float32, float64) and MuJoCo's mj_step side by side, each stage's row the same work on
both sides through ONE table (STAGES below: a stage's flysim functions and MuJoCo's).

  instructions_by_stage.py --steps S --csv OUT \\
      --host-f32 S.out 2S.out --host-f64 S.out 2S.out --mujoco S.out 2S.out

Each pair of runs made S and 2S steps after the same set-up and warm-up: a row's
instructions in the 2S run less those in the S run, over S, is its cost per world-step,
set-up cancelled (as bench/proxies/instructions_callgrind.sh does for the whole process).

Costs are inclusive and attributed by call site. callgrind names a cost by the symbol it
ran in, so inlined code needs more: in an object with debug information (flysim, built
with -g; run with --dump-instr=yes) each instruction address is mapped by addr2line to
its chain of inlined functions, and a cost (an instruction's, or a call's inclusive cost
at its call site) belongs to every function of that chain. libmujoco has no debug
information but keeps its symbol table (static functions included), so there a chain is
the symbol alone. A row counts a cost whose chain holds one of its functions and none of
its exclusions ("-F": not F, nor a call to F; "-F>G": not F's calls to G; "F>G" alone: F's
calls to G, inclusive). A call to a function the row already holds is not counted twice.
"""

import argparse
import collections
import csv
import os
import re
import subprocess
import sys

# The one table: (stage, phase, flysim's functions, MuJoCo's functions, note), in
# mj_step's order. The stages are common/engine/fields.h's FS_STAGES (checked below), noslip
# a phase of fwd_constraint as fs_step runs it, plus MuJoCo's work that flysim does not
# do (energy: flysim's cell empty). A phase row "=rest" is its stage less the
# stage's other phases (the setup: what neither side's functions separate); "-others" in a
# phase's functions excludes the other phases' functions (and calls to them).
STAGES = [
    ("checks", "", "fsi_check", "mj_checkPos mj_checkVel mj_checkAcc",
     "qpos, qvel, qacc (mj_step's checks)"),
    ("kinematics", "", "fs_kinematics",
     "mj_kinematics mj_fwdKinematics -mj_comPos -mj_camlight -mj_tendon -mj_flex",
     "MuJoCo: mj_kinematics1/2, mj_local2Global"),
    ("com_pos", "", "fs_com_pos", "mj_comPos", ""),
    ("make_m", "", "fs_make_m", "mj_makeM mj_crb mj_tendonArmature", ""),
    ("factor_m", "", "fs_factor_m", "mj_factorM", ""),
    ("collision", "", "fs_collision", "mj_collision", ""),
    ("make_constraint", "", "fs_make_constraint", "mj_makeConstraint", ""),
    ("transmission", "", "fs_transmission", "mj_transmission", ""),
    ("actuator_velocity", "", "fs_actuator_velocity",
     "mj_fwdVelocity -mj_comVel -mj_passive -mj_referenceConstraint -mj_rne -mj_tendonBias",
     "MuJoCo: mj_fwdVelocity's own (moment x qvel)"),
    ("com_vel", "", "fs_com_vel", "mj_comVel", ""),
    ("passive", "", "fs_passive", "mj_passive", ""),
    ("reference_constraint", "", "fs_reference_constraint", "mj_referenceConstraint", ""),
    ("rne", "", "fs_rne", "mj_rne", ""),
    ("fwd_actuation", "", "fs_fwd_actuation", "mj_fwdActuation", ""),
    ("fwd_acceleration", "", "fs_fwd_acceleration", "mj_fwdAcceleration", ""),
    ("fwd_constraint", "", "fs_fwd_constraint",
     "fwdConstraintStage fwdConstraint mj_fwdConstraint mj_island mj_projectConstraint",
     "MuJoCo: + mj_island and mj_projectConstraint (efc_AR), called in mj_fwdPosition"),
    ("fwd_constraint", "setup: efc_b, islands, warm start", "=rest", "=rest",
     "flysim: fsi_solver_rows, fsi_islands, fsi_warmstart; MuJoCo: mj_island, fwdConstraint's own"),
    ("fwd_constraint", "newton: constraint update", "fsi_primal_update",
     "PrimalUpdateConstraint", "rows' forces and states, qfrc_constraint = J'f"),
    ("fwd_constraint", "newton: hessian", "fsi_hessian_factor fsi_hessian_incremental",
     "FactorizeHessian HessianCone mju_cholUpdateSparse mj_solPrimal>mju_cholFactorSymbolic "
     "mj_solPrimal>mju_sqrMatTDSparseSymbolic mj_solPrimal>mju_sqrMatTDSparseNumeric "
     "mj_solPrimal>mju_transposeSparse mj_solPrimal>mju_addToMatSparse "
     "mju_cholUpdate mj_solPrimal>mju_sqrMatTD_impl mj_solPrimal>mju_addToSymSparse",
     "H = M + J'DJ, its factor and rank-1 updates (sparse, or dense where the Jacobian is); "
     "MuJoCo: + H's symbolic structure"),
    ("fwd_constraint", "newton: line search", "fsi_line_search", "PrimalEval",
     "MuJoCo: its evaluations only (Mv, Jv and the quadratics are inlined in mj_solPrimal)"),
    ("fwd_constraint", "newton: gradient, direction, rest", "fsi_primal -others",
     "mj_solPrimal solveIslandTask -others",
     "M qacc, grad, H or M solves, updates"),
    ("fwd_constraint", "noslip, dual finish", "fsi_noslip_islands",
     "solNoSlip mj_dualFinish mj_projectConstraint",
     "MuJoCo: + efc_AR = J M^-1 J' (mj_projectConstraint)"),
    ("fwd_constraint", "results", "fsi_solver_results", "", "flysim: into the step's real"),
    ("sensor", "", "fs_sensor", "mj_sensorPos mj_sensorVel mj_sensorAcc",
     "the legs' six contact sensors (flysim: after the solve, at once)"),
    ("energy", "", "", "mj_energyPos mj_energyVel", "MuJoCo only (off in NeuroMechFly)"),
    ("euler", "", "fs_euler", "mj_Euler mj_EulerSkip", "implicit damping, integration"),
]
# The step's root on each side: what the step costs ("step: other" is it less the stages).
STEP = {"flysim": "fs_step", "mujoco": "mj_step"}

SUFFIX = re.compile(r"('\d+|\.(llvm|part|isra|constprop|cold|lto_priv)(\.\d+)?| \[clone [^]]*\])+$")


def base_name(name):
    """A function's name without a compiler clone's or callgrind's suffix."""
    return SUFFIX.sub("", name)


def parse(path):
    """callgrind's raw file -> (total Ir, {(object, function, address, callee): Ir}).
    callee is None for the function's own instructions, else the called function (its
    cost inclusive, at the call site); address is None without --dump-instr=yes."""
    space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
             "cfl": "fl", "fn": "fn", "cfn": "fn"}
    names = {"ob": {}, "fl": {}, "fn": {}}
    spec = re.compile(r"^(ob|cob|fl|fi|fe|cfi|cfl|fn|cfn)=(?:\((\d+)\))?\s*(.*)$")
    positions, last = ["line"], [0]
    ob = fn = cob = cfn = None
    in_call, total = False, None
    cost = collections.Counter()
    with open(path) as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                toks = line.split()
                pos = []
                for i, t in enumerate(toks[:len(positions)]):
                    pos.append(last[i] if t == "*" else
                               last[i] + int(t) if t[0] in "+-" else int(t, 0))
                last = pos
                ir = int(toks[len(positions)]) if len(toks) > len(positions) else 0
                addr = pos[positions.index("instr")] if "instr" in positions else None
                if in_call:
                    cost[(ob, fn, addr, (cob or ob, cfn))] += ir
                    in_call, cob, cfn = False, None, None
                else:
                    cost[(ob, fn, addr, None)] += ir
                continue
            m = spec.match(line.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                table = names[space[kind]]
                if ident is not None:
                    if name:
                        table[ident] = name
                    name = table[ident]
                if kind == "ob":
                    ob = name
                elif kind == "fn":
                    fn = name
                elif kind == "cob":
                    cob = name
                elif kind == "cfn":
                    cfn = name
            elif line.startswith("calls="):
                in_call = True
            elif line.startswith("positions:"):
                positions = line.split()[1:]
                last = [0] * len(positions)
            elif line.startswith(("summary:", "totals:")) and total is None:
                total = int(line.split()[1])
    if total is None:
        sys.exit(f"instructions_by_stage: {path} has no summary or totals line")
    return total, cost


def has_debug_info(path):
    p = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True)
    return p.returncode == 0 and ".debug_info" in p.stdout


def inline_chains(obj, addrs):
    """{address: [function names, outermost first]} through addr2line -i."""
    addrs = sorted(addrs)
    p = subprocess.run(["addr2line", "-e", obj, "-a", "-f", "-i"], capture_output=True,
                       text=True, input="".join(f"{a:#x}\n" for a in addrs))
    if p.returncode:
        sys.exit(f"instructions_by_stage: addr2line on {obj} failed: {p.stderr}")
    # each address, then a function and its file:line per inlined level, innermost first
    chains, cur, expect_fn = {}, None, False
    for s in p.stdout.split("\n"):
        if re.fullmatch(r"0x[0-9a-f]+", s):
            cur, expect_fn = int(s, 16), True
            chains[cur] = []
        elif cur is not None and s:
            if expect_fn:
                chains[cur].append(base_name(s))
            expect_fn = not expect_fn
    return {a: list(reversed(c)) for a, c in chains.items()}


class Units:
    """One run's costs as units: (chain of functions at the site, callee or None, Ir)."""

    def __init__(self, path):
        self.total, cost = parse(path)
        debug = {ob: ob and os.path.isfile(ob) and has_debug_info(ob)
                 for ob in {k[0] for k in cost}}
        chains = {}
        for ob in debug:
            if debug[ob]:
                addrs = {k[2] for k in cost if k[0] == ob and k[2] is not None}
                chains[ob] = inline_chains(ob, addrs)
        units = collections.Counter()
        for (ob, fn, addr, callee), ir in cost.items():
            chain = [base_name(fn)]
            if ob in chains and addr in chains[ob]:
                chain += [f for f in chains[ob][addr] if f != chain[0] and f != "??"]
            units[(tuple(chain), base_name(callee[1]) if callee else None)] += ir
        self.units = units


def rule(text):
    """A row's functions: (include, exclude), each a set of "F" or ("F", "G") (F's calls to G)."""
    inc, exc = set(), set()
    for w in text.split():
        target = exc if w.startswith("-") else inc
        w = w.lstrip("-")
        target.add(tuple(w.split(">")) if ">" in w else w)
    return inc, exc


def count(units, text, others=()):
    """The Ir of the units a row's rule holds; "-others" in it excludes what the rules in
    others include (the stage's other phases: their functions and calls to them)."""
    if "-others" in text.split():
        text = " ".join([w for w in text.split() if w != "-others"] +
                        ["-" + w for o in others for w in o.split() if not w.startswith("-")])
    inc, exc = rule(text)
    funcs = {f for f in inc if isinstance(f, str)}
    total = 0
    for (chain, callee), ir in units.items():
        cs = set(chain)
        if not any(r in cs if isinstance(r, str) else callee == r[1] and r[0] in cs
                   for r in inc):
            continue
        if any(r in cs or callee == r if isinstance(r, str) else callee == r[1] and r[0] in cs
               for r in exc):
            continue
        if callee in funcs and cs & funcs:
            continue  # a call to one of the row's functions: its own units count it
        total += ir
    return total


def row_costs(units, side):
    """{row index: Ir} of one run, plus "step" and "total"."""
    col = 2 if side == "flysim" else 3
    out = {}
    for i, r in enumerate(STAGES):
        if r[col] and r[col] != "=rest":
            others = [s[col] for s in STAGES if r[1] and s[0] == r[0] and s[1] and s is not r
                      and s[col] and s[col] != "=rest" and "-others" not in s[col]]
            out[i] = count(units.units, r[col], others)
    for i, r in enumerate(STAGES):
        if r[col] == "=rest":
            stage = next(j for j, s in enumerate(STAGES) if s[0] == r[0] and not s[1])
            out[i] = out.get(stage, 0) - sum(
                out.get(j, 0) for j, s in enumerate(STAGES) if s[0] == r[0] and s[1] and j != i)
    out["step"] = count(units.units, STEP[side])
    out["total"] = units.total
    return out


def per_step(a, b, steps):
    """Per world-step: the 2S run's less the S run's, over S."""
    return {k: (b[k] - a[k]) / steps for k in a}


def check_stage_list(root):
    """The table's stage functions against common/engine/fields.h's FS_STAGES."""
    path = os.path.join(root, "common", "engine", "fields.h")
    if not os.path.isfile(path):
        sys.exit(f"instructions_by_stage: no {path}, whose FS_STAGES the table must cover; "
                 "fix: the path in check_stage_list")
    text = open(path).read()
    listed = re.findall(r"X\(\w+, \"(\w+)\", (fs_\w+)\)", text)
    ours = {f for r in STAGES if not r[1] for f in r[2].split()}
    missing = [f for name, f in listed if f not in ours and name != "noslip"]
    if missing:
        sys.exit(f"instructions_by_stage: FS_STAGES' {', '.join(missing)} not in STAGES; "
                 "fix: give each stage a row in bench/proxies/instructions_by_stage.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, required=True, help="S: the first run's steps")
    ap.add_argument("--csv", help="write the table here")
    for k in ("host-f32", "host-f64", "mujoco"):
        ap.add_argument(f"--{k}", nargs=2, metavar=("S_OUT", "2S_OUT"), required=True)
    a = ap.parse_args()
    check_stage_list(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    cols = {}
    for k, side in (("host_f32", "flysim"), ("host_f64", "flysim"), ("mujoco", "mujoco")):
        runs = [row_costs(Units(p), side) for p in getattr(a, k)]
        cols[k] = per_step(runs[0], runs[1], a.steps)
        for i, r in enumerate(STAGES):  # a function renamed (a new MuJoCo) or inlined away
            if runs[1].get(i) == 0 and r[2 if side == "flysim" else 3] != "=rest":
                print(f"warning: {k} {r[0]} {r[1]}: none of {r[2 if side == 'flysim' else 3]!r} "
                      "ran (expected where the model does not use it, e.g. noslip with "
                      "noslip_iterations 0); else fix: the row's functions in STAGES",
                      file=sys.stderr)
    names = ["host_f32", "host_f64", "mujoco"]
    rows = []
    for i, r in enumerate(STAGES):
        vals = [cols[k][i] if i in cols[k] and STAGES[i][2 if k != "mujoco" else 3] else None
                for k in names]
        rows.append([r[0], r[1]] + vals + [r[2], r[3], r[4]])
    stage_sum = {k: sum(cols[k].get(i, 0) for i, r in enumerate(STAGES) if not r[1])
                 for k in names}
    for i, r in enumerate(STAGES):  # a stage's phases must add up to it
        if not r[1] and any(s[0] == r[0] and s[1] for s in STAGES):
            for k in names:
                ph = sum(cols[k].get(j, 0) for j, s in enumerate(STAGES) if s[0] == r[0] and s[1])
                if abs(ph - cols[k].get(i, 0)) > 1:
                    print(f"warning: {k} {r[0]}: phases {ph:.0f} != stage {cols[k][i]:.0f}",
                          file=sys.stderr)
    rows.append(["step: other", "", *[cols[k]["step"] - stage_sum[k] for k in names],
                 "fs_step less the stages", "mj_step less the stages",
                 "glue between the stages, inlined or not named"])
    rows.append(["outside the step", "", *[cols[k]["total"] - cols[k]["step"] for k in names],
                 "", "", "the replay loop: targets, recording, health"])
    rows.append(["total", "", *[cols[k]["total"] for k in names], "", "",
                 "the whole process (bench/results/instructions.csv)"])
    header = ["stage", "phase", "host_f32", "host_f64", "mujoco", "flysim_functions",
              "mujoco_functions", "note"]
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow(r[:2] + ["" if v is None else round(v) for v in r[2:5]] + r[5:])
    print(f"{'stage':<22} {'phase':<34} {'host_f32':>10} {'host_f64':>10} {'mujoco':>10}")
    for r in rows:
        vals = ["" if v is None else f"{v:,.0f}" for v in r[2:5]]
        print(f"{r[0]:<22} {r[1]:<34} {vals[0]:>10} {vals[1]:>10} {vals[2]:>10}")


if __name__ == "__main__":
    main()
