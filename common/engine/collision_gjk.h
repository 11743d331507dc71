// Convex-convex distance and penetration for the convex collider (collision_convex.h), as
// MuJoCo 3.16's native CCD computes them in engine_collision_gjk.c (MuJoCo Warp's
// collision_gjk.py): GJK (gjk, its distance subalgorithm S1D, S2D, S3D, its intersection
// fallback gjkIntersect), the EPA polytope from GJK's simplex (polytope2, polytope3,
// polytope4) and its expansion (epa, horizon), operation for operation, over the shapes'
// support (collision_support.h), for any two convex shapes (sphere, capsule, ellipsoid,
// cylinder, box, mesh). One pair per lane: every buffer is a fixed-size member of the lane's
// scratch (fsiCcdWork, collision_convex.h, in the world's ccd_work), sized by FS_CCD_ITERMAX (the
// model check refuses models that need more); nothing is allocated.
//
// Layout of the work: fsiCcdVertex (a Minkowski-difference vertex with the two shape
// points that make it, collision_support.h), fsiCcdFace (a polytope triangle: packed
// vertex ids, adjacent faces, the origin's projection on it and its squared norm, its slot
// in the face map), fsiCcdPolytope (vertices [5 + FS_CCD_ITERMAX], faces and the map of
// live candidate faces [6 FS_CCD_ITERMAX], the horizon [FS_CCD_HORIZON]) and fsiCcdStatus
// (MuJoCo's mjCCDStatus: witness points x1, x2 [FS_CCD_MAXWIT x 3], distances, the simplex).
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_GJK_H
#define FLYSIM_COMMON_ENGINE_COLLISION_GJK_H

#include "common/engine/collision_support.h"

#define FS_CCD_ITERMAX 35 // opt.ccd_iterations at most: MuJoCo's default, FlyGym's (polytope size)
#define FS_CCD_MAXWIT  4  // witness points: MuJoCo's multi-contact gives at most 4 here
#define FS_CCD_HORIZON 24 // horizon edges (MuJoCo's buffer: 24)
#define FS_CCD_MAXVERT (5 + FS_CCD_ITERMAX)
#define FS_CCD_MAXFACE (6 * FS_CCD_ITERMAX)

#define FS_CCD_MINDIST2  (FS_CCD_MINVAL * FS_CCD_MINVAL) // origin on a face: polytope2, 3, 4
#define FS_CCD_MINDIST3  (FS_CCD_MINVAL * FS_CCD_MINVAL)
#define FS_CCD_MINDIST4  (FS_CCD_MINVAL * FS_CCD_MINVAL)
#define FS_CCD_MINEPATOL FS_CCD_MINVAL // EPA's tolerance for discrete shapes

/// A polytope face: vertex ids packed 10 bits each, adjacent faces across the edges
/// [v1 v2], [v2 v3], [v3 v1], the origin's projection v, dist2 = |v|^2, map slot
/// (-1: not in the map, -2: deleted).
typedef struct fsiCcdFace {
  int verts, adj[3];
  fsCcdReal v[3], dist2;
  int index;
} fsiCcdFace;

typedef struct fsiCcdPolytope {
  fsiCcdVertex verts[FS_CCD_MAXVERT]; // [nverts]
  fsiCcdFace faces[FS_CCD_MAXFACE];   // [nfaces]
  int map[FS_CCD_MAXFACE];            // [nmap] candidate faces (face ids)
  int hz_index[FS_CCD_HORIZON];       // [nedges] horizon: faces and their edges
  int hz_edge[FS_CCD_HORIZON];
  int stack[FS_CCD_MAXFACE]; // the horizon search's path (face * 16 + edge * 4 + next)
  int nverts, nfaces, maxfaces, nmap, nedges, overflow;
  fsCcdReal center[3];
  const fsCcdReal* w; // the point the horizon is seen from
} fsiCcdPolytope;

/// MuJoCo's mjCCDStatus: witness points and distances, the GJK simplex.
typedef struct fsiCcdStatus {
  int separated, nx;
  fsCcdReal dist[FS_CCD_MAXWIT];
  fsCcdReal x1[3 * FS_CCD_MAXWIT], x2[3 * FS_CCD_MAXWIT];
  int max_iterations, max_contacts, gjk_iterations;
  fsCcdReal tolerance;
  fsCcdReal cutoff; // dist_cutoff: 0, or the cores' radii and half margins (distances wanted)
  fsiCcdVertex simplex[4];
  int nsimplex;
} fsiCcdStatus;

//--------------------------------- GJK ------------------------------------------------------------

/// Both shapes discrete (boxes or meshes, no margin): finite convergence, zero
/// tolerances (MuJoCo's discreteGeoms).
FS_HD int fsi_ccd_discrete(const fsiCcdObj* o1, const fsiCcdObj* o2) {
  return o1->margin == 0 && o2->margin == 0 &&
         (o1->type == FS_GEOM_BOX || o1->type == FS_GEOM_MESH) &&
         (o2->type == FS_GEOM_BOX || o2->type == FS_GEOM_MESH);
}

/// Support along -x_k (GJK's step; x_norm = |x_k|).
FS_HD void fsi_gjk_support(fsiCcdVertex* v, fsiCcdObj* o1, fsiCcdObj* o2, const fsCcdReal x_k[3],
                           fsCcdReal x_norm) {
  fsCcdReal dir[3], dir_neg[3];
  fsi_ccd_scl(dir_neg, x_k, 1 / x_norm);
  fsi_ccd_scl(dir, dir_neg, -1);
  fsi_ccd_support(v, o1, o2, dir, dir_neg);
}

