// What a recording keeps after a step (fs_batch_add_recording): columns, each an
// element of a source in a world's data, in float32. One definition of the sources and
// their names; the same column function on both sides (the host backend loops over a
// world's columns, the GPU's step kernel over them with the world's lanes); the cpu
// backend reads the same sources from MuJoCo's data (cpu/backend_cpu.c).
#ifndef FLYSIM_COMMON_MODEL_RECORD_H
#define FLYSIM_COMMON_MODEL_RECORD_H

#include "common/engine/fields.h"

/// Where a recorded column's value lives: X(id, name) in the order of fsRecordSource.
#define FS_RECORD_SOURCES(X)                                                                       \
  X(FS_SRC_QPOS, "qpos")                       /* qpos (nq) */                                     \
  X(FS_SRC_CTRL, "ctrl")                       /* ctrl (nu): the step's controls */                \
  X(FS_SRC_ACTUATOR_FORCE, "actuator_force")   /* actuator_force (nu) */                           \
  X(FS_SRC_SITE_XPOS, "site_xpos")             /* site_xpos (nsite x 3) */                         \
  X(FS_SRC_XPOS, "xpos")                       /* xpos (nbody x 3) */                              \
  X(FS_SRC_XQUAT, "xquat")                     /* xquat (nbody x 4) */                             \
  X(FS_SRC_QVEL, "qvel")                       /* qvel (nv) */                                     \
  X(FS_SRC_SOLVER, "solver_iterations")        /* [0] Newton, [1] noslip, over the islands */      \
  X(FS_SRC_GROUP_FORCE, "group_contact_force") /* [3 g + k]: geom group g's contact force */       \
  X(FS_SRC_SENSORDATA, "sensordata") /* sensordata (nsensordata): cpu, host (stage_sensor.h) */

typedef enum fsRecordSource {
#define FS_X(id, name) id,
  FS_RECORD_SOURCES(FS_X)
#undef FS_X
      FS_NSRC
} fsRecordSource;

/// The most geom groups of group_contact_force.
#define FS_RECORD_MAX_GROUPS 16

/// A recording's columns as a step reads them (src, index, geom_group: host or device
/// arrays): column c of world w (world0 <= w < world0 + nworld) is element index[c] of
/// source src[c].
typedef struct fsRecordCols {
  int ncol;              // C
  const int* src;        // (C) fsRecordSource
  const int* index;      // (C) element of the source in a world's data
  const int* geom_group; // (ngeom) each geom's group, -1: none (FS_SRC_GROUP_FORCE), or NULL
  int world0, nworld;    // the worlds recorded
} fsRecordCols;

/// The contact force on geom group index / 3, on world axis index % 3: its contacts'
/// forces decoded from their pyramids (MuJoCo's mju_decodePyramid, as mj_contactForce)
/// into the world frame, summed, each on the side of the contact's geom in the group (geom
/// 1's when both are: the force on geom 1 from geom 0).
FS_HD float fs_record_group_force(const fsRecordCols* l, const fsData* d, int index) {
  const int group = index / 3, axis = index % 3;
  fsReal sum = 0;
  for (int i = 0; i < d->ncon[0]; i++) {
    int adr = d->contact_efc_address[i];
    if (adr < 0 || d->contact_exclude[i]) continue;
    int g0 = d->contact_geom[2 * i], g1 = d->contact_geom[2 * i + 1];
    int l1 = g1 >= 0 ? l->geom_group[g1] : -1, l0 = g0 >= 0 ? l->geom_group[g0] : -1;
    if ((l1 >= 0 ? l1 : l0) != group) continue;
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

/// The last step's Newton (which 0) or noslip (1) iterations, summed over its islands.
FS_HD int fs_solver_iterations(const fsData* d, int which) {
  int n = d->nisland[0] ? d->nisland[0] : 1, it = 0;
  for (int k = 0; k < n && k < FS_NISLAND; k++)
    it += which ? d->solver_nnoslip[k] : d->solver_niter[k] - d->solver_nnoslip[k];
  return it;
}

/// Value of a source of world d at index.
FS_HD float fs_record_value(const fsRecordCols* l, const fsData* d, int src, int index) {
  if (src == FS_SRC_GROUP_FORCE) return fs_record_group_force(l, d, index);
  if (src == FS_SRC_SOLVER) return (float)fs_solver_iterations(d, index);
#ifndef __CUDA_ARCH__ // the kernels compute no sensors (the cuda backend refuses the source)
  if (src == FS_SRC_SENSORDATA) return (float)d->sensordata[index];
#endif
  const fsReal* a = src == FS_SRC_QPOS             ? d->qpos
                    : src == FS_SRC_CTRL           ? d->ctrl
                    : src == FS_SRC_ACTUATOR_FORCE ? d->actuator_force
                    : src == FS_SRC_SITE_XPOS      ? d->site_xpos
                    : src == FS_SRC_XPOS           ? d->xpos
                    : src == FS_SRC_XQUAT          ? d->xquat
                                                   : d->qvel;
  return (float)a[index];
}

/// Column c of a world into row, the world's C floats of the step's output.
FS_HD void fs_record_column(const fsRecordCols* l, const fsData* d, int c, float* row) {
  row[c] = fs_record_value(l, d, l->src[c], l->index[c]);
}

#endif
