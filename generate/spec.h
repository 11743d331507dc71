// flysim generate's dataset spec: a YAML file (read with libyaml) that fixes
// everything the dataset's bytes depend on -- the model, the clips, the worlds and
// steps, what is recorded, the seed and the variation axes, each a distribution
// sampled per world.
//
// Distributions (any axis): a number (fixed), {fixed: x}, {uniform: [lo, hi]},
// {normal: [mean, std]}, {list: [a, b, ...]} (one of them, uniformly). `flysim
// generate --example-spec` prints a commented example; every error names the file,
// the line, the key and the fix.
#ifndef FLYSIM_GENERATE_SPEC_H
#define FLYSIM_GENERATE_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"

#define FS_GEN_MAX_TARGETS 16

typedef enum fsDistKind {
  FS_DIST_FIXED = 0,
  FS_DIST_UNIFORM,
  FS_DIST_NORMAL,
  FS_DIST_LIST
} fsDistKind;

typedef struct fsDist {
  fsDistKind kind;
  double a, b;  // fixed: a; uniform: [a, b]; normal: mean a, std b
  double* list; // (nlist) FS_DIST_LIST
  int nlist;
  int given; // 1 if the spec set it (else the axis's default)
} fsDist;

/// The variation axes, sampled per world in this order (each has its own stream).
typedef enum fsGenAxis {
  FS_AXIS_CLIP_FILE = 0,   // index into targets
  FS_AXIS_CLIP_START,      // first clip row (at the model's timestep)
  FS_AXIS_CLIP_TIME_SCALE, // clip rows advanced per step
  FS_AXIS_CLIP_AMPLITUDE,  // targets scaled about each DoF's clip mean
  FS_AXIS_CLIP_NOISE,      // std of additive target noise (rad), per step and DoF
  FS_AXIS_KP,              // position actuators' gain (NaN: the model's)
  FS_AXIS_DAMPING_SCALE,   // joint damping x
  FS_AXIS_STIFFNESS_SCALE, // joint stiffness x
  FS_AXIS_FRICTION_SCALE,  // sliding friction of geoms and contact pairs x
  FS_AXIS_MASS_SCALE,      // body masses and inertias x
  FS_AXIS_ADHESION_SCALE,  // adhesion actuators' gain x
  FS_AXIS_GRAVITY_Z,       // opt.gravity z (NaN: the model's)
  FS_AXIS_POSE_NOISE,      // std of noise added to hinge angles (rad) at the start
  FS_AXIS_VELOCITY_NOISE,  // std of noise added to every qvel at the start
  FS_AXIS_SPAWN_HEIGHT,    // added to the root's height at the start (length units)
  FS_NAXIS
} fsGenAxis;

/// The axes' spec keys ("vary.clip.start_row"), and 1 for the model's axes.
const char* fs_gen_axis_key(int axis);
int fs_gen_axis_is_model(int axis);

/// The largest spec and its deepest nesting of flow brackets ([ and {): a spec is a few lines.
#define FS_GEN_SPEC_MAX_BYTES (1 << 20)
#define FS_GEN_SPEC_MAX_DEPTH 32

/// The most steps a dataset's worlds run (`steps`, and `warmup_sec` at the model's timestep).
#define FS_GEN_MAX_STEPS (1L << 28)

typedef struct fsGenSpec {
  char path[4096];  // the spec file
  char* text;       // its bytes (stored in the dataset; --resume compares them)
  char model[4096]; // model (default: the exported NeuroMechFly)
  int disable;      // mjtDisableBit flags
  char targets[FS_GEN_MAX_TARGETS][4096];
  int ntargets;
  int worlds, steps, record_every, block_worlds;
  double warmup_sec;
  uint64_t seed;
  unsigned record;    // fsSeriesId bits
  int backend;        // fsBackendKind
  int precision;      // 32 or 64 (host, cuda)
  int max_contacts;   // host, cuda: contacts a world holds (fsReplay.max_contacts; 0: all)
  int max_candidates; // host, cuda: candidate pairs a world tests (0: the default bound)
  fsDist axis[FS_NAXIS];
} fsGenSpec;

/// Read and check path (defaults filled in). Errors: "spec.yaml:12: vary.clip.x: ...; fix:".
int fs_gen_spec_load(const char* path, fsGenSpec* s, fsError* err);

/// Parse YAML text as if read from path (the fuzz test's entry).
int fs_gen_spec_parse(const char* path, const char* text, size_t n, fsGenSpec* s, fsError* err);

void fs_gen_spec_free(fsGenSpec* s);

/// The commented example spec (`flysim generate --example-spec`).
const char* fs_gen_example_spec(void);

/// "uniform [0.8, 1.2]" and the like.
void fs_dist_describe(const fsDist* d, char* out, size_t n);

#endif