/// The origin projected on the plane of v1, v2, v3 (1: degenerate).
FS_HD int fsi_ccd_project_plane(fsCcdReal res[3], const fsCcdReal v1[3], const fsCcdReal v2[3],
                                const fsCcdReal v3[3]) {
  fsCcdReal d21[3], d31[3], d32[3], n[3], nv, nn;
  fsi_ccd_sub(d21, v2, v1);
  fsi_ccd_sub(d31, v3, v1);
  fsi_ccd_sub(d32, v3, v2);
  fsi_ccd_cross(n, d32, d21);
  nv = fsi_ccd_dot(n, v2);
  nn = fsi_ccd_dot(n, n);
  if (nn == 0) return 1;
  if (nv != 0 && nn > FS_CCD_MINVAL) {
    fsi_ccd_scl(res, n, nv / nn);
    return 0;
  }
  fsi_ccd_cross(n, d21, d31);
  nv = fsi_ccd_dot(n, v1);
  nn = fsi_ccd_dot(n, n);
  if (nn == 0) return 1;
  if (nv != 0 && nn > FS_CCD_MINVAL) {
    fsi_ccd_scl(res, n, nv / nn);
    return 0;
  }
  fsi_ccd_cross(n, d31, d32);
  nv = fsi_ccd_dot(n, v3);
  nn = fsi_ccd_dot(n, n);
  fsi_ccd_scl(res, n, nv / nn);
  return 0;
}

FS_HD int fsi_ccd_same_sign(fsCcdReal a, fsCcdReal b) {
  if (a > 0 && b > 0) return 1;
  if (a < 0 && b < 0) return -1;
  return 0;
}

/// Barycentric coordinates of the point of segment s1 s2 nearest the origin (S1D).
FS_HD void fsi_ccd_s1d(fsCcdReal lambda[2], const fsCcdReal s1[3], const fsCcdReal s2[3]) {
  fsCcdReal diff[3], p[3];
  fsi_ccd_sub(diff, s2, s1);
  fsCcdReal scl = -(fsi_ccd_dot(s2, diff) / fsi_ccd_dot(diff, diff));
  for (int i = 0; i < 3; i++) p[i] = s2[i] + scl * diff[i];
  fsCcdReal mu = s1[0] - s2[0], mu_max = mu;
  int index = 0;
  mu = s1[1] - s2[1];
  if (fabs(mu) >= fabs(mu_max)) {
    mu_max = mu;
    index = 1;
  }
  mu = s1[2] - s2[2];
  if (fabs(mu) >= fabs(mu_max)) {
    mu_max = mu;
    index = 2;
  }
  fsCcdReal c1 = p[index] - s2[index], c2 = s1[index] - p[index];
  int same = fsi_ccd_same_sign(mu_max, c1) && fsi_ccd_same_sign(mu_max, c2);
  lambda[0] = same ? c1 / mu_max : 0;
  lambda[1] = same ? c2 / mu_max : 1;
}

/// The minors M_14, M_24, M_34 of a triangle's [s; 1] matrix and the two axes kept
/// (the one with the largest projection dropped); returns M_max.
FS_HD fsCcdReal fsi_ccd_minors(const fsCcdReal s1[3], const fsCcdReal s2[3], const fsCcdReal s3[3],
                               int* x, int* y) {
  fsCcdReal m14 =
      s2[1] * s3[2] - s2[2] * s3[1] - s1[1] * s3[2] + s1[2] * s3[1] + s1[1] * s2[2] - s1[2] * s2[1];
  fsCcdReal m24 =
      s2[0] * s3[2] - s2[2] * s3[0] - s1[0] * s3[2] + s1[2] * s3[0] + s1[0] * s2[2] - s1[2] * s2[0];
  fsCcdReal m34 =
      s2[0] * s3[1] - s2[1] * s3[0] - s1[0] * s3[1] + s1[1] * s3[0] + s1[0] * s2[1] - s1[1] * s2[0];
  fsCcdReal mu1 = fabs(m14), mu2 = fabs(m24), mu3 = fabs(m34);
  if (mu1 >= mu2 && mu1 >= mu3) {
    *x = 1, *y = 2;
    return m14;
  }
  if (mu2 >= mu3) {
    *x = 0, *y = 2;
    return m24;
  }
  *x = 0, *y = 1;
  return m34;
}

/// The signed areas C31, C32, C33 of (p, s2, s3), (p, s3, s1), (p, s1, s2) on axes x, y.
FS_HD void fsi_ccd_areas(fsCcdReal c[3], const fsCcdReal s1[3], const fsCcdReal s2[3],
                         const fsCcdReal s3[3], const fsCcdReal p[3], int x, int y) {
  c[0] = p[x] * s2[y] + p[y] * s3[x] + s2[x] * s3[y] - p[x] * s3[y] - p[y] * s2[x] - s3[x] * s2[y];
  c[1] = p[x] * s3[y] + p[y] * s1[x] + s3[x] * s1[y] - p[x] * s1[y] - p[y] * s3[x] - s1[x] * s3[y];
  c[2] = p[x] * s1[y] + p[y] * s2[x] + s1[x] * s2[y] - p[x] * s2[y] - p[y] * s1[x] - s2[x] * s1[y];
}

