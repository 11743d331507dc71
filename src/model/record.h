// What the batched stepper records after a step (common/replay/record.h's layout),
// the same function on both sides: the host backend loops over a world's columns,
// the GPU's record kernel runs a thread per (world, column).
#ifndef FLYSIM_MODEL_RECORD_H
#define FLYSIM_MODEL_RECORD_H

#include "common/replay/record.h"
#include "src/model/fields.h"

/// The record layout as a kernel reads it (src and index: device or host arrays).
typedef struct fsRecordCols {
  int ncol_total;         // C: columns of every selected series
  int col0[FS_NSERIES];   // first column of each series
  int ncol[FS_NSERIES];   // C_k (0: not recorded)
  const int* src;         // (C) fsRecordSource
  const int* index;       // (C) index into the source
  float* out[FS_NSERIES]; // series k's block buffer (cap x N x C_k), or NULL
  const int* geom_leg;    // (ngeom) each geom's leg, or -1 (legs series)
} fsRecordCols;

/// Leg index / 3's contact force on world axis index % 3: its contacts' forces decoded
/// from their pyramids (MuJoCo's mju_decodePyramid, as mj_contactForce) into the world
/// frame, summed (common/replay/record.c does the same from MuJoCo's data).
FS_HD float fs_record_leg_force(const fsRecordCols* l, const fsData* d, int index) {
  const int leg = index / 3, axis = index % 3;
  fsReal sum = 0;
  for (int i = 0; i < d->ncon[0]; i++) {
    int adr = d->contact_efc_address[i];
    if (adr < 0 || d->contact_exclude[i]) continue;
    int g0 = d->contact_geom[2 * i], g1 = d->contact_geom[2 * i + 1];
    int l1 = g1 >= 0 ? l->geom_leg[g1] : -1, l0 = g0 >= 0 ? l->geom_leg[g0] : -1;
    if ((l1 >= 0 ? l1 : l0) != leg) continue;
    const fsReal* p = d->efc_force + adr;
    const fsReal* frame = d->contact_frame + 9 * i;
    int dim = d->contact_dim[i];
    fsReal f[3] = {p[0], 0, 0};
    if (dim > 1) {
      f[0] = 0;
      for (int j = 0; j < 2 * (dim - 1); j++) f[0] += p[j];
      for (int k = 0; k < dim - 1 && k < 2; k++)
        f[k + 1] = (p[2 * k] - p[2 * k + 1]) * d->contact_friction[5 * i + k];
    }
    fsReal fw = frame[axis] * f[0] + frame[3 + axis] * f[1] + frame[6 + axis] * f[2];
    sum += l1 >= 0 ? fw : -fw;
  }
  return (float)sum;
}

/// Value of a source of world d at index.
FS_HD float fs_record_value(const fsRecordCols* l, const fsData* d, int src, int index) {
  if (src == FS_SRC_LEG_FORCE) return fs_record_leg_force(l, d, index);
  if (src == FS_SRC_SOLVER) { // [0] Newton, [1] noslip iterations over the islands
    int n = d->nisland[0] ? d->nisland[0] : 1, it = 0;
    for (int k = 0; k < n && k < FS_NISLAND; k++)
      it += index ? d->solver_nnoslip[k] : d->solver_niter[k] - d->solver_nnoslip[k];
    return (float)it;
  }
  const fsReal* a = src == FS_SRC_QPOS             ? d->qpos
                    : src == FS_SRC_CTRL           ? d->ctrl
                    : src == FS_SRC_ACTUATOR_FORCE ? d->actuator_force
                    : src == FS_SRC_SITE_XPOS      ? d->site_xpos
                    : src == FS_SRC_XPOS           ? d->xpos
                    : src == FS_SRC_XQUAT          ? d->xquat
                                                   : d->qvel;
  return (float)a[index];
}

/// Column c of world w (of N) after block step k, into its series' buffer.
FS_HD void fs_record_column(const fsRecordCols* l, const fsData* d, int c, int k, int w, int N) {
  int s = 0;
  while (s < FS_NSERIES - 1 && c >= l->col0[s] + l->ncol[s]) s++;
  float* out = l->out[s];
  if (!out) return;
  int C = l->ncol[s];
  out[((size_t)k * N + w) * C + (c - l->col0[s])] = fs_record_value(l, d, l->src[c], l->index[c]);
}

#endif
