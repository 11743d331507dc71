// flysim: many worlds of one MuJoCo model, stepped at once.
//
// A batch holds N worlds of one mjModel and steps them together on a backend:
//   cpu   MuJoCo's own mj_step, worlds spread over CPU threads (float64, the reference)
//   host  flysim's stage code, which computes what mj_step computes, on CPU threads
//   cuda  the same stage code as CUDA kernels, a step of every world per launch
// Controls go in and state comes out through views: arrays of every world at fixed
// addresses for the batch's lifetime, worlds first. A controller writes `ctrl` between
// steps (on the host, or on a GPU straight into device memory); the worlds' health
// (MuJoCo's warnings, solves at their limit, full contact buffers) is per world and
// never silent.
//
//   fsBatchOptions opt = fs_batch_default_options();
//   opt.backend = FS_BACKEND_HOST;
//   opt.nworld = 256;
//   fsBatch b;
//   fsError err;
//   if (fs_batch_open(m, &opt, &b, &err)) { fprintf(stderr, "%s\n", err.msg); ... }
//   fsView ctrl, qpos;
//   fs_batch_view(b, "ctrl", &ctrl, &err);           // (256 x nu)
//   fs_batch_view(b, "qpos", &qpos, &err);           // (256 x nq)
//   fs_batch_reset(b, NULL, mj_name2id(m, mjOBJ_KEY, "neutral"), &err);
//   for (int t = 0; t < 1000; t++) {
//     my_controller(qpos.data, ctrl.data);           // float32 (host f32), host memory
//     fs_batch_step(b, 1, &err);
//   }
//   fs_batch_close(b);
//
// Errors: every call returns FS_OK (0) or a negative fsStatus and, when err is not NULL,
// writes one message naming what was wrong (the model, the view, the world, the value)
// and the fix. The library never exits and never prints, except MuJoCo's own warnings,
// which MuJoCo prints once per kind.
//
// Threads: calls on different batches may run at once on different threads; calls on one
// batch must not overlap. fs_batch_step of a cpu or host batch runs the worlds on the
// calling thread and the batch's own worker threads (nthread - 1 of them) and returns when
// they are done; a cuda batch's steps are queued on its stream and the call returns at
// once (fs_batch_sync waits). Views of a cuda batch are device memory, in the order of the
// batch's stream.
#ifndef FLYSIM_FLYSIM_H
#define FLYSIM_FLYSIM_H

#include <stddef.h>
#include <stdint.h>

#include <mujoco/mujoco.h>

#define FLYSIM_VERSION_MAJOR 0
#define FLYSIM_VERSION_MINOR 2
#define FLYSIM_VERSION_PATCH 0
/// 10000 x major + 100 x minor + patch (fs_version() is the library's at run time).
#define FLYSIM_VERSION                                                                             \
  (FLYSIM_VERSION_MAJOR * 10000 + FLYSIM_VERSION_MINOR * 100 + FLYSIM_VERSION_PATCH)

#if defined(_WIN32)
#define FLYSIM_API
#elif defined(FLYSIM_BUILDING_LIBRARY)
#define FLYSIM_API __attribute__((visibility("default")))
#else
#define FLYSIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

//---------------------------------- errors --------------------------------------------------------

/// What a call returns.
typedef enum fsStatus {
  FS_OK = 0,
  FS_ERR_ARGUMENT = -1,    // a NULL, a size, a shape, a name, a world index, a value
  FS_ERR_MODEL = -2,       // the model has what this backend cannot step (listed, with fixes)
  FS_ERR_UNAVAILABLE = -3, // the backend is not built here, or no GPU is there
  FS_ERR_MEMORY = -4,      // host or device memory
  FS_ERR_RUNTIME = -5,     // a CUDA error, or a MuJoCo error that stopped a world
  FS_ERR_CLOSED = -6       // the batch was closed, or never opened
} fsStatus;

#define FS_ERROR_LEN 4096

/// The message of the first error on a path of calls: what, where, and the fix.
typedef struct fsError {
  char msg[FS_ERROR_LEN];
  fsStatus status; // what the failed call returned
} fsError;

//---------------------------------- a batch -------------------------------------------------------