/// Barycentric coordinates of the point of triangle s1 s2 s3 nearest the origin (S2D).
FS_HD void fsi_ccd_s2d(fsCcdReal lambda[3], const fsCcdReal s1[3], const fsCcdReal s2[3],
                       const fsCcdReal s3[3]) {
  fsCcdReal p[3];
  if (fsi_ccd_project_plane(p, s1, s2, s3)) {
    fsi_ccd_s1d(lambda, s1, s2);
    lambda[2] = 0;
    return;
  }
  int x, y;
  fsCcdReal mmax = fsi_ccd_minors(s1, s2, s3, &x, &y), c[3];
  fsi_ccd_areas(c, s1, s2, s3, p, x, y);
  int comp1 = fsi_ccd_same_sign(mmax, c[0]), comp2 = fsi_ccd_same_sign(mmax, c[1]),
      comp3 = fsi_ccd_same_sign(mmax, c[2]);
  if (comp1 && comp2 && comp3) {
    for (int i = 0; i < 3; i++) lambda[i] = c[i] / mmax;
    return;
  }
  fsCcdReal dmin = FS_CCD_LIMIT, l1[2], q[3], dd;
  if (!comp1) {
    fsi_ccd_s1d(l1, s2, s3);
    fsi_ccd_lincomb(q, l1, 2, s2, s3, 0, 0);
    lambda[0] = 0, lambda[1] = l1[0], lambda[2] = l1[1];
    dmin = fsi_ccd_dot(q, q);
  }
  if (!comp2) {
    fsi_ccd_s1d(l1, s1, s3);
    fsi_ccd_lincomb(q, l1, 2, s1, s3, 0, 0);
    if ((dd = fsi_ccd_dot(q, q)) < dmin) {
      lambda[0] = l1[0], lambda[1] = 0, lambda[2] = l1[1];
      dmin = dd;
    }
  }
  if (!comp3) {
    fsi_ccd_s1d(l1, s1, s2);
    fsi_ccd_lincomb(q, l1, 2, s1, s2, 0, 0);
    if ((dd = fsi_ccd_dot(q, q)) < dmin) lambda[0] = l1[0], lambda[1] = l1[1], lambda[2] = 0;
  }
}

/// Barycentric coordinates of the point of tetrahedron s1..s4 nearest the origin (S3D).
FS_HD void fsi_ccd_s3d(fsCcdReal lambda[4], const fsCcdReal s1[3], const fsCcdReal s2[3],
                       const fsCcdReal s3[3], const fsCcdReal s4[3]) {
  fsCcdReal c41 = -fsi_ccd_det3(s2, s3, s4), c42 = fsi_ccd_det3(s1, s3, s4);
  fsCcdReal c43 = -fsi_ccd_det3(s1, s2, s4), c44 = fsi_ccd_det3(s1, s2, s3);
  fsCcdReal mdet = c41 + c42 + c43 + c44;
  int comp[4] = {fsi_ccd_same_sign(mdet, c41), fsi_ccd_same_sign(mdet, c42),
                 fsi_ccd_same_sign(mdet, c43), fsi_ccd_same_sign(mdet, c44)};
  if (comp[0] && comp[1] && comp[2] && comp[3]) {
    lambda[0] = c41 / mdet, lambda[1] = c42 / mdet;
    lambda[2] = c43 / mdet, lambda[3] = c44 / mdet;
    return;
  }
  const fsCcdReal* s[4] = {s1, s2, s3, s4};
  fsCcdReal dmin = FS_CCD_LIMIT;
  for (int drop = 0; drop < 4; drop++) { // the faces without vertex `drop`, in order
    if (comp[drop]) continue;
    const fsCcdReal* f[3];
    for (int i = 0, j = 0; i < 4; i++)
      if (i != drop) f[j++] = s[i];
    fsCcdReal l2[3], q[3];
    fsi_ccd_s2d(l2, f[0], f[1], f[2]);
    fsi_ccd_lincomb(q, l2, 3, f[0], f[1], f[2], 0);
    fsCcdReal dd = fsi_ccd_dot(q, q);
    if (drop == 0 || dd < dmin) { // the first candidate is taken as it is
      for (int i = 0, j = 0; i < 4; i++) lambda[i] = (i == drop) ? 0 : l2[j++];
      if (drop < 3) dmin = dd;
    }
  }
}

/// GJK's distance subalgorithm over the n-vertex simplex.
FS_HD void fsi_ccd_subdistance(fsCcdReal lambda[4], int n, const fsiCcdVertex s[4]) {
  lambda[0] = lambda[1] = lambda[2] = lambda[3] = 0;
  if (n == 4)
    fsi_ccd_s3d(lambda, s[0].vert, s[1].vert, s[2].vert, s[3].vert);
  else if (n == 3)
    fsi_ccd_s2d(lambda, s[0].vert, s[1].vert, s[2].vert);
  else if (n == 2)
    fsi_ccd_s1d(lambda, s[0].vert, s[1].vert);
  else
    lambda[0] = 1;
}

/// Unit normal of the face (v1, v2, v3) and its signed distance from the origin
/// (FS_CCD_LIMIT: no normal).
FS_HD fsCcdReal fsi_ccd_signed_distance(fsCcdReal n[3], const fsiCcdVertex* v1,
                                        const fsiCcdVertex* v2, const fsiCcdVertex* v3) {
  fsCcdReal d1[3], d2[3];
  fsi_ccd_sub(d1, v3->vert, v1->vert);
  fsi_ccd_sub(d2, v2->vert, v1->vert);
  fsi_ccd_cross(n, d1, d2);
  fsCcdReal n2 = fsi_ccd_dot(n, n);
  if (n2 > FS_CCD_MINVAL2 && n2 < FS_CCD_MAXVAL2) {
    fsi_ccd_scl(n, n, 1 / sqrt(n2));
    return fsi_ccd_dot(n, v1->vert);
  }
  return FS_CCD_LIMIT;
}

