// Collision (mj_collision) for the model's explicit contact pairs, one world per
// call (see common/exec/real.h for the lanes). In the step after factor_m, as in
// mj_fwdPosition (common/engine/stage_forward.h).
//
// A static pair list needs no broadphase. The world's candidate pairs are every pair, or,
// when the model pairs moving geoms with static ones, the pairs tested every step and
// those whose static geom is near its moving geom (common/engine/cull.h), in pair order.
// Lanes take the candidates, each candidate's narrowphase writes at most pair_maxcon[p]
// contacts into its own nslot slots of the precon_* scratch (MuJoCo's mjPreContact
// buffer), then one lane counts them in candidate order and the lanes move every slot's
// contact to its place in contact_*: pairs in model order, a pair's contacts in the
// order its collision function made them -- MuJoCo's d->contact order.
//
// The geometry is MuJoCo 3.16's, operation for operation (so that float64 results
// are bit-identical): plane against sphere, capsule, cylinder, box (mjc_PlaneSphere,
// mjc_PlaneCapsule, mjc_PlaneCylinder, mjc_PlaneBox) and against ellipsoids and
// convex meshes (mjc_PlaneConvex: the support vertex by hill climbing on the
// mesh's convex-hull graph, then up to three more vertices of the hull polygon
// there that faces the plane). 3.16's plane-mesh differs from the 3.12 source
// (which adds up to two graph neighbours): docs/engine/design.md, "Collision", says how the
// 3.16 algorithm was established.
//
// A box against a capsule or a sphere: MuJoCo's primitive colliders (mjc_CapsuleBox,
// mjc_SphereBox), which 3.16's collision table uses for those pair types. Every pair
// first gets MuJoCo's bounding-sphere pre-test (mj_filterSphere); the dispatch is one
// case per pair type, lower geom type first (fsi_collide_pair_at).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_COLLISION_H
#define FLYSIM_COMMON_ENGINE_STAGE_COLLISION_H

#include "common/engine/fields.h"
#include "common/engine/spatial.h"
#include "common/engine/cull.h"

#define FS_MINMU          ((fsReal)1e-5)            // mjMINMU: smallest friction coefficient
#define FS_MESH_HILLCLIMB 10                        // mjMESH_HILLCLIMB_MIN: fewer: exhaustive
#define FS_FLTMAX         ((fsReal)3.40282347e+38F) // FLT_MAX (the exhaustive search's start)

/// Write contact slot k of the precon scratch: distance, point, normal and first
/// tangent (NULL: none, the frame's default).
FS_HD void fsi_precon(fsData* d, int k, fsReal dist, const fsReal pos[3], const fsReal normal[3],
                      const fsReal* tangent) {
  d->precon_dist[k] = dist;
  for (int i = 0; i < 3; i++) {
    d->precon_pos[3 * k + i] = pos[i];
    d->precon_normal[3 * k + i] = normal[i];
    d->precon_tangent[3 * k + i] = tangent ? tangent[i] : 0;
  }
}

