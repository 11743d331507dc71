#include "common/model/worlds.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine/stage_constraint.h"
#include "common/model/model.h"

size_t fs_worlds_block(const fsModel* m, size_t* off) {
  size_t bytes = 0;
  for (int f = 0; f < fs_data_nfield; f++) {
    if (off) off[f] = bytes;
    bytes += fs_field_bytes(m, &fs_data_fields[f]);
    bytes = (bytes + FS_WORLD_FIELD_ALIGN - 1) / FS_WORLD_FIELD_ALIGN * FS_WORLD_FIELD_ALIGN;
  }
  bytes = (bytes + FS_WORLD_LINE - 1) / FS_WORLD_LINE * FS_WORLD_LINE;
  return bytes ? bytes : FS_WORLD_LINE;
}

int fs_worlds_alloc(const fsModel* m, int nworld, fsWorlds* b, fsError* err) {
  memset(b, 0, sizeof *b);
  b->nworld = nworld;
  size_t off[FS_NDATA_FIELD];
  b->world_bytes = fs_worlds_block(m, off);
  // calloc (untouched pages stay unmapped until stepped), the blocks from its first line
  b->mem = fs_calloc(err, "the worlds' data", (size_t)nworld * b->world_bytes + FS_WORLD_LINE, 1);
  if (!b->mem) return -1;
  char* blocks = (char*)b->mem + (FS_WORLD_LINE - (uintptr_t)b->mem % FS_WORLD_LINE);
  for (int f = 0; f < fs_data_nfield; f++)
    *fs_field_ptr(&b->base, &fs_data_fields[f]) = blocks + off[f];
  return 0;
}

void fs_worlds_free(fsWorlds* b) {
  if (!b) return;
  free(b->mem);
  memset(b, 0, sizeof *b);
}