/// GJK's intersection test from its tetrahedron (gjkIntersect): 1 contact (the
/// tetrahedron holding the origin in status->simplex), 0 none, -1 inconclusive.
FS_HD int fsi_gjk_intersect(fsiCcdStatus* st, fsiCcdObj* o1, fsiCcdObj* o2) {
  fsiCcdVertex sx[4] = {st->simplex[0], st->simplex[1], st->simplex[2], st->simplex[3]};
  int s[4] = {0, 1, 2, 3}, k = st->gjk_iterations;
  for (; k < st->max_iterations; k++) {
    fsCcdReal dist[4], nrm[12];
    dist[0] = fsi_ccd_signed_distance(nrm + 0, sx + s[2], sx + s[1], sx + s[3]);
    dist[1] = fsi_ccd_signed_distance(nrm + 3, sx + s[0], sx + s[2], sx + s[3]);
    dist[2] = fsi_ccd_signed_distance(nrm + 6, sx + s[1], sx + s[0], sx + s[3]);
    dist[3] = fsi_ccd_signed_distance(nrm + 9, sx + s[0], sx + s[1], sx + s[2]);
    if (!dist[3] || !dist[2] || !dist[1] || !dist[0]) {
      st->gjk_iterations = k;
      return -1;
    }
    int i = (dist[0] < dist[1]) ? 0 : 1, j = (dist[2] < dist[3]) ? 2 : 3;
    int index = (dist[i] < dist[j]) ? i : j;
    if (dist[index] > 0) { // the origin is inside
      st->nsimplex = 4;
      for (int q = 0; q < 4; q++) st->simplex[q] = sx[s[q]];
      st->gjk_iterations = k;
      return 1;
    }
    fsCcdReal* dir = nrm + 3 * index;
    fsCcdReal dir_neg[3] = {-dir[0], -dir[1], -dir[2]};
    fsi_ccd_support(sx + s[index], o1, o2, dir, dir_neg);
    if (fsi_ccd_dot(dir, sx[s[index]].vert) < 0) {
      st->nsimplex = 0;
      st->gjk_iterations = k;
      return 0;
    }
    i = (index + 1) & 3;
    j = (index + 2) & 3;
    int swap = s[i];
    s[i] = s[j];
    s[j] = swap;
  }
  st->gjk_iterations = k;
  return -1;
}

/// MuJoCo's gjk. Without distances (st->cutoff 0): stops at the first separating
/// support, falls back to the intersection test once it holds a tetrahedron; with them
/// (cutoff > 0, the cores of spheres and capsules): converges on the distance, separated
/// once its lower bound reaches the cutoff. Leaves the simplex, separated, dist[0] and the
/// approximate witness points.
FS_HD void fsi_gjk(fsiCcdStatus* st, fsiCcdObj* o1, fsiCcdObj* o2) {
  fsiCcdVertex* simplex = st->simplex;
  int get_dist = st->cutoff > 0;
  int n = 0, k = 0, backup = !get_dist, discrete = fsi_ccd_discrete(o1, o2);
  fsCcdReal *x1_k = st->x1, *x2_k = st->x2, x_k[3], lambda[4] = {0, 0, 0, 0};
  fsCcdReal tol2 = st->tolerance * st->tolerance;
  st->separated = 0;
  fsCcdReal epsilon = discrete ? 0 : 0.5 * tol2;
  fsCcdReal min_norm = discrete ? FS_CCD_MINVAL : st->tolerance;
  fsi_ccd_sub(x_k, x1_k, x2_k);
  fsCcdReal x_norm = fsi_ccd_norm(x_k), x_norm_prev = 0;
  for (; k < st->max_iterations; k++) {
    if (x_norm < min_norm || fabs(x_norm_prev - x_norm) < FS_CCD_MINVAL) break;
    fsi_gjk_support(simplex + n, o1, o2, x_k, x_norm);
    const fsCcdReal* s_k = simplex[n].vert;
    fsCcdReal diff[3] = {x_k[0] - s_k[0], x_k[1] - s_k[1], x_k[2] - s_k[2]};
    if (fsi_ccd_dot(x_k, diff) < epsilon) break;
    fsCcdReal lower = fsi_ccd_dot(x_k, s_k); // lower / x_norm bounds the distance below
    if (get_dist ? lower > 0 && lower >= st->cutoff * x_norm : lower > 0) { // separated
      st->separated = 1;
      st->gjk_iterations = k;
      st->nsimplex = 0;
      st->nx = 0;
      st->dist[0] = FS_CCD_LIMIT;
      return;
    }
    if (n == 3 && backup) {
      st->gjk_iterations = k;
      int ret = fsi_gjk_intersect(st, o1, o2);
      if (ret != -1) {
        st->nx = 0;
        st->separated = ret == 0;
        st->dist[0] = ret > 0 ? 0 : FS_CCD_LIMIT;
        return;
      }
      k = st->gjk_iterations;
      backup = 0;
    }
    fsi_ccd_subdistance(lambda, n + 1, simplex);
    n = 0;
    for (int i = 0; i < 4; i++) {
      if (!lambda[i]) continue;
      simplex[n] = simplex[i];
      lambda[n++] = lambda[i];
    }
    if (n < 1) { // should not occur
      st->gjk_iterations = k;
      st->nsimplex = 0;
      st->nx = 0;
      st->dist[0] = FS_CCD_LIMIT;
      st->separated = 1;
      return;
    }
    fsi_ccd_lincomb(x_k, lambda, n, simplex[0].vert, simplex[1].vert, simplex[2].vert,
                    simplex[3].vert);
    x_norm_prev = x_norm;
    x_norm = fsi_ccd_norm(x_k);
    if (n == 4) break;
  }
  if (n > 0) {
    fsi_ccd_lincomb(x1_k, lambda, n, simplex[0].vert1, simplex[1].vert1, simplex[2].vert1,
                    simplex[3].vert1);
    fsi_ccd_lincomb(x2_k, lambda, n, simplex[0].vert2, simplex[1].vert2, simplex[2].vert2,
                    simplex[3].vert2);
  }
  fsiCcdVertex tmp; // a final separation check after an early exit
  fsi_gjk_support(&tmp, o1, o2, x_k, x_norm);
  if (fsi_ccd_dot(x_k, tmp.vert) > 0) st->separated = 1;
  st->nx = 1;
  st->gjk_iterations = k;
  st->nsimplex = n;
  st->dist[0] = (n == 4 && !st->separated) ? 0 : x_norm;
}

//--------------------------------- the EPA polytope -----------------------------------------------