/// The steppers (see the top of this file).
typedef enum fsBackendKind {
  FS_BACKEND_CPU = 0,
  FS_BACKEND_CUDA = 1,
  FS_BACKEND_HOST = 2
} fsBackendKind;

/// The real a batch steps in: the cpu backend is MuJoCo's float64; host and cuda compute
/// in either.
typedef enum fsPrecision {
  FS_PRECISION_DEFAULT = 0,
  FS_PRECISION_F32 = 32,
  FS_PRECISION_F64 = 64
} fsPrecision;

/// How to open a batch; start from fs_batch_default_options().
typedef struct fsBatchOptions {
  fsBackendKind backend;  // default FS_BACKEND_CPU
  fsPrecision precision;  // 0 (default): the backend's, cpu F64 (its only), host and cuda F32
  int nworld;             // N, worlds (default 1)
  int nthread;            // cpu, host: threads, the caller's included; 0 (default): one per
                          // core, at most N
  int max_contacts;       // host, cuda: contacts a world holds (and the constraint rows they
                          // make); 0 (default): every contact pair's bound, which no world
                          // can exceed. A world that makes more keeps the first ones in
                          // MuJoCo's order and is a problem world (FS_PROBLEM_CONTACTS)
  int device;             // cuda: the CUDA device ordinal (default 0)
  void* stream;           // cuda: a cudaStream_t of the caller's for all the batch's work, or
                          // NULL (default): the batch's own
  const char* model_name; // how messages name the model, e.g. its file (default "the model")
  int max_candidates;     // host, cuda: candidate pairs a world tests in a step where the
                          // model's pairs with static geoms are culled (FlyGym's terrains);
                          // 0 (default): the pairs tested every step plus 8 per moving
                          // geom. A world with more keeps the first ones and is a problem
                          // world (FS_PROBLEM_CONTACTS); below the pairs tested every step
                          // is refused
} fsBatchOptions;

/// A batch, by value: {0, 0} is none. A closed batch's handle stays invalid (every
/// call on it returns FS_ERR_CLOSED), even when a new batch reuses its slot.
typedef struct fsBatch {
  uint32_t index;      // 1 + slot
  uint32_t generation; // of the slot
} fsBatch;

/// The defaults of every field.
FLYSIM_API fsBatchOptions fs_batch_default_options(void);

/// Open N worlds of model m (copied: m may be freed after the call). Every world starts at
/// the model's qpos0 (mj_resetData); fs_batch_reset picks a keyframe. The host and cuda
/// backends check first that they implement everything m does to the state, and fail
/// with FS_ERR_MODEL listing each feature they lack and how to avoid it.
FLYSIM_API int fs_batch_open(const mjModel* m, const fsBatchOptions* opt, fsBatch* out,
                             fsError* err);

/// Wait for pending work and free everything. A closed or null batch is ignored.
FLYSIM_API void fs_batch_close(fsBatch b);

/// FS_OK if `backend` can open a batch here (cuda: built with CUDA, and a GPU and driver
/// are there), else FS_ERR_UNAVAILABLE and why, with the backends that can.
FLYSIM_API int fs_backend_available(fsBackendKind backend, fsError* err);

/// "cpu", "cuda", "host"; "unknown" for a value that names no backend.
FLYSIM_API const char* fs_backend_name(fsBackendKind backend);

/// The library's version: FLYSIM_VERSION as built, and a string with its commit.
FLYSIM_API int fs_version(void);
FLYSIM_API const char* fs_version_string(void);

//---------------------------------- views ---------------------------------------------------------

/// Element types of views.
typedef enum fsDtype { FS_DTYPE_F64 = 0, FS_DTYPE_F32 = 1, FS_DTYPE_I32 = 2 } fsDtype;

/// Where a view's memory is.
typedef enum fsMemory { FS_MEMORY_HOST = 0, FS_MEMORY_DEVICE = 1 } fsMemory;

