// The batched stepper's model on the host: the check of what it implements
// (common/model/model_support.c), the conversion from mjModel (common/model/model_build.c; uploaded
// once to the device by cuda/device.h), and the descriptions of the model and data
// fields (common/engine/fields.h) and of the stages for loops over them (model_build.c).
#ifndef FLYSIM_COMMON_MODEL_MODEL_H
#define FLYSIM_COMMON_MODEL_MODEL_H

#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/engine/fields.h"

// This build's names (common/exec/real.h FS_PREC): both precisions link into one program.
#define fs_model_support          FS_PREC(fs_model_support)
#define fs_model_support_for      FS_PREC(fs_model_support_for)
#define fs_model_build            FS_PREC(fs_model_build)
#define fs_model_build_for        FS_PREC(fs_model_build_for)
#define fs_model_free             FS_PREC(fs_model_free)
#define fs_model_fields           FS_PREC(fs_model_fields)
#define fs_model_nfield           FS_PREC(fs_model_nfield)
#define fs_data_fields            FS_PREC(fs_data_fields)
#define fs_data_nfield            FS_PREC(fs_data_nfield)
#define fs_stage_name             FS_PREC(fs_stage_name)
#define fs_model_bytes            FS_PREC(fs_model_bytes)
#define fs_world_bytes            FS_PREC(fs_world_bytes)
#define fs_model_bound_contacts   FS_PREC(fs_model_bound_contacts)
#define fs_model_row_sizes        FS_PREC(fs_model_row_sizes)
#define fs_model_for_lanes        FS_PREC(fs_model_for_lanes)
#define fs_model_kernels_lack     FS_PREC(fs_model_kernels_lack)
#define fs_model_without_sensors  FS_PREC(fs_model_without_sensors)
#define fs_model_sensors_lack     FS_PREC(fs_model_sensors_lack)
#define fs_model_bound_candidates FS_PREC(fs_model_bound_candidates)
#define fs_world_describe         FS_PREC(fs_world_describe)
// ... and of what the check and the build share (below)
#define fs_model_contacts_enabled FS_PREC(fs_model_contacts_enabled)
#define fs_model_pair_maxcon      FS_PREC(fs_model_pair_maxcon)
#define fs_model_pair_chain       FS_PREC(fs_model_pair_chain)
#define fs_pair_table             FS_PREC(fs_pair_table)
#define fs_pair_table_free        FS_PREC(fs_pair_table_free)
#define fs_pair_margin_gap        FS_PREC(fs_pair_margin_gap)

