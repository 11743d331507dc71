// The sensor stage: MuJoCo's mj_sensorPos, mj_sensorVel and mj_sensorAcc (engine_sensor.c)
// for the kinds of FS_SENSORS (common/engine/fields.h), one sensor a lane. They run at once
// after the constraint solve of the step's first forward (RK4's later forwards skip them, as
// MuJoCo's do): nothing a position or velocity sensor reads changes in between. Each value is
// MuJoCo's arithmetic, then the sensor's cutoff (not a contact sensor's); noise is not part
// of mj_step. The host's step alone (FSI_SENSOR): the kernels do not compute sensors yet, and
// the cuda backend has no sensordata.
#ifndef FLYSIM_COMMON_ENGINE_STAGE_SENSOR_H
#define FLYSIM_COMMON_ENGINE_STAGE_SENSOR_H

#include "common/engine/fields.h"
#include "common/engine/spatial.h"
#include "common/engine/stage_position.h"

#ifndef __CUDA_ARCH__
#define FSI_SENSOR 1
#else
#define FSI_SENSOR 0
#endif

#if FSI_SENSOR
/// Values of contact data field k (mjCONDATA_SIZE).
FS_HD int fsi_condata_size(int k) {
  return k == FS_CONDATA_FOUND || k == FS_CONDATA_DIST ? 1 : 3;
}

/// The body of a sensor's object (a body, a geom's or a site's).
FS_HD int fsi_object_body(const fsModel* m, int type, int id) {
  return type == FS_OBJ_GEOM ? m->geom_bodyid[id] : type == FS_OBJ_SITE ? m->site_bodyid[id] : id;
}

/// The frame of a sensor's object (MuJoCo's get_xpos_xmat): a body's inertial frame (BODY),
/// its frame (XBODY), a geom's or a site's.
FS_HD void fsi_object_frame(const fsData* d, int type, int id, const fsReal** pos,
                            const fsReal** mat) {
  if (type == FS_OBJ_XBODY) {
    *pos = d->xpos + 3 * id;
    *mat = d->xmat + 9 * id;
  } else if (type == FS_OBJ_BODY) {
    *pos = d->xipos + 3 * id;
    *mat = d->ximat + 9 * id;
  } else if (type == FS_OBJ_GEOM) {
    *pos = d->geom_xpos + 3 * id;
    *mat = d->geom_xmat + 9 * id;
  } else {
    *pos = d->site_xpos + 3 * id;
    *mat = d->site_xmat + 9 * id;
  }
}

/// The orientation of a sensor's object as a quaternion (MuJoCo's get_xquat).
FS_HD void fsi_object_quat(const fsModel* m, const fsData* d, int type, int id, fsReal q[4]) {
  if (type == FS_OBJ_XBODY)
    fsi_copy(q, d->xquat + 4 * id, 4);
  else if (type == FS_OBJ_BODY)
    fsi_mul_quat(q, d->xquat + 4 * id, m->body_iquat + 4 * id);
  else if (type == FS_OBJ_GEOM)
    fsi_mul_quat(q, d->xquat + 4 * m->geom_bodyid[id], m->geom_quat + 4 * id);
  else
    fsi_mul_quat(q, d->xquat + 4 * m->site_bodyid[id], m->site_quat + 4 * id);
}

/// mj_objectVelocity (acc 0) or mj_objectAcceleration (acc 1): the object's 6D velocity or
/// acceleration (rot:lin) at its position, in the world frame or (local) its own (the
/// acceleration with the rotating frame's Coriolis term); 0 on a body no dof moves.
FS_HD void fsi_object_motion(const fsModel* m, const fsData* d, int type, int id, fsReal res[6],
                             int local, int acc) {
  int body = fsi_object_body(m, type, id);
  if (m->body_dofnum[m->body_weldid[body]] == 0) {
    fsi_zero(res, 6);
    return;
  }
  const fsReal *pos, *mat;
  fsi_object_frame(d, type, id, &pos, &mat);
  const fsReal* com = d->subtree_com + 3 * m->body_rootid[body];
  if (!acc) {
    fsi_transform_spatial(res, d->cvel + 6 * body, 0, pos, com, local ? mat : NULL);
    return;
  }
  fsReal vel[6], corr[3];
  fsi_transform_spatial(res, d->cacc + 6 * body, 0, pos, com, local ? mat : NULL);
  fsi_transform_spatial(vel, d->cvel + 6 * body, 0, pos, com, local ? mat : NULL);
  fsi_cross(corr, vel, vel + 3);
  for (int k = 0; k < 3; k++) res[3 + k] += corr[k];
}

FS_HD void fsi_object_velocity(const fsModel* m, const fsData* d, int type, int id, fsReal res[6],
                               int local) {
  fsi_object_motion(m, d, type, id, res, local, 0);
}

