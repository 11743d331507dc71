// Static pair culling (docs/engine/collision.md): which of a world's explicit pairs of a
// moving geom against a static geom are worth testing this step. The static geoms never
// move, so the model build (common/model/model_build.c) computes their world bounding boxes
// (cull_aabb) and puts them, by x and y, into a uniform grid once (grid_*); each step, per
// world, each moving geom with such pairs (cull_geom) queries the grid with its bounding
// sphere grown by the largest margin + gap of its pairs (cull_reach), and the pairs of the
// static geoms whose boxes overlap that sphere's box in x, y and z (cull_pair) are its
// candidates: the grid finds the boxes below or above it, z drops those it is clear of (a
// fly's body over the terrain's blocks), and a geom clear of every box in z (grid_z: most
// of a standing fly's geoms) skips the grid. A static geom's box holds the geom; the moving
// geom lies within its bounding sphere; so a pair left out cannot be within margin + gap
// of touching: it makes no contact in MuJoCo either. The candidates
// then go through MuJoCo's own pre-test and narrowphase (stage_collision.h), in pair
// order, so the contacts are MuJoCo's.
//
// A static geom overlapping several cells is listed in each; a query counts it only in the
// cell holding the low corner of the overlap of the two boxes, which is in both the query's
// cells and the geom's (the cell function is monotonic, and the build registers the geom
// with the same function on the same stored values): each candidate once, in every
// precision, without marks or atomics.
//
// MuJoCo has no counterpart: its broadphase (mj_broadphase, sweep and prune over every geom)
// finds pairs by contype/conaffinity, which flysim's models leave off; their explicit pairs
// are what this culls.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_CULL_H
#define FLYSIM_COMMON_ENGINE_COLLISION_CULL_H

#include "common/engine/fields.h"

/// The grid cell of coordinate x on axis a (0: x, 1: y), clamped to the grid.
FS_HD int fsi_grid_cell(const fsModel* m, fsReal x, int a) {
  fsReal t = (x - m->grid_lo[a]) * m->grid_inv[a];
  if (!(t > 0)) return 0; // below the grid (or NaN)
  int n = m->grid_n[a];
  return t >= (fsReal)n ? n - 1 : (int)t;
}

/// Candidates of moving geom i (an index into cull_geom): the pairs of the static geoms
/// whose boxes overlap geom i's reach box, in grid order, into out[0..limit) (out NULL:
/// count only). Returns how many there are (also those beyond limit).
FS_HD int fsi_cull_query(const fsModel* m, const fsData* d, int i, int* out, int limit) {
  const fsReal* c = d->geom_xpos + 3 * m->cull_geom[i];
  fsReal reach = m->cull_reach[i];
  fsReal lo[3] = {c[0] - reach, c[1] - reach, c[2] - reach};
  fsReal hi[3] = {c[0] + reach, c[1] + reach, c[2] + reach};
  if (lo[2] > m->grid_z[1] || hi[2] < m->grid_z[0]) return 0; // above or below every box
  int x0 = fsi_grid_cell(m, lo[0], 0), x1 = fsi_grid_cell(m, hi[0], 0);
  int y0 = fsi_grid_cell(m, lo[1], 1), y1 = fsi_grid_cell(m, hi[1], 1);
  const int* row = m->cull_pair + (long)i * m->ncullstatic;
  int n = 0;
  for (int y = y0; y <= y1; y++)
    for (int x = x0; x <= x1; x++) {
      int cell = y * m->grid_n[0] + x;
      for (int e = m->grid_adr[cell]; e < m->grid_adr[cell + 1]; e++) {
        int s = m->grid_static[e];
        const fsReal *alo = m->cull_aabb + 6 * s, *ahi = alo + 3; // lo x, y, z; hi x, y, z
        if (alo[0] > hi[0] || ahi[0] < lo[0] || alo[1] > hi[1] || ahi[1] < lo[1]) continue;
        if (alo[2] > hi[2] || ahi[2] < lo[2]) continue;
        fsReal rx = alo[0] > lo[0] ? alo[0] : lo[0], ry = alo[1] > lo[1] ? alo[1] : lo[1];
        if (fsi_grid_cell(m, rx, 0) != x || fsi_grid_cell(m, ry, 1) != y) continue;
        int p = row[s];
        if (p < 0) continue;
        if (out && n < limit) out[n] = p;
        n++;
      }
    }
  return n;
}

#endif
