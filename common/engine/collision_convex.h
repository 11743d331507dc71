// The convex collider of the collision stage: the pairs of convex geoms that MuJoCo sends to
// mjc_Convex (fsi_convex_types: meshes, ellipsoids, cylinders with most shapes), MuJoCo 3.16's
// mjc_Convex under native CCD (mjDSBL_NATIVECCD clear) in engine_collision_convex.c
// (mjc_ccd, mjc_penetration, the multiccd perturbation; MuJoCo Warp's
// collision_convex.py), operation for operation. GJK and EPA (collision_gjk.h, over the
// shapes' support in collision_support.h) give the penetration; a sphere or capsule first
// runs GJK on its core (centre, segment) and, unless deep, inflates the result by its
// radius. Then the multi-contact methods multiccd selects:
//  - margin + gap = 0, boxes and meshes: MuJoCo's multicontact (collision_multiccd.h) --
//    the EPA face's features on either shape (vertex, edge, face), a pair of faces aligned
//    within ~5 deg (or an edge along a face), the one polygon clipped against the other,
//    up to 4 contacts;
//  - margin + gap > 0 (each shape inflated by half of it, no longer polytopes): one
//    contact, then, unless a shape is a sphere or an ellipsoid, MuJoCo's perturbation:
//    both shapes turned by +-1e-3 rad about the contact frame's two tangents around the
//    first contact, a new contact kept if farther than 1e-3 min(rbound) from those kept,
//    at the first one's depth; up to 5;
//  - a sphere's or an ellipsoid's pair: one contact (a capsule's or cylinder's pairs at
//    margin 0 take MuJoCo 3.16's multi-contact for them, which the model check refuses).
// With multiccd off, one contact. A contact: pos the witness points' midpoint, normal from
// geom 2's witness point to geom 1's, dist = margin + their signed distance.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_CONVEX_H
#define FLYSIM_COMMON_ENGINE_COLLISION_CONVEX_H

#include "common/engine/collision_box.h"
#include "common/engine/collision_multiccd.h"

#define FS_DSBL_NATIVECCD (1 << 17) // mjDSBL_NATIVECCD: libccd instead (refused)
#define FS_DSBL_MULTICCD  (1 << 19) // mjDSBL_MULTICCD: one contact per convex pair

// On the device the collider is a call, not inlined into the collision loop: its
// registers stay out of the step kernels' other stages; its 17.6 KiB of scratch
// (fsiCcdWork) is the world's ccd_work (FS_CCD_LANES lanes'), not a lane's stack.
#ifdef __CUDACC__
#define FSI_CCD_NOINLINE __noinline__
#else
#define FSI_CCD_NOINLINE
#endif

/// A contact of the pair (MuJoCo's mjPreContact, tangent 0), in double.
typedef struct fsiCcdContact {
  fsCcdReal dist, pos[3], normal[3];
} fsiCcdContact;

/// A lane's scratch for one convex pair (in the world's ccd_work: FS_CCD_WORK_DOUBLES):
/// the pair's shapes and contacts too, which the collider's calls reach through pointers
/// (memory the world owns, not the calling lane's stack frame).
typedef struct fsiCcdWork {
  fsiCcdStatus st;
  union {
    fsiCcdPolytope pt;
    fsiCcdMulti multi; // after EPA (the face's data copied out first, as MuJoCo does)
  } u;
  fsiCcdObj o1, o2;     // the pair's shapes
  fsiCcdContact con[5]; // the pair's contacts: 1, 4 (multicontact) or 5 (perturbation)
} fsiCcdWork;
#ifdef __cplusplus
static_assert(sizeof(fsiCcdWork) <= 8 * FS_CCD_WORK_DOUBLES, "FS_CCD_WORK_DOUBLES too small");
#else
_Static_assert(sizeof(fsiCcdWork) <= 8 * FS_CCD_WORK_DOUBLES, "FS_CCD_WORK_DOUBLES too small");
#endif