/// mju_insideGeom: whether point lies inside the site's zone (a sphere, capsule, ellipsoid,
/// cylinder or box).
FS_HD int fsi_inside_site(const fsModel* m, const fsData* d, int site, const fsReal point[3]) {
  const fsReal* size = m->site_size + 3 * site;
  const fsReal* pos = d->site_xpos + 3 * site;
  fsReal vec[3] = {point[0] - pos[0], point[1] - pos[1], point[2] - pos[2]}, p[3];
  int type = m->site_type[site];
  if (type == FS_GEOM_SPHERE) return fsi_dot3(vec, vec) < size[0] * size[0];
  fsi_mul_mat_t_vec3(p, d->site_xmat + 9 * site, vec);
  switch (type) {
  case FS_GEOM_CAPSULE: {
    fsReal dz = p[2] - fs_clip(p[2], -size[1], size[1]);
    return p[0] * p[0] + p[1] * p[1] + dz * dz < size[0] * size[0];
  }
  case FS_GEOM_ELLIPSOID:
    return p[0] * p[0] / (size[0] * size[0]) + p[1] * p[1] / (size[1] * size[1]) +
               p[2] * p[2] / (size[2] * size[2]) <
           1;
  case FS_GEOM_CYLINDER:
    return fs_abs(p[2]) < size[1] && p[0] * p[0] + p[1] * p[1] < size[0] * size[0];
  case FS_GEOM_BOX:
    return fs_abs(p[0]) < size[0] && fs_abs(p[1]) < size[1] && fs_abs(p[2]) < size[2];
  default:
    return 0;
  }
}

/// MuJoCo's ray_quad: the smallest non-negative root of a x^2 + 2 b x + c, else -1 (both
/// roots in x, -1 without real ones).
FS_HD fsReal fsi_ray_quad(fsReal a, fsReal b, fsReal c, fsReal x[2]) {
  fsReal det = b * b - a * c;
  if (det < 0 || a < FS_MINVAL) {
    x[0] = x[1] = -1;
    return -1;
  }
  det = fs_sqrt(det);
  x[0] = (-b - det) / a;
  x[1] = (-b + det) / a;
  return x[0] >= 0 ? x[0] : x[1] >= 0 ? x[1] : -1;
}

/// MuJoCo's ray_sphere without the normal: the ray pnt + x vec against the sphere of squared
/// radius r2 at pos.
FS_HD fsReal fsi_ray_sphere(const fsReal pos[3], fsReal r2, const fsReal pnt[3],
                            const fsReal vec[3]) {
  fsReal dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]}, xx[2];
  fsReal a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2];
  fsReal b = vec[0] * dif[0] + vec[1] * dif[1] + vec[2] * dif[2];
  fsReal c = dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] - r2;
  return fsi_ray_quad(a, b, c, xx);
}