/// Plane (pos1, mat1: normal = z axis) against a sphere of radius r at pos2, into
/// slot k: 1 contact if the surface is within margin (mjraw_PlaneSphere).
FS_HD int fsi_plane_sphere(fsData* d, int k, const fsReal pos1[3], const fsReal mat1[9],
                           const fsReal pos2[3], fsReal r, fsReal margin) {
  fsReal n[3] = {mat1[2], mat1[5], mat1[8]};
  fsReal dif[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  fsReal cdist = fsi_dot3(dif, n);
  if (cdist > margin + r) return 0;
  fsReal dist = cdist - r, s = -dist / 2 - r;
  fsReal pos[3] = {pos2[0] + n[0] * s, pos2[1] + n[1] * s, pos2[2] + n[2] * s};
  fsi_precon(d, k, dist, pos, n, 0);
  return 1;
}

/// Plane against capsule g2 (mjc_PlaneCapsule): a sphere test at each end of the
/// segment (+axis end first); frames aligned with the capsule's axis.
FS_HD int fsi_plane_capsule(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  const fsReal* size = m->geom_size + 3 * g2;
  fsReal axis[3] = {mat2[2], mat2[5], mat2[8]};
  fsReal seg[3] = {size[1] * axis[0], size[1] * axis[1], size[1] * axis[2]};
  fsReal end[3] = {pos2[0] + seg[0], pos2[1] + seg[1], pos2[2] + seg[2]};
  int n1 = fsi_plane_sphere(d, k, pos1, mat1, end, size[0], margin);
  for (int i = 0; i < 3; i++) end[i] = pos2[i] - seg[i];
  int n2 = fsi_plane_sphere(d, k + n1, pos1, mat1, end, size[0], margin);
  for (int c = k; c < k + n1 + n2; c++) fsi_copy(d->precon_tangent + 3 * c, axis, 3);
  return n1 + n2;
}

/// Plane against box g2 (mjc_PlaneBox): the corners below the margin that face
/// the plane, in corner order, at most 4.
FS_HD int fsi_plane_box(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  const fsReal* size = m->geom_size + 3 * g2;
  fsReal n[3] = {mat1[2], mat1[5], mat1[8]};
  fsReal dif[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  fsReal dist = fsi_dot3(dif, n);
  int cnt = 0;
  for (int i = 0; i < 8; i++) {
    fsReal v[3] = {(i & 1) ? size[0] : -size[0], (i & 2) ? size[1] : -size[1],
                   (i & 4) ? size[2] : -size[2]};
    fsReal corner[3];
    fsi_mul_mat_vec3(corner, mat2, v);
    fsReal ldist = fsi_dot3(n, corner);
    if (dist + ldist > margin || ldist > 0) continue;
    fsReal cdist = dist + ldist, s = -cdist / 2, pos[3];
    for (int j = 0; j < 3; j++) pos[j] = (corner[j] + pos2[j]) + n[j] * s;
    fsi_precon(d, k + cnt, cdist, pos, n, 0);
    if (++cnt >= 4) break;
  }
  return cnt;
}

/// One plane-cylinder contact at pos = pos2 + a + b*sb + normal*(-dist/2), with
/// vector b scaled by sb (MuJoCo's sums, in its order).
FS_HD void fsi_cylinder_point(fsData* d, int k, fsReal dist, const fsReal pos2[3],
                              const fsReal a[3], fsReal sa, const fsReal b[3], fsReal sb,
                              const fsReal n[3]) {
  fsReal pos[3];
  for (int j = 0; j < 3; j++) {
    pos[j] = pos2[j] + a[j] * sa;
    pos[j] += b[j] * sb;
  }
  for (int j = 0; j < 3; j++) pos[j] += n[j] * (-dist * (fsReal)0.5);
  fsi_precon(d, k, dist, pos, n, 0);
}

/// Plane against cylinder g2 (mjc_PlaneCylinder): the rim point nearest the plane
/// on the near cap, the same point on the far cap, and two more points of a
/// triangle on the near cap; each only within the margin.
FS_HD int fsi_plane_cylinder(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  const fsReal* size = m->geom_size + 3 * g2;
  fsReal n[3] = {mat1[2], mat1[5], mat1[8]}, axis[3] = {mat2[2], mat2[5], mat2[8]};
  fsReal prjaxis = fsi_dot3(n, axis);
  if (prjaxis > 0) { // axis towards the plane
    for (int j = 0; j < 3; j++) axis[j] = -axis[j];
    prjaxis = -prjaxis;
  }
  fsReal vec[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  fsReal dist0 = fsi_dot3(vec, n);
  for (int j = 0; j < 3; j++) vec[j] = axis[j] * prjaxis - n[j]; // -normal off the axis
  fsReal len2 = fsi_dot3(vec, vec);
  if (len2 >= FS_MINVAL * FS_MINVAL) {
    fsReal scl = size[0] / fs_sqrt(len2);
    for (int j = 0; j < 3; j++) vec[j] *= scl;
  } else { // disk parallel to the plane: the cylinder's x axis
    for (int j = 0; j < 3; j++) vec[j] = mat2[3 * j] * size[0];
  }
  fsReal prjvec = fsi_dot3(vec, n);
  for (int j = 0; j < 3; j++) axis[j] *= size[1];
  prjaxis *= size[1];
  int cnt = 0;
  if (!(dist0 + prjaxis + prjvec <= margin)) return 0;
  fsi_cylinder_point(d, k + cnt++, dist0 + prjaxis + prjvec, pos2, vec, 1, axis, 1, n);
  if (dist0 - prjaxis + prjvec <= margin)
    fsi_cylinder_point(d, k + cnt++, dist0 - prjaxis + prjvec, pos2, vec, 1, axis, -1, n);
  fsReal prjvec1 = -prjvec * (fsReal)0.5;
  if (dist0 + prjaxis + prjvec1 <= margin) {
    fsReal side[3], dist = dist0 + prjaxis + prjvec1;
    fsi_cross(side, vec, axis);
    fsi_normalize3(side);
    fsReal scl = size[0] * fs_sqrt((fsReal)3) / 2;
    for (int j = 0; j < 3; j++) side[j] *= scl;
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
      fsReal pos[3];
      for (int j = 0; j < 3; j++) {
        pos[j] = sgn > 0 ? pos2[j] + side[j] : pos2[j] - side[j];
        pos[j] += axis[j];
        pos[j] += vec[j] * (fsReal)-0.5;
        pos[j] += n[j] * (-dist * (fsReal)0.5);
      }
      fsi_precon(d, k + cnt++, dist, pos, n, 0);
    }
  }
  return cnt;
}

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

/// Area of the quadrilateral a, b, c, d: half the norm of the cross product of its
/// diagonals (a - c) x (b - d).
FS_HD fsReal fsi_quad_area(const fsReal a[3], const fsReal b[3], const fsReal c[3],
                           const fsReal d[3]) {
  fsReal u[3] = {a[0] - c[0], a[1] - c[1], a[2] - c[2]};
  fsReal w[3] = {b[0] - d[0], b[1] - d[1], b[2] - d[2]}, x[3];
  fsi_cross(x, u, w);
  return fs_sqrt(fsi_dot3(x, x)) * (fsReal)0.5;
}

/// Reduce a hull polygon of n >= 5 vertices (ids poly[n], vertices vert) to a
/// quadrilateral that keeps position a (the support vertex): b, c, d start after a
/// and advance around the polygon while the area grows -- d first, then c, then b,
/// repeated (MuJoCo 3.16's search). Writes the positions b, c, d into sel.
FS_HD void fsi_polygon_quad(const fsReal* vert, const int* poly, int n, int a, int sel[3]) {
#define FSI_V(i) (vert + 3 * poly[i])
  int b = (a + 1) % n, c = (a + 2) % n, dd = (a + 3) % n;
  fsReal area = fsi_quad_area(FSI_V(a), FSI_V(b), FSI_V(c), FSI_V(dd));
  for (;;) {
    int d2 = (dd + 1) % n;
    fsReal next = fsi_quad_area(FSI_V(a), FSI_V(b), FSI_V(c), FSI_V(d2));
    if (!(area < next)) break;
    area = next;
    dd = d2;
    for (int c2 = (c + 1) % n;
         area < (next = fsi_quad_area(FSI_V(a), FSI_V(b), FSI_V(c2), FSI_V(dd)));
         c2 = (c + 1) % n) {
      area = next;
      c = c2;
    }
    for (int b2 = (b + 1) % n;
         area < (next = fsi_quad_area(FSI_V(a), FSI_V(b2), FSI_V(c), FSI_V(dd)));
         b2 = (b + 1) % n) {
      area = next;
      b = b2;
    }
  }
  sel[0] = b;
  sel[1] = c;
  sel[2] = dd;
#undef FSI_V
}

/// The hull polygon of mesh `mesh` at vertex v that faces the plane most (normal
/// most opposed to the plane normal ln, in the mesh frame); -1 if none.
FS_HD int fsi_facing_polygon(const fsModel* m, int mesh, int v, const fsReal ln[3]) {
  int va = m->mesh_vertadr[mesh] + v, pa = m->mesh_polyadr[mesh], ibest = -1;
  fsReal best = 1;
  for (int k = 0; k < m->mesh_polymapnum[va]; k++) {
    int p = m->mesh_polymap[m->mesh_polymapadr[va] + k];
    fsReal dot = fsi_dot3(ln, m->mesh_polynormal + 3 * (pa + p));
    if (best > dot) ibest = p;
    best = dot < best ? dot : best;
  }
  return ibest;
}

/// Plane (pos1, normal n) against convex mesh g2 beyond its support vertex v (MuJoCo
/// 3.16's mjc_PlaneConvex): the hull polygon at v that faces the plane, reduced to
/// 4 vertices if larger; each of its other vertices (after v, in polygon order) is
/// a contact if within the margin and not beyond the geom's centre. Writes from
/// slot k; returns how many.
FS_HD int fsi_plane_mesh_face(const fsModel* m, fsData* d, int k, int g2, int v, const fsReal n[3],
                              const fsReal pos1[3], fsReal margin) {
  int mesh = m->geom_dataid[g2];
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  fsReal ln[3] = {n[0] * mat2[0] + n[1] * mat2[3] + n[2] * mat2[6],
                  n[0] * mat2[1] + n[1] * mat2[4] + n[2] * mat2[7],
                  n[0] * mat2[2] + n[1] * mat2[5] + n[2] * mat2[8]};
  int p = fsi_facing_polygon(m, mesh, v, ln);
  if (p < 0) return 0;
  p += m->mesh_polyadr[mesh];
  const int* poly = m->mesh_polyvert + m->mesh_polyvertadr[p];
  int nv = m->mesh_polyvertnum[p], a = 0, sel[3], count = 0;
  while (a < nv && poly[a] != v) a++;
  if (a == nv) a = 0;
  const fsReal* vert = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
  if (nv >= 5)
    fsi_polygon_quad(vert, poly, nv, a, sel);
  else
    for (int j = 0; j < 3; j++) sel[j] = (a + 1 + j) % nv;
  int nsel = nv >= 5 ? 3 : nv - 1;
  for (int j = 0; j < nsel; j++) {
    fsReal pnt[3], dif[3], rel[3];
    fsi_mul_mat_vec3(pnt, mat2, vert + 3 * poly[sel[j]]);
    for (int i = 0; i < 3; i++) {
      pnt[i] += pos2[i];
      dif[i] = pnt[i] - pos1[i];
      rel[i] = pnt[i] - pos2[i];
    }
    fsReal dist = fsi_dot3(n, dif);
    if (dist > margin || fsi_dot3(n, rel) > 0) continue;
    fsReal s = dist * (fsReal)-0.5;
    for (int i = 0; i < 3; i++) pnt[i] += n[i] * s;
    fsi_precon(d, k + count++, dist, pnt, n, 0);
  }
  return count;
}

/// Plane against an ellipsoid or a convex mesh g2 (mjc_PlaneConvex, MuJoCo 3.16):
/// the support point along -normal if within the margin; for a mesh up to three
/// more contacts from the hull polygon at the support vertex (fsi_plane_mesh_face).
FS_HD int fsi_plane_convex(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  fsReal n[3] = {mat1[2], mat1[5], mat1[8]}, dir[3] = {-mat1[2], -mat1[5], -mat1[8]};
  fsReal ldir[3] = {mat2[0] * dir[0] + mat2[3] * dir[1] + mat2[6] * dir[2],
                    mat2[1] * dir[0] + mat2[4] * dir[1] + mat2[7] * dir[2],
                    mat2[2] * dir[0] + mat2[5] * dir[1] + mat2[8] * dir[2]};
  int mesh = m->geom_dataid[g2], v = -1;
  fsReal sup[3];
  if (mesh < 0) {
    fsi_ellipsoid_support(m, d, g2, ldir, sup);
  } else {
    v = fsi_mesh_support(m, mesh, ldir);
    fsi_mul_mat_vec3(sup, mat2, m->mesh_vert + 3 * (m->mesh_vertadr[mesh] + v));
    for (int j = 0; j < 3; j++) sup[j] += pos2[j];
  }
  fsReal dif[3] = {sup[0] - pos1[0], sup[1] - pos1[1], sup[2] - pos1[2]};
  fsReal dist = fsi_dot3(n, dif);
  if (dist > margin) return 0;
  fsReal pos[3], s = dist * (fsReal)-0.5;
  for (int j = 0; j < 3; j++) pos[j] = sup[j] + n[j] * s;
  fsi_precon(d, k, dist, pos, n, 0);
  if (mesh < 0 || m->mesh_polynum[mesh] == 0) return 1;
  return 1 + fsi_plane_mesh_face(m, d, k + 1, g2, v, n, pos1, margin);
}

/// Relative slack of fsi_beyond_box: far above the rounding of the box-frame coordinates
/// and of the collision functions' own tests in either precision (float32's epsilon is
/// 6e-8), far below any gap that matters to the early exit.
#define FSI_BEYOND_SLACK ((fsReal)1e-4)

/// 1 if the box-frame interval c +- ext on some axis of the box (half-sizes size) lies
/// wholly outside the box's slab on that axis by more than reach plus a rounding slack:
/// then a shape within reach of that interval is farther than the margin from the box,
/// and MuJoCo's collision function makes no contact. Not in MuJoCo: an early exit that
/// changes no result (fsi_capsule_box: the segment, reach radius + margin, and every
/// sphere it tests lies on the segment; fsi_box_mesh: the mesh's centre, reach its
/// bounding radius + margin). NaN coordinates never exit early.
FS_HD int fsi_beyond_box(const fsReal c[3], const fsReal ext[3], const fsReal size[3],
                         fsReal reach) {
  fsReal scale = fs_abs(c[0]) + fs_abs(c[1]) + fs_abs(c[2]) + reach;
  for (int j = 0; j < 3; j++) {
    fsReal lim = size[j] + reach;
    if (fs_abs(c[j]) - ext[j] > lim + (scale + ext[j] + lim) * FSI_BEYOND_SLACK) return 1;
  }
  return 0;
}

#include "common/engine/stage_collision_convex.h"
/// x clipped to [-limit, limit] where limit > 0 (MuJoCo's mju_clip in mju_clampVec).
FS_HD fsReal fsi_clamp_to(fsReal x, fsReal limit) {
  if (!(limit > 0)) return x;
  if (x < -limit) return -limit;
  if (x > limit) return limit;
  return x;
}

/// Sphere of radius r at pos1 against box (pos2, mat2, half-sizes size2), into slot k
/// (mjraw_SphereBox): the box point nearest the centre, or, with the centre inside,
/// the nearest face. 1 contact if within margin.
FS_HD int fsi_sphere_box(fsData* d, int k, fsReal margin, const fsReal pos1[3], fsReal r,
                         const fsReal pos2[3], const fsReal mat2[9], const fsReal size2[3]) {
  fsReal tmp[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  fsReal center[3], clamped[3], deepest[3], pos[3], normal[3];
  for (int i = 0; i < 3; i++) // the centre in the box frame
    center[i] = mat2[i] * tmp[0] + mat2[3 + i] * tmp[1] + mat2[6 + i] * tmp[2];
  for (int i = 0; i < 3; i++) {
    clamped[i] = fsi_clamp_to(center[i], size2[i]);
    deepest[i] = center[i];
    tmp[i] = clamped[i] - center[i];
  }
  fsReal dist = fsi_normalize3(tmp);
  if (dist - r > margin) return 0;
  if (dist <= FS_MINVAL) { // centre inside the box: the nearest face
    fsReal closest = (size2[0] + size2[1] + size2[2]) * 2;
    int face = 0;
    for (int i = 0; i < 6; i++) {
      fsReal gap = fs_abs((i % 2 ? size2[i / 2] : -size2[i / 2]) - center[i / 2]);
      if (closest > gap) {
        closest = gap;
        face = i;
      }
    }
    fsReal nearest[3] = {0, 0, 0};
    nearest[face / 2] = face % 2 ? -1 : 1;
    fsReal s = (r - closest) / 2;
    for (int i = 0; i < 3; i++) pos[i] = center[i] + nearest[i] * s;
    fsi_mul_mat_vec3(normal, mat2, nearest);
    dist = -closest;
  } else {
    for (int i = 0; i < 3; i++) {
      deepest[i] += tmp[i] * r;
      pos[i] = 0;
      pos[i] += clamped[i] * (fsReal)0.5;
      pos[i] += deepest[i] * (fsReal)0.5;
    }
    fsi_mul_mat_vec3(normal, mat2, tmp);
  }
  fsReal w[3];
  fsi_mul_mat_vec3(w, mat2, pos);
  for (int i = 0; i < 3; i++) w[i] += pos2[i];
  fsi_precon(d, k, dist - r, w, normal, 0);
  return 1;
}

/// Sphere g1 against box g2 (mjc_SphereBox).
FS_HD int fsi_sphere_box_pair(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  return fsi_sphere_box(d, k, margin, d->geom_xpos + 3 * g1, m->geom_size[3 * g1],
                        d->geom_xpos + 3 * g2, d->geom_xmat + 9 * g2, m->geom_size + 3 * g2);
}

/// Capsule g1 against box g2 (mjc_CapsuleBox, MuJoCo's mjraw_CapsuleBox operation for
/// operation): in the box frame, the point of the capsule's segment closest to the box
/// -- the segment's ends against the faces, then the segment against each of the 12
/// edges (clamped line-line distance) -- and, unless the capsule points at the closest
/// corner or crosses the closest edge in a T, a second point along the segment where it
/// leaves the box's face or edge; a sphere-box contact at each (fsi_sphere_box). At
/// most 2 contacts. A segment wholly beyond a face slab exits first
/// (fsi_beyond_box): most culled candidates on the terrains are such.
FS_HD int fsi_capsule_box(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  const fsReal *size1 = m->geom_size + 3 * g1, *size2 = m->geom_size + 3 * g2;
  fsReal halflength = size1[1], tmp1[3], tmp2[3], pos[3], axis[3], halfaxis[3];
  fsReal secondpos = -4; // no second contact (valid values are in [-2, 2])
  for (int i = 0; i < 3; i++) tmp1[i] = pos1[i] - pos2[i];
  for (int i = 0; i < 3; i++) // capsule centre and axis in the box frame
    pos[i] = mat2[i] * tmp1[0] + mat2[3 + i] * tmp1[1] + mat2[6 + i] * tmp1[2];
  tmp1[0] = mat1[2];
  tmp1[1] = mat1[5];
  tmp1[2] = mat1[8];
  for (int i = 0; i < 3; i++)
    axis[i] = mat2[i] * tmp1[0] + mat2[3 + i] * tmp1[1] + mat2[6 + i] * tmp1[2];
  for (int i = 0; i < 3; i++) halfaxis[i] = axis[i] * halflength;
  fsReal ext[3] = {fs_abs(halfaxis[0]), fs_abs(halfaxis[1]), fs_abs(halfaxis[2])};
  if (fsi_beyond_box(pos, ext, size2, size1[0] + margin)) return 0;
  int axisdir = (halfaxis[0] > 0) + 2 * (halfaxis[1] > 0) + 4 * (halfaxis[2] > 0);
  fsReal bestdistmax = margin + 2 * (size1[0] + halflength + size2[0] + size2[1] + size2[2]);
  fsReal bestdist = bestdistmax, bestsegmentpos = 0, bestboxpos = 0;
  int cltype = -4, clface = -1, clcorner = 0, cledge = 0;

  // the segment's ends against the faces (an end outside at most one slab)
  for (int i = -1; i <= 1; i += 2) {
    int c1 = 0, c2 = -1;
    for (int j = 0; j < 3; j++) {
      tmp1[j] = pos[j] + halfaxis[j] * (fsReal)i;
      tmp2[j] = tmp1[j];
    }
    for (int j = 0; j < 3; j++) {
      if (tmp1[j] < -size2[j]) {
        c1++;
        c2 = j;
        tmp1[j] = -size2[j];
      } else if (tmp1[j] > size2[j]) {
        c1++;
        c2 = j;
        tmp1[j] = size2[j];
      }
    }
    if (c1 > 1) continue;
    for (int j = 0; j < 3; j++) tmp1[j] -= tmp2[j];
    fsReal dist = fsi_dot3(tmp1, tmp1);
    if (dist < bestdist) {
      bestdist = dist;
      bestsegmentpos = (fsReal)i;
      cltype = -2 + i;
      clface = c2;
    }
  }

  // the segment against the 12 edges: edge j from corner i (bit j clear)
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < 8; i++) {
      if (i & (1 << j)) continue;
      fsReal tmp3[3] = {(i & 1) ? size2[0] : -size2[0], (i & 2) ? size2[1] : -size2[1],
                        (i & 4) ? size2[2] : -size2[2]};
      tmp3[j] = 0;
      fsReal dif[3] = {tmp3[0] - pos[0], tmp3[1] - pos[1], tmp3[2] - pos[2]};
      fsReal ma = size2[j] * size2[j], mb = -size2[j] * halfaxis[j], mc = size1[1] * size1[1];
      fsReal u = -size2[j] * dif[j], v = fsi_dot3(halfaxis, dif);
      fsReal det = ma * mc - mb * mb;
      if (fs_abs(det) < FS_MINVAL) continue;
      fsReal idet = 1 / det;
      fsReal x1 = (mc * u - mb * v) * idet, x2 = (ma * v - mb * u) * idet;
      int s1 = 1, s2 = 1; // 1: inside the segment/edge, 0 or 2: at one end
      if (x1 > 1) {
        x1 = 1;
        s1 = 2;
        x2 = (v - mb) * (1 / mc);
      } else if (x1 < -1) {
        x1 = -1;
        s1 = 0;
        x2 = (v + mb) * (1 / mc);
      }
      if (x2 > 1) {
        x2 = 1;
        s2 = 2;
        x1 = (u - mb) * (1 / ma);
        if (x1 > 1) {
          x1 = 1;
          s1 = 2;
        } else if (x1 < -1) {
          x1 = -1;
          s1 = 0;
        }
      } else if (x2 < -1) {
        x2 = -1;
        s2 = 0;
        x1 = (u + mb) * (1 / ma);
        if (x1 > 1) {
          x1 = 1;
          s1 = 2;
        } else if (x1 < -1) {
          x1 = -1;
          s1 = 0;
        }
      }
      for (int a = 0; a < 3; a++) {
        dif[a] = tmp3[a] - pos[a];
        dif[a] += halfaxis[a] * -x2;
      }
      dif[j] += size2[j] * x1;
      fsReal dist = fsi_dot3(dif, dif);
      int c1 = s1 * 3 + s2;
      if (dist < bestdist - FS_MINVAL) {
        bestdist = dist;
        bestsegmentpos = x2;
        bestboxpos = x1;
        clcorner = i + (1 << j) * (c1 / 6);
        cledge = j;
        cltype = c1;
      }
    }
  }
  if (cltype == -4) return 0;

  // the second point along the segment
  fsReal mul = 0, e1, e2;
  int ax = 0, ax1 = 0, ax2 = 0;
  if (cltype >= 0 && cltype / 3 != 1) { // a corner of the box is closest
    int c1 = axisdir ^ clcorner;
    fsReal de = 0, dp = 0;
    if (c1 == 0 || c1 == 7) goto skip; // pointing at (or away from) the corner
    if (c1 == 1 || c1 == 2 || c1 == 4) {
      mul = 1;
      de = 1 - bestsegmentpos;
      dp = 1 + bestsegmentpos;
    } else { // 3, 5, 6
      mul = -1;
      c1 = 7 - c1;
      dp = 1 - bestsegmentpos;
      de = 1 + bestsegmentpos;
    }
    if (c1 == 1) ax = 0, ax1 = 1, ax2 = 2;
    if (c1 == 2) ax = 1, ax1 = 2, ax2 = 0;
    if (c1 == 4) ax = 2, ax1 = 0, ax2 = 1;
    if (axis[ax] * axis[ax] > (fsReal)0.5) { // along the box's edge
      secondpos = de;
      e1 = 2 * size2[ax] / fs_abs(halfaxis[ax]);
      if (e1 < secondpos) secondpos = e1;
      secondpos *= mul;
    } else { // along a face of the box
      secondpos = dp;
      e1 = 2 * size2[ax1] / fs_abs(halfaxis[ax1]);
      if (e1 < secondpos) secondpos = e1;
      e1 = 2 * size2[ax2] / fs_abs(halfaxis[ax2]);
      if (e1 < secondpos) secondpos = e1;
      secondpos *= -mul;
    }
  } else if (cltype >= 0) { // the middle of an edge is closest
    int c1 = (axisdir ^ clcorner) & (7 - (1 << cledge));
    if (c1 != 1 && c1 != 2 && c1 != 4) goto skip; // a T: no second point
    if (cledge == 0) ax1 = 1, ax2 = 2;
    if (cledge == 1) ax1 = 2, ax2 = 0;
    if (cledge == 2) ax1 = 0, ax2 = 1;
    ax = cledge;
    if (fs_abs(axis[ax1]) > fs_abs(axis[ax2])) ax1 = ax2; // the face at the lower angle
    ax2 = 3 - ax - ax1;
    if (c1 & (1 << ax2)) {
      mul = 1;
      secondpos = 1 - bestsegmentpos;
    } else {
      mul = -1;
      secondpos = 1 + bestsegmentpos;
    }
    e1 = 2 * size2[ax2] / fs_abs(halfaxis[ax2]);
    if (e1 < secondpos) secondpos = e1;
    if (((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0))
      e2 = 1 - bestboxpos;
    else
      e2 = 1 + bestboxpos;
    e1 = size2[ax] * e2 / fs_abs(halfaxis[ax]);
    if (e1 < secondpos) secondpos = e1;
    secondpos *= mul;
  } else {                       // an end of the segment is closest to a face
    if (clface == -1) goto skip; // the end is inside the box
    mul = cltype == -3 ? 1 : -1;
    secondpos = 2;
    for (int i = 0; i < 3; i++) tmp1[i] = pos[i] + halfaxis[i] * -mul;
    for (int i = 0; i < 3; i++) {
      if (i == clface) continue;
      e1 = (size2[i] - tmp1[i]) / halfaxis[i] * mul;
      if (e1 > 0 && e1 < secondpos) secondpos = e1;
      e1 = (-size2[i] - tmp1[i]) / halfaxis[i] * mul;
      if (e1 > 0 && e1 < secondpos) secondpos = e1;
    }
    secondpos *= mul;
  }

skip:; // a sphere at the closest point of the segment, then at the second point
  for (int i = 0; i < 3; i++) tmp1[i] = pos[i] + halfaxis[i] * bestsegmentpos;
  fsi_mul_mat_vec3(tmp2, mat2, tmp1);
  for (int i = 0; i < 3; i++) tmp2[i] += pos2[i];
  int n = fsi_sphere_box(d, k, margin, tmp2, size1[0], pos2, mat2, size2);
  if (secondpos > -3) {
    fsReal s = secondpos + bestsegmentpos;
    for (int i = 0; i < 3; i++) tmp1[i] = pos[i] + halfaxis[i] * s;
    fsi_mul_mat_vec3(tmp2, mat2, tmp1);
    for (int i = 0; i < 3; i++) tmp2[i] += pos2[i];
    n += fsi_sphere_box(d, k + n, margin, tmp2, size1[0], pos2, mat2, size2);
  }
  return n;
}

/// The pair's geoms as MuJoCo collides them: lower geom type first.
FS_HD void fsi_pair_geoms(const fsModel* m, int p, int* g1, int* g2) {
  int a = m->pair_geom1[p], b = m->pair_geom2[p];
  int swap = m->geom_type[a] > m->geom_type[b];
  *g1 = swap ? b : a;
  *g2 = swap ? a : b;
}

/// The pair's margin (opt.o_margin under the override flag).
FS_HD fsReal fsi_pair_margin(const fsModel* m, int p) {
  return (m->enableflags & FS_ENBL_OVERRIDE) ? m->o_margin : m->pair_margin[p];
}

/// MuJoCo's bounding-sphere pre-test of pair p (mj_filterSphere, in
/// filterCollisionPair): 1 if the pair cannot touch within margin (margin + gap).
/// Two bounded geoms: their centres farther apart than the sum of their bounding
/// radii and the margin (summed in the pair's geom order); a plane and a bounded
/// geom: the geom's centre farther above the plane than its radius and the margin.
FS_HD int fsi_pair_filtered(const fsModel* m, const fsData* d, int p, fsReal margin) {
  int a = m->pair_geom1[p], b = m->pair_geom2[p];
  fsReal ra = m->geom_rbound[a], rb = m->geom_rbound[b];
  if (ra > 0 && rb > 0) {
    const fsReal *pa = d->geom_xpos + 3 * a, *pb = d->geom_xpos + 3 * b;
    fsReal dif[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
    fsReal bound = ra + rb + margin;
    return dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] > bound * bound;
  }
  for (int s = 0; s < 2; s++) {
    int g1 = s ? b : a, g2 = s ? a : b; // g1 the plane
    if (m->geom_type[g1] != FS_GEOM_PLANE || !(m->geom_rbound[g2] > 0)) continue;
    const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
    const fsReal* pos2 = d->geom_xpos + 3 * g2;
    fsReal n[3] = {mat1[2], mat1[5], mat1[8]};
    fsReal dif[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
    if (fsi_dot3(dif, n) > margin + m->geom_rbound[g2]) return 1;
  }
  return 0;
}

/// Box-mesh pairs in this build's step (FSI_CONVEX): the host builds always; on the device
/// only the kernels compiled with FS_DEVICE_CONVEX (cuda/replay_convex.cu's replay
/// kernel, cuda/device.cu's checker kernels), which the cuda backend launches for
/// models with box-mesh pairs (nccdwork > 0). The collider is a call with a large register
/// footprint: compiled into every model's replay kernel it cost that kernel spills around
/// the call (ptxas, sm_90), so the other replay kernels leave it out, and trap if handed
/// a model with box-mesh pairs (never silently without their contacts).
#if !defined(__CUDA_ARCH__) || defined(FS_DEVICE_CONVEX)
#define FSI_CONVEX 1
#else
#define FSI_CONVEX 0
#endif

/// 1 if pair p is box against mesh: MuJoCo's convex collider, with a lane's scratch.
FS_HD int fsi_pair_convex(const fsModel* m, int p) {
  int t1 = m->geom_type[m->pair_geom1[p]], t2 = m->geom_type[m->pair_geom2[p]];
  return (t1 == FS_GEOM_BOX && t2 == FS_GEOM_MESH) || (t1 == FS_GEOM_MESH && t2 == FS_GEOM_BOX);
}

/// Narrowphase of pair p into slots k.. (its bound, pair_maxcon[p]); returns the number
/// of contacts. The pair is skipped by MuJoCo's bounding-sphere pre-test
/// (fsi_pair_filtered), then collided with margin + gap by the collision function of
/// its geom types (MuJoCo's mjCOLLISIONFUNC, lower type first): one case per pair type.
/// w: the lane's scratch for a box-mesh pair (fsi_pair_convex), else unused.
FS_HD int fsi_collide_pair_at(const fsModel* m, fsData* d, int p, int k, fsiCcdWork* w) {
  int g1, g2;
  fsi_pair_geoms(m, p, &g1, &g2);
  fsReal margin = fsi_pair_margin(m, p) + m->pair_gap[p];
  if (fsi_pair_filtered(m, d, p, margin)) return 0;
  int t2 = m->geom_type[g2];
  switch (m->geom_type[g1]) {
  case FS_GEOM_PLANE:
    switch (t2) {
    case FS_GEOM_SPHERE:
      return fsi_plane_sphere(d, k, d->geom_xpos + 3 * g1, d->geom_xmat + 9 * g1,
                              d->geom_xpos + 3 * g2, m->geom_size[3 * g2], margin);
    case FS_GEOM_CAPSULE:
      return fsi_plane_capsule(m, d, k, g1, g2, margin);
    case FS_GEOM_CYLINDER:
      return fsi_plane_cylinder(m, d, k, g1, g2, margin);
    case FS_GEOM_BOX:
      return fsi_plane_box(m, d, k, g1, g2, margin);
    case FS_GEOM_ELLIPSOID:
    case FS_GEOM_MESH:
      return fsi_plane_convex(m, d, k, g1, g2, margin);
    default: // refused by the model check
      return 0;
    }
  case FS_GEOM_SPHERE:
    return t2 == FS_GEOM_BOX ? fsi_sphere_box_pair(m, d, k, g1, g2, margin) : 0;
  case FS_GEOM_CAPSULE:
    return t2 == FS_GEOM_BOX ? fsi_capsule_box(m, d, k, g1, g2, margin) : 0;
  case FS_GEOM_BOX: // common/engine/stage_collision_convex.h
#if FSI_CONVEX
    return t2 == FS_GEOM_MESH ? fsi_box_mesh(m, d, k, g1, g2, margin, w) : 0;
#else
    (void)w;
    return 0; // not reached: fs_collision traps first
#endif
  default: // refused by the model check
    return 0;
  }
}

/// MuJoCo's mju_makeFrame: f[0..2] the normal (normalized again), f[3..5] a
/// tangent or 0 (then y, or z if the normal is near y), made orthonormal; f[6..8]
/// their cross product.
FS_HD void fsi_make_frame(fsReal f[9]) {
  fsi_normalize3(f);
  if (fsi_dot3(f + 3, f + 3) < (fsReal)0.25) {
    f[3] = f[4] = f[5] = 0;
    if (f[1] < (fsReal)0.5 && f[1] > (fsReal)-0.5)
      f[4] = 1;
    else
      f[5] = 1;
  }
  fsReal s = fsi_dot3(f, f + 3);
  for (int j = 0; j < 3; j++) f[3 + j] -= f[j] * s;
  fsi_normalize3(f + 3);
  fsi_cross(f + 6, f, f + 3);
}

/// Contact c from slot k of pair p: geometry, frame and the pair's parameters
/// (mj_setContact; the override flag replaces margin, solref, solreffriction,
/// solimp and friction with opt's).
FS_HD void fsi_set_contact(const fsModel* m, fsData* d, int c, int k, int p) {
  int ovr = (m->enableflags & FS_ENBL_OVERRIDE) != 0;
  fsReal dist = d->precon_dist[k], margin = fsi_pair_margin(m, p);
  fsReal adhesion = m->pair_adhesion[p];
  d->contact_dist[c] = dist;
  fsi_copy(d->contact_pos + 3 * c, d->precon_pos + 3 * k, 3);
  fsReal* f = d->contact_frame + 9 * c;
  fsi_copy(f, d->precon_normal + 3 * k, 3);
  fsi_copy(f + 3, d->precon_tangent + 3 * k, 3);
  fsi_make_frame(f);
  d->contact_includemargin[c] = margin;
  d->contact_adhesion[c] = adhesion;
  const fsReal* fr = ovr ? m->o_friction : m->pair_friction + 5 * p;
  for (int j = 0; j < 5; j++) d->contact_friction[5 * c + j] = fr[j] > FS_MINMU ? fr[j] : FS_MINMU;
  const fsReal* sr = m->pair_solreffriction + FS_NREF * p;
  int has_srf = sr[0] != 0 || sr[1] != 0;
  for (int j = 0; j < FS_NREF; j++) {
    d->contact_solref[FS_NREF * c + j] = ovr ? m->o_solref[j] : m->pair_solref[FS_NREF * p + j];
    d->contact_solreffriction[FS_NREF * c + j] = ovr ? m->o_solref[j] : (has_srf ? sr[j] : 0);
  }
  for (int j = 0; j < FS_NIMP; j++)
    d->contact_solimp[FS_NIMP * c + j] = ovr ? m->o_solimp[j] : m->pair_solimp[FS_NIMP * p + j];
  // beyond the margin (in the gap): excluded, unless adhesive (then normal only)
  int in_gap = dist >= margin;
  d->contact_exclude[c] = in_gap && adhesion == 0;
  d->contact_dim[c] = (adhesion != 0 && in_gap) ? 1 : m->pair_dim[p];
  fsi_pair_geoms(m, p, d->contact_geom + 2 * c, d->contact_geom + 2 * c + 1);
  d->contact_pair[c] = p;
}

/// Set bits of x (the device's population count; on the host the bit-parallel sum, which
/// compiles inline where __builtin_popcount without -mpopcnt is a library call).
FS_HD int fsi_popcount(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0fu;
  return (int)((x * 0x01010101u) >> 24);
#endif
}

/// Index of x's lowest set bit, x != 0: the bits below it counted (on the device not
/// __ffs, whose bfind.shiftamt the GPU simulator cannot parse; the same few instructions).
FS_HD int fsi_lowest_bit(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc((x & (0u - x)) - 1u);
#else
  return __builtin_ctz(x);
#endif
}

/// ncand and cand_overflow from the candidates found (total, the always-tested pairs
/// included): those beyond ncandmax dropped, counted and warned (CONTACTFULL). One lane.
FS_HD void fsi_cand_count(const fsModel* m, fsData* d, int total) {
  d->ncand[0] = total < m->ncandmax ? total : m->ncandmax;
  d->cand_overflow[0] = total - d->ncand[0];
  if (d->cand_overflow[0]) d->warning_number[FS_WARN_CONTACTFULL]++;
}

/// The world's candidate pairs in pair order (cand_pair, ncand): every pair when the model
/// culls none; else the pairs tested every step (always_pair) and those of each moving
/// geom's static geoms near it (common/engine/cull.h), ranked by pair id. More than ncandmax:
/// the first ncandmax kept (by geom, not pair order), the rest counted in cand_overflow
/// and MuJoCo's CONTACTFULL warning raised: a problem world, never silent.
///
/// Pair order through a bitmap of the pair ids (distinct): cand_bits, a bit a pair, and
/// cand_used, a bit a word of it; a word's bits are valid only where its cand_used bit is
/// set, so a step clears only cand_used (ncandblock words: 45 on blocks, not its 1,439).
/// A lane owns the 32-word blocks b with b % FS_NLANE == its lane (no two lanes write a
/// word); lane 0 visits the words in use in order, counting the candidates before each
/// (cand_below); a candidate's place is that count plus the bits below its own.
FS_HD FS_FORCEINLINE void fsi_candidates(const fsModel* m, fsData* d) {
  if (!m->ncullgeom) {
    FS_FOR_LANE(i, m->npair) d->cand_pair[i] = i;
    FS_LANE0 {
      d->ncand[0] = m->npair;
      d->cand_overflow[0] = 0;
    }
    FS_SYNC();
    return;
  }
  FS_FOR_LANE(i, m->nalways) d->cand_raw[i] = m->always_pair[i];
#ifdef FS_ONE_LANE // one pass: each geom's candidates where the ones before it ended
  int total = m->nalways;
  for (int i = 0; i < m->ncullgeom; i++) {
    int room = m->ncandmax - total;
    total += fsi_cull_query(m, d, i, room > 0 ? d->cand_raw + total : NULL, room);
  }
  fsi_cand_count(m, d, total);
#else // lanes count each geom's, lane 0 places each geom's first, lanes write them
  FS_FOR_LANE(i, m->ncullgeom) d->cand_gnum[i] = fsi_cull_query(m, d, i, 0, 0);
  FS_SYNC();
  FS_LANE0 {
    int n = m->nalways;
    for (int i = 0; i < m->ncullgeom; i++) {
      d->cand_gadr[i] = n;
      n += d->cand_gnum[i];
    }
    fsi_cand_count(m, d, n);
  }
  FS_SYNC();
  FS_FOR_LANE(i, m->ncullgeom) {
    int adr = d->cand_gadr[i];
    if (adr < m->ncandmax) fsi_cull_query(m, d, i, d->cand_raw + adr, m->ncandmax - adr);
  }
#endif
  FS_FOR_LANE(b, m->ncandblock) d->cand_used[b] = 0;
  FS_SYNC();
  int ncand = d->ncand[0];
  for (int i = 0; i < ncand; i++) {
    int p = d->cand_raw[i], w = p >> 5, b = p >> 10;
    if (b % FS_NLANE != FS_LANE) continue;
    unsigned wbit = 1u << (w & 31), bit = 1u << (p & 31);
    if ((unsigned)d->cand_used[b] & wbit) {
      d->cand_bits[w] |= (int)bit;
    } else {
      d->cand_used[b] |= (int)wbit;
      d->cand_bits[w] = (int)bit;
    }
  }
  FS_SYNC();
  FS_LANE0 {
    int n = 0;
    for (int b = 0; b < m->ncandblock; b++) {
      for (unsigned u = (unsigned)d->cand_used[b]; u; u &= u - 1) {
        int w = 32 * b + fsi_lowest_bit(u);
        d->cand_below[w] = n;
        n += fsi_popcount((unsigned)d->cand_bits[w]);
      }
    }
  }
  FS_SYNC();
  FS_FOR_LANE(i, ncand) {
    int p = d->cand_raw[i], w = p >> 5;
    unsigned below = (unsigned)d->cand_bits[w] & ((1u << (p & 31)) - 1u);
    d->cand_pair[d->cand_below[w] + fsi_popcount(below)] = p;
  }
  FS_SYNC();
}

/// mj_collision for the explicit pairs: ncon and contact_* in MuJoCo's order. The
/// candidates (fsi_candidates) each write up to their pair's bound into their nslot slots
/// of precon_*; one lane counts them in candidate (= pair) order; lanes move each slot's
/// contact to its place. Contacts beyond nconmax are dropped, counted in
/// contact_overflow and warned (MuJoCo's CONTACTFULL); none with nconmax = nprecon.
FS_HD FS_FORCEINLINE void fs_collision(const fsModel* m, fsData* d) {
  if ((m->disableflags & (FS_DSBL_CONSTRAINT | FS_DSBL_CONTACT)) || m->nbody < 2 || !m->nprecon) {
    FS_LANE0 d->ncon[0] = d->contact_overflow[0] = d->ncand[0] = d->cand_overflow[0] = 0;
    FS_SYNC();
    return;
  }
  fsi_candidates(m, d);
  int ncand = d->ncand[0], nslot = m->nslot;
#if !FSI_CONVEX
  if (m->nccdwork) __trap(); // a kernel without the box-mesh collider (FSI_CONVEX)
#endif
  if (!FSI_CONVEX || !m->nccdwork) {
    FS_FOR_LANE(i, ncand) {
      d->cand_ncon[i] = fsi_collide_pair_at(m, d, d->cand_pair[i], i * nslot, NULL);
    }
  } else { // box-mesh pairs on the first FS_CCD_LANES lanes, each with its scratch
    FS_FOR_LANE(i, ncand) {
      int p = d->cand_pair[i];
      if (!fsi_pair_convex(m, p)) d->cand_ncon[i] = fsi_collide_pair_at(m, d, p, i * nslot, NULL);
    }
    int nl = FS_NLANE < FS_CCD_LANES ? FS_NLANE : FS_CCD_LANES;
    if (FS_LANE < nl) {
      fsiCcdWork* w = (fsiCcdWork*)(d->ccd_work + FS_LANE * FS_CCD_WORK_DOUBLES);
      for (int i = FS_LANE; i < ncand; i += nl) {
        int p = d->cand_pair[i];
        if (fsi_pair_convex(m, p)) d->cand_ncon[i] = fsi_collide_pair_at(m, d, p, i * nslot, w);
      }
    }
  }
  FS_SYNC();
  FS_LANE0 { // the candidates' first contacts, in pair order
    int n = 0;
    for (int i = 0; i < ncand; i++) {
      d->cand_conout[i] = n;
      n += d->cand_ncon[i];
    }
    d->ncon[0] = n < m->nconmax ? n : m->nconmax;
    d->contact_overflow[0] = n - d->ncon[0];
    if (d->contact_overflow[0]) d->warning_number[FS_WARN_CONTACTFULL]++;
  }
  FS_SYNC();
  FS_FOR_LANE(k, ncand * nslot) {
    int i = k / nslot, j = k - i * nslot, c = d->cand_conout[i] + j;
    if (j < d->cand_ncon[i] && c < m->nconmax) fsi_set_contact(m, d, c, k, d->cand_pair[i]);
  }
  FS_SYNC();
}

#endif