#ifdef __cplusplus
extern "C" {
#endif

/// Check that the stepper implements everything model m can do to the state.
/// Returns 0, or -1 with ONE error (naming model_path) that lists every
/// unsupported feature found and how to avoid each. What it lets through without
/// implementing it cannot change qpos/qvel: sensors, sites, cameras, lights,
/// visual and custom data, energy and fwdinv flags, inactive equality
/// constraints, tendons with no stiffness, damping, armature, actuator, limit or
/// friction loss, and geoms and pairs when contacts are disabled (mjDSBL_CONTACT
/// or mjDSBL_CONSTRAINT), adhesion actuators included (their moment is an average
/// over contacts, so with none they move nothing).
int fs_model_support(const mjModel* m, const char* model_path, fsError* err);

/// What a model is built for. FS_BUILD_STEP: the whole step, contacts included
/// (explicit plane pairs under the pyramidal cone, MuJoCo's Newton solver, noslip):
/// constraint rows are allocated (nefcmax) when contacts are enabled and the model
/// has pairs, and adhesion actuators get their moments through the contacts.
/// FS_BUILD_COLLISION: the stages up to collision only (fs_stage_run, for the
/// collision tests): the same check without what the rows and the solver need; no
/// constraint rows, and adhesion actuators keep their contact-free (empty) moments.
typedef enum fsBuildFor { FS_BUILD_STEP = 0, FS_BUILD_COLLISION = 1 } fsBuildFor;

/// fs_model_support for a use (fs_model_support is FS_BUILD_STEP).
int fs_model_support_for(const mjModel* m, const char* model_path, fsBuildFor use, fsError* err);

/// The sensors of model m the step does not compute (common/engine/stage_sensor.h: the kinds
/// of FS_SENSORS, without delay or interval, on bodies, geoms and sites): 0 when it computes
/// every one (or m has none), else how many it does not, each named in why (n bytes) with
/// what it lacks (its kind, ...); mjDSBL_SENSOR: every one, said so. Sensors never change the
/// state: a model with these is stepped, without its sensordata (fsModel.sensors 0).
int fs_model_sensors_lack(const mjModel* m, char* why, size_t n);

/// Build the stepper's model from mj (after fs_model_support): sizes, options,
/// arrays converted to fsReal, and the derived arrays. Host memory; free with
/// fs_model_free.
int fs_model_build(const mjModel* mj, const char* model_path, fsModel* m, fsError* err);

/// fs_model_build for a use (fs_model_build is FS_BUILD_STEP). The contact buffer
/// (nprecon, nconmax) is sized from the pairs when contacts are enabled, else 0;
/// for FS_BUILD_STEP also the rows (nefcmax: every contact slot's pyramidal
/// rows; njmax, nefcJ, nefcD) and the pairs' dof chains, else 0. A caller may lower
/// m->nconmax (or m->nefcmax, then fs_model_row_sizes) before allocating data:
/// the collision stage then drops (and counts, in contact_overflow) the contacts
/// beyond it, fs_make_constraint the rows beyond it (efc_overflow).
int fs_model_build_for(const mjModel* mj, const char* model_path, fsModel* m, fsBuildFor use,
                       fsError* err);
void fs_model_free(fsModel* m);

/// Bound a world's contacts to n (0, or n >= nprecon: every pair's slots, which no
/// world can overflow) and its rows to what n contacts make at most (n times the most
/// rows a pair's contact has): a world's memory then scales with n. The collision
/// stage keeps the first n contacts in MuJoCo's order and counts the rest
/// (contact_overflow, MuJoCo's CONTACTFULL warning: a problem world, never silent).
/// On built sizes, before allocating data; every model of one batch the same n.
void fs_model_bound_contacts(fsModel* m, int n);

/// The rows' storage from nefcmax: nefcJ (each row's chain, njmax values) and nefcD (each
/// row dense, nv values, where MuJoCo's Jacobians are dense and m->dense_rows: the host's
/// row products); there the host's Hessian factor is dense as well (nL: nv x nv, else the
/// layout's nH).
void fs_model_row_sizes(fsModel* m);

/// A built model for the lanes (the GPU's step, which reads the rows' chains and factors
/// the Hessian in its tree layout): no rows held dense (dense_rows 0, nefcD 0, nL = nH).
/// On built sizes, before allocating data; bounds applied after it keep it. -1 (err names
/// `name`, FS_ERR_MODEL) for a model with contact rows across two branches of a tree or two
/// trees (nbranchpair), which that layout cannot hold.
int fs_model_for_lanes(fsModel* m, const char* name, fsError* err);

/// -1 (err names `name` and says, in one message, every feature and its fix, FS_ERR_MODEL)
/// for a model that uses what the kernels do not compile yet and the host runs (the rows and
/// solvers beyond NeuroMechFly's, RK4, fluid forces, tendon springs and dampers, activation
/// dynamics); else 0.
int fs_model_kernels_lack(const fsModel* m, const char* name, fsError* err);

/// The kernels' model: no sensors (they do not compute them yet: common/engine/
/// stage_sensor.h), no sensordata held. On built sizes, before allocating data.
void fs_model_without_sensors(fsModel* m);

/// Bound a world's candidate pairs (common/engine/collision_cull.h) to n where the model culls
/// pairs (0, or n >= npair: the default, the pairs tested every step and 8 per moving geom): the
/// contact slots, contacts and rows follow (every candidate's slots). A world with more
/// keeps the first n and counts the rest (cand_overflow, CONTACTFULL: a problem world).
/// -1 (err says why) if n is below the pairs tested every step (nalways). On built
/// sizes, before fs_model_bound_contacts and allocating.
int fs_model_bound_candidates(fsModel* m, int n, const char* name, fsError* err);

/// fs_model_build, then fs_model_bound_candidates(m, max_candidates) and
/// fs_model_bound_contacts(m, max_contacts): how the host and cuda backends build each of
/// their models (the batch's and every world's), so that all have one size.
static inline int fs_model_build_bounded(const mjModel* mj, const char* model_path,
                                         int max_contacts, int max_candidates, fsModel* m,
                                         fsError* err) {
  if (fs_model_build(mj, model_path, m, err)) return -1;
  if (fs_model_bound_candidates(m, max_candidates, model_path, err)) {
    fs_model_free(m);
    return -1;
  }
  fs_model_bound_contacts(m, max_contacts);
  return 0;
}

/// The model's and the data's fields (common/engine/fields.h), in table order.
extern const fsFieldInfo fs_model_fields[];
extern const int fs_model_nfield;
extern const fsFieldInfo fs_data_fields[];
extern const int fs_data_nfield;

/// "kinematics", "com_pos", ... (fsStage); "state" for FS_STAGE_STATE.
const char* fs_stage_name(int stage);

/// Bytes of the model's arrays, and of one world's data (every field of common/engine/fields.h).
size_t fs_model_bytes(const fsModel* m);
size_t fs_world_bytes(const fsModel* m);

/// "220 contacts, 880 rows, 415 KiB a world": what a world of m holds and takes.
void fs_world_describe(const fsModel* m, char* out, size_t n);

// What fs_model_support and the build share (model_support.c and model_build.c), not for
// callers.

/// 1 if m's contacts are on: neither mjDSBL_CONTACT nor mjDSBL_CONSTRAINT (model_support.c).
int fs_model_contacts_enabled(const mjModel* m);

/// A contact pair's parameters in fsPairTable.param (FS_PAIR_NPARAM a pair): solref,
/// solreffriction (0 0: solref's), solimp, friction (5), margin, gap, adhesion.
enum {
  FS_PAIR_SOLREF = 0,
  FS_PAIR_SOLREFFRICTION = 2,
  FS_PAIR_SOLIMP = 4,
  FS_PAIR_FRICTION = 9,
  FS_PAIR_MARGIN = 14,
  FS_PAIR_GAP = 15,
  FS_PAIR_ADHESION = 16,
  FS_PAIR_NPARAM = 17
};

/// The geom pairs mj_collision may collide, in the order its contacts come out: the explicit
/// pairs and, with the broadphase, the pairs of geoms that collide by contype/conaffinity
/// (model_pairs.c says how MuJoCo orders and filters them), each with its contact parameters
/// (an explicit pair's; MuJoCo's mix of the two geoms' for the others).
typedef struct fsPairTable {
  int n;              // pairs
  int nexplicit;      // of which explicit (mjModel's npair)
  int cap;            // room (the arrays' rows)
  int *geom1, *geom2; // (n) the geoms: an explicit pair's, or the first body's geom first
  int* dim;           // (n) condim
  int* mjpair;        // (n) the mjModel pair, -1: found by the broadphase
  double* param;      // (n x FS_PAIR_NPARAM)
} fsPairTable;

/// The model's pairs into t (broadphase 0: the explicit pairs alone). -1 (err says why) when
/// out of memory. Free with fs_pair_table_free.
int fs_pair_table(const mjModel* m, int broadphase, fsPairTable* t, fsError* err);
void fs_pair_table_free(fsPairTable* t);

/// Pair p's margin, as the override flag leaves it, plus its gap: what its collision
/// function is given (model_pairs.c).
double fs_pair_margin_gap(const mjModel* m, const fsPairTable* t, int p);

/// Contacts geoms g1 and g2 can make in the collision stage (margin_gap: the pair's margin,
/// as the override flag leaves it, plus its gap): MuJoCo's mj_maxContact for the pairs the
/// stage implements; 0 for the pairs it does not (model_support.c).
int fs_model_pair_maxcon(const mjModel* m, int g1, int g2, double margin_gap);

/// Dof chain of the contacts of geoms g1, g2 (MuJoCo's mj_mergeChain of their bodies, common
/// ancestors skipped) into chain (nv), increasing; side (nv, or NULL) gets each dof's side: 0
/// for g1's body, 1 for g2's. Returns its length (model_build.c).
int fs_model_pair_chain(const mjModel* m, int g1, int g2, int* chain, int* side);

#ifdef __cplusplus
}
#endif
#endif