/// 1 for a sphere or a capsule: GJK first runs on its core (centre, segment).
FS_HD int fsi_ccd_rounded(const fsiCcdObj* o) {
  return o->type == FS_GEOM_SPHERE || o->type == FS_GEOM_CAPSULE;
}

/// Witness points pushed apart by the cores' radii r1, r2 (MuJoCo's inflate).
FS_HD void fsi_ccd_inflate(fsiCcdStatus* st, fsCcdReal r1, fsCcdReal r2) {
  fsCcdReal n[3];
  fsi_ccd_sub(n, st->x2, st->x1);
  fsi_ccd_normalize(n);
  if (r1 != 0)
    for (int i = 0; i < 3; i++) st->x1[i] += r1 * n[i];
  if (r2 != 0)
    for (int i = 0; i < 3; i++) st->x2[i] -= r2 * n[i];
  st->dist[0] -= r1 + r2;
}

/// MuJoCo's mjc_ccd without distances (dist_cutoff 0). With a sphere or capsule, GJK first
/// measures the distance between the cores (centre, segment: margin and radius set aside)
/// and, if it exceeds the tolerance, the contact is the cores' witness points pushed out by
/// the radii (a positive distance: none). Otherwise, GJK on the whole shapes, then EPA if
/// they intersect, then the multi-contact step if max_contacts > 1. Returns the smallest
/// witness distance (negative: penetrating); witness points in w->st.
FS_HD fsCcdReal fsi_ccd(const fsModel* m, fsiCcdWork* w, fsiCcdObj* o1, fsiCcdObj* o2,
                        int max_contacts) {
  fsiCcdStatus* st = &w->st;
  fsi_ccd_copy(st->x1, o1->pos, 3);
  fsi_ccd_copy(st->x2, o2->pos, 3);
  st->gjk_iterations = 0;
  st->tolerance = m->ccd_tolerance;
  st->max_iterations = m->ccd_iterations;
  st->max_contacts = max_contacts;
  st->cutoff = 0;
  if (fsi_ccd_rounded(o1) || fsi_ccd_rounded(o2)) {
    fsCcdReal margin1 = o1->margin, margin2 = o2->margin, r1 = 0, r2 = 0;
    if (fsi_ccd_rounded(o1)) r1 = o1->size[0] + 0.5 * margin1, o1->core = 1, o1->margin = 0;
    if (fsi_ccd_rounded(o2)) r2 = o2->size[0] + 0.5 * margin2, o2->core = 1, o2->margin = 0;
    st->cutoff = r1 + r2;
    fsi_gjk(st, o1, o2);
    st->cutoff = 0;
    o1->margin = margin1, o2->margin = margin2;
    o1->core = o2->core = 0;
    if (st->dist[0] > st->tolerance) { // shallow: the cores' distance less the radii
      fsi_ccd_inflate(st, r1, r2);
      if (st->dist[0] > 0) st->dist[0] = FS_CCD_LIMIT;
      return st->dist[0];
    }
    st->gjk_iterations = 0; // deep: GJK again on the whole shapes
    fsi_ccd_copy(st->x1, o1->pos, 3);
    fsi_ccd_copy(st->x2, o2->pos, 3);
  }
  fsi_gjk(st, o1, o2);
  if (st->dist[0] <= m->ccd_tolerance && st->nsimplex > 1 && !st->separated) {
    st->dist[0] = 0; // assume touching
    fsiCcdPolytope* pt = &w->u.pt;
    pt->nfaces = pt->nmap = pt->nverts = pt->nedges = pt->overflow = 0;
    pt->maxfaces = 6 * m->ccd_iterations;
    int ret = st->nsimplex == 2   ? fsi_epa_polytope2(pt, st, o1, o2)
              : st->nsimplex == 3 ? fsi_epa_polytope3(pt, st, o1, o2)
                                  : fsi_epa_polytope4(pt, st, o1, o2);
    if (!ret) {
      int face = fsi_epa(st, pt, o1, o2);
      if (max_contacts > 1 && face >= 0) {
        fsiCcdVertex fv[3]; // the face's vertices, out of the polytope's memory
        int vs[3];
        fsi_epa_verts(pt->faces + face, vs);
        for (int i = 0; i < 3; i++) fv[i] = pt->verts[vs[i]];
        fsi_ccd_multicontact(fv, st, o1, o2, &w->u.multi);
      }
    }
  }
  fsCcdReal min_dist = st->dist[0];
  for (int i = 1; i < st->nx; i++)
    if (st->dist[i] < min_dist) min_dist = st->dist[i];
  return min_dist;
}

