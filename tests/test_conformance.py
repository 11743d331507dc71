#!/usr/bin/env python3
"""Conformance over models no one here wrote: dm_control's suite (the dm-control wheel's
dm_control/suite/*.xml, installed without its dependencies by scripts/setup.sh).

Each model goes through `flysim compare --model M --targets sine` as a user runs it:
cpu (MuJoCo's mj_step) against host (flysim's engine) in float64 and float32, 2 worlds
(each from its own phase of the sine control) x 1,000 steps, judged by the verb against
MuJoCo's own floor (float64: one ulp, float32: the f32-step floor; the bound 3x in both)
with no new problem worlds. Two variants of each model:

  as is          every constraint and contact MuJoCo makes;
  no contacts    contacts disabled (--disable contact): joint limits, friction loss and
                 the other constraint rows with MuJoCo's solver;
  smooth         MuJoCo's constraint solver disabled (--disable constraint): the smooth
                 dynamics of every model flysim's stages can step.

Where flysim's engine refuses a model, the refusal must be the model check's one message
("does not implement N features ...") and the model is listed as skipped with it; any
other error fails. The test prints one line a model and variant and fails on a failed
comparison, an unexpected error, or fewer models compared than MIN_COMPARED (so that a
feature lost shows; raise them as features land). Last, a deliberately broken host
stepper must fail: FLYSIM_PERTURB_PASSIVE (its joint damping and stiffness scaled by 1e-6) on
the models with damping, FLYSIM_PERTURB_ROWS=limits (joint ranges reversed: a limit's sign
flipped) on models with limits, =frictionloss (friction-loss bounds dropped) on our
walker with friction loss (tests/models/cuda_efc_limits.xml: the suite's one friction-loss
dof, finger's spinner, moves only when touched), =friction (contact friction scaled by
1.001) on our walker under the elliptic cone (cuda_efc_elliptic.xml), =margin (contact
margins dropped) on our moving bodies (tests/models/cuda_contact_bodies.xml: contacts by
contype/conaffinity with margins), =moving (contacts between two moving bodies
frictionless) on hopper and them, =islands (contacts leave the islands of the trees they join
apart) on our islands (tests/models/islands.xml: equalities and contacts joining trees) and
manipulator (its arm meets the objects after the small run's 200 steps: full runs only),
FLYSIM_PERTURB_STEP=euler (RK4 models stepped with
Euler) on acrobot, cartpole and our walker under RK4 (tests/models/rk4_limits.xml: its
limits, friction loss and contacts solved in each of RK4's four stages); our models must
first pass as is; FLYSIM_PERTURB_ROWS=tendon (fixed tendons' coefficients x 1.001) on
point_mass and our actuators on fixed tendons (tests/models/tendon_fixed.xml: a joint
listed twice, a zero coefficient, position and velocity servos on tendons);
FLYSIM_PERTURB_ROWS=tendonrows (tendons' ranges reversed, their friction loss dropped) on our
tendons' limits and friction loss (tests/models/tendon_rows.xml: fixed and spatial tendons,
a pulley) and ball_in_cup (its string, a spatial tendon's limit: full runs only);
FLYSIM_PERTURB_PASSIVE (tendon stiffness and damping, the medium's density and viscosity
scaled by 1 + 1e-6) on fish (fluid forces, a tendon's spring), our swimmer in a fluid
(tests/models/fluid.xml: the inertia-box model with viscosity, density and wind on free,
hinge, slide and ball joints; the suite's swimmer.xml alone is a head at rest: the suite's
Python adds its segments) and our springs and dampers on fixed tendons
(tests/models/tendon_passive.xml: a dead band, polynomial stiffness and damping, spatial
tendons through sites and a pulley);
FLYSIM_PERTURB_STEP=act (activations' time constants x 1.001) on quadruped (smooth: its
filters) and our activation dynamics (tests/models/activation.xml: filter, filterexact with
an activation range, integrator, actearly, a tendon's, a disabled group's);
FLYSIM_PERTURB_ROWS=equality (equalities' offsets + 1e-3, slopes x 1.001) on manipulator and
quadruped (no contacts: their tendon equalities) and our joint and tendon equalities
(tests/models/equality.xml: a cubic between knees, a pinned hip with direct solref, a tendon
following another, an inactive one).

The suite's models with sensors then go through `flysim compare --stages` (float64): every
stage against MuJoCo from MuJoCo's states, sensordata to the bit.

With FLYSIM_TEST_SMALL=1 (the sanitizers' build) float64 alone and 200 steps.

Usage: test_conformance.py FLYSIM_BINARY
"""

import glob
import importlib.util
import os
import sys

import cliutil
from cliutil import check

FLYSIM = sys.argv[1]
SMALL = os.environ.get("FLYSIM_TEST_SMALL") == "1"
STEPS, WORLDS = (200 if SMALL else 1000), 2
PRECISIONS = ("f64",) if SMALL else ("f64", "f32")
VARIANTS = {"as is": [], "no contacts": ["--disable", "contact"],
            "smooth": ["--disable", "constraint"]}