const mjtNum* fs_mj_field(const mjData* md, const char* name) {
#define X(type, field, nr, nc)                                                                     \
  if (!strcmp(name, #field))                                                                       \
    return (const mjtNum*)_Generic(md->field, mjtNum * : md->field, default : NULL);
#define XNV X
  MJDATA_POINTERS
#undef XNV
#undef X
  return NULL;
}

int fs_moment_values(const fsModel* m, const mjData* md, double* out) {
  for (int a = 0; a < m->nu; a++) {
    int nnz = md->moment_rownnz[a], adr = md->moment_rowadr[a];
    int ours = m->moment_rowadr[a], n = m->moment_rownnz[a], k = 0;
    for (int q = 0; q < n; q++) out[ours + q] = 0;
    // MuJoCo's columns do not decrease, as ours; a column twice (a fixed tendon's joint
    // listed twice) maps its slots in order
    for (int e = 0; e < nnz; e++) {
      int col = md->moment_colind[adr + e];
      while (k < n && m->moment_colind[ours + k] < col) k++;
      if (k == n || m->moment_colind[ours + k] != col) return -1 - a;
      out[ours + k++] = md->actuator_moment[adr + e];
    }
  }
  return 0;
}

// MuJoCo's moments into the model's static sparsity (row by row).
static int moments_from_mj(const fsModel* m, fsData* d, const mjData* md, fsError* err) {
  double* v = malloc(sizeof(double) * ((size_t)m->nJmom + 1));
  if (!v) return fs_fail(err, "out of memory copying moments");
  int rc = fs_moment_values(m, md, v);
  if (rc) {
    free(v);
    return fs_fail(err,
                   "actuator %d: MuJoCo's moment has a non-zero outside the model's sparsity"
                   " (a transmission the stepper does not model)",
                   -1 - rc);
  }
  for (int k = 0; k < m->nJmom; k++) d->actuator_moment[k] = (fsReal)v[k];
  free(v);
  return 0;
}

int fs_contact_pair(const fsModel* m, const mjContact* con) {
  for (int p = 0; p < m->npair; p++) {
    int a = m->pair_geom1[p], b = m->pair_geom2[p];
    if ((a == con->geom[0] && b == con->geom[1]) || (a == con->geom[1] && b == con->geom[0]))
      return p;
  }
  return -1;
}

// The mjContact member of a contact_* field: offset, and whether it is an int.
typedef struct ContactMember {
  const char* name;
  size_t offset;
  int is_int;
} ContactMember;

#define FS_MEMBER(member, is_int)                                                                  \
  { "contact_" #member, offsetof(mjContact, member), is_int }
static const ContactMember kContactMembers[] = {
    FS_MEMBER(dist, 0),
    FS_MEMBER(pos, 0),
    FS_MEMBER(frame, 0),
    FS_MEMBER(includemargin, 0),
    FS_MEMBER(friction, 0),
    FS_MEMBER(solref, 0),
    FS_MEMBER(solreffriction, 0),
    FS_MEMBER(solimp, 0),
    FS_MEMBER(adhesion, 0),
    FS_MEMBER(dim, 1),
    FS_MEMBER(geom, 1),
    FS_MEMBER(exclude, 1),
    FS_MEMBER(mu, 0),
    FS_MEMBER(efc_address, 1),
};
#undef FS_MEMBER

int fs_contact_values(const fsFieldInfo* f, const mjData* md, double* out, size_t n) {
  if (!strcmp(f->name, "ncon")) {
    if (n >= 1) out[0] = md->ncon;
    return 0;
  }
  size_t nm = sizeof kContactMembers / sizeof kContactMembers[0];
  for (size_t i = 0; i < nm; i++) {
    const ContactMember* cm = &kContactMembers[i];
    if (strcmp(cm->name, f->name)) continue;
    size_t cols = (size_t)f->cols, ncon = (size_t)md->ncon;
    for (size_t c = 0; c < ncon && (c + 1) * cols <= n; c++) {
      const char* base = (const char*)&md->contact[c] + cm->offset;
      for (size_t j = 0; j < cols; j++)
        out[c * cols + j] = cm->is_int ? ((const int*)base)[j] : ((const mjtNum*)base)[j];
    }
    return 0;
  }
  return -1;
}

// MuJoCo's contacts (ncon, contact_*; contact_pair from their geoms) into world d.
static int contacts_from_mj(const fsModel* m, fsData* d, const mjData* md, int stage,
                            fsError* err) {
  if (stage >= 0 && stage != FS_STAGE_COLLISION && stage != FS_STAGE_MAKE_CONSTRAINT) return 0;
  if (stage < 0 || stage == FS_STAGE_COLLISION)
    for (int c = 0; c < md->ncon && c < m->nconmax; c++)
      d->contact_pair[c] = fs_contact_pair(m, &md->contact[c]);
  if (md->ncon > m->nconmax)
    return fs_fail(err, "MuJoCo has %d contacts, the world holds %d", md->ncon, m->nconmax);
  double* buf = malloc(sizeof(double) * ((size_t)m->nconmax * 9 + 1));
  if (!buf) return fs_fail(err, "out of memory copying contacts");
  int rc = 0;
  for (int f = 0; f < fs_data_nfield && !rc; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->kind != FS_KIND_CONTACT || (stage >= 0 && fi->stage != stage)) continue;
    size_t n = (size_t)fs_field_rows(m, fi) * (size_t)fi->cols, used = (size_t)md->ncon * fi->cols;
    if (fi->size_off == offsetof(fsModel, one)) used = 1;
    if (fs_contact_values(fi, md, buf, n)) {
      rc = fs_fail(err, "field %s: no mjContact member", fi->name);
      break;
    }
    void* dst = *fs_field_ptr(d, fi);
    for (size_t k = 0; k < used; k++) {
      if (fi->type == FS_TYPE_int)
        ((int*)dst)[k] = (int)buf[k];
      else
        ((fsReal*)dst)[k] = (fsReal)buf[k];
    }
  }
  free(buf);
  return rc;
}

// MuJoCo's efc_* array of that name (int or mjtNum), NULL if none.
static const void* efc_array(const mjData* md, const char* name) {
#define X(type, field, nr, nc)                                                                     \
  if (!strcmp(name, #field)) return md->field;
#define XNV X
  MJDATA_ARENA_POINTERS_SOLVER
#undef XNV
#undef X
  return NULL;
}

int fs_efc_chain(const fsModel* m, const mjModel* mj, const mjData* md, int r, int* adr, int* nnz) {
  int type = md->efc_type[r], id = md->efc_id[r];
  if (type == mjCNSTR_EQUALITY) {
    if (id < 0 || id >= m->neq || !m->eq_nv[id]) return -1;
    *adr = m->eq_dofadr[id];
    *nnz = m->eq_nv[id];
    return 0;
  }
  if (type == mjCNSTR_FRICTION_TENDON || type == mjCNSTR_LIMIT_TENDON) {
    if (id < 0 || id >= m->ntendon || !m->tendon_nv[id]) return -1;
    *adr = m->tendon_dofadr[id];
    *nnz = m->tendon_nv[id];
    return 0;
  }
  if (type == mjCNSTR_FRICTION_DOF || type == mjCNSTR_LIMIT_JOINT) {
    if (!m->ndofrow || id < 0) return -1;
    *adr = m->dofrow_adr + (type == mjCNSTR_FRICTION_DOF ? id : mj->jnt_dofadr[id]);
    *nnz = 1;
    return 0;
  }
  if (type != mjCNSTR_CONTACT_FRICTIONLESS && type != mjCNSTR_CONTACT_PYRAMIDAL &&
      type != mjCNSTR_CONTACT_ELLIPTIC)
    return -1;
  int p = fs_contact_pair(m, &md->contact[id]);
  if (p < 0) return -1;
  *adr = m->pair_dofadr[p];
  *nnz = m->pair_nv[p];
  return 0;
}

// MuJoCo's row r of efc_J in the layout of its chain (fs_efc_chain; njmax values); -1 if
// MuJoCo's row has a column outside the chain (sparse: other columns).
static int efc_J_row(const fsModel* m, const mjModel* mj, const mjData* md, int r, double* row) {
  int chainadr, nv;
  if (fs_efc_chain(m, mj, md, r, &chainadr, &nv)) return -1;
  const int* chain = m->pair_dof + chainadr;
  for (int k = 0; k < m->njmax; k++) row[k] = 0;
  if (mj_isSparse(mj)) {
    int adr = md->efc_J_rowadr[r];
    if (md->efc_J_rownnz[r] != nv) return -1;
    for (int k = 0; k < nv; k++) {
      if (md->efc_J_colind[adr + k] != chain[k]) return -1;
      row[k] = md->efc_J[adr + k];
    }
    return 0;
  }
  const mjtNum* J = md->efc_J + (size_t)r * mj->nv;
  for (int j = 0, k = 0; j < mj->nv; j++) {
    if (k < nv && chain[k] == j)
      row[k++] = J[j];
    else if (J[j] != 0)
      return -1;
  }
  return 0;
}

long fs_efc_values(const fsModel* m, const fsFieldInfo* f, const mjModel* mj, const mjData* md,
                   double* out, size_t n) {
  int nefc = md->nefc, jac = !strcmp(f->name, "efc_J"), nnz = !strcmp(f->name, "efc_J_rownnz");
  if (!strcmp(f->name, "nefc")) {
    out[0] = nefc;
    return n ? 1 : -1;
  }
  size_t need = (size_t)nefc * (jac ? (size_t)m->njmax : (size_t)f->cols);
  if (need > n) return -1;
  if (jac || (nnz && !mj_isSparse(mj))) { // dense MuJoCo: the row's pair's chain length
    for (int r = 0; r < nefc; r++) {
      int adr, rownnz;
      if (fs_efc_chain(m, mj, md, r, &adr, &rownnz)) return -1;
      if (jac && efc_J_row(m, mj, md, r, out + (size_t)r * m->njmax)) return -1;
      if (nnz) out[r] = rownnz;
    }
    return (long)need;
  }
  if (!need) return 0;
  const void* src = efc_array(md, f->name);
  if (!src) return -1;
  for (size_t k = 0; k < need; k++)
    out[k] = f->type == FS_TYPE_int ? ((const int*)src)[k] : ((const mjtNum*)src)[k];
  return (long)need;
}

// MuJoCo's constraint rows (nefc, efc_*) into world d, efc_J in the model's layout
// and efc_J_coladr from the rows' pairs.
static int efc_from_mj(const fsModel* m, fsData* d, const mjModel* mj, const mjData* md, int stage,
                       fsError* err) {
  if (stage >= 0 && stage != FS_STAGE_MAKE_CONSTRAINT && stage != FS_STAGE_REFERENCE_CONSTRAINT)
    return 0;
  if (md->nefc > m->nefcmax)
    return fs_fail(err, "MuJoCo has %d constraint rows, the world holds %d", md->nefc, m->nefcmax);
  double* buf = malloc(sizeof(double) * ((size_t)m->nefcJ + 4 * (size_t)m->nefcmax + 1));
  if (!buf) return fs_fail(err, "out of memory copying constraint rows");
  int rc = 0;
  for (int f = 0; f < fs_data_nfield && !rc; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->kind != FS_KIND_EFC || (stage >= 0 && fi->stage != stage)) continue;
    size_t n = (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    long got = fs_efc_values(m, fi, mj, md, buf, n);
    if (got < 0) {
      rc = fs_fail(err, "field %s: MuJoCo's rows do not fit the model's layout", fi->name);
      break;
    }
    void* dst = *fs_field_ptr(d, fi);
    for (long k = 0; k < got; k++) {
      if (fi->type == FS_TYPE_int)
        ((int*)dst)[k] = (int)buf[k];
      else if (fi->type == FS_TYPE_double)
        ((double*)dst)[k] = buf[k];
      else
        ((fsReal*)dst)[k] = (fsReal)buf[k];
    }
  }
  if (!rc && (stage < 0 || stage == FS_STAGE_MAKE_CONSTRAINT)) {
    d->nefc_dof[0] = md->ne + md->nf + md->nl;
    for (int r = 0; r < md->nefc; r++) {
      int adr, nnz;
      d->efc_J_coladr[r] = fs_efc_chain(m, mj, md, r, &adr, &nnz) ? 0 : adr;
    }
    if (m->nefcD) fsi_dense_rows(m, d, 0, md->nefc); // dense too, as fs_make_constraint's
  }
  free(buf);
  return rc;
}

int fs_worlds_from_mj(const fsModel* m, fsWorlds* b, int w, const mjModel* mj, const mjData* md,
                      int stage, fsError* err) {
  fsData d = fs_worlds_view(m, b, w);
  if (contacts_from_mj(m, &d, md, stage, err)) return -1;
  if (efc_from_mj(m, &d, mj, md, stage, err)) return -1;
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->kind != FS_KIND_MJ || (stage >= 0 && fi->stage != stage)) continue;
    size_t n = (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    if (!strcmp(fi->name, "actuator_moment")) {
      if (moments_from_mj(m, &d, md, err)) return -1;
    } else if (!strcmp(fi->name, "time")) {
      d.time[0] = md->time;
    } else {
      const mjtNum* src = fs_mj_field(md, fi->name);
      if (!src) return fs_fail(err, "field %s: not in MuJoCo's data", fi->name);
      fsReal* dst = *(fsReal**)fs_field_ptr(&d, fi);
      for (size_t k = 0; k < n; k++) dst[k] = (fsReal)src[k];
    }
  }
  if (stage < 0 || stage == FS_STAGE_STATE)
    for (int k = 0; k < FS_NWARNING; k++) d.warning_number[k] = md->warning[k].number;
  return 0;
}

void fs_worlds_state_to_mj(const fsModel* m, const fsWorlds* b, int w, const mjModel* mj,
                           mjData* md) {
  fsData d = fs_worlds_view(m, b, w);
  for (int i = 0; i < mj->nq; i++) md->qpos[i] = d.qpos[i];
  for (int i = 0; i < mj->nv; i++) {
    md->qvel[i] = d.qvel[i];
    md->qfrc_applied[i] = d.qfrc_applied[i];
    md->qacc_warmstart[i] = d.qacc_warmstart[i];
  }
  for (int i = 0; i < mj->nu; i++) md->ctrl[i] = d.ctrl[i];
  for (int i = 0; i < 3 * mj->nmocap; i++) md->mocap_pos[i] = d.mocap_pos[i];
  for (int i = 0; i < 4 * mj->nmocap; i++) md->mocap_quat[i] = d.mocap_quat[i];
  md->time = d.time[0];
  for (int k = 0; k < FS_NWARNING; k++) md->warning[k].number = d.warning_number[k];
}

void fs_worlds_poison(const fsModel* m, fsWorlds* b, int stage) {
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->stage != stage) continue;
    size_t n = (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    for (int w = 0; w < b->nworld; w++) {
      char* p = (char*)*fs_field_ptr(&b->base, fi) + (size_t)w * b->world_bytes;
      for (size_t k = 0; k < n; k++) {
        if (fi->type == FS_TYPE_fsReal) ((fsReal*)p)[k] = (fsReal)NAN;
        if (fi->type == FS_TYPE_double) ((double*)p)[k] = NAN;
        if (fi->type == FS_TYPE_int) ((int*)p)[k] = INT_MIN;
      }
    }
  }
}
