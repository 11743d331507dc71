// World data of many worlds on the host (the host pipeline's, and the staging
// copy of the device's), and copies between one world and MuJoCo's mjData.
#ifndef FLYSIM_COMMON_MODEL_WORLDS_H
#define FLYSIM_COMMON_MODEL_WORLDS_H

#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/engine/fields.h"

// This build's names (common/exec/real.h FS_PREC): both precisions link into one program.
#define fs_worlds_block       FS_PREC(fs_worlds_block)
#define fs_worlds_alloc       FS_PREC(fs_worlds_alloc)
#define fs_worlds_free        FS_PREC(fs_worlds_free)
#define fs_worlds_from_mj     FS_PREC(fs_worlds_from_mj)
#define fs_worlds_state_to_mj FS_PREC(fs_worlds_state_to_mj)
#define fs_worlds_poison      FS_PREC(fs_worlds_poison)
#define fs_contact_values     FS_PREC(fs_contact_values)
#define fs_efc_values         FS_PREC(fs_efc_values)
#define fs_moment_values      FS_PREC(fs_moment_values)
#define fs_contact_pair       FS_PREC(fs_contact_pair)
#define fs_efc_chain          FS_PREC(fs_efc_chain)
#define fs_mj_field           FS_PREC(fs_mj_field)

#ifdef __cplusplus
extern "C" {
#endif

/// A cache line: no two worlds' data share one (the threads stepping neighbouring worlds
/// writing the same lines cost the host 9-13 % of its CPU time at 2 worlds on 2 threads:
/// bench/README.md), and each world's block starts on one.
#define FS_WORLD_LINE 64
/// Where each field starts within a world's block: a multiple of this.
#define FS_WORLD_FIELD_ALIGN 16

/// N worlds' data on the host: world w's fields together, in table order (common/engine/
/// fields.h), each from a multiple of FS_WORLD_FIELD_ALIGN, in a block of world_bytes (a
/// multiple of FS_WORLD_LINE) at mem + w x world_bytes. Field f of world w is at
/// base.f + w x world_bytes / (its element's size) (fs_data_world).
typedef struct fsWorlds {
  int nworld;
  size_t world_bytes; // a world's block
  fsData base;        // world 0's fields: world w's view is fs_worlds_view(m, b, w)
  void* mem;          // the allocation (the blocks start at the first line in it)
} fsWorlds;

/// A world's block for model m (the fsWorlds layout); off (FS_NDATA_FIELD entries, or
/// NULL) gets each field's offset in it.
size_t fs_worlds_block(const fsModel* m, size_t* off);

/// Allocate (zeroed) host data for nworld worlds of model m.
int fs_worlds_alloc(const fsModel* m, int nworld, fsWorlds* b, fsError* err);
void fs_worlds_free(fsWorlds* b);

/// World w's view.
static inline fsData fs_worlds_view(const fsModel* m, const fsWorlds* b, int w) {
  return fs_data_world(m, &b->base, b->world_bytes, w);
}

/// Elements from one world's field f to the next world's (f's element size divides a
/// block's bytes).
static inline size_t fs_worlds_stride(const fsWorlds* b, const fsFieldInfo* f) {
  return b->world_bytes / fs_type_size(f->type);
}

/// Copy into world w every field MuJoCo's data holds (all MJ fields, contacts and
/// constraint rows, time and the warning counters), converting to fsReal; contact_pair
/// and efc_J_coladr from the contacts' geoms. stage >= 0 copies only that stage's
/// fields. Fails if MuJoCo's actuator moments or constraint Jacobian have a non-zero
/// outside the model's sparsity.
int fs_worlds_from_mj(const fsModel* m, fsWorlds* b, int w, const mjModel* mj, const mjData* md,
                      int stage, fsError* err);

/// Copy world w's state (qpos, qvel, ctrl, qfrc_applied, qacc_warmstart, time,
/// warning counters) into MuJoCo's data.
void fs_worlds_state_to_mj(const fsModel* m, const fsWorlds* b, int w, const mjModel* mj,
                           mjData* md);

/// Fill every field of `stage` (all worlds) with NaN (ints with INT_MIN).
void fs_worlds_poison(const fsModel* m, fsWorlds* b, int stage);

/// MuJoCo's values of a contact field (kind FS_KIND_CONTACT: ncon, or contact_<m>
/// = mjData.contact[c].<m> for c < ncon, row c) into out (n values at most).
/// Returns 0, or -1 if the field has no mjContact member.
int fs_contact_values(const fsFieldInfo* f, const mjData* md, double* out, size_t n);

/// MuJoCo's values of a constraint-row field (kind FS_KIND_EFC: nefc, or efc_<x> =
/// mjData.efc_<x>, rows < nefc) into out (n values at most), in the model's layout:
/// efc_J row r at out[r * njmax], its chain's order (fs_efc_chain) (MuJoCo's sparse rows must
/// have exactly those columns, its dense rows no non-zero elsewhere). Returns the
/// number of values, or -1 if they do not fit (or have no such field).
long fs_efc_values(const fsModel* m, const fsFieldInfo* f, const mjModel* mj, const mjData* md,
                   double* out, size_t n);

/// MuJoCo's actuator moments in the model's static sparsity (nJmom values; entries
/// MuJoCo's compressed rows do not hold are 0). Returns 0, or -1 - a if actuator a
/// has a non-zero outside the model's sparsity.
int fs_moment_values(const fsModel* m, const mjData* md, double* out);

/// The model's pair that made MuJoCo's contact con, by its geoms: the first pair of
/// those geoms (-1 if none). Pairs of the same geoms share what the stages read
/// through contact_pair (the dof chain); the contact's own fields hold the rest.
int fs_contact_pair(const fsModel* m, const mjContact* con);

/// The chain of MuJoCo's constraint row r in the model's layout: its address in pair_dof
/// (adr) and length (nnz): a contact row's pair's chain, a friction-loss or joint-limit
/// row's one dof. Returns 0, or -1 for a row the model has no chain for.
int fs_efc_chain(const fsModel* m, const mjModel* mj, const mjData* md, int r, int* adr, int* nnz);

/// MuJoCo's array for data field f (NULL if mjData has none of that name).
const mjtNum* fs_mj_field(const mjData* md, const char* name);

#ifdef __cplusplus
}
#endif
#endif