/// mju_rayGeom without the normal for a site's zone (sphere, capsule, ellipsoid, cylinder,
/// box: MuJoCo's ray_* of each, the same arithmetic): the distance along vec from pnt to the
/// zone, -1 if the ray misses it.
FS_HD fsReal fsi_ray_site(const fsModel* m, const fsData* d, int site, const fsReal pnt[3],
                          const fsReal vec[3]) {
  const fsReal *pos = d->site_xpos + 3 * site, *mat = d->site_xmat + 9 * site;
  const fsReal* size = m->site_size + 3 * site;
  int type = m->site_type[site];
  if (type == FS_GEOM_SPHERE) return fsi_ray_sphere(pos, size[0] * size[0], pnt, vec);
  fsReal bound = type == FS_GEOM_CAPSULE    ? (size[0] + size[1]) * (size[0] + size[1])
                 : type == FS_GEOM_CYLINDER ? size[0] * size[0] + size[1] * size[1]
                 : type == FS_GEOM_BOX ? size[0] * size[0] + size[1] * size[1] + size[2] * size[2]
                                       : 0;
  if (type != FS_GEOM_ELLIPSOID && fsi_ray_sphere(pos, bound, pnt, vec) < 0) return -1;
  fsReal dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]}, p[3], v[3], xx[2];
  for (int k = 0; k < 3; k++) { // MuJoCo's ray_map: mat' dif, mat' vec
    p[k] = mat[k] * dif[0] + mat[3 + k] * dif[1] + mat[6 + k] * dif[2];
    v[k] = mat[k] * vec[0] + mat[3 + k] * vec[1] + mat[6 + k] * vec[2];
  }
  fsReal x = -1, sol;
  if (type == FS_GEOM_ELLIPSOID) {
    fsReal s[3] = {1 / (size[0] * size[0]), 1 / (size[1] * size[1]), 1 / (size[2] * size[2])};
    fsReal a = s[0] * v[0] * v[0] + s[1] * v[1] * v[1] + s[2] * v[2] * v[2];
    fsReal b = s[0] * v[0] * p[0] + s[1] * v[1] * p[1] + s[2] * v[2] * p[2];
    fsReal c = s[0] * p[0] * p[0] + s[1] * p[1] * p[1] + s[2] * p[2] * p[2] - 1;
    return fsi_ray_quad(a, b, c, xx);
  }
  if (type == FS_GEOM_BOX) {
    for (int i = 0; i < 3; i++) {
      if (!(fs_abs(v[i]) > FS_MINVAL)) continue;
      int i0 = i == 0 ? 1 : 0, i1 = i == 2 ? 1 : 2;
      for (int side = -1; side <= 1; side += 2) {
        sol = (side * size[i] - p[i]) / v[i];
        if (sol >= 0 && fs_abs(p[i0] + sol * v[i0]) <= size[i0] &&
            fs_abs(p[i1] + sol * v[i1]) <= size[i1] && (x < 0 || sol < x))
          x = sol;
      }
    }
    return x;
  }
  if (type == FS_GEOM_CYLINDER && fs_abs(v[2]) > FS_MINVAL) {
    for (int side = -1; side <= 1; side += 2) {
      sol = (side * size[1] - p[2]) / v[2];
      if (sol >= 0) {
        fsReal p0 = p[0] + sol * v[0], p1 = p[1] + sol * v[1];
        if (p0 * p0 + p1 * p1 <= size[0] * size[0] && (x < 0 || sol < x)) x = sol;
      }
    }
  }
  // the round side (capsule, cylinder)
  fsReal a = v[0] * v[0] + v[1] * v[1];
  fsReal b = v[0] * p[0] + v[1] * p[1];
  fsReal c = p[0] * p[0] + p[1] * p[1] - size[0] * size[0];
  sol = fsi_ray_quad(a, b, c, xx);
  if (sol >= 0 && fs_abs(p[2] + sol * v[2]) <= size[1] && (x < 0 || sol < x)) x = sol;
  if (type == FS_GEOM_CAPSULE) { // the caps' outer halves
    for (int cap = 1; cap >= -1; cap -= 2) {
      fsReal ldif[3] = {p[0], p[1], p[2] - cap * size[1]};
      a = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      b = v[0] * ldif[0] + v[1] * ldif[1] + v[2] * ldif[2];
      c = ldif[0] * ldif[0] + ldif[1] * ldif[1] + ldif[2] * ldif[2] - size[0] * size[0];
      fsi_ray_quad(a, b, c, xx);
      for (int k = 0; k < 2; k++) {
        fsReal z = p[2] + xx[k] * v[2];
        if (xx[k] >= 0 && (cap > 0 ? z >= size[1] : z <= -size[1]) && (x < 0 || xx[k] < x))
          x = xx[k];
      }
    }
  }
  return x;
}

/// mj_contactForce: contact c's force and torque in its frame (pyramidal: decoded from the
/// pyramid's rows; elliptic: the rows' forces), its adhesion taken from the normal; 0 for a
/// contact without rows.
FS_HD void fsi_contact_force(const fsModel* m, const fsData* d, int c, fsReal res[6]) {
  fsi_zero(res, 6);
  int adr = d->contact_efc_address[c];
  if (adr < 0) return;
  int dim = d->contact_dim[c];
  const fsReal* f = d->efc_force + adr;
  if (m->elliptic || dim == 1) {
    for (int k = 0; k < dim; k++) res[k] = f[k];
  } else {
    for (int k = 0; k < 2 * (dim - 1); k++) res[0] += f[k];
    for (int k = 0; k < dim - 1; k++)
      res[k + 1] = (f[2 * k] - f[2 * k + 1]) * d->contact_friction[5 * c + k];
  }
  res[0] -= d->contact_adhesion[c];
}

/// Whether a contact's body or geom is the sensor's object (MuJoCo's checkMatch): any
/// (UNKNOWN), a site's zone (tested before), the geom, the body, or a body of the subtree
/// (XBODY).
FS_HD int fsi_contact_matches(const fsModel* m, int body, int geom, int type, int id) {
  if (type == FS_OBJ_UNKNOWN || type == FS_OBJ_SITE) return 1;
  if (type == FS_OBJ_GEOM) return id == geom;
  if (type == FS_OBJ_BODY) return id == body;
  while (body > id) body = m->body_parentid[body];
  return body == id;
}

/// Whether contact c is one contact sensor i reports (MuJoCo's matchContact): 0 no, 1 with
/// its normal, -1 with the normal flipped (the sensor's object is the contact's second).
FS_HD int fsi_contact_sensed(const fsModel* m, const fsData* d, int i, int c) {
  int t1 = m->sensor_objtype[i], id1 = m->sensor_objid[i];
  int t2 = m->sensor_reftype[i], id2 = m->sensor_refid[i];
  if (t1 == FS_OBJ_UNKNOWN && t2 == FS_OBJ_UNKNOWN) return 1;
  if (t1 == FS_OBJ_SITE && !fsi_inside_site(m, d, id1, d->contact_pos + 3 * c)) return 0;
  int g1 = d->contact_geom[2 * c], g2 = d->contact_geom[2 * c + 1];
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int m11 = fsi_contact_matches(m, b1, g1, t1, id1), m12 = fsi_contact_matches(m, b2, g2, t1, id1);
  int m21 = fsi_contact_matches(m, b1, g1, t2, id2), m22 = fsi_contact_matches(m, b2, g2, t2, id2);
  if ((!m11 && !m12) || (!m21 && !m22)) return 0;
  if (t1 != FS_OBJ_UNKNOWN && t2 != FS_OBJ_UNKNOWN) {
    int regular = m11 && m22, reverse = m12 && m21;
    return regular ? 1 : reverse ? -1 : 0;
  }
  if (t1 != FS_OBJ_UNKNOWN) return m11 ? 1 : -1;
  return m22 ? 1 : -1;
}

