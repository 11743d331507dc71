// The stepper checked against MuJoCo (docs/engine/accuracy.md), as library code
// for the tests (tests/engine) and `flysim compare --stages`: reference worlds from MuJoCo itself
// (seeded noise, a few steps, mj_forward), a different state in every world, outputs poisoned with
// NaN before a stage runs, every field of every world compared with mjData, the worst world, field
// and element reported.
//
// The same checks run on the host builds (float64, float32) and on the GPU: a
// runner moves the batch to where the stages run and back. Built per precision
// (flysim_parity_f32 / _f64): the names carry it (common/exec/real.h FS_PREC).
#ifndef FLYSIM_COMMON_PARITY_HARNESS_H
#define FLYSIM_COMMON_PARITY_HARNESS_H

#include <mujoco/mujoco.h>
#include <stdint.h>

#include "common/model/worlds.h"
#include "common/model/model.h"

#define fsh_runner_host     FS_PREC(fsh_runner_host)
#define fsh_runner_cuda     FS_PREC(fsh_runner_cuda)
#define fsh_load_worlds     FS_PREC(fsh_load_worlds)
#define fsh_run             FS_PREC(fsh_run)
#define fsh_make_worlds     FS_PREC(fsh_make_worlds)
#define fsh_keyframe_world  FS_PREC(fsh_keyframe_world)
#define fsh_make_data       FS_PREC(fsh_make_data)
#define fsh_copy_data       FS_PREC(fsh_copy_data)
#define fsh_free_worlds     FS_PREC(fsh_free_worlds)
#define fsh_compare_field   FS_PREC(fsh_compare_field)
#define fsh_compare_stage   FS_PREC(fsh_compare_stage)
#define fsh_compare_fields  FS_PREC(fsh_compare_fields)
#define fsh_field           FS_PREC(fsh_field)
#define fsh_set_report      FS_PREC(fsh_set_report)
#define fsh_report          FS_PREC(fsh_report)
#define fsh_note            FS_PREC(fsh_note)
#define fsh_sym_uniform     FS_PREC(fsh_sym_uniform)
#define fsh_rotate_randomly FS_PREC(fsh_rotate_randomly)

/// Where the stages run: the host pipeline or the device.
typedef struct fshRunner {
  const char* name; // "host float64", "host float32", "cuda float32"
  void* self;
  /// Prepare for model m and nworld worlds (0, or -1 with a message; FSH_SKIP: no
  /// device here). The host runner applies its test switch to m (cpu/serial.h).
  int (*open)(void* self, fsModel* m, int nworld, fsError* err);
  /// Run a stage (fsStage) or, with FSH_FORWARD / FSH_STEP, mj_forward or n steps.
  int (*run)(void* self, fsWorlds* b, int what, int n, fsError* err);
  void (*close)(void* self);
} fshRunner;

enum { FSH_FORWARD = -1, FSH_STEP = -2, FSH_SKIP = 77 };

/// The host runner (cpu/serial.h: the stages where the batch is) and the device runner
/// (the batch uploaded, the kernels run, the batch downloaded; flysim_parity_cuda_*).
fshRunner fsh_runner_host(void);
fshRunner fsh_runner_cuda(void);

/// The runner of a test program (tests/engine: host or cuda, chosen by its link).
fshRunner fsh_runner(void);

/// Tolerance of a comparison: error = |ours - ref| / max(|ref|, floor * scale),
/// scale = the largest |ref| of the field in that world.
typedef struct fshTol {
  double rel;              // largest error allowed
  double floor;            // relative floor (fraction of the field's scale)
  const char* skip;        // worlds left out of the comparison (skip[w] != 0); NULL: none
  const char* const* only; // constraint-row comparisons: these fields (NULL: all of the stage)
} fshTol;

/// The stage tests' tolerance in this build's precision (tests/engine: collision, contacts,
/// constraint rows; rel, floor): float64 1e-9 beyond a floor of 1e-6 of the field's scale
/// (MuJoCo's arithmetic, its last bits); float32 1e-4 beyond 1.0 (relative to the field's
/// scale in the world). FSH_CONTACT_BOUNDARY_TOL: a contact's distance from a count
/// boundary (x the world's size, common/parity/contacts.h) within which float32 may make
/// or miss it; float64 makes exactly MuJoCo's contacts.
#ifdef FS_REAL_FLOAT
#define FSH_STAGE_TOL                                                                              \
  { 1e-4, 1.0, NULL, NULL }
#define FSH_CONTACT_BOUNDARY_TOL 1e-6
#else
#define FSH_STAGE_TOL                                                                              \
  { 1e-9, 1e-6, NULL, NULL }
