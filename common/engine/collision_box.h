// Box colliders of the collision stage: a sphere against a box (mjc_SphereBox, its
// mjraw_SphereBox) and a capsule against a box (mjc_CapsuleBox), MuJoCo 3.16's
// engine_collision_box.c operation for operation (its box-box, mjc_BoxBox, is not
// implemented). And flysim's early exit for a shape beyond a face slab of a box
// (fsi_beyond_box), not in MuJoCo, which changes no result: capsule-box here, box-mesh in
// collision_convex.h.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_BOX_H
#define FLYSIM_COMMON_ENGINE_COLLISION_BOX_H

#include "common/engine/collision_primitive.h"

/// Relative slack of fsi_beyond_box: far above the rounding of the box-frame coordinates
/// and of the collision functions' own tests in either precision (float32's epsilon is
/// 6e-8), far below any gap that matters to the early exit.
#define FSI_BEYOND_SLACK ((fsReal)1e-4)

/// 1 if the box-frame interval c +- ext on some axis of the box (half-sizes size) lies
/// wholly outside the box's slab on that axis by more than reach plus a rounding slack:
/// then a shape within reach of that interval is farther than the margin from the box,
/// and MuJoCo's collision function makes no contact. Not in MuJoCo: an early exit that
/// changes no result (fsi_capsule_box: the segment, reach radius + margin, and every
/// sphere it tests lies on the segment; fsi_convex on a box and a mesh, through
/// fsi_mesh_beyond_box: the mesh's centre, reach its bounding radius + margin). NaN
/// coordinates never exit early.
FS_HD int fsi_beyond_box(const fsReal c[3], const fsReal ext[3], const fsReal size[3],
                         fsReal reach) {
  fsReal scale = fs_abs(c[0]) + fs_abs(c[1]) + fs_abs(c[2]) + reach;
  for (int j = 0; j < 3; j++) {
    fsReal lim = size[j] + reach;
    if (fs_abs(c[j]) - ext[j] > lim + (scale + ext[j] + lim) * FSI_BEYOND_SLACK) return 1;
  }
  return 0;
}

/// x clipped to [-limit, limit] where limit > 0 (MuJoCo's mju_clip in mju_clampVec).
FS_HD fsReal fsi_clamp_to(fsReal x, fsReal limit) {
  if (!(limit > 0)) return x;
  if (x < -limit) return -limit;
  if (x > limit) return limit;
  return x;
}

/// Clamp *x, a segment's or an edge's parameter, to [-1, 1]: at 1, *end = 2; at -1, *end = 0;
/// inside, both unchanged (fsi_capsule_box's edge parameter and its end code).
FS_HD void fsi_clamp_end(fsReal* x, int* end) {
  if (*x > 1) {
    *x = 1;
    *end = 2;
  } else if (*x < -1) {
    *x = -1;
    *end = 0;
  }
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
        fsi_clamp_end(&x1, &s1);
      } else if (x2 < -1) {
        x2 = -1;
        s2 = 0;
        x1 = (u + mb) * (1 / ma);
        fsi_clamp_end(&x1, &s1);
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

#endif
