// The convex shapes' support functions for the collision stage: the point of a shape
// farthest along a direction, which the plane-convex collider (collision_primitive.h) and
// GJK and EPA (collision_gjk.h) are built on; MuJoCo 3.16's, operation for operation.
//  - fsReal, for plane-convex: a convex mesh's support vertex by hill climbing on its hull
//    graph or exhaustively (3.16's search in mjc_PlaneConvex), an ellipsoid's support point
//    (mjc_ellipsoidSupport);
//  - double (fsCcdReal, in every build), for the convex collider (collision_convex.h): a
//    sphere, capsule, ellipsoid, cylinder, box or mesh geom as a shape (mjCCDObj,
//    mjc_initCCDObj), its support (mjc_sphereSupport, mjc_capsuleSupport,
//    mjc_ellipsoidSupport, mjc_cylinderSupport, mjc_boxSupport; mjc_hillclimbSupport,
//    warm-started from the last call, or mjc_meshSupport; a sphere's centre and a capsule's
//    segment, mjc_pointSupport and mjc_lineSupport) and the support of the two shapes'
//    Minkowski difference, each inflated by half the margin (engine_collision_gjk.c's
//    support). With them, the double arithmetic the convex path
//    computes in: MuJoCo's float64 limits and its gjk vector utilities.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_SUPPORT_H
#define FLYSIM_COMMON_ENGINE_COLLISION_SUPPORT_H

#include "common/engine/fields.h"
#include "common/engine/spatial.h"

#define FS_MESH_HILLCLIMB 10                        // mjMESH_HILLCLIMB_MIN: fewer: exhaustive
#define FS_FLTMAX         ((fsReal)3.40282347e+38F) // FLT_MAX (the exhaustive search's start)

// The convex collider computes in double in every build (fsCcdReal): GJK's and EPA's tests
// against MuJoCo's float64 tolerances (ccd_tolerance 1e-6, mjMINVAL) are meaningless in
// float32; the float32 build reads its fsReal inputs into doubles and rounds the contacts
// once, at the end. MuJoCo's float64 limits:
typedef double fsCcdReal;
#define FS_CCD_MINVAL  1e-15                  // mjMINVAL
#define FS_CCD_MAXVAL  1e10                   // mjMAXVAL
#define FS_CCD_LIMIT   1.7976931348623157e308 // mjMAX_LIMIT (DBL_MAX)
#define FS_CCD_MINVAL2 (FS_CCD_MINVAL * FS_CCD_MINVAL)
#define FS_CCD_MAXVAL2 (FS_CCD_MAXVAL * FS_CCD_MAXVAL)

/// One shape of a pair (MuJoCo's mjCCDObj for a convex geom): frame, size, the margin
/// each side adds half of, and the support's caches.
typedef struct fsiCcdObj {
  int type;          // FS_GEOM_SPHERE .. FS_GEOM_MESH
  int core;          // 1: a sphere's centre, a capsule's segment (GJK's first pass)
  int mesh;          // geom_dataid (mesh) or -1
  int hillclimb;     // mesh with a hull graph of >= FS_MESH_HILLCLIMB vertices
  int vertindex;     // last support vertex: box corner (bits x, y, z) or mesh vertex id
  int meshindex;     // last hill-climb vertex (graph id), -1: none yet
  fsCcdReal margin;  // margin + gap of the pair (each shape is inflated by half)
  fsCcdReal pos[3];  // geom_xpos
  fsCcdReal mat[9];  // geom_xmat
  fsCcdReal size[3]; // geom_size
  const fsModel* m;  // mesh data
} fsiCcdObj;

/// A vertex of the Minkowski difference and the points of the shapes that make it.
typedef struct fsiCcdVertex {
  fsCcdReal vert[3], vert1[3], vert2[3];
  int index1, index2; // vertex ids of the discrete shapes (box corner, mesh vertex)
} fsiCcdVertex;

//--------------------------------- vectors in double (MuJoCo's gjk utilities) --------------------