/// An array of every world, worlds first, each world's values C-contiguous: element
/// (w, i, j) is at data[w * strides[0] + i * shape[2] + j] (strides[0] >= shape[1] x
/// shape[2]: a host batch keeps each world's data on cache lines of its own, so its worlds
/// lie further apart; cpu and cuda views are C-contiguous). fs_batch_read and
/// fs_batch_write copy to and from C-contiguous buffers. Its address stays the same for
/// the batch's lifetime, so a captured CUDA graph or a caller's kernel can keep using it.
typedef struct fsView {
  const char* name;   // as asked
  void* data;         // world 0's first element
  fsDtype dtype;      // the batch's real (FS_DTYPE_F32 or F64) for reals; FS_DTYPE_I32
  fsMemory memory;    // FS_MEMORY_DEVICE for a cuda batch, else FS_MEMORY_HOST
  int device;         // the CUDA device of device memory
  int ndim;           // 1, 2 or 3
  int64_t shape[3];   // (N), (N, n) or (N, n, k); unused dimensions are 1
  int64_t strides[3]; // elements from one index to the next in each dimension (DLPack's
                      // strides): (strides[0], shape[2], 1); unused dimensions' are 1
  int writable;       // an input: written by the caller between steps, read by the next step
} fsView;

/// The view `name`: MuJoCo's mjData field of that name, every world's, at the batch's
/// precision, as the last step left it (after fs_batch_reset: the inputs and time are the
/// reset's, the outputs are defined again after the next step). A cuda batch keeps some
/// of the step's intermediates on-chip (fsBatchInfo.chip_bytes) until their view is asked
/// (a host batch too under FLYSIM_ONCHIP_BYTES; by default it keeps every view's field in
/// memory); such a view first asked after steps reads NaN (ints -1) until the next step,
/// so ask for the views you read before stepping. The views:
///   inputs (writable):  ctrl (N x nu), qpos (N x nq), qvel (N x nv), qfrc_applied (N x nv),
///                       mocap_pos (N x nmocap x 3), mocap_quat (N x nmocap x 4: a mocap
///                       body's pose, as MuJoCo's kinematics read it; normalized there)
///   state and outputs:  time (N), xpos (N x nbody x 3), xquat (N x nbody x 4),
///                       xmat (N x nbody x 9), site_xpos (N x nsite x 3), site_xmat,
///                       geom_xpos, geom_xmat, subtree_com, actuator_force (N x nu),
///                       actuator_length, actuator_velocity, qacc (N x nv), qfrc_actuator,
///                       qfrc_passive, qfrc_bias, qfrc_constraint, ncon (N, I32: the
///                       contacts of the last step), cvel, cinert
///   health:             problems (N, I32: FS_PROBLEM_* bits since the world's reset),
///                       solver_iterations (N x 2, I32: the last step's Newton and
///                       noslip iterations, summed over its islands)
/// The cpu backend has every mjData array (sensordata, act, mocap_pos, ...); views it
/// has but host and cuda do not compute (sensordata) fail there, naming the fix.
/// Views of the cpu backend are the batch's copies of each world's mjData arrays: the
/// inputs are copied in before each step, everything viewed out after it.
FLYSIM_API int fs_batch_view(fsBatch b, const char* name, fsView* out, fsError* err);

/// Copy view `name` into host memory dst (bytes: the view's size, N x shape[1] x
/// shape[2] elements of its dtype) once the batch's pending steps are done, whatever
/// the memory of the view: the way to read a cuda batch from the host.
FLYSIM_API int fs_batch_read(fsBatch b, const char* name, void* dst, size_t bytes, fsError* err);

/// Copy host memory src into the writable view `name` (bytes as fs_batch_read), in
/// order with the batch's steps; src may be reused as soon as the call returns.
FLYSIM_API int fs_batch_write(fsBatch b, const char* name, const void* src, size_t bytes,
                              fsError* err);

//---------------------------------- stepping ------------------------------------------------------

/// A cuda batch runs its steps FLYSIM_STEPS_PER_LAUNCH to a launch (the rest of a call's
/// steps one a launch): calls of a multiple of it cost the fewest launches.
#define FLYSIM_STEPS_PER_LAUNCH 8

/// nstep steps (mj_step each) of every world, ctrl held as written (or from the control
/// sequence). A cpu world that MuJoCo stopped with an error (the call fails, naming it) is
/// not stepped again until it is reset; its recorded rows are NaN. cpu and host: returns
/// when done. cuda: queued on the batch's stream (graph
/// launches of FLYSIM_STEPS_PER_LAUNCH steps), returns at once; fs_batch_sync waits.
FLYSIM_API int fs_batch_step(fsBatch b, int nstep, fsError* err);

