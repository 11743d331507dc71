// Primitive colliders of the collision stage: a plane against a sphere, capsule, cylinder
// or box (MuJoCo's mjc_PlaneSphere, mjc_PlaneCapsule, mjc_PlaneCylinder, mjc_PlaneBox of
// engine_collision_primitive.c), a sphere against a sphere, capsule or cylinder and a capsule
// against a capsule (mjc_SphereSphere, mjc_SphereCapsule, mjc_SphereCylinder,
// mjc_CapsuleCapsule) and a plane against an ellipsoid or a
// convex mesh (mjc_PlaneConvex, in MuJoCo's engine_collision_convex.c; a direct test, no GJK, so
// here with the planes, as MuJoCo Warp's collision_primitive.py holds it): the support point along
// -normal (collision_support.h), then, for a mesh, up to three more vertices of the hull polygon
// there that faces the plane. 3.16's plane-mesh differs from the 3.12 source (which adds
// up to two graph neighbours): docs/engine/collision.md, "The colliders", says how the
// 3.16 algorithm was established.
//
// The geometry is MuJoCo 3.16's, operation for operation (so that float64 results are
// bit-identical). Every collider of the stage writes its contacts from slot k of the
// precon scratch (fsi_precon, MuJoCo's mjPreContact) and returns how many; the driver
// (stage_collision.h) dispatches to them by geom type pair.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_PRIMITIVE_H
#define FLYSIM_COMMON_ENGINE_COLLISION_PRIMITIVE_H

#include "common/engine/collision_support.h"

// On the device a collider only the convex kernels run (fsi_convex_kernel_types) is a call,
// not inlined into their collision loop (ptxas, sm_90: inlined, it cost them spills).
#ifdef __CUDACC__
#define FSI_PRIMITIVE_NOINLINE __noinline__
#else
#define FSI_PRIMITIVE_NOINLINE
#endif

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