#define FSH_CONTACT_BOUNDARY_TOL 0.0
#endif

/// The worst element of one comparison.
typedef struct fshWorst {
  double err;
  int world, index;
  double ours, ref;
} fshWorst;

/// One compared field's worst element, as every comparison reports it.
typedef struct fshFieldReport {
  const char* label; // the comparison ("kinematics", "step 1", ...)
  const char* field;
  double err, bound;
  int world, index; // -1: none
  char where[64];   // "world 3 [17]", "world 0 contact 2 [1]", "world 1 row 5 [3]"
  double ours, ref;
  int bad;
} fshFieldReport;

typedef void (*fshReportFn)(void* arg, const fshFieldReport* r);

/// Where the comparisons report: fn gets every field's report and the other lines
/// (fsh_note) are dropped; fn NULL (the default): a line per field on stdout.
void fsh_set_report(fshReportFn fn, void* arg);
void fsh_report(const fshFieldReport* r);
void fsh_note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// A uniform draw in [-1, 1) from the seeded stream (common/base/random.h).
double fsh_sym_uniform(void);

/// Rotate the unit quaternion q by a random rotation of up to amp radians.
void fsh_rotate_randomly(mjtNum q[4], double amp);

/// Every world of b from MuJoCo's data ref[w] (fs_worlds_from_mj; stage as there).
/// Prints the error and returns -1 if one cannot be copied.
int fsh_load_worlds(const fsModel* m, fsWorlds* b, const mjModel* mj, mjData* const* ref,
                    int stage);

/// r->run of a stage, FSH_FORWARD or FSH_STEP (n steps) on b; prints the error and
/// returns -1 on failure.
int fsh_run(const fshRunner* r, fsWorlds* b, int what, int n);

/// Per-world reference states: MuJoCo data after seeded noise, nsettle mj_steps
/// and mj_forward. Noise: hinge angles +-qnoise rad, slides +-0.1*qnoise, free and
/// ball orientations rotated by up to qnoise rad, free positions +-0.1*qnoise;
/// velocities +-vnoise; controls spread over 1.6x their range (so that clamping
/// acts) or +-cnoise when unlimited; mocap bodies moved by +-0.02*qnoise, turned by up
/// to qnoise rad, their quaternions scaled by 0.5 to 1.5.
typedef struct fshNoise {
  double qnoise, vnoise, cnoise;
  int nsettle;
} fshNoise;

/// The checker's arena: FSH_ARENA_SCALE times the model's. The checks' perturbed states
/// (hinges off by tenths of a radian, the fly pressed into the ground) make far more
/// contacts and constraint rows than a replay; on FlyGym's mesh terrains MuJoCo's own
/// arena overflows there (mj_narrowphase's stack, the constraint buffer).
#define FSH_ARENA_SCALE 8

/// A new MuJoCo data for model mj with the checker's arena (mj's narena raised for the
/// call and restored: not thread-safe; every data of the check has the same arena, so that
/// mj_copyData, which refuses datas whose arenas differ, copies between any two). Use it, or
/// fsh_copy_data, for every data the check copies or steps; mj steps it as any (the arena is the
/// data's).
mjData* fsh_make_data(const mjModel* mj);

/// A new copy of src (a data from fsh_make_data) with the checker's arena.
mjData* fsh_copy_data(const mjModel* mj, const mjData* src);

/// A new world at the model's first keyframe (or qpos0): where reference worlds start
/// (fsh_make_data's arena).
mjData* fsh_keyframe_world(const mjModel* mj);

mjData** fsh_make_worlds(const mjModel* mj, int nworld, uint64_t seed, const fshNoise* noise);
void fsh_free_worlds(mjData** d, int nworld);

/// Compare data field f (an MJ field) of every world with MuJoCo's; track the worst.
fshWorst fsh_compare_field(const fsModel* m, const fsWorlds* b, const fsFieldInfo* f,
                           mjData* const* ref, const fshTol* tol);

/// Compare every MJ field of `stage` (all worlds); print one line per field;
/// return the number of fields beyond tolerance. worst_out: the stage's worst.
int fsh_compare_stage(const char* label, const fsModel* m, const fsWorlds* b, int stage,
                      mjData* const* ref, const fshTol* tol, double* worst_out);

/// Compare named fields (NULL-terminated list).
int fsh_compare_fields(const char* label, const fsModel* m, const fsWorlds* b,
                       const char* const* names, mjData* const* ref, const fshTol* tol,
                       double* worst_out);

/// Data field by name (NULL if none).
const fsFieldInfo* fsh_field(const char* name);

#endif
