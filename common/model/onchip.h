// A world's intermediates on-chip: the step kernel points some of a world's data
// fields (common/engine/fields.h) at a region of the SM's shared memory instead of the
// world's slice of global memory; the stage functions only see fsData's pointers, so
// none changes. A plan says which fields and where: each field's offset in a world's
// region (or -1: global memory) and the region's bytes.
//
// What may go on-chip: a field the step writes before it reads it, every step (an
// intermediate), that nothing reads after the step. So never the state (qpos, qvel,
// ctrl, qfrc_applied, qacc_warmstart, time: they carry over), flysim's per-world
// bookkeeping (warning counters, solver statistics: the health checks read them), nor
// what a recording may read (common/model/record.h's sources: site and body frames,
// actuator forces, the contacts and row forces of group_contact_force), nor a field the
// batch's caller views (fs_chip_plan_except). The host backend
// runs the same plan over a per-thread region, which its test fills with NaN before
// every step (FLYSIM_ONCHIP_POISON): the results must not change by a bit.
//
// Fields share bytes where their lives do not overlap: each field lives from the first
// to the last phase of the step whose code refers to it (common/model/onchip.c's table, checked
// against the code by scripts/onchip_lifetimes.py), so the collision's per-slot scratch,
// the frames and the RNE's arrays, the Hessian and noslip's rows take turns in the same
// region. Lanes meet (FS_SYNC) at the end of every phase, so no lane writes a field while
// another still reads the one it replaces.
//
// Which fields, in order, until the budget is spent (fs_chip_plan): the solver's
// vectors over dofs (read and written by every Newton iteration and line search), M
// (every iteration's M x), M's factor (the first Newton direction; qacc_smooth), the
// Hessian and its factor (every iteration), then the smooth dynamics' tree arrays,
// the implicit-damping factor, and the contact and row arrays. A field that does not
// fit stays in global memory, so any model runs: a larger model or a smaller budget
// only keeps less on-chip.
//
// The budget per world (FLYSIM_ONCHIP_BYTES, else the default) is, on a GPU, what a
// world can have without lowering the SM's resident worlds: the shared memory of an SM
// over the blocks its registers let it hold, less what the runtime keeps per block and
// the world's view (fs_device_chip_budget). The host backend runs a plan of its own by
// default (every intermediate but the fields views show, in a thread's region:
// cpu/backend_host.c) and the GPU's within FLYSIM_ONCHIP_BYTES when set. FS_CHIP_DEFAULT_BYTES,
// what the tests and the size proxy plan with, is that share on an H200 for the step
// kernel (cuda/step_kernel.cuh): 128 registers (either precision) hold 4 blocks of 128 threads
// a SM, 32 worlds a block at 4 lanes a world; 228 KiB / 4 less 1 KiB a block is 1.75
// KiB a world, less its 0.9 KiB view (at 8 lanes a world, 2.6 KiB).
#ifndef FLYSIM_COMMON_MODEL_ONCHIP_H
#define FLYSIM_COMMON_MODEL_ONCHIP_H

#include "common/base/error.h"
#include "common/engine/fields.h"

#define FS_CHIP_DEFAULT_BYTES 848
#define FS_CHIP_ALIGN         16

/// Where a world's data fields live in the step: off[f] >= 0 is field f's offset in
/// the world's on-chip region of `bytes` bytes (a multiple of FS_CHIP_ALIGN); -1 is
/// global memory. bytes 0: everything in global memory.
typedef struct fsChipPlan {
  int bytes;
  int nfield; // fields on-chip
  int off[FS_NDATA_FIELD];
  int nallow;       // fields of the model that may go on-chip (its intermediates)
  long allow_bytes; // what all of them take a world, sharing bytes where their lifetimes
                    // allow: the budget that keeps them all on-chip
  long sum_bytes;   // ... side by side (what sharing saves: sum_bytes - allow_bytes)
} fsChipPlan;