/// r = v (n), r apart from v.
FS_HD void fsi_ccd_copy(fsCcdReal* r, const fsCcdReal* v, int n) {
  FS_IVDEP
  for (int i = 0; i < n; i++) r[i] = v[i];
}
FS_HD fsCcdReal fsi_ccd_dot(const fsCcdReal a[3], const fsCcdReal b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
FS_HD void fsi_ccd_cross(fsCcdReal r[3], const fsCcdReal a[3], const fsCcdReal b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
/// mju_normalize3: unit x if shorter than mjMINVAL; returns the old norm.
FS_HD fsCcdReal fsi_ccd_normalize(fsCcdReal v[3]) {
  fsCcdReal norm = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (norm < FS_CCD_MINVAL) {
    v[0] = 1;
    v[1] = v[2] = 0;
  } else {
    fsCcdReal inv = 1 / norm;
    v[0] *= inv;
    v[1] *= inv;
    v[2] *= inv;
  }
  return norm;
}
/// res = mat * v (3x3), res may alias v.
FS_HD void fsi_ccd_mul_mat_vec(fsCcdReal res[3], const fsCcdReal mat[9], const fsCcdReal v[3]) {
  fsCcdReal r[3];
  for (int i = 0; i < 3; i++)
    r[i] = mat[3 * i] * v[0] + mat[3 * i + 1] * v[1] + mat[3 * i + 2] * v[2];
  fsi_ccd_copy(res, r, 3);
}

FS_HD void fsi_ccd_sub(fsCcdReal r[3], const fsCcdReal a[3], const fsCcdReal b[3]) {
  r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}
FS_HD void fsi_ccd_add(fsCcdReal r[3], const fsCcdReal a[3], const fsCcdReal b[3]) {
  r[0] = a[0] + b[0], r[1] = a[1] + b[1], r[2] = a[2] + b[2];
}
FS_HD void fsi_ccd_scl(fsCcdReal r[3], const fsCcdReal v[3], fsCcdReal s) {
  r[0] = s * v[0], r[1] = s * v[1], r[2] = s * v[2];
}
FS_HD fsCcdReal fsi_ccd_norm(const fsCcdReal v[3]) {
  return sqrt(fsi_ccd_dot(v, v));
}
FS_HD fsCcdReal fsi_ccd_det3(const fsCcdReal a[3], const fsCcdReal b[3], const fsCcdReal c[3]) {
  return a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
         a[2] * (b[0] * c[1] - b[1] * c[0]);
}
/// res = sum_i coef[i] v_i for n = 0..4 vectors (MuJoCo's lincomb), r apart from the rest.
FS_HD void fsi_ccd_lincomb(fsCcdReal* FS_RESTRICT r, const fsCcdReal* c, int n, const fsCcdReal* v1,
                           const fsCcdReal* v2, const fsCcdReal* v3, const fsCcdReal* v4) {
  for (int i = 0; i < 3; i++) {
    switch (n) {
    case 0:
      r[i] = 0;
      break;
    case 1:
      r[i] = c[0] * v1[i];
      break;
    case 2:
      r[i] = c[0] * v1[i] + c[1] * v2[i];
      break;
    case 3:
      r[i] = c[0] * v1[i] + c[1] * v2[i] + c[2] * v3[i];
      break;
    default:
      r[i] = c[0] * v1[i] + c[1] * v2[i] + c[2] * v3[i] + c[3] * v4[i];
    }
  }
}

/// r = v (an fsReal field read into doubles), r apart from v.
FS_HD void fsi_ccd_load(fsCcdReal* r, const fsReal* v, int n) {
  FS_IVDEP
  for (int i = 0; i < n; i++) r[i] = v[i];
}

/// a . v for a mesh vertex or normal v (MuJoCo's dot3f: its vertices are floats).
FS_HD fsCcdReal fsi_ccd_dotv(const fsCcdReal a[3], const fsReal* v) {
  return a[0] * (fsCcdReal)v[0] + a[1] * (fsCcdReal)v[1] + a[2] * (fsCcdReal)v[2];
}

//--------------------------------- plane-convex's support (fsReal) --------------------------------

/// Support vertex (mesh vertex id) of mesh `mesh` along the local direction dir,
/// as MuJoCo 3.16 finds it: hill climbing on the hull graph from the extremal vertex
/// of dir's cell in a 3x3x3 grid (mesh_extrema), or an exhaustive search for meshes
/// of fewer than FS_MESH_HILLCLIMB vertices or without a graph. First maximum wins.
FS_HD int fsi_mesh_support(const fsModel* m, int mesh, const fsReal dir[3]) {
  const fsReal* vert = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
  int nvert = m->mesh_vertnum[mesh], graphadr = m->mesh_graphadr[mesh];
  if (graphadr < 0 || nvert < FS_MESH_HILLCLIMB) {
    fsReal best = -FS_FLTMAX;
    int ibest = 0;
    for (int i = 0; i < nvert; i++) {
      fsReal v = fsi_dot3(dir, vert + 3 * i);
      if (v > best) {
        best = v;
        ibest = i;
      }
    }
    return ibest;
  }
  const int* graph = m->mesh_graph + graphadr;
  int numvert = graph[0];
  const int *edgeadr = graph + 2, *globalid = graph + 2 + numvert;
  const int* edge = graph + 2 + 2 * numvert;
  int cell[3];
  for (int k = 0; k < 3; k++) cell[k] = (dir[k] > (fsReal)0.4) - (dir[k] < (fsReal)-0.4) + 1;
  int ibest = m->mesh_extrema[27 * mesh + 9 * cell[0] + 3 * cell[1] + cell[2]], prev = -1;
  fsReal best = fsi_dot3(dir, vert + 3 * globalid[ibest]);
  while (ibest != prev) { // each pass scans the neighbours of the vertex it started from
    prev = ibest;
    for (int e = edgeadr[prev], loc; (loc = edge[e]) >= 0; e++) {
      fsReal v = fsi_dot3(dir, vert + 3 * globalid[loc]);
      if (v > best) {
        best = v;
        ibest = loc;
      }
    }
  }
  return globalid[ibest];
}

/// Support point of ellipsoid g2 along the local direction dir, in world
/// coordinates (MuJoCo's mjc_ellipsoidSupport).
FS_HD void fsi_ellipsoid_support(const fsModel* m, const fsData* d, int g2, const fsReal dir[3],
                                 fsReal res[3]) {
  const fsReal *size = m->geom_size + 3 * g2, *mat = d->geom_xmat + 9 * g2;
  const fsReal* pos = d->geom_xpos + 3 * g2;
  fsReal t[3] = {dir[0] * size[0], dir[1] * size[1], dir[2] * size[2]};
  fsReal n2 = fsi_dot3(t, t);
  if (n2 < FS_MINVAL * FS_MINVAL) {
    for (int j = 0; j < 3; j++) res[j] = mat[3 * j] * size[0] + pos[j];
    return;
  }
  fsReal inv = 1 / fs_sqrt(n2);
  for (int j = 0; j < 3; j++) t[j] *= inv * size[j];
  fsi_mul_mat_vec3(res, mat, t);
  for (int j = 0; j < 3; j++) res[j] += pos[j];
}

//--------------------------------- the convex collider's shapes (double) --------------------------

/// Shape of convex geom g with the pair's margin (mjc_initCCDObj).
FS_HD void fsi_ccd_obj(fsiCcdObj* o, const fsModel* m, const fsData* d, int g, fsCcdReal margin) {
  o->type = m->geom_type[g];
  o->mesh = o->type == FS_GEOM_MESH ? m->geom_dataid[g] : -1;
  o->hillclimb = o->mesh >= 0 && m->mesh_graphadr[o->mesh] >= 0 &&
                 m->mesh_vertnum[o->mesh] >= FS_MESH_HILLCLIMB;
  o->vertindex = o->meshindex = -1;
  o->core = 0;
  o->margin = margin;
  fsi_ccd_load(o->pos, d->geom_xpos + 3 * g, 3);
  fsi_ccd_load(o->mat, d->geom_xmat + 9 * g, 9);
  fsi_ccd_load(o->size, m->geom_size + 3 * g, 3);
  o->m = m;
}

/// res = mat * (l1, l2, l3) + pos (pos NULL: none), MuJoCo's globalcoord / localToGlobal.
FS_HD void fsi_ccd_global(fsCcdReal* FS_RESTRICT res, const fsCcdReal mat[9], const fsCcdReal* pos,
                          fsCcdReal l1, fsCcdReal l2, fsCcdReal l3) {
  for (int i = 0; i < 3; i++) {
    res[i] = mat[3 * i] * l1 + mat[3 * i + 1] * l2 + mat[3 * i + 2] * l3;
    if (pos) res[i] += pos[i];
  }
}

/// A mesh vertex (mesh-local id) in world coordinates.
FS_HD void fsi_ccd_mesh_vertex(fsCcdReal res[3], const fsiCcdObj* o, int v) {
  const fsReal* p = o->m->mesh_vert + 3 * (o->m->mesh_vertadr[o->mesh] + v);
  fsi_ccd_global(res, o->mat, o->pos, p[0], p[1], p[2]);
}

/// Support point of the shape along the unit direction dir (world), without the margin:
/// mjc_sphereSupport, mjc_capsuleSupport, mjc_ellipsoidSupport, mjc_cylinderSupport,
/// mjc_boxSupport, mjc_hillclimbSupport (warm start: the better of the last vertex and
/// the 3x3x3 seed) or mjc_meshSupport (exhaustive, from the last vertex); with o->core, a
/// sphere's centre (mjc_pointSupport) or a capsule's segment (mjc_lineSupport).
FS_HD void fsi_ccd_shape_support(fsCcdReal res[3], fsiCcdObj* o, const fsCcdReal dir[3]) {
  const fsCcdReal *mat = o->mat, *pos = o->pos, *size = o->size;
  if (o->type == FS_GEOM_SPHERE) {
    for (int i = 0; i < 3; i++) res[i] = o->core ? pos[i] : size[0] * dir[i] + pos[i];
    return;
  }
  if (o->core) { // a capsule's segment
    fsCcdReal dot = mat[2] * dir[0] + mat[5] * dir[1] + mat[8] * dir[2];
    fsCcdReal scl = dot >= 0 ? size[1] : -size[1];
    for (int i = 0; i < 3; i++) res[i] = mat[3 * i + 2] * scl + pos[i];
    return;
  }
  fsCcdReal ld[3] = {mat[0] * dir[0] + mat[3] * dir[1] + mat[6] * dir[2],
                     mat[1] * dir[0] + mat[4] * dir[1] + mat[7] * dir[2],
                     mat[2] * dir[0] + mat[5] * dir[1] + mat[8] * dir[2]};
  switch (o->type) {
  case FS_GEOM_CAPSULE:
    fsi_ccd_global(res, mat, pos, ld[0] * size[0], ld[1] * size[0],
                   ld[2] * size[0] + (ld[2] >= 0 ? size[1] : -size[1]));
    return;
  case FS_GEOM_ELLIPSOID: {
    fsCcdReal s[3] = {ld[0] * size[0], ld[1] * size[1], ld[2] * size[2]};
    fsCcdReal n2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
    if (n2 < FS_CCD_MINVAL2) {
      for (int i = 0; i < 3; i++) res[i] = mat[3 * i] * size[0] + pos[i];
      return;
    }
    fsCcdReal inv = 1 / sqrt(n2);
    fsi_ccd_global(res, mat, pos, s[0] * (inv * size[0]), s[1] * (inv * size[1]),
                   s[2] * (inv * size[2]));
    return;
  }
  case FS_GEOM_CYLINDER: {
    fsCcdReal n2 = ld[0] * ld[0] + ld[1] * ld[1];
    fsCcdReal scl = n2 >= FS_CCD_MINVAL2 ? size[0] / sqrt(n2) : 0;
    fsi_ccd_global(res, mat, pos, scl * ld[0], scl * ld[1], ld[2] >= 0 ? size[1] : -size[1]);
    return;
  }
  case FS_GEOM_BOX: {
    fsCcdReal s[3];
    for (int i = 0; i < 3; i++) s[i] = ld[i] >= 0 ? size[i] : -size[i];
    o->vertindex = (s[0] > 0 ? 1 : 0) | (s[1] > 0 ? 2 : 0) | (s[2] > 0 ? 4 : 0);
    fsi_ccd_global(res, mat, pos, s[0], s[1], s[2]);
    return;
  }
  default: // FS_GEOM_MESH
    break;
  }
  const fsModel* m = o->m;
  const fsReal* vert = m->mesh_vert + 3 * m->mesh_vertadr[o->mesh];
  int imax;
  if (o->hillclimb) {
    const int* graph = m->mesh_graph + m->mesh_graphadr[o->mesh];
    int numvert = graph[0];
    const int *edgeadr = graph + 2, *globalid = graph + 2 + numvert;
    const int* edge = graph + 2 + 2 * numvert;
    int cell[3];
    for (int k = 0; k < 3; k++) cell[k] = (ld[k] > 0.4) - (ld[k] < -0.4) + 1;
    int seed = m->mesh_extrema[27 * o->mesh + 9 * cell[0] + 3 * cell[1] + cell[2]];
    imax = seed;
    if (o->meshindex >= 0) {
      fsCcdReal cached = fsi_ccd_dotv(ld, vert + 3 * globalid[o->meshindex]);
      fsCcdReal seeded = fsi_ccd_dotv(ld, vert + 3 * globalid[seed]);
      imax = seeded > cached ? seed : o->meshindex;
    }
    fsCcdReal best = fsi_ccd_dotv(ld, vert + 3 * globalid[imax]);
    for (int prev = -1; imax != prev;) {
      prev = imax;
      for (int e = edgeadr[prev], loc; (loc = edge[e]) >= 0; e++) {
        fsCcdReal v = fsi_ccd_dotv(ld, vert + 3 * globalid[loc]);
        if (v > best) {
          best = v;
          imax = loc;
        }
      }
    }
    o->meshindex = imax;
    imax = o->vertindex = globalid[imax];
  } else {
    fsCcdReal best = -FS_FLTMAX;
    imax = 0;
    if (o->vertindex >= 0) {
      imax = o->vertindex;
      best = fsi_ccd_dotv(ld, vert + 3 * imax);
    }
    for (int i = 0; i < m->mesh_vertnum[o->mesh]; i++) {
      fsCcdReal v = fsi_ccd_dotv(ld, vert + 3 * i);
      if (v > best) {
        best = v;
        imax = i;
      }
    }
    o->vertindex = imax;
  }
  fsi_ccd_global(res, mat, o->pos, vert[3 * imax], vert[3 * imax + 1], vert[3 * imax + 2]);
}

/// Support of the Minkowski difference along dir: shape 1 along dir, shape 2 along
/// dir_neg, each pushed out by half its margin (MuJoCo's support).
FS_HD void fsi_ccd_support(fsiCcdVertex* v, fsiCcdObj* o1, fsiCcdObj* o2, const fsCcdReal dir[3],
                           const fsCcdReal dir_neg[3]) {
  fsi_ccd_shape_support(v->vert1, o1, dir);
  if (o1->margin > 0) {
    fsCcdReal h = 0.5 * o1->margin;
    for (int i = 0; i < 3; i++) v->vert1[i] += dir[i] * h;
  }
  fsi_ccd_shape_support(v->vert2, o2, dir_neg);
  if (o2->margin > 0) {
    fsCcdReal h = 0.5 * o2->margin;
    for (int i = 0; i < 3; i++) v->vert2[i] += dir_neg[i] * h;
  }
  fsi_ccd_sub(v->vert, v->vert1, v->vert2);
  v->index1 = o1->vertindex;
  v->index2 = o2->vertindex;
}

#endif