/// Support along d (|d| = dnorm; +x if too short) as a new polytope vertex; its id.
FS_HD int fsi_epa_support(fsiCcdPolytope* pt, fsiCcdObj* o1, fsiCcdObj* o2, const fsCcdReal d[3],
                          fsCcdReal dnorm) {
  fsCcdReal dir[3] = {1, 0, 0}, dir_neg[3] = {-1, 0, 0};
  if (dnorm > FS_CCD_MINVAL) {
    dir[0] = d[0] / dnorm;
    dir[1] = d[1] / dnorm;
    dir[2] = d[2] / dnorm;
    fsi_ccd_scl(dir_neg, dir, -1);
  }
  int n = pt->nverts++;
  fsi_ccd_support(pt->verts + n, o1, o2, dir, dir_neg);
  return n;
}

FS_HD int fsi_epa_insert(fsiCcdPolytope* pt, const fsiCcdVertex* v) {
  int n = pt->nverts++;
  pt->verts[n] = *v;
  return n;
}

FS_HD void fsi_epa_verts(const fsiCcdFace* f, int v[3]) {
  v[0] = f->verts & 0x3FF;
  v[1] = f->verts >> 10 & 0x3FF;
  v[2] = f->verts >> 20 & 0x3FF;
}

/// Attach face (v1, v2, v3) with its adjacent faces; its squared distance from the
/// origin (0: degenerate).
FS_HD fsCcdReal fsi_epa_attach(fsiCcdPolytope* pt, int v1, int v2, int v3, int adj1, int adj2,
                               int adj3) {
  fsiCcdFace* f = &pt->faces[pt->nfaces++];
  f->verts = v1 + (v2 << 10) + (v3 << 20);
  f->adj[0] = adj1;
  f->adj[1] = adj2;
  f->adj[2] = adj3;
  f->index = -1;
  f->dist2 = 0;
  if (fsi_ccd_project_plane(f->v, pt->verts[v3].vert, pt->verts[v2].vert, pt->verts[v1].vert))
    return 0;
  fsCcdReal out[3];
  fsi_ccd_sub(out, pt->verts[v1].vert, pt->center);
  if (fsi_ccd_dot(f->v, out) < 0) fsi_ccd_scl(f->v, f->v, -1);
  f->dist2 = fsi_ccd_dot(f->v, f->v);
  return f->dist2;
}

/// The faces 0..n-1 as the map of candidates.
FS_HD void fsi_epa_map_all(fsiCcdPolytope* pt, int n) {
  for (int i = 0; i < n; i++) {
    pt->map[i] = i;
    pt->faces[i].index = i;
  }
  pt->nmap = n;
}

/// Replace the status simplex by three polytope vertices; empty the polytope.
FS_HD void fsi_epa_simplex3(fsiCcdPolytope* pt, fsiCcdStatus* st, int v1, int v2, int v3) {
  st->nsimplex = 3;
  st->simplex[0] = pt->verts[v1];
  st->simplex[1] = pt->verts[v2];
  st->simplex[2] = pt->verts[v3];
  pt->nfaces = pt->nverts = pt->nmap = 0;
}

/// The origin and p3 on the same side of the plane p0 p1 p2.
FS_HD int fsi_epa_same_side(const fsCcdReal p0[3], const fsCcdReal p1[3], const fsCcdReal p2[3],
                            const fsCcdReal p3[3]) {
  fsCcdReal d1[3], d2[3], d3[3], d4[3], n[3];
  fsi_ccd_sub(d1, p1, p0);
  fsi_ccd_sub(d2, p2, p0);
  fsi_ccd_cross(n, d1, d2);
  fsi_ccd_sub(d3, p3, p0);
  fsCcdReal dot1 = fsi_ccd_dot(n, d3);
  fsi_ccd_scl(d4, p0, -1);
  fsCcdReal dot2 = fsi_ccd_dot(n, d4);
  return (dot1 > 0 && dot2 > 0) || (dot1 < 0 && dot2 < 0);
}

FS_HD int fsi_epa_tetra(const fsCcdReal p0[3], const fsCcdReal p1[3], const fsCcdReal p2[3],
                        const fsCcdReal p3[3]) {
  return fsi_epa_same_side(p0, p1, p2, p3) && fsi_epa_same_side(p1, p2, p3, p0) &&
         fsi_epa_same_side(p2, p3, p0, p1) && fsi_epa_same_side(p3, p0, p1, p2);
}

/// Affine coordinates of p on triangle v1 v2 v3 (triAffineCoord).
FS_HD void fsi_epa_affine(fsCcdReal lambda[3], const fsCcdReal v1[3], const fsCcdReal v2[3],
                          const fsCcdReal v3[3], const fsCcdReal p[3]) {
  int x, y;
  fsCcdReal mmax = fsi_ccd_minors(v1, v2, v3, &x, &y), c[3];
  fsi_ccd_areas(c, v1, v2, v3, p, x, y);
  for (int i = 0; i < 3; i++) lambda[i] = c[i] / mmax;
}

/// p lies on triangle v1 v2 v3.
FS_HD int fsi_epa_on_triangle(const fsCcdReal v1[3], const fsCcdReal v2[3], const fsCcdReal v3[3],
                              const fsCcdReal p[3]) {
  fsCcdReal l[3], pr[3], diff[3];
  fsi_epa_affine(l, v1, v2, v3, p);
  if (l[0] < 0 || l[1] < 0 || l[2] < 0) return 0;
  for (int i = 0; i < 3; i++) pr[i] = v1[i] * l[0] + v2[i] * l[1] + v3[i] * l[2];
  fsi_ccd_sub(diff, pr, p);
  return fsi_ccd_norm(diff) < FS_CCD_MINVAL;
}

