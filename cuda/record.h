// What the batched stepper records after a step (common/replay/record.h's layout),
// the same function on both sides: the host backend loops over a world's columns,
// the GPU's record kernel runs a thread per (world, column).
#ifndef FLYSIM_CUDA_RECORD_H
#define FLYSIM_CUDA_RECORD_H

#include "common/replay/record.h"
#include "cuda/fields.h"

/// The record layout as a kernel reads it (src and index: device or host arrays).
typedef struct fsRecordCols {
  int ncol_total;         // C: columns of every selected series
  int col0[FS_NSERIES];   // first column of each series
  int ncol[FS_NSERIES];   // C_k (0: not recorded)
  const int* src;         // (C) fsRecordSource
  const int* index;       // (C) index into the source
  float* out[FS_NSERIES]; // series k's block buffer (cap x N x C_k), or NULL
} fsRecordCols;

/// Value of a source array of world d at index.
FS_HD float fs_record_value(const fsData* d, int src, int index) {
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
  out[((size_t)k * N + w) * C + (c - l->col0[s])] = fs_record_value(d, l->src[c], l->index[c]);
}

#endif
