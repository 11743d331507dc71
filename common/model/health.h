// A world's health, kept after every step: one definition for every backend (the cpu
// backend from MuJoCo's data, host and cuda from the engine's, on the device by the
// world's first lane). What fsWorldHealth and the `problems` and `solver_iterations`
// views report.
#ifndef FLYSIM_COMMON_MODEL_HEALTH_H
#define FLYSIM_COMMON_MODEL_HEALTH_H

#include <string.h>

#include <flysim/flysim.h>

#include "common/engine/fields.h"
#include "common/model/record.h"

/// Every world's health, one array a quantity (host or device memory).
typedef struct fsHealthArrays {
  int* nseen;            // (N) the sum of the world's warning counters at its last check
  int* first;            // (N) the mjtWarning of its first warning, -1: none
  long long* first_step; // (N) the batch's step count before that step, -1: none
  int* limit;            // (N) steps whose Newton solve (an island's) ran to the limit
  int* errors;           // (N) steps whose solve failed
  int* peak;             // (N) the most contacts a step made (kept or dropped)
  int* problems;         // (N) FS_PROBLEM_* bits
  int* iterations;       // (N x 2) the last step's Newton and noslip iterations
} fsHealthArrays;

/// What one step of a world reports.
typedef struct fsStepReport {
  const int* warnings; // (FS_NWARNING) MuJoCo's warning counters after the step
  int made;            // contacts the collision made (kept and dropped)
  int full;            // the contact or row buffer dropped some
  int limit;           // a Newton solve ran to the iteration limit
  int failed;          // a solve failed, or (cpu) MuJoCo stopped the world
  int newton, noslip;  // iterations, summed over the islands
} fsStepReport;

/// World w after the step taken at step count `step`.
FS_HD void fs_health_note(const fsHealthArrays* h, int w, const fsStepReport* s, long long step) {
  if (s->made > h->peak[w]) h->peak[w] = s->made;
  h->limit[w] += s->limit != 0;
  h->errors[w] += s->failed != 0;
  h->iterations[2 * w] = s->newton;
  h->iterations[2 * w + 1] = s->noslip;
  int bits = h->problems[w], total = 0;
  if (s->full) bits |= FS_PROBLEM_CONTACTS;
  if (s->limit) bits |= FS_PROBLEM_SOLVER;
  if (s->failed) bits |= FS_PROBLEM_FAILED;
  for (int k = 0; k < FS_NWARNING; k++) {
    total += s->warnings[k];
    if (s->warnings[k] > 0)
      bits |= k == FS_WARN_CONTACTFULL || k == FS_WARN_CNSTRFULL ? FS_PROBLEM_CONTACTS
                                                                 : FS_PROBLEM_WARNING;
  }
  h->problems[w] = bits;
  if (total == h->nseen[w]) return; // counters only ever grow
  h->nseen[w] = total;
  if (h->first[w] >= 0) return;
  for (int k = 0; k < FS_NWARNING; k++)
    if (s->warnings[k] > 0) {
      h->first[w] = k;
      h->first_step[w] = step;
      return;
    }
}

/// World w's health after the step taken at the batch's step count `step`, from the
/// engine's data d of model m (host and cuda, on the device by the world's first lane;
/// the cpu backend reports from MuJoCo's data): MuJoCo's warnings, the contacts the
/// collision made (kept and dropped), a buffer that dropped some, Newton solves (an
/// island's) at the iteration limit, failed solves, the iterations.
FS_HD void fs_health_note_step(const fsHealthArrays* h, int w, const fsModel* m, const fsData* d,
                               long long step) {
  int ni = d->nisland[0] ? d->nisland[0] : 1, hit = 0;
  for (int k = 0; k < ni && k < FS_NISLAND; k++)
    hit |= d->solver_niter[k] - d->solver_nnoslip[k] >= m->iterations;
  fsStepReport s;
  s.warnings = d->warning_number;
  s.made = d->ncon[0] + d->contact_overflow[0];
  s.full = d->contact_overflow[0] != 0 || d->efc_overflow[0] != 0 || d->cand_overflow[0] != 0;
  s.limit = hit;
  s.failed = d->solver_error[0] != 0;
  s.newton = fs_solver_iterations(d, 0);
  s.noslip = fs_solver_iterations(d, 1);
  fs_health_note(h, w, &s, step);
}

/// World w's health from zero (a reset).
FS_HD void fs_health_clear(const fsHealthArrays* h, int w) {
  h->nseen[w] = h->limit[w] = h->errors[w] = h->peak[w] = h->problems[w] = 0;
  h->first[w] = -1;
  h->first_step[w] = -1;
  h->iterations[2 * w] = h->iterations[2 * w + 1] = 0;
}

/// World w's fsWorldHealth (warnings: its counters, FS_NWARNING of them).
static inline void fs_health_read(const fsHealthArrays* h, int w, const int* warnings,
                                  fsWorldHealth* out) {
  memset(out, 0, sizeof *out);
  for (int k = 0; k < FS_NWARNING; k++) out->warnings[k] = warnings[k];
  out->first_warning = h->first[w];
  out->first_warning_step = h->first_step[w];
  out->solver_limit = h->limit[w];
  out->solver_error = h->errors[w];
  out->peak_contacts = h->peak[w];
  out->problems = (uint32_t)h->problems[w];
}

#endif