/// The polytope from GJK's triangle (polytope3): two supports along its normals make a
/// hexahedron. 0 on success.
FS_HD int fsi_epa_polytope3(fsiCcdPolytope* pt, fsiCcdStatus* st, fsiCcdObj* o1, fsiCcdObj* o2) {
  const fsCcdReal *v1 = st->simplex[0].vert, *v2 = st->simplex[1].vert, *v3 = st->simplex[2].vert;
  fsi_ccd_add(pt->center, v1, v2);
  fsi_ccd_add(pt->center, pt->center, v3);
  fsi_ccd_scl(pt->center, pt->center, 1.0 / 3.0);
  fsCcdReal d1[3], d2[3], n[3], n_neg[3];
  fsi_ccd_sub(d1, v2, v1);
  fsi_ccd_sub(d2, v3, v1);
  fsi_ccd_cross(n, d1, d2);
  fsCcdReal n_norm = fsi_ccd_norm(n);
  if (n_norm < FS_CCD_MINVAL) return 1;
  fsi_ccd_scl(n_neg, n, -1);
  int v1i = fsi_epa_insert(pt, st->simplex + 0), v2i = fsi_epa_insert(pt, st->simplex + 1);
  int v3i = fsi_epa_insert(pt, st->simplex + 2);
  int v5i = fsi_epa_support(pt, o1, o2, n_neg, n_norm);
  int v4i = fsi_epa_support(pt, o1, o2, n, n_norm);
  const fsCcdReal *v4 = pt->verts[v4i].vert, *v5 = pt->verts[v5i].vert;
  if (fsi_epa_on_triangle(v1, v2, v3, v4) || fsi_epa_on_triangle(v1, v2, v3, v5)) return 1;
  if (st->dist[0] > 10 * FS_CCD_MINVAL && !fsi_epa_tetra(v1, v2, v3, v4) &&
      !fsi_epa_tetra(v1, v2, v3, v5))
    return 1;
  if (fsi_epa_attach(pt, v4i, v1i, v2i, 1, 3, 2) < FS_CCD_MINDIST3 ||
      fsi_epa_attach(pt, v4i, v3i, v1i, 2, 4, 0) < FS_CCD_MINDIST3 ||
      fsi_epa_attach(pt, v4i, v2i, v3i, 0, 5, 1) < FS_CCD_MINDIST3 ||
      fsi_epa_attach(pt, v5i, v2i, v1i, 5, 0, 4) < FS_CCD_MINDIST3 ||
      fsi_epa_attach(pt, v5i, v1i, v3i, 3, 1, 5) < FS_CCD_MINDIST3 ||
      fsi_epa_attach(pt, v5i, v3i, v2i, 4, 2, 3) < FS_CCD_MINDIST3)
    return 1;
  fsi_epa_map_all(pt, 6);
  return 0;
}

/// 120-degree rotation about axis (rotmat).
FS_HD void fsi_epa_rot120(fsCcdReal R[9], const fsCcdReal axis[3]) {
  fsCcdReal n = fsi_ccd_norm(axis);
  fsCcdReal u1 = axis[0] / n, u2 = axis[1] / n, u3 = axis[2] / n;
  const fsCcdReal s = 0.86602540378, c = -0.5;
  R[0] = c + u1 * u1 * (1 - c);
  R[1] = u1 * u2 * (1 - c) - u3 * s;
  R[2] = u1 * u3 * (1 - c) + u2 * s;
  R[3] = u2 * u1 * (1 - c) + u3 * s;
  R[4] = c + u2 * u2 * (1 - c);
  R[5] = u2 * u3 * (1 - c) - u1 * s;
  R[6] = u1 * u3 * (1 - c) - u2 * s;
  R[7] = u2 * u3 * (1 - c) + u1 * s;
  R[8] = c + u3 * u3 * (1 - c);
}

/// The ray v1 v2 meets triangle v3 v4 v5 (nonzero).
FS_HD int fsi_epa_ray_triangle(const fsCcdReal v1[3], const fsCcdReal v2[3], const fsCcdReal v3[3],
                               const fsCcdReal v4[3], const fsCcdReal v5[3]) {
  fsCcdReal d12[3], d13[3], d14[3], d15[3];
  fsi_ccd_sub(d12, v2, v1);
  fsi_ccd_sub(d13, v3, v1);
  fsi_ccd_sub(d14, v4, v1);
  fsi_ccd_sub(d15, v5, v1);
  fsCcdReal vol1 = fsi_ccd_det3(d13, d14, d12), vol2 = fsi_ccd_det3(d14, d15, d12);
  fsCcdReal vol3 = fsi_ccd_det3(d15, d13, d12);
  if (vol1 >= 0 && vol2 >= 0 && vol3 >= 0) return 1;
  if (vol1 <= 0 && vol2 <= 0 && vol3 <= 0) return -1;
  return 0;
}