/// MuJoCo's mjc_penetration (native): contacts from the witness points into con[...]:
/// pos the midpoint, normal x1 - x2 normalized, dist = margin + witness distance.
FS_HD int fsi_ccd_penetration(const fsModel* m, fsiCcdWork* w, fsiCcdObj* o1, fsiCcdObj* o2,
                              int max_contacts, fsCcdReal margin, fsiCcdContact* con) {
  if (!(fsi_ccd(m, w, o1, o2, max_contacts) < 0)) return 0;
  const fsiCcdStatus* st = &w->st;
  for (int i = 0; i < st->nx; i++) {
    const fsCcdReal *x1 = st->x1 + 3 * i, *x2 = st->x2 + 3 * i;
    con[i].dist = margin + st->dist[i];
    fsi_ccd_add(con[i].pos, x1, x2);
    fsi_ccd_scl(con[i].pos, con[i].pos, 0.5);
    fsi_ccd_sub(con[i].normal, x1, x2);
    fsi_ccd_normalize(con[i].normal);
  }
  return st->nx;
}

// mju_makeFrame and mju_quat2Mat in double (common/engine/spatial.h's definitions).
FSI_DEFINE_MAKE_FRAME(fsi_ccd_make_frame, fsCcdReal, fsi_ccd_normalize, fsi_ccd_dot, fsi_ccd_cross)
FSI_DEFINE_QUAT_TO_MAT(fsi_ccd_quat_to_mat, fsCcdReal)

/// Rotation matrix of angle about the unit axis (mju_axisAngle2Quat, then mju_quat2Mat).
FS_HD void fsi_ccd_axis_angle_mat(fsCcdReal r[9], const fsCcdReal axis[3], fsCcdReal angle) {
  fsCcdReal s = sin(angle * 0.5), q[4] = {cos(angle * 0.5), axis[0] * s, axis[1] * s, axis[2] * s};
  fsi_ccd_quat_to_mat(r, q);
}