/// The sort key of a matched contact under a sorted reduction: its distance (mindist) or
/// minus its force's squared norm (maxforce).
FS_HD fsReal fsi_contact_key(const fsModel* m, const fsData* d, int c, int reduce) {
  if (reduce == FS_REDUCE_MINDIST) return d->contact_dist[c];
  fsReal ft[6];
  fsi_contact_force(m, d, c, ft);
  return -fsi_dot3(ft, ft);
}

/// Whether (key a, contact a) sorts before (key b, contact b): MuJoCo's ContactInfoCompare.
FS_HD int fsi_contact_before(fsReal ka, int a, fsReal kb, int b) {
  return ka < kb || (!(ka > kb) && a < b);
}

/// One slot of contact sensor values (MuJoCo's copySensorData): the data fields of the
/// spec, in bit order, from contact c (flipped: the normal and tangent reversed, the force's
/// and torque's third component negated).
FS_HD void fsi_contact_slot(const fsModel* m, const fsData* d, int spec, int c, int flip,
                            int nfound, fsReal* out) {
  fsReal ft[6];
  if (spec & ((1 << FS_CONDATA_FORCE) | (1 << FS_CONDATA_TORQUE))) fsi_contact_force(m, d, c, ft);
  fsReal sign = flip ? -1 : 1;
  for (int k = 0; k < FS_NCONDATA; k++) {
    if (!(spec & (1 << k))) continue;
    const fsReal* frame = d->contact_frame + 9 * c;
    switch (k) {
    case FS_CONDATA_FOUND:
      out[0] = (fsReal)nfound;
      break;
    case FS_CONDATA_FORCE:
    case FS_CONDATA_TORQUE:
      fsi_copy(out, ft + (k == FS_CONDATA_TORQUE ? 3 : 0), 3);
      if (flip) out[2] *= -1;
      break;
    case FS_CONDATA_DIST:
      out[0] = d->contact_dist[c];
      break;
    case FS_CONDATA_POS:
      fsi_copy(out, d->contact_pos + 3 * c, 3);
      break;
    default: // the normal, or the first tangent
      for (int j = 0; j < 3; j++) out[j] = frame[(k == FS_CONDATA_TANGENT ? 3 : 0) + j] * sign;
      break;
    }
    out += fsi_condata_size(k);
  }
}

/// The net force reduction of contact sensor i (out zeroed): its contacts' wrenches (flipped
/// where the sensor's object is the second) summed in the world frame about the
/// force-weighted centroid of their positions, MuJoCo's order of sums (two passes here
/// where MuJoCo keeps the wrenches on its stack); no contact: all 0, as MuJoCo 3.16 writes.
FS_HD void fsi_contact_netforce(const fsModel* m, const fsData* d, int i, int spec, fsReal* out) {
  fsReal point[3] = {0, 0, 0}, total = 0, force[3] = {0, 0, 0}, torque[3] = {0, 0, 0}, w[6];
  int ncon = d->ncon[0], nmatch = 0;
  for (int c = 0; c < ncon; c++) {
    if (!fsi_contact_sensed(m, d, i, c)) continue;
    nmatch++;
    fsi_contact_force(m, d, c, w);
    fsReal weight = fsi_norm3(w);
    for (int k = 0; k < 3; k++) point[k] += d->contact_pos[3 * c + k] * weight;
    total += weight;
  }
  if (!nmatch) return;
  fsReal inv = 1 / (total > FS_MINVAL ? total : FS_MINVAL);
  for (int k = 0; k < 3; k++) point[k] *= inv;
  for (int c = 0; c < ncon; c++) {
    int sensed = fsi_contact_sensed(m, d, i, c);
    if (!sensed) continue;
    fsi_contact_force(m, d, c, w);
    if (sensed < 0)
      for (int k = 0; k < 6; k++) w[k] *= -1;
    const fsReal* frame = d->contact_frame + 9 * c;
    fsReal fj[3], tj[3], diff[3], induced[3];
    fsi_mul_mat_t_vec3(fj, frame, w);
    fsi_mul_mat_t_vec3(tj, frame, w + 3);
    for (int k = 0; k < 3; k++) {
      force[k] += fj[k];
      torque[k] += tj[k];
      diff[k] = d->contact_pos[3 * c + k] - point[k];
    }
    fsi_cross(induced, diff, fj);
    for (int k = 0; k < 3; k++) torque[k] += induced[k];
  }
  for (int k = 0; k < FS_NCONDATA; k++) {
    if (!(spec & (1 << k))) continue;
    if (k == FS_CONDATA_FOUND) out[0] = (fsReal)nmatch;
    if (k == FS_CONDATA_FORCE) fsi_copy(out, force, 3);
    if (k == FS_CONDATA_TORQUE) fsi_copy(out, torque, 3);
    if (k == FS_CONDATA_POS) fsi_copy(out, point, 3);
    if (k == FS_CONDATA_NORMAL) out[0] = 1;
    if (k == FS_CONDATA_TANGENT) out[1] = 1;
    out += fsi_condata_size(k);
  }
}