/// The polytope from GJK's segment (polytope2): three supports 120 degrees apart
/// around it make a hexahedron; a face through the origin falls back to polytope3.
FS_HD int fsi_epa_polytope2(fsiCcdPolytope* pt, fsiCcdStatus* st, fsiCcdObj* o1, fsiCcdObj* o2) {
  const fsCcdReal *v1 = st->simplex[0].vert, *v2 = st->simplex[1].vert;
  fsi_ccd_add(pt->center, v1, v2);
  fsi_ccd_scl(pt->center, pt->center, 0.5);
  fsCcdReal diff[3], value = FS_CCD_LIMIT;
  fsi_ccd_sub(diff, v2, v1);
  int index = 0;
  for (int i = 0; i < 3; i++)
    if (fabs(diff[i]) < value) {
      value = fabs(diff[i]);
      index = i;
    }
  fsCcdReal e[3] = {0, 0, 0}, d1[3], d2[3], d3[3], R[9];
  e[index] = 1;
  fsi_ccd_cross(d1, e, diff);
  fsi_epa_rot120(R, diff);
  fsi_ccd_mul_mat_vec(d2, R, d1);
  fsi_ccd_mul_mat_vec(d3, R, d2);
  int v1i = fsi_epa_insert(pt, st->simplex + 0), v2i = fsi_epa_insert(pt, st->simplex + 1);
  int v3i = fsi_epa_support(pt, o1, o2, d1, fsi_ccd_norm(d1));
  int v4i = fsi_epa_support(pt, o1, o2, d2, fsi_ccd_norm(d2));
  int v5i = fsi_epa_support(pt, o1, o2, d3, fsi_ccd_norm(d3));
  // the hexahedron's faces (vertices, adjacent faces), each checked as attached
  const int tri[6][6] = {{v1i, v3i, v4i, 1, 3, 2}, {v1i, v5i, v3i, 2, 4, 0},
                         {v1i, v4i, v5i, 0, 5, 1}, {v2i, v4i, v3i, 5, 0, 4},
                         {v2i, v3i, v5i, 3, 1, 5}, {v2i, v5i, v4i, 4, 2, 3}};
  for (int f = 0; f < 6; f++) {
    const int* t = tri[f];
    if (fsi_epa_attach(pt, t[0], t[1], t[2], t[3], t[4], t[5]) < FS_CCD_MINDIST2) {
      fsi_epa_simplex3(pt, st, t[0], t[1], t[2]);
      return fsi_epa_polytope3(pt, st, o1, o2);
    }
  }
  if (!fsi_epa_ray_triangle(v1, v2, pt->verts[v3i].vert, pt->verts[v4i].vert, pt->verts[v5i].vert))
    return 1;
  fsi_epa_map_all(pt, 6);
  return 0;
}

/// The polytope from GJK's tetrahedron (polytope4); a face through the origin falls
/// back to polytope3.
FS_HD int fsi_epa_polytope4(fsiCcdPolytope* pt, fsiCcdStatus* st, fsiCcdObj* o1, fsiCcdObj* o2) {
  int v1 = fsi_epa_insert(pt, st->simplex + 0), v2 = fsi_epa_insert(pt, st->simplex + 1);
  int v3 = fsi_epa_insert(pt, st->simplex + 2), v4 = fsi_epa_insert(pt, st->simplex + 3);
  fsi_ccd_add(pt->center, pt->verts[v1].vert, pt->verts[v2].vert);
  fsi_ccd_add(pt->center, pt->center, pt->verts[v3].vert);
  fsi_ccd_add(pt->center, pt->center, pt->verts[v4].vert);
  fsi_ccd_scl(pt->center, pt->center, 0.25);
  const int tri[4][6] = {
      {v1, v2, v3, 1, 3, 2}, {v1, v4, v2, 2, 3, 0}, {v1, v3, v4, 0, 3, 1}, {v4, v3, v2, 2, 0, 1}};
  for (int f = 0; f < 4; f++) {
    const int* t = tri[f];
    if (fsi_epa_attach(pt, t[0], t[1], t[2], t[3], t[4], t[5]) < FS_CCD_MINDIST4) {
      fsi_epa_simplex3(pt, st, t[0], t[1], t[2]);
      return fsi_epa_polytope3(pt, st, o1, o2);
    }
  }
  if (!fsi_epa_tetra(pt->verts[v1].vert, pt->verts[v2].vert, pt->verts[v3].vert,
                     pt->verts[v4].vert))
    return 1;
  fsi_epa_map_all(pt, 4);
  return 0;
}

/// Remove face f from the candidate map and mark it deleted.
FS_HD void fsi_epa_delete(fsiCcdPolytope* pt, int f) {
  fsiCcdFace* face = pt->faces + f;
  if (face->index >= 0) {
    pt->map[face->index] = pt->map[--pt->nmap];
    pt->faces[pt->map[face->index]].index = face->index;
  }
  face->index = -2;
}

FS_HD void fsi_epa_add_edge(fsiCcdPolytope* pt, int face, int edge) {
  if (pt->nedges >= FS_CCD_HORIZON) { // beyond MuJoCo's buffer: give up the contact
    pt->overflow = 1;
    return;
  }
  pt->hz_edge[pt->nedges] = edge;
  pt->hz_index[pt->nedges++] = face;
}

/// The edge of face f that starts at vertex v.
FS_HD int fsi_epa_edge(const fsiCcdFace* f, int v) {
  int vs[3];
  fsi_epa_verts(f, vs);
  return vs[0] == v ? 0 : vs[1] == v ? 1 : 2;
}

FS_HD int fsi_epa_visible(const fsiCcdPolytope* pt, const fsiCcdFace* f) {
  return fsi_ccd_dot(f->v, pt->w) - f->dist2 > FS_CCD_MINVAL;
}

/// From face f entered across its edge e: if pt->w sees it, delete it and search its
/// other two edges' neighbours depth first, adding the edges to faces w does not see
/// to the horizon (MuJoCo's horizonRec, its recursion as an explicit path). 1 if seen.
FS_HD int fsi_epa_horizon_from(fsiCcdPolytope* pt, int f, int e) {
  if (!fsi_epa_visible(pt, pt->faces + f)) return 0;
  fsi_epa_delete(pt, f);
  int sp = 0;
  pt->stack[sp++] = f * 16 + e * 4 + 1;
  while (sp > 0) {
    int top = pt->stack[sp - 1], cf = top >> 4, ce = (top >> 2) & 3, k = top & 3;
    if (k == 3) {
      sp--;
      continue;
    }
    pt->stack[sp - 1] = top + 1;
    int i = (ce + k) % 3, vs[3];
    const fsiCcdFace* face = pt->faces + cf;
    fsi_epa_verts(face, vs);
    int adj = face->adj[i];
    if (pt->faces[adj].index <= -2) continue;
    int adj_edge = fsi_epa_edge(pt->faces + adj, vs[(i + 1) % 3]);
    if (fsi_epa_visible(pt, pt->faces + adj)) {
      fsi_epa_delete(pt, adj);
      pt->stack[sp++] = adj * 16 + adj_edge * 4 + 1;
    } else {
      fsi_epa_add_edge(pt, adj, adj_edge);
    }
  }
  return 1;
}