# The models of the suite each variant compares today, at the least (of 19).
MIN_COMPARED = {"as is": 14, "no contacts": 18, "smooth": 19}
# Broken steppers (test switch, value, variant) and the models where each must fail: joint
# damping (cheetah, walker), joint limits (hopper, walker), friction loss (our walker, as is),
# contact friction (our elliptic walker), contact margins (our moving bodies: the suite's
# margins are 0), contacts between moving bodies made frictionless (hopper's self-contacts,
# our moving bodies).
OUR_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
OUR_LIMITS = os.path.join(OUR_MODELS, "cuda_efc_limits.xml")
OUR_ELLIPTIC = os.path.join(OUR_MODELS, "cuda_efc_elliptic.xml")
OUR_RK4 = os.path.join(OUR_MODELS, "rk4_limits.xml")
OUR_TENDON = os.path.join(OUR_MODELS, "tendon_fixed.xml")
OUR_BODIES = os.path.join(OUR_MODELS, "cuda_contact_bodies.xml")
OUR_FLUID = os.path.join(OUR_MODELS, "fluid.xml")
OUR_TENDON_PASSIVE = os.path.join(OUR_MODELS, "tendon_passive.xml")
OUR_ACTIVATION = os.path.join(OUR_MODELS, "activation.xml")
OUR_EQUALITY = os.path.join(OUR_MODELS, "equality.xml")
OUR_ISLANDS = os.path.join(OUR_MODELS, "islands.xml")
OUR_TENDON_ROWS = os.path.join(OUR_MODELS, "tendon_rows.xml")
BROKEN = (("FLYSIM_PERTURB_PASSIVE", "1e-6", "smooth", ("cheetah", "walker")),
          ("FLYSIM_PERTURB_ROWS", "limits", "no contacts", ("hopper", "walker")),
          ("FLYSIM_PERTURB_ROWS", "frictionloss", "as is", (OUR_LIMITS,)),
          ("FLYSIM_PERTURB_ROWS", "friction", "as is", (OUR_ELLIPTIC,)),
          ("FLYSIM_PERTURB_ROWS", "margin", "as is", (OUR_BODIES,)),
          ("FLYSIM_PERTURB_ROWS", "moving", "as is", ("hopper", OUR_BODIES)),
          ("FLYSIM_PERTURB_ROWS", "islands", "as is",
           (OUR_ISLANDS,) + (() if SMALL else ("manipulator",))),
          ("FLYSIM_PERTURB_STEP", "euler", "smooth", ("acrobot", "cartpole")),
          ("FLYSIM_PERTURB_STEP", "euler", "as is", (OUR_RK4,)),
          ("FLYSIM_PERTURB_ROWS", "tendon", "as is", ("point_mass", OUR_TENDON)),
          ("FLYSIM_PERTURB_ROWS", "tendonrows", "as is",
           (OUR_TENDON_ROWS,) + (() if SMALL else ("ball_in_cup",))),
          ("FLYSIM_PERTURB_PASSIVE", "1e-6", "as is", ("fish", OUR_FLUID, OUR_TENDON_PASSIVE)),
          ("FLYSIM_PERTURB_STEP", "act", "smooth", ("quadruped",)),
          ("FLYSIM_PERTURB_STEP", "act", "as is", (OUR_ACTIVATION,)),
          ("FLYSIM_PERTURB_ROWS", "equality", "no contacts", ("manipulator", "quadruped")),
          ("FLYSIM_PERTURB_ROWS", "equality", "as is", (OUR_EQUALITY,)))
REFUSAL = "flysim's engine (host and cuda backends) does not implement"
# The suite's sensors (subtree velocities, touch, accelerometers, force and torque sensors,
# velocimeters, gyros, frame and joint sensors): the stage check of each model with sensors in
# a variant the engine steps (compare --stages: every stage from MuJoCo's states, the sensor
# stage's sensordata among them), float64 to the bit. The sanitizers' build: two of them.
SENSOR_MODELS = (("humanoid", "as is"), ("hopper", "as is")) if SMALL else (
    ("cheetah", "as is"), ("walker", "as is"), ("hopper", "as is"), ("fish", "as is"),
    ("swimmer", "as is"), ("humanoid", "as is"), ("humanoid_CMU", "no contacts"),
    ("finger", "no contacts"), ("manipulator", "as is"), ("dog", "smooth"))


def suite_dir():
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        print("test_conformance: the dm-control wheel is not in this Python's environment; "
              "fix: scripts/setup.sh installs it (scripts/requirements-models.txt)",
              file=sys.stderr)
        sys.exit(1)
    return os.path.join(list(spec.submodule_search_locations)[0], "suite")


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def compare(model, precision, extra, env=None):
    args = ["compare", "--model", model, "--targets", "sine", "--backends", "cpu,host",
            "--precision", precision, "--worlds", str(WORLDS), "--sim-steps", str(STEPS),
            *extra]
    return cliutil.run(FLYSIM, *args, env=env, timeout=600)