/// Contact sensor i (mjSENS_CONTACT): the contacts it matches, reduced (net force) or the
/// first of them in slots: in contact order, or the nearest / strongest first
/// (MuJoCo's partial sort, here a selection pass a slot: no scratch).
FS_HD void fsi_contact_sensor(const fsModel* m, const fsData* d, int i, fsReal* out) {
  int spec = m->sensor_intprm[FS_NSENS * i], reduce = m->sensor_intprm[FS_NSENS * i + 1];
  int dim = m->sensor_dim[i], size = 0, ncon = d->ncon[0], nmatch = 0;
  for (int k = 0; k < FS_NCONDATA; k++)
    if (spec & (1 << k)) size += fsi_condata_size(k);
  fsi_zero(out, dim);
  if (reduce == FS_REDUCE_NETFORCE) {
    fsi_contact_netforce(m, d, i, spec, out);
    return;
  }
  for (int c = 0; c < ncon; c++) nmatch += fsi_contact_sensed(m, d, i, c) != 0;
  int nslot = dim / size < nmatch ? dim / size : nmatch;
  int sorted = reduce == FS_REDUCE_MINDIST || reduce == FS_REDUCE_MAXFORCE;
  fsReal last_key = 0;
  int last = -1, next = 0; // the last slot's contact; the next contact in order (unsorted)
  for (int s = 0; s < nslot; s++) {
    int best = -1, flip = 0;
    fsReal best_key = 0;
    for (int c = sorted ? 0 : next; c < ncon; c++) {
      int sensed = fsi_contact_sensed(m, d, i, c);
      if (!sensed) continue;
      if (!sorted) {
        best = c;
        flip = sensed < 0;
        break;
      }
      fsReal key = fsi_contact_key(m, d, c, reduce);
      if (last >= 0 && !fsi_contact_before(last_key, last, key, c)) continue;
      if (best < 0 || fsi_contact_before(key, c, best_key, best)) {
        best = c;
        best_key = key;
        flip = sensed < 0;
      }
    }
    fsi_contact_slot(m, d, spec, best, flip, nmatch, out + s * size);
    last = best;
    last_key = best_key;
    next = best + 1;
  }
}

/// mj_subtreeVel (on one lane): each subtree's linear velocity (its momentum over its mass,
/// children added first) and its angular momentum about its centre of mass.
FS_HD void fsi_subtree_vel(const fsModel* m, fsData* d) {
  fsReal *lin = d->subtree_linvel, *ang = d->subtree_angmom, *vel = d->subtree_bodyvel;
  for (int i = 0; i < m->nbody; i++) {
    fsi_object_velocity(m, d, FS_OBJ_BODY, i, vel + 6 * i, 0);
    for (int k = 0; k < 3; k++) lin[3 * i + k] = vel[6 * i + 3 + k] * m->body_mass[i];
    fsReal dv[3];
    fsi_mul_mat_t_vec3(dv, d->ximat + 9 * i, vel + 6 * i);
    for (int k = 0; k < 3; k++) dv[k] *= m->body_inertia[3 * i + k];
    fsi_mul_mat_vec3(ang + 3 * i, d->ximat + 9 * i, dv);
  }
  for (int i = m->nbody - 1; i >= 0; i--) {
    if (i)
      for (int k = 0; k < 3; k++) lin[3 * m->body_parentid[i] + k] += lin[3 * i + k];
    fsReal mass = m->body_subtreemass[i], inv = 1 / (FS_MINVAL >= mass ? FS_MINVAL : mass);
    for (int k = 0; k < 3; k++) lin[3 * i + k] *= inv;
  }
  for (int i = m->nbody - 1; i > 0; i--) {
    int parent = m->body_parentid[i];
    fsReal dx[3], dv[3], dL[3];
    for (int k = 0; k < 3; k++) {
      dx[k] = d->xipos[3 * i + k] - d->subtree_com[3 * i + k];
      dv[k] = (vel[6 * i + 3 + k] - lin[3 * i + k]) * m->body_mass[i];
    }
    fsi_cross(dL, dx, dv);
    for (int k = 0; k < 3; k++) {
      ang[3 * i + k] += dL[k];
      ang[3 * parent + k] += ang[3 * i + k];
      dx[k] = d->subtree_com[3 * i + k] - d->subtree_com[3 * parent + k];
      dv[k] = (lin[3 * i + k] - lin[3 * parent + k]) * m->body_subtreemass[i];
    }
    fsi_cross(dL, dx, dv);
    for (int k = 0; k < 3; k++) ang[3 * parent + k] += dL[k];
  }
}