/// The phases of fs_step (common/engine/stage_forward.h) in order, as the plan times a field's
/// life: the stages (common/engine/fields.h's FS_STAGES, in its order: scripts/onchip_lifetimes.py
/// checks it), the constraint stage by its parts (rows, islands and warm start; Newton;
/// noslip; the results).
enum {
  FS_CHIP_KINEMATICS = 0,
  FS_CHIP_COM_POS,
  FS_CHIP_MAKE_M,
  FS_CHIP_FACTOR_M,
  FS_CHIP_COLLISION,
  FS_CHIP_MAKE_CONSTRAINT,
  FS_CHIP_TRANSMISSION,
  FS_CHIP_ACTUATOR_VELOCITY,
  FS_CHIP_COM_VEL,
  FS_CHIP_PASSIVE,
  FS_CHIP_REFERENCE_CONSTRAINT,
  FS_CHIP_RNE,
  FS_CHIP_ACTUATION,
  FS_CHIP_ACCELERATION,
  FS_CHIP_SOLVER_SETUP,
  FS_CHIP_NEWTON,
  FS_CHIP_NOSLIP,
  FS_CHIP_SOLVER_RESULTS,
  FS_CHIP_SENSOR,
  FS_CHIP_EULER,
  FS_CHIP_NPHASE
};

/// n bytes rounded up to a whole number of FS_CHIP_ALIGN.
FS_HD size_t fs_chip_round(size_t n) {
  return (n + FS_CHIP_ALIGN - 1) / FS_CHIP_ALIGN * FS_CHIP_ALIGN;
}

/// *out = world w's view of the batch whose base pointers are `base` (world_bytes: its
/// layout, common/engine/fields.h's FS_DATA_GLOBAL), with the plan's fields in `chip`
/// instead (fs_data_world when the plan has none). Written a field at a time: the step
/// kernels keep the view in shared memory, and building it whole in registers first made
/// them spill.
FS_HD void fs_data_on_chip(const fsModel* m, const fsData* base, size_t world_bytes, int w,
                           const fsChipPlan* plan, char* chip, fsData* out) {
#define FS_X(type, name, size, cols, stage, kind)                                                  \
  out->name = plan->off[FS_FIELD_##name] >= 0                                                      \
                  ? (type*)(chip + plan->off[FS_FIELD_##name])                                     \
                  : FS_DATA_GLOBAL(m, base, world_bytes, w, type, name, size, cols);
  FS_DATA_FIELDS(FS_X)
#undef FS_X
}

#define fs_chip_plan        FS_PREC(fs_chip_plan)
#define fs_chip_plan_except FS_PREC(fs_chip_plan_except)
#define fs_chip_budget      FS_PREC(fs_chip_budget)
#define fs_chip_all_bytes   FS_PREC(fs_chip_all_bytes)
#define fs_chip_lifetime    FS_PREC(fs_chip_lifetime)

#ifdef __cplusplus
extern "C" {
#endif

/// The plan for model m within `budget` bytes per world (0: none): the fields that may
/// go on-chip, in the order above, each at the lowest offset where it fits beside the
/// fields already placed whose lifetimes overlap its own (first fit).
void fs_chip_plan(const fsModel* m, long budget, fsChipPlan* out);

/// fs_chip_plan keeping every data field f with global[f] non-zero (FS_NDATA_FIELD
/// entries; NULL: none) in global memory: the fields a batch's caller views (fs_batch_view).
void fs_chip_plan_except(const fsModel* m, long budget, const unsigned char* global,
                         fsChipPlan* out);

/// The phases [*first, *last] in which the step's code refers to data field `field`, if
/// it may go on-chip (1); else 0.
int fs_chip_lifetime(const fsModel* m, int field, int* first, int* last);

/// The bytes a world's intermediates take: every field fs_chip_plan may take.
long fs_chip_all_bytes(const fsModel* m);

/// The budget per world: FLYSIM_ONCHIP_BYTES if set (0 keeps everything in global
/// memory; "all": `all`, every intermediate), else deflt. -1 with an error naming the
/// variable if it is neither a number of bytes nor "all".
long fs_chip_budget(long deflt, long all, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
