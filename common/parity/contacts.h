// Reference worlds with contacts, and the comparison of the collision stage's
// contacts with MuJoCo's (tests/engine/test_collision.c, flysim compare --stages).
//
// Worlds: every world its own state, made so that the model's pair geoms touch,
// penetrate and leave their planes: seeded noise on hinge angles and free-joint
// orientations, then each free body lowered so that the k-th lowest of its pairs
// (k random) sits at a random distance from its plane (distances measured by
// MuJoCo's own collision with a huge override margin). Optional worlds: meshes put
// on a face, an edge, a vertex or their largest hull polygon; pairs of worlds one float64 ulp apart
// across the boundary where MuJoCo's contact count changes (the detection margin, or the include
// margin for contacts in a gap).
#ifndef FLYSIM_COMMON_PARITY_CONTACTS_H
#define FLYSIM_COMMON_PARITY_CONTACTS_H

#include <mujoco/mujoco.h>
#include <stdint.h>

#include "common/model/worlds.h"
#include "common/parity/harness.h"

#define fsh_contact_worlds        FS_PREC(fsh_contact_worlds)
#define fsh_moving_contact_worlds FS_PREC(fsh_moving_contact_worlds)
#define fsh_compare_contacts      FS_PREC(fsh_compare_contacts)
#define fsh_contact_stats         FS_PREC(fsh_contact_stats)
#define fsh_count_boundary        FS_PREC(fsh_count_boundary)

/// How the reference worlds are made.
typedef struct fshContactNoise {
  double qnoise;   // hinge angles: +-qnoise rad
  double rotnoise; // free-joint orientations: rotated by up to rotnoise rad
  double lo, hi;   // the anchor pair's distance from its plane: uniform in [lo, hi]
  int kmax;        // the anchor: the k-th lowest pair of the body's, k uniform in [0, kmax)
  int presets;     // worlds 0.. presets-1: meshes on a face, an edge, a vertex, their
                   // largest hull polygon (tilted), in turn
  int boundary;    // the last 2*boundary worlds: pairs across a contact-count boundary
} fshContactNoise;

/// nworld reference worlds (mj_forward done) for model mj with contacts.
/// Worlds a and b: a's state with qpos[q] at za and zb, bisected to adjacent doubles
/// across which MuJoCo's contact count changes (mode 0: every contact; 1: those not
/// excluded). Returns 0 (a's qpos[q] left at zb) if the counts at za and zb agree.
int fsh_count_boundary(const mjModel* mj, mjData* a, mjData* b, int q, double za, double zb,
                       int mode);

mjData** fsh_contact_worlds(const mjModel* mj, int nworld, uint64_t seed,
                            const fshContactNoise* noise);

/// fsh_contact_worlds, then in every world velocities +-vnoise and controls in their
/// ranges (a free "ball" hovers in its floor pair's gap in every third world), and
/// mj_forward.
mjData** fsh_moving_contact_worlds(const mjModel* mj, int nworld, uint64_t seed,
                                   const fshContactNoise* noise, double vnoise);

/// Worst error of one contact field over every world and contact.
typedef struct fshContactWorst {
  double err;
  int world, contact, col;
  double ours, ref;
} fshContactWorst;

/// Contact statistics over the worlds (MuJoCo's).
typedef struct fshContactStats {
  int nworld, ncon_min, ncon_max, ncon_sum;
  int penetrating, within_margin, in_gap, max_per_pair;
} fshContactStats;

/// Compare the contact fields a stage writes (FS_STAGE_COLLISION: ncon, contact_*,
/// contact_pair; FS_STAGE_MAKE_CONSTRAINT: contact_efc_address, contact_mu) of every
/// world with MuJoCo's d->contact. tol_b 0 (float64): the same contacts in the same
/// order, integer fields equal. tol_b > 0 (float32): contacts matched by pair and
/// position; one that only one side has, or an exclude/dim flag that differs, is
/// let through only within tol_b x (the world's largest coordinate) of the
/// threshold that decides it (detection: margin + gap; exclusion: margin) -- float32
/// cannot resolve the float64 ulp-wide boundaries the tests put contacts on. Reals:
/// error = |ours - ref| / max(|ref|, floor * scale), scale the largest |ref| of the
/// field in that world (for dist: the largest coordinate); worlds tol->skip leaves out
/// are matched but their fields not compared. Prints a line per field;
/// returns the number of failures. worst: the largest real-field error (accumulated).
int fsh_compare_contacts(const char* label, const fsModel* m, const fsWorlds* b, mjData* const* ref,
                         const fshTol* tol, double tol_b, int stage, double* worst);

/// MuJoCo's contact statistics of the reference worlds.
fshContactStats fsh_contact_stats(const mjModel* mj, mjData* const* ref, int nworld);

#endif