/// mj_rnePostConstraint (on one lane): the contacts' forces on the bodies (cfrc_ext: each
/// contact's world wrench at its tree's centre of mass, against geom 1's body, for geom 2's;
/// equality rows of the joint and tendon kinds apply none, and the host has no
/// xfrc_applied), then each body's acceleration (cacc, the world's -gravity) and the force
/// its parent exerts on it (cfrc_int, its children's added).
FS_HD void fsi_rne_post_constraint(const fsModel* m, fsData* d) {
  fsReal *cacc = d->cacc, *ext = d->cfrc_ext, *in = d->cfrc_int;
  fsi_zero(ext, 6 * m->nbody);
  fsi_zero(cacc, 6);
  if (!(m->disableflags & FS_DSBL_GRAVITY))
    for (int k = 0; k < 3; k++) cacc[3 + k] = -m->gravity[k];
  int ncon = m->nconmax ? d->ncon[0] : 0;
  for (int c = 0; c < ncon; c++) {
    if (d->contact_efc_address[c] < 0) continue;
    fsReal lfrc[6], cfrc[6], com[6];
    fsi_contact_force(m, d, c, lfrc);
    fsi_mul_mat_t_vec3(cfrc, d->contact_frame + 9 * c, lfrc + 3);
    fsi_mul_mat_t_vec3(cfrc + 3, d->contact_frame + 9 * c, lfrc);
    for (int side = 0; side < 2; side++) {
      int b = m->geom_bodyid[d->contact_geom[2 * c + side]];
      if (!b) continue;
      fsi_transform_spatial(com, cfrc, 1, d->subtree_com + 3 * m->body_rootid[b],
                            d->contact_pos + 3 * c, NULL);
      for (int k = 0; k < 6; k++) ext[6 * b + k] += side ? com[k] : -com[k];
    }
  }
  fsi_zero(in, 6);
  for (int j = 1; j < m->nbody; j++) {
    int adr = m->body_dofadr[j], n = m->body_dofnum[j];
    fsReal a[6], body[6], corr[6], cross[6];
    fsi_mul_dof_vec(a, d->cdof_dot + 6 * adr, d->qvel + adr, n);
    for (int k = 0; k < 6; k++) cacc[6 * j + k] = cacc[6 * m->body_parentid[j] + k] + a[k];
    fsi_mul_dof_vec(a, d->cdof + 6 * adr, d->qacc + adr, n);
    for (int k = 0; k < 6; k++) cacc[6 * j + k] += a[k];
    fsi_mul_inert_vec(body, d->cinert + 10 * j, cacc + 6 * j);
    fsi_mul_inert_vec(corr, d->cinert + 10 * j, d->cvel + 6 * j);
    fsi_cross_force(cross, d->cvel + 6 * j, corr);
    for (int k = 0; k < 6; k++) {
      body[k] += cross[k];
      in[6 * j + k] = body[k] - ext[6 * j + k];
    }
  }
  for (int j = m->nbody - 1; j > 0; j--)
    for (int k = 0; k < 6; k++) in[6 * m->body_parentid[j] + k] += in[6 * j + k];
}

/// The row of a limit of type `type` (joint or tendon) on object j among the rows (MuJoCo's
/// first), -1: none.
FS_HD int fsi_limit_row(const fsModel* m, const fsData* d, int type, int j) {
  int nefc = m->nefcmax ? d->nefc[0] : 0;
  for (int r = 0; r < nefc; r++)
    if (d->efc_type[r] == type && d->efc_id[r] == j) return r;
  return -1;
}