def main():
    models = sorted(glob.glob(os.path.join(suite_dir(), "*.xml")))
    check(len(models) >= 19, f"dm_control's suite holds its 19 models ({len(models)} found)")
    compared = {v: set() for v in VARIANTS}
    for variant, extra in VARIANTS.items():
        print(f"--- {variant}: cpu against host, {WORLDS} worlds x {STEPS} steps, sine control")
        for model in models:
            name = os.path.basename(model)[:-4]
            for precision in PRECISIONS:
                rc, out, err = compare(model, precision, extra)
                if rc != 0 and REFUSAL in err:
                    reason = err.split(REFUSAL, 1)[1].strip()
                    print(f"{name:14s} {precision}  skipped: flysim's engine does not implement"
                          f" {reason}")
                    break  # the same refusal in float32
                if rc not in (0, 3):
                    check(False, f"{name} ({variant}, {precision}): compare exits {rc}: "
                                 f"{first_line(err) or first_line(out)}")
                    continue
                s = cliutil.summary(out)
                ok = rc == 0 and s.get("verdict") == "pass"
                same = " (bit-identical)" if float(s.get("max_dq_b", "nan")) == 0 else ""
                print(f"{name:14s} {precision}  {'pass' if ok else 'FAIL'}: ratio {s.get('ratio')}"
                      f" (bound {s.get('max_ratio')}), max |dq| {s.get('max_dq_b')} rad{same}"
                      f" (floor {s.get('max_dq_floor')}), new problem worlds"
                      f" {s.get('new_problem_worlds')}")
                check(ok, f"{name} ({variant}, {precision}) within MuJoCo's floor: {s}")
                compared[variant].add(name)
    for variant, names in compared.items():
        print(f"{variant}: {len(names)} of {len(models)} models compared: {' '.join(sorted(names))}")
        check(len(names) >= MIN_COMPARED[variant],
              f"{variant}: at least {MIN_COMPARED[variant]} models compared ({len(names)})")
    # our walkers with limits, friction loss and contacts (pyramidal, elliptic), our moving
    # bodies, RK4, fixed tendons (actuators, springs, dampers), fluid, activations, joint and
    # tendon equalities, islands of several trees and tendons' limits and friction loss, as users
    # run them: within the floor (the broken
    # steppers below must fail on them)
    print("--- our models, as is")
    for model in (OUR_LIMITS, OUR_ELLIPTIC, OUR_BODIES, OUR_RK4, OUR_TENDON, OUR_FLUID,
                  OUR_TENDON_PASSIVE, OUR_ACTIVATION, OUR_EQUALITY, OUR_ISLANDS,
                  OUR_TENDON_ROWS):
        for precision in PRECISIONS:
            rc, out, err = compare(model, precision, [])
            s = cliutil.summary(out) if rc in (0, 3) else {}
            same = " (bit-identical)" if float(s.get("max_dq_b", "nan")) == 0 else ""
            print(f"{os.path.basename(model)[:-4]:18s} {precision}  exit {rc}, ratio "
                  f"{s.get('ratio')}{same}")
            check(rc == 0 and s.get("verdict") == "pass",
                  f"{model} ({precision}): within MuJoCo's floor (exit {rc}, "
                  f"{first_line(err) or s})")
    print("--- the suite's sensors: compare --stages, float64 (sensordata against MuJoCo's)")
    for name, variant in SENSOR_MODELS:
        model = os.path.join(suite_dir(), name + ".xml")
        rc, out, err = cliutil.run(FLYSIM, "compare", "--model", model, "--targets", "sine",
                                   "--backends", "cpu,host", "--precision", "f64", "--worlds",
                                   "2", "--sim-steps", "20", "--stages", *VARIANTS[variant],
                                   timeout=600)
        line = [ln.split() for ln in out.splitlines() if ln.startswith("  sensor ")]
        err0 = line[0][2] if line and len(line[0]) > 2 else "none"
        print(f"{name:14s} ({variant}) exit {rc}, sensordata's worst error {err0}")
        check(rc == 0 and line and float(err0) == 0,
              f"{name} ({variant}): its sensors MuJoCo's to the bit (exit {rc}, "
              f"{first_line(err) or err0})")
    for switch, value, variant, names in BROKEN:
        print(f"--- a deliberately broken host stepper ({switch}={value}, {variant})")
        for name in names:
            model = name if name.endswith(".xml") else os.path.join(suite_dir(), name + ".xml")
            name = os.path.basename(model)[:-4]
            rc, out, err = compare(model, "f64", VARIANTS[variant], env={switch: value})
            s = cliutil.summary(out) if rc in (0, 3) else {}
            print(f"{name:14s} f64  exit {rc}, ratio {s.get('ratio')}: "
                  f"{'caught' if rc == 3 else 'MISSED'}")
            check(rc == 3 and s.get("verdict") == "fail",
                  f"{name}: the broken stepper ({switch}={value}) fails compare (exit {rc}, "
                  f"{first_line(err) or s})")
    cliutil.finish("test_conformance")


if __name__ == "__main__":
    main()