/// Wait until every queued step and copy of the batch is done; report a CUDA error.
FLYSIM_API int fs_batch_sync(fsBatch b, fsError* err);

/// What mj_forward computes for every world's current state, without stepping: positions,
/// velocities, forces, the constraint solve, accelerations and sensors, into the views (after
/// a reset or a write of qpos or qvel, the derived quantities of the new state). The state
/// (qpos, qvel, act, time, the warm start) is unchanged. cpu: mj_forward; host: the engine's
/// forward. cuda: not yet (FS_ERR_ARGUMENT, naming the fix).
FLYSIM_API int fs_batch_forward(fsBatch b, fsError* err);

/// Steps taken since the batch was opened (every world takes every step).
FLYSIM_API int64_t fs_batch_steps(fsBatch b);

/// Reset the worlds whose mask entry is non-zero (mask (N); NULL: every world) to keyframe
/// `key` of their model (mj_resetDataKeyframe; key -1: qpos0, mj_resetData), and their
/// health. The other worlds are left as they are, to the bit.
FLYSIM_API int fs_batch_reset(fsBatch b, const uint8_t* mask, int key, fsError* err);

/// fs_batch_reset with the mask (N) in device memory of a cuda batch's device, read on the
/// device in the order of the batch's stream: a kernel of the caller's that writes it (a
/// policy's termination test) and is ordered before this call's work on that stream needs
/// no round trip through the host. The first call for a keyframe (and the first after
/// fs_batch_set_param) packs every world's reset state and uploads it once; later calls
/// only launch the copy of the masked worlds. cuda only: a cpu or host batch's memory is
/// the host's (fs_batch_reset).
FLYSIM_API int fs_batch_reset_device(fsBatch b, const uint8_t* mask, int key, fsError* err);

/// A world's model parameter, as MuJoCo names its mjModel array (a real-valued one:
/// "actuator_gainprm", "actuator_biasprm", "body_mass", "body_inertia", "geom_friction",
/// "pair_friction", "dof_damping", "jnt_stiffness", ...) or "opt.gravity": world
/// worlds[k] gets values[k x size ... (k + 1) x size) (size: the whole array, e.g. nu x 10
/// for actuator_gainprm). Takes effect at the next step; what MuJoCo derives from it
/// (mj_setConst: subtree masses, the inverse weights, ...) is derived again, per world.
/// worlds NULL: worlds 0 .. nset-1.
FLYSIM_API int fs_batch_set_param(fsBatch b, const char* name, const int* worlds, int nset,
                                  const double* values, fsError* err);

/// An open-loop control sequence (MuJoCo rollout's control sequence, one table for all
/// worlds): before each step, world w's ctrl[actuator[c]] = value[row x ncol + c] for
/// every column c, row = world_row[w] + the steps taken since the sequence was set.
typedef struct fsCtrlSequence {
  int nrow;                 // T: rows (steps)
  int ncol;                 // A: columns
  const double* value;      // (T x A)
  const int* actuator;      // (A) the actuator each column drives
  const int64_t* world_row; // (N) each world's row at its next step
} fsCtrlSequence;

/// Set (copied) or clear (seq NULL) the control sequence. A step that would read past
/// row T - 1 in any world fails, before any world steps.
FLYSIM_API int fs_batch_set_ctrl_sequence(fsBatch b, const fsCtrlSequence* seq, fsError* err);

//---------------------------------- recording -----------------------------------------------------

/// What a recording keeps after every step: C columns of a range of worlds, in float32.
/// Column c is element index[c] of world w's slice of view source[c], one of qpos, qvel,
/// ctrl, actuator_force, xpos, xquat, site_xpos, solver_iterations, or
/// "group_contact_force": the contact force on a group of geoms (geom_group) in the world
/// frame, its index 3 x group + axis (MuJoCo's mj_contactForce decoded from the
/// pyramid, summed over the group's contacts, counted on the group's side).
typedef struct fsRecordOptions {
  int ncol;                  // C: columns
  const char* const* source; // (C) each column's view
  const int* index;          // (C) each column's element of that view's world slice
  const int* geom_group;     // (ngeom) each geom's group, or -1: none (group_contact_force)
  int world0;                // first world recorded
  int nworld;                // worlds recorded from world0 (0: to the last)
  int capacity;              // the most steps one fs_batch_step_recorded records
  fsMemory memory;           // where fs_batch_step_recorded's out[id] is: FS_MEMORY_HOST
                             // (default), or FS_MEMORY_DEVICE (cuda only): device memory of
                             // the batch's device, written in the order of the batch's
                             // stream (a caller's kernel queued after the call on that
                             // stream, or anything after fs_batch_sync, sees it), no host copy
} fsRecordOptions;