/// Sensor i's values (mj_computeSensorPos, Vel or Acc for its kind), before the cutoff.
FS_HD void fsi_sensor_value(const fsModel* m, const fsData* d, int i, fsReal* out) {
  int type = m->sensor_type[i], objtype = m->sensor_objtype[i], id = m->sensor_objid[i];
  int reftype = m->sensor_reftype[i], refid = m->sensor_refid[i];
  const fsReal *pos, *mat, *refpos, *refmat;
  fsReal v[6];
  switch (type) {
  case FS_SENS_MAGNETOMETER:
    fsi_mul_mat_t_vec3(out, d->site_xmat + 9 * id, m->magnetic);
    break;
  case FS_SENS_JOINTPOS:
    out[0] = d->qpos[m->jnt_qposadr[id]];
    break;
  case FS_SENS_TENDONPOS: // fixed, or spatial through sites and pulleys (the model check)
    out[0] = fsi_tendon_length_any(m, d, id);
    break;
  case FS_SENS_TENDONVEL:
    out[0] = fsi_tendon_velocity(m, d, id);
    break;
  case FS_SENS_ACTUATORPOS:
    out[0] = d->actuator_length[id];
    break;
  case FS_SENS_BALLQUAT:
    fsi_copy(out, d->qpos + m->jnt_qposadr[id], 4);
    fsi_normalize4(out);
    break;
  case FS_SENS_JOINTLIMITPOS:
  case FS_SENS_JOINTLIMITVEL:
  case FS_SENS_JOINTLIMITFRC:
  case FS_SENS_TENDONLIMITPOS:
  case FS_SENS_TENDONLIMITVEL:
  case FS_SENS_TENDONLIMITFRC: {
    int joint = type <= FS_SENS_JOINTLIMITFRC,
        kind = type - (joint ? FS_SENS_JOINTLIMITPOS : FS_SENS_TENDONLIMITPOS);
    int r = fsi_limit_row(m, d, joint ? FS_CNSTR_LIMIT_JOINT : FS_CNSTR_LIMIT_TENDON, id);
    out[0] = r < 0       ? 0
             : kind == 0 ? d->efc_pos[r] - d->efc_margin[r]
             : kind == 1 ? d->efc_vel[r]
                         : d->efc_force[r];
    break;
  }
  case FS_SENS_FRAMEPOS:
  case FS_SENS_FRAMEXAXIS:
  case FS_SENS_FRAMEYAXIS:
  case FS_SENS_FRAMEZAXIS: {
    fsi_object_frame(d, objtype, id, &pos, &mat);
    int axis = type - FS_SENS_FRAMEXAXIS;
    fsReal vec[3];
    for (int k = 0; k < 3; k++) vec[k] = type == FS_SENS_FRAMEPOS ? pos[k] : mat[axis + 3 * k];
    if (refid < 0) {
      fsi_copy(out, vec, 3);
    } else {
      fsi_object_frame(d, reftype, refid, &refpos, &refmat);
      if (type == FS_SENS_FRAMEPOS)
        for (int k = 0; k < 3; k++) vec[k] = pos[k] - refpos[k];
      fsi_mul_mat_t_vec3(out, refmat, vec);
    }
    break;
  }
  case FS_SENS_FRAMEQUAT: {
    fsReal q[4], ref[4];
    fsi_object_quat(m, d, objtype, id, q);
    if (refid < 0) {
      fsi_copy(out, q, 4);
    } else {
      fsi_object_quat(m, d, reftype, refid, ref);
      for (int k = 1; k < 4; k++) ref[k] = -ref[k];
      fsi_mul_quat(out, ref, q);
    }
    break;
  }
  case FS_SENS_SUBTREECOM:
    fsi_copy(out, d->subtree_com + 3 * id, 3);
    break;
  case FS_SENS_INSIDESITE:
    fsi_object_frame(d, objtype, id, &pos, &mat);
    // a massless body with mass below it: its subtree's centre (MuJoCo's rule)
    if (objtype == FS_OBJ_BODY && id > 0 && m->body_mass[id] < FS_MINVAL &&
        m->body_subtreemass[id] >= FS_MINVAL)
      pos = d->subtree_com + 3 * id;
    out[0] = (fsReal)fsi_inside_site(m, d, refid, pos);
    break;
  case FS_SENS_CLOCK:
    out[0] = (fsReal)d->time[0];
    break;
  case FS_SENS_VELOCIMETER:
  case FS_SENS_GYRO:
    fsi_object_velocity(m, d, FS_OBJ_SITE, id, v, 1);
    fsi_copy(out, v + (type == FS_SENS_VELOCIMETER ? 3 : 0), 3);
    break;
  case FS_SENS_JOINTVEL:
    out[0] = d->qvel[m->jnt_dofadr[id]];
    break;
  case FS_SENS_ACTUATORVEL:
    out[0] = d->actuator_velocity[id];
    break;
  case FS_SENS_BALLANGVEL:
    fsi_copy(out, d->qvel + m->jnt_dofadr[id], 3);
    break;
  case FS_SENS_FRAMELINVEL:
  case FS_SENS_FRAMEANGVEL:
    fsi_object_velocity(m, d, objtype, id, v, 0);
    if (refid >= 0) { // relative to the reference's moving frame, in it
      fsReal vref[6], rel[6], rvec[3], cross[3];
      fsi_object_frame(d, objtype, id, &pos, &mat);
      fsi_object_frame(d, reftype, refid, &refpos, &refmat);
      fsi_object_velocity(m, d, reftype, refid, vref, 0);
      for (int k = 0; k < 6; k++) rel[k] = v[k] - vref[k];
      for (int k = 0; k < 3; k++) rvec[k] = pos[k] - refpos[k];
      fsi_cross(cross, rvec, vref);
      for (int k = 0; k < 3; k++) rel[3 + k] += cross[k];
      fsi_mul_mat_t_vec3(v, refmat, rel);
      fsi_mul_mat_t_vec3(v + 3, refmat, rel + 3);
    }
    fsi_copy(out, v + (type == FS_SENS_FRAMELINVEL ? 3 : 0), 3);
    break;
  case FS_SENS_ACTUATORFRC:
    out[0] = d->actuator_force[id];
    break;
  case FS_SENS_JOINTACTFRC:
    out[0] = d->qfrc_actuator[m->jnt_dofadr[id]];
    break;
  case FS_SENS_TENDONACTFRC: {
    fsReal frc = 0;
    for (int a = 0; a < m->nu; a++)
      if (m->actuator_trntype[a] == FS_TRN_TENDON && m->actuator_trnid[2 * a] == id)
        frc += d->actuator_force[a];
    out[0] = frc;
    break;
  }
  case FS_SENS_CONTACT:
    fsi_contact_sensor(m, d, i, out);
    break;
  case FS_SENS_TOUCH: { // normal forces of the body's contacts whose ray meets the zone
    int body = m->site_bodyid[id], ncon = m->nconmax ? d->ncon[0] : 0;
    fsReal sum = 0;
    for (int c = 0; c < ncon; c++) {
      int b0 = m->geom_bodyid[d->contact_geom[2 * c]];
      int b1 = m->geom_bodyid[d->contact_geom[2 * c + 1]];
      if (d->contact_efc_address[c] < 0 || (body != b0 && body != b1)) continue;
      fsReal f[6], ray[3];
      fsi_contact_force(m, d, c, f);
      if (f[0] <= 0) continue;
      for (int k = 0; k < 3; k++) ray[k] = d->contact_frame[9 * c + k] * f[0];
      fsi_normalize3(ray);
      if (body == b1)
        for (int k = 0; k < 3; k++) ray[k] = -ray[k];
      if (fsi_ray_site(m, d, id, d->contact_pos + 3 * c, ray) >= 0) sum += f[0];
    }
    out[0] = sum;
    break;
  }
  case FS_SENS_SUBTREELINVEL:
    fsi_copy(out, d->subtree_linvel + 3 * id, 3);
    break;
  case FS_SENS_SUBTREEANGMOM:
    fsi_copy(out, d->subtree_angmom + 3 * id, 3);
    break;
  case FS_SENS_ACCELEROMETER:
    fsi_object_motion(m, d, FS_OBJ_SITE, id, v, 1, 1);
    fsi_copy(out, v + 3, 3);
    break;
  case FS_SENS_FRAMELINACC:
  case FS_SENS_FRAMEANGACC:
    fsi_object_motion(m, d, objtype, id, v, 0, 1);
    fsi_copy(out, v + (type == FS_SENS_FRAMELINACC ? 3 : 0), 3);
    break;
  case FS_SENS_FORCE:
  case FS_SENS_TORQUE: { // the parent's force on the site's body, at the site, in its frame
    int body = m->site_bodyid[id];
    fsi_transform_spatial(v, d->cfrc_int + 6 * body, 1, d->site_xpos + 3 * id,
                          d->subtree_com + 3 * m->body_rootid[body], d->site_xmat + 9 * id);
    fsi_copy(out, v + (type == FS_SENS_FORCE ? 3 : 0), 3);
    break;
  }
  default: // the model's check refuses every other kind (fs_model_sensors_lack)
    break;
  }
}
#endif