/// Turn a shape's frame by rot about the point origin (mju_rotateFrame).
FS_HD void fsi_ccd_rotate_frame(const fsCcdReal origin[3], const fsCcdReal rot[9], fsCcdReal mat[9],
                                fsCcdReal pos[3]) {
  fsCcdReal r[9], rel[3], vec[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      r[3 * i + j] =
          rot[3 * i] * mat[j] + rot[3 * i + 1] * mat[3 + j] + rot[3 * i + 2] * mat[6 + j];
  fsi_ccd_copy(mat, r, 9);
  fsi_ccd_sub(rel, origin, pos);
  fsi_ccd_mul_mat_vec(vec, rot, rel);
  for (int i = 0; i < 3; i++) vec[i] -= rel[i];
  for (int i = 0; i < 3; i++) pos[i] -= vec[i];
}

/// MuJoCo's multiccd perturbation after a first contact con[0] (margin > 0): both shapes
/// turned by -+1e-3 rad about the contact frame's tangents around con[0].pos (g1 by rot,
/// g2 by its inverse); a new contact kept if farther than 1e-3 min(rbound) from every
/// kept one, at con[0]'s depth. Returns the contacts in all (1..5).
FS_HD int fsi_ccd_perturb(const fsModel* m, fsiCcdWork* w, fsiCcdObj* o1, fsiCcdObj* o2, int g1,
                          int g2, fsCcdReal margin, fsiCcdContact* con) {
  fsCcdReal frame[9], pos1[3], mat1[9], pos2[3], mat2[9];
  fsi_ccd_copy(frame, con[0].normal, 3);
  frame[3] = frame[4] = frame[5] = 0; // no tangent: mju_makeFrame's own
  fsi_ccd_make_frame(frame);
  fsi_ccd_copy(pos1, o1->pos, 3), fsi_ccd_copy(mat1, o1->mat, 9);
  fsi_ccd_copy(pos2, o2->pos, 3), fsi_ccd_copy(mat2, o2->mat, 9);
  fsCcdReal rb1 = m->geom_rbound[g1], rb2 = m->geom_rbound[g2];
  fsCcdReal tol = 1e-3 * (rb1 < rb2 ? rb1 : rb2);
  int ncon = 1;
  for (int axis = 0; axis < 2; axis++)
    for (int sgn = 0; sgn < 2; sgn++) {
      fsCcdReal rot[9], inv[9];
      fsi_ccd_axis_angle_mat(rot, frame + 3 + 3 * axis, sgn ? 1e-3 : -1e-3);
      fsi_ccd_rotate_frame(con[0].pos, rot, o1->mat, o1->pos);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) inv[3 * i + j] = rot[3 * j + i];
      fsi_ccd_rotate_frame(con[0].pos, inv, o2->mat, o2->pos);
      if (fsi_ccd_penetration(m, w, o1, o2, 1, margin, con + ncon)) {
        int distinct = 1;
        for (int i = 0; i < ncon && distinct; i++) { // mjc_isDistinctContact
          fsCcdReal gap[3];
          fsi_ccd_sub(gap, con[i].pos, con[ncon].pos);
          distinct = !(sqrt(fsi_ccd_dot(gap, gap)) <= tol);
        }
        if (distinct) con[ncon++].dist = con[0].dist;
      }
      fsi_ccd_copy(o1->pos, pos1, 3), fsi_ccd_copy(o1->mat, mat1, 9);
      fsi_ccd_copy(o2->pos, pos2, 3), fsi_ccd_copy(o2->mat, mat2, 9);
    }
  return ncon;
}

/// 1 if mesh g2's bounding sphere lies beyond a face slab of box g1 by more than margin
/// (fsi_beyond_box with the mesh's centre in the box's frame and reach rbound + margin).
FS_HD int fsi_mesh_beyond_box(const fsModel* m, const fsData* d, int g1, int g2, fsReal margin) {
  const fsReal *p1 = d->geom_xpos + 3 * g1, *mat1 = d->geom_xmat + 9 * g1;
  const fsReal* p2 = d->geom_xpos + 3 * g2;
  fsReal rel[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]}, c[3], ext[3] = {0, 0, 0};
  for (int j = 0; j < 3; j++) c[j] = mat1[j] * rel[0] + mat1[3 + j] * rel[1] + mat1[6 + j] * rel[2];
  return fsi_beyond_box(c, ext, m->geom_size + 3 * g1, m->geom_rbound[g2] + margin);
}

/// 1 if MuJoCo's collision table sends geoms of types t1, t2 (either order) to mjc_Convex: a sphere
/// with an ellipsoid or mesh; a capsule with an ellipsoid, cylinder or mesh; an ellipsoid
/// with an ellipsoid, cylinder, box or mesh; a cylinder with a cylinder, box or mesh; a
/// box or a mesh with a mesh. (Sphere-cylinder, the spheres', capsules' and boxes' other
/// pairs have colliders of their own; heightfields mjc_ConvexHField.)
FS_HD int fsi_convex_types(int t1, int t2) {
  if (t1 > t2) {
    int t = t1;
    t1 = t2;
    t2 = t;
  }
  if (t1 < FS_GEOM_SPHERE || t2 > FS_GEOM_MESH) return 0;
  switch (t2) {
  case FS_GEOM_ELLIPSOID:
  case FS_GEOM_MESH:
    return 1;
  case FS_GEOM_CYLINDER:
    return t1 != FS_GEOM_SPHERE;
  case FS_GEOM_BOX:
    return t1 == FS_GEOM_ELLIPSOID || t1 == FS_GEOM_CYLINDER;
  default:
    return 0;
  }
}

