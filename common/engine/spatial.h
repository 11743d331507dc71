// Small vector, quaternion and spatial-algebra helpers of the stage functions
// (prefix fsi_: internal, inline, host and device). Conventions as MuJoCo's:
// quaternions (w, x, y, z); 3x3 matrices row-major; spatial vectors (rot:lin);
// com-based inertia (10): Ixx Iyy Izz Ixy Ixz Iyz, mass*offset (3), mass.
// Results may alias inputs unless a comment says otherwise.
#ifndef FLYSIM_COMMON_ENGINE_SPATIAL_H
#define FLYSIM_COMMON_ENGINE_SPATIAL_H

#include "common/exec/real.h"

FS_HD void fsi_zero(fsReal* res, int n) {
  for (int i = 0; i < n; i++) res[i] = 0;
}

/// res = v (n), res apart from v.
FS_HD void fsi_copy(fsReal* res, const fsReal* v, int n) {
  FS_IVDEP
  for (int i = 0; i < n; i++) res[i] = v[i];
}

FS_HD fsReal fsi_dot3(const fsReal a[3], const fsReal b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

FS_HD fsReal fsi_norm3(const fsReal v[3]) {
  return fs_sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/// 6-vector dot product, summed in pairs as MuJoCo's mju_dot does.
FS_HD fsReal fsi_dot6(const fsReal a[6], const fsReal b[6]) {
  return ((a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5]);
}

/// Normalize v in place (unit x-axis if degenerate); returns the old norm.
FS_HD fsReal fsi_normalize3(fsReal v[3]) {
  fsReal norm = fsi_norm3(v);
  if (norm < FS_MINVAL) {
    v[0] = 1;
    v[1] = v[2] = 0;
  } else {
    fsReal inv = 1 / norm;
    v[0] *= inv;
    v[1] *= inv;
    v[2] *= inv;
  }
  return norm;
}

/// Normalize q in place (identity if degenerate; untouched if already unit).
FS_HD fsReal fsi_normalize4(fsReal q[4]) {
  fsReal norm = fs_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (norm < FS_MINVAL) {
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
  } else if (fs_abs(norm - 1) > FS_MINVAL) {
    fsReal inv = 1 / norm;
    for (int i = 0; i < 4; i++) q[i] *= inv;
  }
  return norm;
}

/// res = mat * v (3x3).
FS_HD void fsi_mul_mat_vec3(fsReal res[3], const fsReal mat[9], const fsReal v[3]) {
  fsReal r[3];
  for (int i = 0; i < 3; i++)
    r[i] = mat[3 * i] * v[0] + mat[3 * i + 1] * v[1] + mat[3 * i + 2] * v[2];
  res[0] = r[0];
  res[1] = r[1];
  res[2] = r[2];
}

/// res = mat' * v (3x3; mji_mulMatTVec3).
FS_HD void fsi_mul_mat_t_vec3(fsReal res[3], const fsReal mat[9], const fsReal v[3]) {
  fsReal r[3];
  for (int i = 0; i < 3; i++) r[i] = mat[i] * v[0] + mat[3 + i] * v[1] + mat[6 + i] * v[2];
  res[0] = r[0];
  res[1] = r[1];
  res[2] = r[2];
}

/// res = a x b. res must not alias a or b.
FS_HD void fsi_cross(fsReal res[3], const fsReal a[3], const fsReal b[3]) {
  res[0] = a[1] * b[2] - a[2] * b[1];
  res[1] = a[2] * b[0] - a[0] * b[2];
  res[2] = a[0] * b[1] - a[1] * b[0];
}

/// MuJoCo's mju_makeFrame: f[0..2] the normal (normalized again), f[3..5] a tangent or 0
/// (then y, or z if the normal is near y), made orthonormal; f[6..8] their cross product.
/// Written once for each real type T with its normalize, dot and cross: fsi_make_frame
/// (fsReal) here, fsi_ccd_make_frame (double, common/engine/collision_convex.h).
#define FSI_DEFINE_MAKE_FRAME(name, T, normalize3, dot3, cross3)                                   \
  FS_HD void name(T f[9]) {                                                                        \
    normalize3(f);                                                                                 \
    if (dot3(f + 3, f + 3) < (T)0.25) {                                                            \
      f[3] = f[4] = f[5] = 0;                                                                      \
      if (f[1] < (T)0.5 && f[1] > (T)-0.5)                                                         \
        f[4] = 1;                                                                                  \
      else                                                                                         \
        f[5] = 1;                                                                                  \
    }                                                                                              \
    T s = dot3(f, f + 3);                                                                          \
    for (int j = 0; j < 3; j++) f[3 + j] -= f[j] * s;                                              \
    normalize3(f + 3);                                                                             \
    cross3(f + 6, f, f + 3);                                                                       \
  }
FSI_DEFINE_MAKE_FRAME(fsi_make_frame, fsReal, fsi_normalize3, fsi_dot3, fsi_cross)

/// Hamilton product res = a * b.
FS_HD void fsi_mul_quat(fsReal res[4], const fsReal a[4], const fsReal b[4]) {
  fsReal w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  fsReal x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  fsReal y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  fsReal z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  res[0] = w;
  res[1] = x;
  res[2] = y;
  res[3] = z;
}

/// Rotate v by the unit quaternion q: v + 2 q_xyz x (q_w v + q_xyz x v).
FS_HD void fsi_rot_vec_quat(fsReal res[3], const fsReal v[3], const fsReal q[4]) {
  if (q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0) {
    res[0] = v[0];
    res[1] = v[1];
    res[2] = v[2];
    return;
  }
  fsReal t0 = q[0] * v[0] + q[2] * v[2] - q[3] * v[1];
  fsReal t1 = q[0] * v[1] + q[3] * v[0] - q[1] * v[2];
  fsReal t2 = q[0] * v[2] + q[1] * v[1] - q[2] * v[0];
  fsReal r0 = v[0] + 2 * (q[2] * t2 - q[3] * t1);
  fsReal r1 = v[1] + 2 * (q[3] * t0 - q[1] * t2);
  fsReal r2 = v[2] + 2 * (q[1] * t1 - q[2] * t0);
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

/// Quaternion of a rotation by angle about the unit axis.
FS_HD void fsi_axis_angle_quat(fsReal res[4], const fsReal axis[3], fsReal angle) {
  if (angle == 0) {
    res[0] = 1;
    res[1] = res[2] = res[3] = 0;
    return;
  }
  fsReal half = angle * (fsReal)0.5;
  fsReal s = fs_sin(half);
  res[0] = fs_cos(half);
  res[1] = axis[0] * s;
  res[2] = axis[1] * s;
  res[3] = axis[2] * s;
}

/// Rotation matrix of the unit quaternion q (MuJoCo's mju_quat2Mat), written once for each
/// real type T: fsi_quat_to_mat (fsReal) here, fsi_ccd_quat_to_mat (the convex collider's
/// double, common/engine/collision_convex.h).
#define FSI_DEFINE_QUAT_TO_MAT(name, T)                                                            \
  FS_HD void name(T res[9], const T q[4]) {                                                        \
    if (q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0) {                                        \
      for (int i = 0; i < 9; i++) res[i] = (i % 4 == 0) ? 1 : 0;                                   \
      return;                                                                                      \
    }                                                                                              \
    T ww = q[0] * q[0], wx = q[0] * q[1], wy = q[0] * q[2], wz = q[0] * q[3];                      \
    T xx = q[1] * q[1], xy = q[1] * q[2], xz = q[1] * q[3];                                        \
    T yy = q[2] * q[2], yz = q[2] * q[3], zz = q[3] * q[3];                                        \
    res[0] = ww + xx - yy - zz;                                                                    \
    res[4] = ww - xx + yy - zz;                                                                    \
    res[8] = ww - xx - yy + zz;                                                                    \
    res[1] = 2 * (xy - wz);                                                                        \
    res[2] = 2 * (xz + wy);                                                                        \
    res[3] = 2 * (xy + wz);                                                                        \
    res[5] = 2 * (yz - wx);                                                                        \
    res[6] = 2 * (xz - wy);                                                                        \
    res[7] = 2 * (yz + wx);                                                                        \
  }
FSI_DEFINE_QUAT_TO_MAT(fsi_quat_to_mat, fsReal)

/// Rotation vector (axis * angle, angle wrapped to (-pi, pi]) of the unit quaternion q.
FS_HD void fsi_quat_to_vel(fsReal res[3], const fsReal q[4]) {
  fsReal axis[3] = {q[1], q[2], q[3]};
  fsReal sin_half = fsi_normalize3(axis);
  fsReal angle = 2 * fs_atan2(sin_half, q[0]);
  if (angle > FS_PI) angle -= 2 * FS_PI;
  res[0] = axis[0] * angle;
  res[1] = axis[1] * angle;
  res[2] = axis[2] * angle;
}

/// Rotation vector res with qb * quat(res) = qa.
FS_HD void fsi_sub_quat(fsReal res[3], const fsReal qa[4], const fsReal qb[4]) {
  fsReal neg[4] = {qb[0], -qb[1], -qb[2], -qb[3]}, dif[4];
  fsi_mul_quat(dif, neg, qa);
  fsi_quat_to_vel(res, dif);
}

/// Integrate the quaternion q by the angular velocity vel (local frame) over dt.
FS_HD void fsi_quat_integrate(fsReal q[4], const fsReal vel[3], fsReal dt) {
  fsReal axis[3] = {vel[0], vel[1], vel[2]}, rot[4];
  fsReal angle = dt * fsi_normalize3(axis);
  fsi_axis_angle_quat(rot, axis, angle);
  fsi_normalize4(q);
  fsi_mul_quat(q, q, rot);
}

/// Com-based inertia (10) of a body: diagonal inertia `inert` in the frame with
/// rotation `mat` (local to global), centre of mass at `dif` from the com point.
FS_HD void fsi_inert_com(fsReal res[10], const fsReal inert[3], const fsReal mat[9],
                         const fsReal dif[3], fsReal mass) {
  // rotational part: mat * diag(inert) * mat'
  fsReal t[9] = {mat[0] * inert[0], mat[3] * inert[0], mat[6] * inert[0],
                 mat[1] * inert[1], mat[4] * inert[1], mat[7] * inert[1],
                 mat[2] * inert[2], mat[5] * inert[2], mat[8] * inert[2]};
  res[0] = mat[0] * t[0] + mat[1] * t[3] + mat[2] * t[6];
  res[1] = mat[3] * t[1] + mat[4] * t[4] + mat[5] * t[7];
  res[2] = mat[6] * t[2] + mat[7] * t[5] + mat[8] * t[8];
  res[3] = mat[0] * t[1] + mat[1] * t[4] + mat[2] * t[7];
  res[4] = mat[0] * t[2] + mat[1] * t[5] + mat[2] * t[8];
  res[5] = mat[3] * t[2] + mat[4] * t[5] + mat[5] * t[8];
  // parallel-axis term: - mass * [dif]x [dif]x
  res[0] += mass * (dif[1] * dif[1] + dif[2] * dif[2]);
  res[1] += mass * (dif[0] * dif[0] + dif[2] * dif[2]);
  res[2] += mass * (dif[0] * dif[0] + dif[1] * dif[1]);
  res[3] -= mass * dif[0] * dif[1];
  res[4] -= mass * dif[0] * dif[2];
  res[5] -= mass * dif[1] * dif[2];
  res[6] = mass * dif[0];
  res[7] = mass * dif[1];
  res[8] = mass * dif[2];
  res[9] = mass;
}

/// res = I * v for a com-based inertia I (10) and a motion vector v (6).
/// res must not alias v.
FS_HD void fsi_mul_inert_vec(fsReal res[6], const fsReal I[10], const fsReal v[6]) {
  res[0] = I[0] * v[0] + I[3] * v[1] + I[4] * v[2] - I[8] * v[4] + I[7] * v[5];
  res[1] = I[3] * v[0] + I[1] * v[1] + I[5] * v[2] + I[8] * v[3] - I[6] * v[5];
  res[2] = I[4] * v[0] + I[5] * v[1] + I[2] * v[2] - I[7] * v[3] + I[6] * v[4];
  res[3] = I[8] * v[1] - I[7] * v[2] + I[9] * v[3];
  res[4] = I[6] * v[2] - I[8] * v[0] + I[9] * v[4];
  res[5] = I[7] * v[0] - I[6] * v[1] + I[9] * v[5];
}

/// Motion axis of a rotation about `axis` through a point `offset` from the com
/// point: (axis, axis x offset); of a translation along axis (offset NULL): (0, axis).
FS_HD void fsi_dof_com(fsReal res[6], const fsReal axis[3], const fsReal* offset) {
  if (offset) {
    res[0] = axis[0];
    res[1] = axis[1];
    res[2] = axis[2];
    fsi_cross(res + 3, axis, offset);
  } else {
    res[0] = res[1] = res[2] = 0;
    res[3] = axis[0];
    res[4] = axis[1];
    res[5] = axis[2];
  }
}

/// Spatial cross product for motion vectors: res = vel x v. No aliasing.
FS_HD void fsi_cross_motion(fsReal res[6], const fsReal vel[6], const fsReal v[6]) {
  res[0] = -vel[2] * v[1] + vel[1] * v[2];
  res[1] = vel[2] * v[0] - vel[0] * v[2];
  res[2] = -vel[1] * v[0] + vel[0] * v[1];
  res[3] = -vel[2] * v[4] + vel[1] * v[5];
  res[4] = vel[2] * v[3] - vel[0] * v[5];
  res[5] = -vel[1] * v[3] + vel[0] * v[4];
  res[3] += -vel[5] * v[1] + vel[4] * v[2];
  res[4] += vel[5] * v[0] - vel[3] * v[2];
  res[5] += -vel[4] * v[0] + vel[3] * v[1];
}

/// Spatial cross product for force vectors: res = vel x* f. No aliasing.
FS_HD void fsi_cross_force(fsReal res[6], const fsReal vel[6], const fsReal f[6]) {
  res[0] = -vel[2] * f[1] + vel[1] * f[2];
  res[1] = vel[2] * f[0] - vel[0] * f[2];
  res[2] = -vel[1] * f[0] + vel[0] * f[1];
  res[3] = -vel[2] * f[4] + vel[1] * f[5];
  res[4] = vel[2] * f[3] - vel[0] * f[5];
  res[5] = -vel[1] * f[3] + vel[0] * f[4];
  res[0] += -vel[5] * f[4] + vel[4] * f[5];
  res[1] += vel[5] * f[3] - vel[3] * f[5];
  res[2] += -vel[4] * f[3] + vel[3] * f[4];
}

/// mju_transformSpatial: the 6D motion (force: a force) vec (rot:lin) at oldpos moved to
/// newpos, then rotated into the frame rot (world-to-frame: rot' x) unless rot is NULL.
FS_HD void fsi_transform_spatial(fsReal res[6], const fsReal vec[6], int force,
                                 const fsReal newpos[3], const fsReal oldpos[3],
                                 const fsReal* rot) {
  fsReal dif[3] = {newpos[0] - oldpos[0], newpos[1] - oldpos[1], newpos[2] - oldpos[2]};
  fsReal cros[3], tran[6];
  fsi_copy(tran, vec, 6);
  fsi_cross(cros, dif, vec + (force ? 3 : 0));
  for (int k = 0; k < 3; k++) tran[(force ? 0 : 3) + k] = vec[(force ? 0 : 3) + k] - cros[k];
  if (rot) {
    fsi_mul_mat_t_vec3(res, rot, tran);
    fsi_mul_mat_t_vec3(res + 3, rot, tran + 3);
  } else {
    fsi_copy(res, tran, 6);
  }
}

/// res = sum_j dof_j * v_j over n motion axes (n x 6): the velocity they produce.
FS_HD void fsi_mul_dof_vec(fsReal res[6], const fsReal* dof, const fsReal* v, int n) {
  for (int k = 0; k < 6; k++) res[k] = 0;
  for (int j = 0; j < n; j++)
    for (int k = 0; k < 6; k++) res[k] += dof[6 * j + k] * v[j];
}

/// MuJoCo's polynomial force coefficient: linear + sum_k poly[k] |x|^(k+1) (|x| if
/// odd, else x); the force is -x times it.
FS_HD fsReal fsi_poly_force(fsReal linear, const fsReal* poly, fsReal x, int odd) {
  if (odd) x = fs_abs(x);
  fsReal res = linear, xpow = 1;
  for (int k = 0; k < 2; k++) {
    xpow *= x;
    res += poly[k] * xpow;
  }
  return res;
}

/// d(x * fsi_poly_force(x)) / dx.
FS_HD fsReal fsi_poly_force_deriv(fsReal linear, const fsReal* poly, fsReal x, int odd) {
  if (odd) x = fs_abs(x);
  fsReal res = linear, xpow = 1;
  for (int k = 0; k < 2; k++) {
    xpow *= x;
    res += (k + 2) * poly[k] * xpow;
  }
  return res;
}

#endif