/// The sensors of one world, mj_sensorPos, mj_sensorVel and mj_sensorAcc's values (after
/// mj_subtreeVel and mj_rnePostConstraint where a sensor needs them), each clamped to its
/// cutoff (real: both sides; positive: above), contact sensors excepted.
FS_HD void fs_sensor(const fsModel* m, fsData* d) {
#if FSI_SENSOR
  if (!m->sensors) return;
  FS_LANE0 {
    if (m->nsubtreevel) fsi_subtree_vel(m, d);
    if (m->nrnepost) fsi_rne_post_constraint(m, d);
  }
  FS_SYNC();
  FS_FOR_LANE(i, m->nsensor) {
    fsReal* out = d->sensordata + m->sensor_adr[i];
    fsi_sensor_value(m, d, i, out);
    fsReal cutoff = m->sensor_cutoff[i];
    if (cutoff > 0 && m->sensor_type[i] != FS_SENS_CONTACT) {
      for (int k = 0; k < m->sensor_dim[i]; k++) {
        if (m->sensor_datatype[i] == FS_DATATYPE_REAL)
          out[k] = fs_clip(out[k], -cutoff, cutoff);
        else if (m->sensor_datatype[i] == FS_DATATYPE_POSITIVE)
          out[k] = cutoff <= out[k] ? cutoff : out[k]; // mju_min(cutoff, x)
      }
    }
  }
  FS_SYNC();
#else
  (void)m, (void)d;
#endif
}

#endif