/// Add a recording (16 at most); *id numbers it for fs_batch_step_recorded (0, 1, ...).
FLYSIM_API int fs_batch_add_recording(fsBatch b, const fsRecordOptions* opt, int* id, fsError* err);

/// fs_batch_step, recording into out[id] (nstep x nworld x C float32 of recording id, in
/// the recording's memory; NULL: not this time) every recording's columns after each step.
/// On the cuda backend a host recording's copy to out lands once a later
/// fs_batch_step(_recorded) or fs_batch_sync returns, so that a caller alternating two
/// buffers writes one while the next steps run; a device recording's is in stream order.
FLYSIM_API int fs_batch_step_recorded(fsBatch b, int nstep, float* const* out, fsError* err);

//---------------------------------- health and cost -----------------------------------------------

/// Problem bits of a world (the `problems` view, fsWorldHealth.problems).
enum {
  FS_PROBLEM_WARNING = 1 << 0,  // a MuJoCo warning: bad qpos/qvel/qacc/ctrl (NaN, Inf, huge)
  FS_PROBLEM_CONTACTS = 1 << 1, // the contact or constraint buffer was full (max_contacts)
  FS_PROBLEM_SOLVER = 1 << 2,   // a solve ran to the iteration limit
  FS_PROBLEM_FAILED = 1 << 3,   // a solve failed (rank-deficient Hessian), or MuJoCo stopped
                                // the world with an error (cpu)
};

/// A world's health since its last reset.
typedef struct fsWorldHealth {
  int warnings[8];            // MuJoCo's warning counters, by mjtWarning (mjNWARNING of them)
  int first_warning;          // the mjtWarning of the first warning, or -1
  int64_t first_warning_step; // fs_batch_steps() before the step that raised it, or -1
  int solver_limit;           // steps whose Newton solve (an island's) ran to opt.iterations
  int solver_error;           // steps whose solve failed, or that MuJoCo stopped (cpu)
  int peak_contacts;          // the most contacts a step made (kept or not: what
                              // max_contacts must hold)
  int fatal;                  // cpu: a MuJoCo error stopped the world (its message: the
                              // error of the step that stopped)
  uint32_t problems;          // FS_PROBLEM_* bits
} fsWorldHealth;

/// Every world's health into out (N).
FLYSIM_API int fs_batch_health(fsBatch b, fsWorldHealth* out, fsError* err);

/// What a batch is and costs.
typedef struct fsBatchInfo {
  fsBackendKind backend;
  fsPrecision precision;
  int nworld;
  int nthread;             // cpu, host: threads, the caller's included; cuda: 0
  int contacts;            // contacts a world holds (0: no bound, MuJoCo's arena: cpu)
  double world_bytes;      // one world's data
  double model_bytes;      // what the worlds share
  int chip_bytes;          // host, cuda: of a world's data, what the step keeps on-chip
  int kernel_registers;    // cuda: the step kernel's registers a thread
  int kernel_local_bytes;  // ... its stack and spills a thread
  int kernel_shared_bytes; // ... its static shared memory a block
  int kernel_block;        // ... threads a block
  double kernel_occupancy; // ... resident threads over the SM's maximum (theoretical)
  int uses_graph;          // cuda: steps launched from CUDA graphs (FLYSIM_NO_GRAPH=1: 0)
  char description[512];   // e.g. "2 threads, float32, 220 contacts, 96 KiB a world"
} fsBatchInfo;

FLYSIM_API int fs_batch_info(fsBatch b, fsBatchInfo* out, fsError* err);

/// cpu backend: world w's MuJoCo data (NULL for host and cuda): MuJoCo's timers, its
/// contacts, rendering. Read it between steps; write state through the views (their
/// copies go in before each step).
FLYSIM_API mjData* fs_batch_mjdata(fsBatch b, int w);

#ifdef __cplusplus
}
#endif
#endif