/// Sphere against sphere (mjraw_SphereSphere): centres pos1, pos2 (frames mat1, mat2: their z
/// axes give the normal where the centres coincide), radii r1, r2, into slot k. 1 contact if
/// the surfaces are within margin: the normal from 1 to 2, the point midway between the
/// surfaces along it.
FS_HD int fsi_sphere_sphere(fsData* d, int k, fsReal margin, const fsReal pos1[3],
                            const fsReal mat1[9], fsReal r1, const fsReal pos2[3],
                            const fsReal mat2[9], fsReal r2) {
  fsReal dif[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  fsReal cdist_sqr = fsi_dot3(dif, dif), min_dist = margin + r1 + r2;
  if (cdist_sqr > min_dist * min_dist) return 0;
  fsReal dist = fs_sqrt(cdist_sqr) - r1 - r2;
  fsReal n[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  if (fsi_normalize3(n) < FS_MINVAL) { // coincident centres: the z axes' cross product
    fsReal z1[3] = {mat1[2], mat1[5], mat1[8]}, z2[3] = {mat2[2], mat2[5], mat2[8]};
    fsi_cross(n, z1, z2);
    fsi_normalize3(n);
  }
  fsReal s = r1 + dist / 2, pos[3];
  for (int i = 0; i < 3; i++) pos[i] = n[i] * s + pos1[i];
  fsi_precon(d, k, dist, pos, n, 0);
  return 1;
}

/// Sphere g1 against sphere g2 (mjc_SphereSphere).
FS_HD int fsi_sphere_sphere_pair(const fsModel* m, fsData* d, int k, int g1, int g2,
                                 fsReal margin) {
  return fsi_sphere_sphere(d, k, margin, d->geom_xpos + 3 * g1, d->geom_xmat + 9 * g1,
                           m->geom_size[3 * g1], d->geom_xpos + 3 * g2, d->geom_xmat + 9 * g2,
                           m->geom_size[3 * g2]);
}

/// Sphere g1 against capsule g2 (mjraw_SphereCapsule): the sphere against the point of the
/// capsule's segment nearest its centre (the projection clipped to the half-length).
FS_HD int fsi_sphere_capsule(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  fsReal len = m->geom_size[3 * g2 + 1], axis[3] = {mat2[2], mat2[5], mat2[8]};
  fsReal vec[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  fsReal x = fs_clip(fsi_dot3(axis, vec), -len, len);
  for (int i = 0; i < 3; i++) vec[i] = axis[i] * x + pos2[i];
  return fsi_sphere_sphere(d, k, margin, pos1, mat1, m->geom_size[3 * g1], vec, mat2,
                           m->geom_size[3 * g2]);
}

/// Sphere g1 against cylinder g2 (mjc_SphereCylinder): the sphere's centre split along the
/// cylinder's axis (x) and across it (p, |p|^2 = psqr) picks the feature -- beside the side
/// (|x| < half-height): a sphere test with the axis point; over a cap (psqr < radius^2): a
/// plane test with the cap's plane, its normal then reversed (the plane is geom 1 of that test,
/// the sphere geom 1 of the pair); else a sphere test with the nearest rim point, a sphere of
/// radius 0. A centre inside the cylinder takes the nearer of the side and the cap.
FS_HD FSI_PRIMITIVE_NOINLINE int fsi_sphere_cylinder(const fsModel* m, fsData* d, int k, int g1,
                                                     int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  fsReal r1 = m->geom_size[3 * g1], radius = m->geom_size[3 * g2];
  fsReal height = m->geom_size[3 * g2 + 1], axis[3] = {mat2[2], mat2[5], mat2[8]};
  fsReal vec[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  fsReal x = fsi_dot3(axis, vec), a[3], p[3];
  for (int i = 0; i < 3; i++) {
    a[i] = axis[i] * x;
    p[i] = vec[i] - a[i];
  }
  fsReal psqr = fsi_dot3(p, p);
  int side = fs_abs(x) < height, cap = psqr < radius * radius;
  if (side && cap) { // the centre inside: the nearer surface
    if (height - fs_abs(x) < radius - fs_sqrt(psqr))
      side = 0;
    else
      cap = 0;
  }
  if (side) {
    for (int i = 0; i < 3; i++) a[i] += pos2[i];
    return fsi_sphere_sphere(d, k, margin, pos1, mat1, r1, a, mat2, radius);
  }
  if (cap) { // the top cap's frame is the cylinder's; the bottom's turned about its y axis
    fsReal sh = x > 0 ? height : -height, capmat[9], capos[3];
    for (int i = 0; i < 9; i++) capmat[i] = (x > 0 || i % 3 == 1) ? mat2[i] : -mat2[i];
    for (int i = 0; i < 3; i++) capos[i] = pos2[i] + axis[i] * sh;
    int n = fsi_plane_sphere(d, k, capos, capmat, pos1, r1, margin);
    for (int i = 0; n && i < 3; i++) d->precon_normal[3 * k + i] *= -1;
    return n;
  }
  fsReal s = radius / fs_sqrt(psqr), sh = x > 0 ? height : -height, rim[3];
  for (int i = 0; i < 3; i++) rim[i] = axis[i] * sh + p[i] * s + pos2[i];
  return fsi_sphere_sphere(d, k, margin, pos1, mat1, r1, rim, mat2, 0);
}

/// Capsule g1 against capsule g2 (mjraw_CapsuleCapsule of MuJoCo 3.16, read from its machine
/// code: the 3.12 source solves the 2x2 system instead). Segments pos + x a (x in [-1, 1], a
/// the half-axis); c = a1 x a2. Unless near-parallel (|c|^2 <= 1e-8 |a1|^2 |a2|^2): x1 =
/// ((a2 x dif) . c) / |c|^2 clipped, x2 = (a2 . dif + (a1 . a2) x1) / |a2|^2, and where x2 is
/// beyond an end, x2 clipped and x1 = ((a1 . a2) x2 - a1 . dif) / |a1|^2 clipped (dif = pos1 -
/// pos2); a sphere test between the two points. Near-parallel: each end of segment 1
/// against its projection on segment 2, then, while fewer than 2 contacts, each end of
/// segment 2 against its projection on segment 1. At most 2 contacts.
FS_HD int fsi_capsule_capsule(const fsModel* m, fsData* d, int k, int g1, int g2, fsReal margin) {
  const fsReal *pos1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal *pos2 = d->geom_xpos + 3 * g2, *mat2 = d->geom_xmat + 9 * g2;
  fsReal r1 = m->geom_size[3 * g1], h1 = m->geom_size[3 * g1 + 1];
  fsReal r2 = m->geom_size[3 * g2], h2 = m->geom_size[3 * g2 + 1];
  fsReal a1[3] = {mat1[2] * h1, mat1[5] * h1, mat1[8] * h1};
  fsReal a2[3] = {mat2[2] * h2, mat2[5] * h2, mat2[8] * h2};
  fsReal dif[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  fsReal ma = fsi_dot3(a1, a1), ab = fsi_dot3(a1, a2), mc = fsi_dot3(a2, a2);
  fsReal d1 = fsi_dot3(a1, dif), v = fsi_dot3(a2, dif), c[3], w[3], v1[3], v2[3];
  fsi_cross(c, a1, a2);
  fsReal csqr = fsi_dot3(c, c);
  if (csqr > (fsReal)1e-8 * ma * mc) {
    fsi_cross(w, a2, dif);
    fsReal x1 = fs_clip(fsi_dot3(w, c) / csqr, -1, 1), x2 = (v + ab * x1) / mc;
    if (fs_abs(x2) > 1) {
      x2 = fs_clip(x2, -1, 1);
      x1 = fs_clip((ab * x2 - d1) / ma, -1, 1);
    }
    for (int i = 0; i < 3; i++) {
      v1[i] = a1[i] * x1 + pos1[i];
      v2[i] = a2[i] * x2 + pos2[i];
    }
    return fsi_sphere_sphere(d, k, margin, v1, mat1, r1, v2, mat2, r2);
  }
  fsReal u = -d1, mb = -ab;
  int n = 0;
  for (int e = 0; e < 4 && (e < 2 || n < 2); e++) {
    fsReal sgn = (e & 1) ? -1 : 1; // ends +1, -1 of segment 1 (e < 2), then of segment 2
    if (e < 2) {
      fsReal x2 = fs_clip((v - sgn * mb) / mc, -1, 1);
      for (int i = 0; i < 3; i++) {
        v1[i] = e ? pos1[i] - a1[i] : pos1[i] + a1[i];
        v2[i] = a2[i] * x2 + pos2[i];
      }
    } else {
      fsReal x1 = fs_clip((u - sgn * mb) / ma, -1, 1);
      for (int i = 0; i < 3; i++) {
        v2[i] = e == 3 ? pos2[i] - a2[i] : pos2[i] + a2[i];
        v1[i] = a1[i] * x1 + pos1[i];
      }
    }
    n += fsi_sphere_sphere(d, k + n, margin, v1, mat1, r1, v2, mat2, r2);
  }
  return n;
}

#endif
