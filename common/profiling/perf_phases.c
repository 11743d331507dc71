// MuJoCo timer phases in a sampling profile (see common/profiling/perf_phases.h).
#include "common/profiling/perf_phases.h"

#include <stdlib.h>
#include <string.h>

static const char* const k_none[] = {NULL};
static const char* const k_step[] = {"mj_step", NULL};
static const char* const k_forward[] = {"mj_forwardSkip", "mj_forward", NULL};
static const char* const k_position[] = {"mj_fwdPosition", NULL};
static const char* const k_velocity[] = {"mj_fwdVelocity", NULL};
static const char* const k_actuation[] = {"mj_fwdActuation", NULL};
static const char* const k_constraint[] = {"fwdConstraintStage", "fwdConstraint",
                                           "mj_fwdConstraint", NULL};
static const char* const k_advance[] = {"mj_EulerSkip", "mj_Euler",      "mj_implicitSkip",
                                        "mj_implicit",  "mj_RungeKutta", NULL};
static const char* const k_kinematics[] = {"mj_fwdKinematics", "mj_transmission", NULL};
static const char* const k_inertia[] = {"mj_makeM", "mj_crb", "mj_factorM", NULL};
static const char* const k_collision[] = {"mj_collision", NULL};
static const char* const k_make[] = {"mj_makeConstraint", "mj_island", NULL};
static const char* const k_project[] = {"mj_projectConstraint", "mj_makeARNumeric", NULL};

const char* const* fs_perf_phase_functions(int i) {
  switch (i) {
  case mjTIMER_STEP:
    return k_step;
  case mjTIMER_FORWARD:
    return k_forward;
  case mjTIMER_POSITION:
    return k_position;
  case mjTIMER_VELOCITY:
    return k_velocity;
  case mjTIMER_ACTUATION:
    return k_actuation;
  case mjTIMER_CONSTRAINT:
    return k_constraint;
  case mjTIMER_ADVANCE:
    return k_advance;
  case mjTIMER_POS_KINEMATICS:
    return k_kinematics;
  case mjTIMER_POS_INERTIA:
    return k_inertia;
  case mjTIMER_POS_COLLISION:
    return k_collision;
  case mjTIMER_POS_MAKE:
    return k_make;
  case mjTIMER_POS_PROJECT:
    return k_project;
  default:
    return k_none;
  }
}

static int in_list(const char* name, const char* const* list) {
  for (; *list; list++)
    if (!strcmp(name, *list)) return 1;
  return 0;
}

void fs_perf_phase_shares(const fsPerfProfile* p, double share[mjNTIMER],
                          long long* nstep_samples) {
  long long count[mjNTIMER] = {0};
  // phase_of[f]: bit mask of the phases frame f's function runs.
  unsigned* phase_of = calloc((size_t)(p->nframe ? p->nframe : 1), sizeof(unsigned));
  *nstep_samples = 0;
  if (phase_of) {
    for (int f = 0; f < p->nframe; f++)
      for (int i = 0; i < mjNTIMER; i++)
        if (in_list(p->frames[f].name, fs_perf_phase_functions(i))) phase_of[f] |= 1u << i;
    for (int s = 0; s < p->nsample; s++) {
      unsigned on_stack = 0;
      for (long long k = p->sample_off[s]; k < p->sample_off[s + 1]; k++)
        on_stack |= phase_of[p->stack_frames[k]];
      if (!(on_stack & (1u << mjTIMER_STEP))) continue;
      (*nstep_samples)++;
      for (int i = 0; i < mjNTIMER; i++) {
        int in = (on_stack >> i) & 1;
        for (int a = fs_mjtiming_parent(i); in && a >= 0; a = fs_mjtiming_parent(a))
          in = (on_stack >> a) & 1;
        count[i] += in;
      }
    }
  }
  for (int i = 0; i < mjNTIMER; i++)
    share[i] = !fs_perf_phase_functions(i)[0] ? -1.0
               : *nstep_samples               ? (double)count[i] / (double)*nstep_samples
                                              : 0.0;
  free(phase_of);
}

static void print_phase(const fsMjTiming* t, const double share[mjNTIMER], int i, FILE* out) {
  if (t->calls[i] == 0 || share[i] < 0) return;
  char label[64], names[256] = "";
  snprintf(label, sizeof label, "%*s%s", 2 * fs_mjtiming_depth(i), "", mjTIMERSTRING[i]);
  for (const char* const* f = fs_perf_phase_functions(i); *f; f++) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", used ? " " : "", *f);
  }
  double timer = t->seconds[mjTIMER_STEP] > 0 ? t->seconds[i] / t->seconds[mjTIMER_STEP] : 0;
  fprintf(out, "  %-24s %8.1f %10.1f   %s\n", label, 100.0 * timer, 100.0 * share[i], names);
  for (int c = 0; c < mjNTIMER; c++)
    if (fs_mjtiming_parent(c) == i) print_phase(t, share, c, out);
}

void fs_perf_phase_print(const fsMjTiming* t, const double share[mjNTIMER], long long nstep_samples,
                         FILE* out) {
  fprintf(out,
          "\nThe two views, phase by phase (%% of mj_step: MuJoCo's timer vs the %lld profile "
          "samples\nwith mj_step on the stack that hold the phase's functions):\n",
          nstep_samples);
  fprintf(out, "  %-24s %8s %10s   %s\n", "phase", "timer %", "profile %",
          "functions (MuJoCo "
          "3.16)");
  for (int i = 0; i < mjNTIMER; i++)
    if (fs_mjtiming_parent(i) < 0) print_phase(t, share, i, out);
}