/// 1 if the device collides geoms of types t1, t2 (either order) only in the step kernels with
/// the convex collider (FSI_CONVEX, stage_collision.h): the convex pairs, and a sphere with a
/// cylinder (fsi_sphere_cylinder: its case in the other kernels' dispatch cost the fly's
/// step kernel a register and others spills; ptxas, sm_90). A model with any of them steps
/// with the convex kernel (nccdwork > 0).
FS_HD int fsi_convex_kernel_types(int t1, int t2) {
  int lo = t1 < t2 ? t1 : t2, hi = t1 < t2 ? t2 : t1;
  return fsi_convex_types(t1, t2) || (lo == FS_GEOM_SPHERE && hi == FS_GEOM_CYLINDER);
}

/// 1 for a box or a mesh: a polytope, whose pairs make MuJoCo's multi-contact at margin 0.
FS_HD int fsi_ccd_polytope(int type) {
  return type == FS_GEOM_BOX || type == FS_GEOM_MESH;
}

/// Convex geoms g1, g2 (lower type first) with margin (margin + gap) into slots k..., w the
/// lane's scratch: skipped if their bounding spheres are beyond the margin
/// (mj_filterSphere) or, box against mesh, the mesh's bounding sphere is beyond a face slab
/// of the box (fsi_mesh_beyond_box), else MuJoCo 3.16's mjc_Convex under native CCD: up to
/// 4 contacts between polytopes at margin 0 (multicontact), else one, and the perturbation's
/// up to 4 more unless a shape is a sphere or an ellipsoid. Returns the number of contacts
/// (at most fs_model_pair_maxcon's bound: 1, 4 or 5).
FS_HD FSI_CCD_NOINLINE int fsi_convex(const fsModel* m, fsData* d, int k, int g1, int g2,
                                      fsReal margin_, fsiCcdWork* w) {
  const fsReal *p1 = d->geom_xpos + 3 * g1, *p2 = d->geom_xpos + 3 * g2;
  fsCcdReal margin = margin_;
  fsCcdReal dif[3] = {(fsCcdReal)p1[0] - p2[0], (fsCcdReal)p1[1] - p2[1], (fsCcdReal)p1[2] - p2[2]};
  fsCcdReal bound = (fsCcdReal)m->geom_rbound[g1] + m->geom_rbound[g2] + margin;
  if (fsi_ccd_dot(dif, dif) > bound * bound) return 0; // mj_filterSphere
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
  if (t1 == FS_GEOM_BOX && t2 == FS_GEOM_MESH && fsi_mesh_beyond_box(m, d, g1, g2, margin_))
    return 0;
  fsiCcdObj *o1 = &w->o1, *o2 = &w->o2;
  fsiCcdContact* con = w->con;
  fsi_ccd_obj(o1, m, d, g1, margin);
  fsi_ccd_obj(o2, m, d, g2, margin);
  int multi = !(m->disableflags & FS_DSBL_MULTICCD);
  int max_contacts = // maxContacts
      margin > 0 || !multi || !fsi_ccd_polytope(t1) || !fsi_ccd_polytope(t2) ? 1 : 4;
  int ncon = fsi_ccd_penetration(m, w, o1, o2, max_contacts, margin, con);
  int round = t1 == FS_GEOM_SPHERE || t1 == FS_GEOM_ELLIPSOID || t2 == FS_GEOM_ELLIPSOID;
  if (max_contacts == 1 && ncon == 1 && multi && !round)
    ncon = fsi_ccd_perturb(m, w, o1, o2, g1, g2, margin, con);
  for (int i = 0; i < ncon; i++) {
    fsReal pos[3], nrm[3];
    for (int j = 0; j < 3; j++) pos[j] = (fsReal)con[i].pos[j], nrm[j] = (fsReal)con[i].normal[j];
    fsi_precon(d, k + i, (fsReal)con[i].dist, pos, nrm, 0);
  }
  return ncon;
}

#endif