/// The horizon of pt->w around face f (deleted first), edge by edge.
FS_HD void fsi_epa_horizon(fsiCcdPolytope* pt, int f) {
  fsi_epa_delete(pt, f);
  int vs[3];
  fsi_epa_verts(pt->faces + f, vs);
  for (int i = 0; i < 3; i++) { // edges [v1 v2], [v2 v3], [v3 v1]: entered at v2, v3, v1
    int adj = pt->faces[f].adj[i];
    int adj_edge = fsi_epa_edge(pt->faces + adj, vs[(i + 1) % 3]);
    if (i > 0 && pt->faces[adj].index <= -2) continue;
    if (!fsi_epa_horizon_from(pt, adj, adj_edge)) fsi_epa_add_edge(pt, adj, adj_edge);
  }
}

/// Witness points of face f into x1, x2; returns the signed distance -|v|.
FS_HD fsCcdReal fsi_epa_witness(const fsiCcdPolytope* pt, const fsiCcdFace* f, fsCcdReal x1[3],
                                fsCcdReal x2[3]) {
  int vs[3];
  fsi_epa_verts(f, vs);
  const fsiCcdVertex *a = pt->verts + vs[0], *b = pt->verts + vs[1], *c = pt->verts + vs[2];
  fsCcdReal l[3];
  fsi_epa_affine(l, a->vert, b->vert, c->vert, f->v);
  fsi_ccd_lincomb(x1, l, 3, a->vert1, b->vert1, c->vert1, 0);
  fsi_ccd_lincomb(x2, l, 3, a->vert2, b->vert2, c->vert2, 0);
  return -sqrt(f->dist2);
}

/// Attach the face of horizon edge i (of nedges, new faces from nf) to vertex wi and map
/// it if its distance is within [lower2, upper2]; its squared distance (0: degenerate).
FS_HD fsCcdReal fsi_epa_attach_horizon(fsiCcdPolytope* pt, int i, int nf, int nedges, int wi,
                                       fsCcdReal lower2, fsCcdReal upper2) {
  int cur = nf + i, prev = nf + (i + nedges - 1) % nedges, next = nf + (i + 1) % nedges;
  int hf = pt->hz_index[i], he = pt->hz_edge[i], vs[3];
  fsi_epa_verts(pt->faces + hf, vs);
  int v1 = vs[he], v2 = vs[(he + 1) % 3];
  pt->faces[hf].adj[he] = cur;
  fsCcdReal dist2 = fsi_epa_attach(pt, wi, v2, v1, prev, hf, next);
  if (dist2 != 0 && dist2 >= lower2 && dist2 <= upper2) {
    int idx = pt->nmap++;
    pt->map[idx] = pt->nfaces - 1;
    pt->faces[pt->nfaces - 1].index = idx;
  }
  return dist2;
}

/// Expand the polytope towards the Minkowski difference's boundary nearest the origin
/// (MuJoCo's epa); the face that approximates the penetration (-1: none), its witness
/// points and distance in status.
FS_HD int fsi_epa(fsiCcdStatus* st, fsiCcdPolytope* pt, fsiCcdObj* o1, fsiCcdObj* o2) {
  fsCcdReal upper = FS_CCD_LIMIT, upper2 = FS_CCD_LIMIT, lower2;
  int face = -1, pface = -1, discrete = fsi_ccd_discrete(o1, o2);
  fsCcdReal tolerance = discrete ? FS_CCD_MINEPATOL : st->tolerance;
  int kmax = st->max_iterations < 1000 ? st->max_iterations : 1000;
  for (int k = 0; k < kmax; k++) {
    pface = face;
    lower2 = FS_CCD_LIMIT;
    for (int i = 0; i < pt->nmap; i++)
      if (pt->faces[pt->map[i]].dist2 < lower2) {
        face = pt->map[i];
        lower2 = pt->faces[face].dist2;
      }
    if (lower2 > upper2 || face < 0) {
      face = pface;
      break;
    }
    if (lower2 <= 0) break; // the origin on a face's plane (MuJoCo warns)
    fsCcdReal lower = sqrt(lower2);
    const fsCcdReal* fv = pt->faces[face].v;
    int wi = fsi_epa_support(pt, o1, o2, fv, lower);
    const fsiCcdVertex* w = pt->verts + wi;
    fsCcdReal upper_k = fsi_ccd_dot(fv, w->vert) / lower;
    if (upper_k < upper) {
      upper = upper_k;
      upper2 = upper * upper;
    }
    if (upper - lower < tolerance) {
      if (k == 0 && upper < lower - 1e-10) face = -1;
      break;
    }
    if (discrete) { // a repeated support vertex: converged
      int i = 0, nv = pt->nverts - 1;
      while (i < nv && !(w->index1 == pt->verts[i].index1 && w->index2 == pt->verts[i].index2)) i++;
      if (i != nv) break;
    }
    pt->w = w->vert;
    fsi_epa_horizon(pt, face);
    if (pt->overflow || pt->nedges < 3) {
      face = -1;
      break;
    }
    int nf = pt->nfaces, nedges = pt->nedges;
    if (nedges > pt->maxfaces - pt->nfaces) break; // out of faces (MuJoCo warns)
    for (int i = 0; i < nedges; i++)
      if (fsi_epa_attach_horizon(pt, i, nf, nedges, wi, lower2, upper2) == 0) {
        face = -1;
        break;
      }
    pt->nedges = 0;
    if (!pt->nmap || face < 0) break;
  }
  if (face >= 0) {
    st->dist[0] = fsi_epa_witness(pt, pt->faces + face, st->x1, st->x2);
    st->nx = 1;
  } else {
    st->nx = 0;
    st->dist[0] = 0;
  }
  return face;
}

#endif
