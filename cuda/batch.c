#include "cuda/batch.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/model.h"

int fs_batch_alloc(const fsModel* m, int nworld, fsBatch* b, fsError* err) {
  memset(b, 0, sizeof *b);
  b->nworld = nworld;
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    size_t n = (size_t)nworld * (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    void* p = fs_calloc(err, fi->name, n ? n : 1, fs_type_size(fi->type));
    if (!p) {
      fs_batch_free(b);
      return -1;
    }
    *fs_field_ptr(&b->base, fi) = p;
  }
  return 0;
}

void fs_batch_free(fsBatch* b) {
  if (!b) return;
  for (int f = 0; f < fs_data_nfield; f++) {
    void** p = fs_field_ptr(&b->base, &fs_data_fields[f]);
    free(*p);
    *p = NULL;
  }
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

// MuJoCo's moments into the model's static sparsity (row by row).
static int moments_from_mj(const fsModel* m, fsData* d, const mjData* md, fsError* err) {
  for (int a = 0; a < m->nu; a++) {
    int nnz = md->moment_rownnz[a], adr = md->moment_rowadr[a];
    int ok = nnz == m->moment_rownnz[a];
    for (int k = 0; ok && k < nnz; k++)
      ok = md->moment_colind[adr + k] == m->moment_colind[m->moment_rowadr[a] + k];
    if (!ok)
      return fs_fail(err,
                     "actuator %d: MuJoCo's moment has %d non-zeros, the model's sparsity %d"
                     " (a transmission the stepper does not model)",
                     a, nnz, m->moment_rownnz[a]);
    for (int k = 0; k < nnz; k++)
      d->actuator_moment[m->moment_rowadr[a] + k] = (fsReal)md->actuator_moment[adr + k];
  }
  return 0;
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
    FS_MEMBER(dist, 0),           FS_MEMBER(pos, 0),
    FS_MEMBER(frame, 0),          FS_MEMBER(includemargin, 0),
    FS_MEMBER(friction, 0),       FS_MEMBER(solref, 0),
    FS_MEMBER(solreffriction, 0), FS_MEMBER(solimp, 0),
    FS_MEMBER(adhesion, 0),       FS_MEMBER(dim, 1),
    FS_MEMBER(geom, 1),           FS_MEMBER(exclude, 1),
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

// MuJoCo's contacts (ncon, contact_*) into world d.
static int contacts_from_mj(const fsModel* m, fsData* d, const mjData* md, int stage,
                            fsError* err) {
  if (stage >= 0 && stage != FS_STAGE_COLLISION) return 0;
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

int fs_batch_from_mj(const fsModel* m, fsBatch* b, int w, const mjModel* mj, const mjData* md,
                     int stage, fsError* err) {
  (void)mj;
  fsData d = fs_batch_world(m, b, w);
  if (contacts_from_mj(m, &d, md, stage, err)) return -1;
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

void fs_batch_state_to_mj(const fsModel* m, const fsBatch* b, int w, const mjModel* mj,
                          mjData* md) {
  fsData d = fs_batch_world(m, b, w);
  for (int i = 0; i < mj->nq; i++) md->qpos[i] = d.qpos[i];
  for (int i = 0; i < mj->nv; i++) {
    md->qvel[i] = d.qvel[i];
    md->qfrc_applied[i] = d.qfrc_applied[i];
    md->qacc_warmstart[i] = d.qacc_warmstart[i];
  }
  for (int i = 0; i < mj->nu; i++) md->ctrl[i] = d.ctrl[i];
  md->time = d.time[0];
  for (int k = 0; k < FS_NWARNING; k++) md->warning[k].number = d.warning_number[k];
}

void fs_batch_poison(const fsModel* m, fsBatch* b, int stage) {
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->stage != stage) continue;
    size_t n = (size_t)b->nworld * (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    void* p = *fs_field_ptr(&b->base, fi);
    for (size_t k = 0; k < n; k++) {
      if (fi->type == FS_TYPE_fsReal) ((fsReal*)p)[k] = (fsReal)NAN;
      if (fi->type == FS_TYPE_double) ((double*)p)[k] = NAN;
      if (fi->type == FS_TYPE_int) ((int*)p)[k] = INT_MIN;
    }
  }
}
