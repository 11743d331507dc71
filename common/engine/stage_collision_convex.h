// Box against convex mesh for the collision stage: MuJoCo 3.16's mjc_Convex under native
// CCD (mjDSBL_NATIVECCD clear), operation for operation. The shapes' support functions
// (box corners; mesh vertices by hill climbing on the hull graph, warm-started from the
// previous call, or exhaustively), GJK and EPA (common/engine/stage_collision_gjk.h), and
// the two multi-contact methods multiccd selects:
//  - margin + gap = 0: MuJoCo's multicontact -- the EPA face's features on either shape
//    (vertex, edge, face), a pair of faces aligned within ~5 deg (or an edge along a
//    face), the one polygon clipped against the other, up to 4 contacts;
//  - margin + gap > 0 (each shape inflated by half of it, no longer polytopes): one
//    contact, then MuJoCo's perturbation: both shapes turned by +-1e-3 rad about the
//    contact frame's two tangents around the first contact, a new contact kept if
//    farther than 1e-3 min(rbound) from those kept, at the first one's depth; up to 5.
// With multiccd off, one contact. A contact: pos the witness points' midpoint, normal
// from geom 2's witness point to geom 1's, dist = margin + their signed distance.
#ifndef FLYSIM_COMMON_ENGINE_STAGE_COLLISION_CONVEX_H
#define FLYSIM_COMMON_ENGINE_STAGE_COLLISION_CONVEX_H

#include "common/engine/stage_collision_gjk.h"

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

/// r = v (an fsReal field read into doubles), r apart from v.
FS_HD void fsi_ccd_load(fsCcdReal* r, const fsReal* v, int n) {
  FS_IVDEP
  for (int i = 0; i < n; i++) r[i] = v[i];
}

/// a . v for a mesh vertex or normal v (MuJoCo's dot3f: its vertices are floats).
FS_HD fsCcdReal fsi_ccd_dotv(const fsCcdReal a[3], const fsReal* v) {
  return a[0] * (fsCcdReal)v[0] + a[1] * (fsCcdReal)v[1] + a[2] * (fsCcdReal)v[2];
}

//--------------------------------- the shapes -----------------------------------------------------

/// Shape of geom g (box or mesh) with the pair's margin (mjc_initCCDObj).
FS_HD void fsi_ccd_obj(fsiCcdObj* o, const fsModel* m, const fsData* d, int g, fsCcdReal margin) {
  o->type = m->geom_type[g];
  o->mesh = o->type == FS_GEOM_MESH ? m->geom_dataid[g] : -1;
  o->hillclimb = o->mesh >= 0 && m->mesh_graphadr[o->mesh] >= 0 &&
                 m->mesh_vertnum[o->mesh] >= FS_MESH_HILLCLIMB;
  o->vertindex = o->meshindex = -1;
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
/// mjc_boxSupport, mjc_hillclimbSupport (warm start: the better of the last vertex and
/// the 3x3x3 seed) or mjc_meshSupport (exhaustive, from the last vertex).
FS_HD void fsi_ccd_shape_support(fsCcdReal res[3], fsiCcdObj* o, const fsCcdReal dir[3]) {
  const fsCcdReal* mat = o->mat;
  fsCcdReal ld[3] = {mat[0] * dir[0] + mat[3] * dir[1] + mat[6] * dir[2],
                     mat[1] * dir[0] + mat[4] * dir[1] + mat[7] * dir[2],
                     mat[2] * dir[0] + mat[5] * dir[1] + mat[8] * dir[2]};
  if (o->type == FS_GEOM_BOX) {
    fsCcdReal s[3];
    for (int i = 0; i < 3; i++) s[i] = ld[i] >= 0 ? o->size[i] : -o->size[i];
    o->vertindex = (s[0] > 0 ? 1 : 0) | (s[1] > 0 ? 2 : 0) | (s[2] > 0 ? 4 : 0);
    fsi_ccd_global(res, mat, o->pos, s[0], s[1], s[2]);
    return;
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

//--------------------------------- multi-contact (margin 0) ---------------------------------------

/// Scratch of the multi-contact step: candidate normals [FS_CCD_DEGMAX x 3] and their
/// face ids, edge ends, the two features' polygons [FS_CCD_POLYMAX x 3], the clipping
/// buffers [2 FS_CCD_POLYMAX x 3] and the clipping planes.
typedef struct fsiCcdMulti {
  int idx1[FS_CCD_DEGMAX], idx2[FS_CCD_DEGMAX];
  fsCcdReal n1[3 * FS_CCD_DEGMAX], n2[3 * FS_CCD_DEGMAX], endverts[3 * FS_CCD_DEGMAX];
  fsCcdReal face1[3 * FS_CCD_POLYMAX], face2[3 * FS_CCD_POLYMAX];
  fsCcdReal poly[6 * FS_CCD_POLYMAX], clipped[6 * FS_CCD_POLYMAX];
  fsCcdReal pn[3 * FS_CCD_POLYMAX], pd[FS_CCD_POLYMAX];
} fsiCcdMulti;

/// Area of quadrilateral a b c d: |(a - c) x (b - d)| / 2.
FS_HD fsCcdReal fsi_ccd_quad_area(const fsCcdReal a[3], const fsCcdReal b[3], const fsCcdReal c[3],
                                  const fsCcdReal d[3]) {
  fsCcdReal u[3], v[3], x[3];
  fsi_ccd_sub(u, a, c);
  fsi_ccd_sub(v, b, d);
  fsi_ccd_cross(x, u, v);
  return sqrt(fsi_ccd_dot(x, x)) * 0.5;
}

/// The largest-area quadrilateral of a polygon of n > 4 vertices [n x 3] (polygonQuad,
/// MuJoCo 3.16): for each a in turn, d, then c, then b advance while the area
/// |(a - c) x (b - d)| / 2 (fsi_ccd_quad_area) grows; its vertex ids in res.
FS_HD void fsi_ccd_polygon_quad(int res[4], const fsCcdReal* poly, int n) {
#define FSI_P(i) (poly + 3 * (i))
  int a = 0, b = 1, c = 2, d = 3;
  res[0] = a, res[1] = b, res[2] = c, res[3] = d;
  fsCcdReal area = fsi_ccd_quad_area(FSI_P(a), FSI_P(b), FSI_P(c), FSI_P(d)), next;
  for (; a < n; a++) { // each search stops at the first area not larger (NaN goes on)
    for (;;) {
      if ((next = fsi_ccd_quad_area(FSI_P(a), FSI_P(b), FSI_P(c), FSI_P((d + 1) % n))) <= area)
        break;
      area = next;
      d = (d + 1) % n;
      for (;;) {
        if ((next = fsi_ccd_quad_area(FSI_P(a), FSI_P(b), FSI_P((c + 1) % n), FSI_P(d))) <= area)
          break;
        area = next;
        c = (c + 1) % n;
      }
      for (;;) {
        if ((next = fsi_ccd_quad_area(FSI_P(a), FSI_P((b + 1) % n), FSI_P(c), FSI_P(d))) <= area)
          break;
        area = next;
        b = (b + 1) % n;
      }
      res[0] = a, res[1] = b, res[2] = c, res[3] = d;
    }
    if (b == a) {
      b = (b + 1) % n;
      if (c == b) {
        c = (c + 1) % n;
        if (d == c) d = (d + 1) % n;
      }
    }
  }
#undef FSI_P
}

/// Witness points of clipped vertex v on the face through p with normal n (w2 = v,
/// w1 = v moved |dist| along dir); returns dist. w1 and w2 apart from the rest.
FS_HD fsCcdReal fsi_ccd_witness_face(fsCcdReal* FS_RESTRICT w1, fsCcdReal* FS_RESTRICT w2,
                                     const fsCcdReal v[3], const fsCcdReal p[3],
                                     const fsCcdReal n[3], const fsCcdReal dir[3]) {
  fsCcdReal d[3];
  fsi_ccd_sub(d, v, p);
  fsCcdReal dist = fsi_ccd_dot(d, n), s = -fabs(dist);
  for (int i = 0; i < 3; i++) {
    w1[i] = v[i] + s * dir[i];
    w2[i] = v[i];
  }
  return dist;
}

/// Clip polygon face2 [nface2 x 3] by the side planes of face1 [nface1 x 3] (normal n),
/// keep the vertices below face1, reduce them to at most max_contacts witness points w1,
/// w2 [n x 3] and distances (polygonClip, MuJoCo 3.16: returns n, 0 writes nothing).
FS_HD int fsi_ccd_polygon_clip(fsCcdReal* w1, fsCcdReal* w2, fsCcdReal* dist, int max_contacts,
                               fsiCcdMulti* w, const fsCcdReal* face1, int nface1,
                               const fsCcdReal* face2, int nface2, const fsCcdReal n[3],
                               const fsCcdReal dir[3]) {
  if (nface1 < 3) return 0;
  fsCcdReal *poly = w->poly, *clipped = w->clipped, *pn = w->pn, *pd = w->pd;
  for (int i = 0; i < nface1; i++) { // plane through edge i, normal to the face (planeNormal)
    const fsCcdReal *v1 = face1 + 3 * i, *v2 = face1 + 3 * (i < nface1 - 1 ? i + 1 : 0);
    fsCcdReal v3[3], d1[3], d2[3];
    fsi_ccd_add(v3, v1, n);
    fsi_ccd_sub(d1, v2, v1);
    fsi_ccd_sub(d2, v3, v1);
    fsi_ccd_cross(pn + 3 * i, d1, d2);
    fsi_ccd_normalize(pn + 3 * i);
    pd[i] = fsi_ccd_dot(pn + 3 * i, v1);
  }
  int npoly = nface2, nclip = 0;
  fsi_ccd_copy(poly, face2, 3 * nface2);
  for (int e = 0; e < 3 * nface1; e += 3) {
    for (int i = 0; i < npoly; i++) {
      const fsCcdReal *P = poly + 3 * i, *Q = (i < npoly - 1) ? poly + 3 * (i + 1) : poly;
      fsCcdReal PQ[3], dp[3], dq[3];
      fsi_ccd_sub(PQ, Q, P);
      fsi_ccd_sub(dp, P, face1 + e);
      fsi_ccd_sub(dq, Q, face1 + e);
      int in1 = fsi_ccd_dot(dp, pn + e) > -FS_CCD_MINVAL,
          in2 = fsi_ccd_dot(dq, pn + e) > -FS_CCD_MINVAL;
      if (!in1 && !in2) continue;
      if (in1 && in2) {
        fsi_ccd_copy(clipped + 3 * nclip++, Q, 3);
        continue;
      }
      fsCcdReal tmp = fsi_ccd_dot(pn + e, PQ);
      if (tmp != 0) {
        fsCcdReal t = (pd[e / 3] - fsi_ccd_dot(pn + e, P)) / tmp;
        if (t >= 0 && t <= 1) {
          fsCcdReal* c = clipped + 3 * nclip++;
          for (int j = 0; j < 3; j++) c[j] = P[j] + t * PQ[j];
        }
      }
      if (in2) fsi_ccd_copy(clipped + 3 * nclip++, Q, 3);
    }
    fsCcdReal* t = poly;
    poly = clipped;
    clipped = t;
    npoly = nclip;
    nclip = 0;
  }
  int count = npoly;
  npoly = 0;
  for (int i = 0; i < count; i++) { // keep the vertices not above face1
    fsCcdReal diff[3];
    fsi_ccd_sub(diff, poly + 3 * i, face1);
    if (fsi_ccd_dot(diff, n) <= 0) {
      if (npoly != i) fsi_ccd_copy(poly + 3 * npoly, poly + 3 * i, 3);
      npoly++;
    }
  }
  if (npoly < 1) return 0;
  if (max_contacts < 5 && npoly > 4) {
    int q[4];
    fsi_ccd_polygon_quad(q, poly, npoly);
    for (int i = 0; i < 4; i++)
      dist[i] = fsi_ccd_witness_face(w1 + 3 * i, w2 + 3 * i, poly + 3 * q[i], face1, n, dir);
    return 4;
  }
  if (nface2 == 2 && npoly > 2) { // an edge: its two farthest points
    int b1 = 0, b2 = 1;
    fsCcdReal dmax = 0;
    for (int i = 0; i < npoly; i++)
      for (int j = i + 1; j < npoly; j++) {
        fsCcdReal diff[3];
        fsi_ccd_sub(diff, poly + 3 * j, poly + 3 * i);
        fsCcdReal d2 = fsi_ccd_dot(diff, diff);
        if (d2 > dmax) {
          dmax = d2;
          b1 = i;
          b2 = j;
        }
      }
    dist[0] = fsi_ccd_witness_face(w1, w2, poly + 3 * b1, face1, n, dir);
    dist[1] = fsi_ccd_witness_face(w1 + 3, w2 + 3, poly + 3 * b2, face1, n, dir);
    return 2;
  }
  if (npoly > max_contacts) npoly = max_contacts; // (MuJoCo 3.16; <= 4 here)
  for (int i = 0; i < npoly; i++)
    dist[i] = fsi_ccd_witness_face(w1 + 3 * i, w2 + 3 * i, poly + 3 * i, face1, n, dir);
  return npoly;
}

/// Up to 2 common values of a[n] and b[nb], in a's order (intersect).
FS_HD int fsi_ccd_common(int res[2], const int* a, const int* b, int n, int nb) {
  int count = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < nb; j++)
      if (a[i] == b[j]) {
        res[count++] = a[i];
        if (count == 2) return 2;
      }
  return count;
}

/// Normals (world) of the mesh polygons holding the feature's dim vertices vi (mesh
/// vertex ids), their polygon ids in resind (meshNormals).
FS_HD int fsi_ccd_mesh_normals(fsCcdReal* res, int* resind, int dim, const fsiCcdObj* o,
                               const int vi[3]) {
  const fsModel* m = o->m;
  int va = m->mesh_vertadr[o->mesh];
  const int *mapadr = m->mesh_polymapadr + va, *mapnum = m->mesh_polymapnum + va;
  const int* polymap = m->mesh_polymap;
  const fsReal* normal = m->mesh_polynormal + 3 * m->mesh_polyadr[o->mesh];
  int set[2], n;
  if (dim == 3 || dim == 2) {
    n = fsi_ccd_common(set, polymap + mapadr[vi[0]], polymap + mapadr[vi[1]], mapnum[vi[0]],
                       mapnum[vi[1]]);
    if (n == 0) return 0;
    if (dim == 3) {
      int face[2];
      n = fsi_ccd_common(face, set, polymap + mapadr[vi[2]], n, mapnum[vi[2]]);
      if (n == 0) return 0;
      set[0] = face[0];
      n = 1;
    }
  } else if (dim == 1) {
    n = mapnum[vi[0]];
    for (int i = 0; i < n; i++) {
      int p = polymap[mapadr[vi[0]] + i];
      const fsReal* nr = normal + 3 * p;
      fsi_ccd_global(res + 3 * i, o->mat, 0, nr[0], nr[1], nr[2]);
      resind[i] = p;
    }
    return n;
  } else {
    return 0;
  }
  for (int i = 0; i < n; i++) {
    const fsReal* nr = normal + 3 * set[i];
    fsi_ccd_global(res + 3 * i, o->mat, 0, nr[0], nr[1], nr[2]);
    resind[i] = set[i];
  }
  return n;
}

/// Unit directions along the mesh edges of the feature (meshEdgeNormals): the edge v1 v2
/// (dim 2), or from vertex v1i to the previous vertex of each of its polygons (dim 1);
/// their far ends in endverts.
FS_HD int fsi_ccd_mesh_edges(fsCcdReal* res, fsCcdReal* endverts, int dim, const fsiCcdObj* o,
                             const fsCcdReal v[9], int v1i) {
  if (dim == 2) {
    fsi_ccd_copy(endverts, v + 3, 3);
    fsi_ccd_sub(res, v + 3, v);
    fsi_ccd_normalize(res);
    return 1;
  }
  if (dim != 1) return 0;
  const fsModel* m = o->m;
  int va = m->mesh_vertadr[o->mesh], pa = m->mesh_polyadr[o->mesh];
  int adr = m->mesh_polymapadr[va + v1i], num = m->mesh_polymapnum[va + v1i];
  for (int i = 0; i < num; i++) {
    int p = pa + m->mesh_polymap[adr + i];
    const int* pv = m->mesh_polyvert + m->mesh_polyvertadr[p];
    int nv = m->mesh_polyvertnum[p];
    for (int j = 0; j < nv; j++)
      if (pv[j] == v1i) {
        fsi_ccd_mesh_vertex(endverts + 3 * i, o, pv[j == 0 ? nv - 1 : j - 1]);
        fsi_ccd_sub(res + 3 * i, endverts + 3 * i, v);
        fsi_ccd_normalize(res + 3 * i);
        break;
      }
  }
  return num;
}

/// The box face whose normal is within ~5 deg of n (boxNormals2); 1 if found.
FS_HD int fsi_ccd_box_normal_near(fsCcdReal res[3], int resind[1], const fsCcdReal mat[9],
                                  const fsCcdReal n[3]) {
  fsCcdReal l[3] = {mat[0] * n[0] + mat[3] * n[1] + mat[6] * n[2],
                    mat[1] * n[0] + mat[4] * n[1] + mat[7] * n[2],
                    mat[2] * n[0] + mat[5] * n[1] + mat[8] * n[2]};
  fsi_ccd_scl(l, l, 1 / sqrt(fsi_ccd_dot(l, l)));
  for (int i = 0; i < 6; i++) {
    fsCcdReal f[3] = {0, 0, 0};
    f[i / 2] = (i & 1) ? -1 : 1;
    if (fsi_ccd_dot(l, f) > FS_CCD_FACE_TOL) {
      fsi_ccd_global(res, mat, 0, f[0], f[1], f[2]);
      resind[0] = i;
      return 1;
    }
  }
  return 0;
}

/// Normals (world) of the box faces holding the feature's corners vi (boxNormals; face
/// ids 0..5 = +x, -x, +y, -y, +z, -z); a feature on no single face uses dir.
FS_HD int fsi_ccd_box_normals(fsCcdReal* res, int* resind, int dim, const fsiCcdObj* o,
                              const int vi[3], const fsCcdReal dir[3]) {
  int a = vi[0], b = vi[1], c = vi[2], s[3], cnt = 0;
  if (dim == 3 || dim == 2) {
    for (int k = 0; k < 3; k++) {
      int bit = 1 << k;
      int all = (a & bit) && (b & bit) && (dim == 2 || (c & bit));
      int none = !(a & bit) && !(b & bit) && (dim == 2 || !(c & bit));
      s[k] = all - none;
    }
  }
  if (dim == 3) {
    fsi_ccd_global(res, o->mat, 0, (fsCcdReal)s[0], (fsCcdReal)s[1], (fsCcdReal)s[2]);
    for (int k = 0; k < 3; k++)
      if (s[k]) resind[cnt++] = 2 * k;
    if (s[0] + s[1] + s[2] == -1) resind[0]++;
    return cnt == 1 ? 1 : fsi_ccd_box_normal_near(res, resind, o->mat, dir);
  }
  if (dim == 2) {
    if (s[0]) {
      fsi_ccd_global(res, o->mat, 0, (fsCcdReal)s[0], 0, 0);
      resind[cnt++] = s[0] > 0 ? 0 : 1;
    }
    if (s[1]) {
      fsi_ccd_global(res + 3 * cnt, o->mat, 0, 0, (fsCcdReal)s[1], 0);
      resind[cnt++] = s[1] > 0 ? 2 : 3;
    }
    if (s[2]) { // MuJoCo writes the z normal to slot 1 whatever came before
      fsi_ccd_global(res + 3, o->mat, 0, 0, 0, (fsCcdReal)s[2]);
      resind[cnt++] = s[2] > 0 ? 4 : 5;
    }
    return cnt == 2 ? 2 : fsi_ccd_box_normal_near(res, resind, o->mat, dir);
  }
  if (dim == 1) {
    fsCcdReal x = (a & 1) ? 1 : -1, y = (a & 2) ? 1 : -1, z = (a & 4) ? 1 : -1;
    fsi_ccd_global(res, o->mat, 0, x, 0, 0);
    fsi_ccd_global(res + 3, o->mat, 0, 0, y, 0);
    fsi_ccd_global(res + 6, o->mat, 0, 0, 0, z);
    resind[0] = x > 0 ? 0 : 1;
    resind[1] = y > 0 ? 2 : 3;
    resind[2] = z > 0 ? 4 : 5;
    return 3;
  }
  return 0;
}

/// Unit directions along the box edges of the feature (boxEdgeNormals): edge v1 v2
/// (dim 2) or the three edges from corner v1i (dim 1); their far ends in endverts.
FS_HD int fsi_ccd_box_edges(fsCcdReal* res, fsCcdReal* endverts, int dim, const fsiCcdObj* o,
                            const fsCcdReal v[9], int v1i) {
  if (dim == 2) {
    fsi_ccd_copy(endverts, v + 3, 3);
    fsi_ccd_sub(res, v + 3, v);
    fsi_ccd_normalize(res);
    return 1;
  }
  if (dim != 1) return 0;
  const fsCcdReal* size = o->size;
  fsCcdReal x = (v1i & 1) ? size[0] : -size[0], y = (v1i & 2) ? size[1] : -size[1];
  fsCcdReal z = (v1i & 4) ? size[2] : -size[2];
  fsi_ccd_global(endverts, o->mat, o->pos, -x, y, z);
  fsi_ccd_global(endverts + 3, o->mat, o->pos, x, -y, z);
  fsi_ccd_global(endverts + 6, o->mat, o->pos, x, y, -z);
  for (int i = 0; i < 3; i++) {
    fsi_ccd_sub(res + 3 * i, endverts + 3 * i, v);
    fsi_ccd_normalize(res + 3 * i);
  }
  return 3;
}

/// Box face idx as a polygon [4 x 3] in MuJoCo's corner order (boxFace).
FS_HD int fsi_ccd_box_face(fsCcdReal* res, const fsiCcdObj* o, int idx) {
  // the faces' corners in MuJoCo's order, 3 bits each (x, y, z positive): +x, -x, +y, -y,
  // +z, -z
  int code = idx == 0   ? 07315
             : idx == 1 ? 02640
             : idx == 2 ? 02376
             : idx == 3 ? 04510
             : idx == 4 ? 06754
             : idx == 5 ? 03201
                        : -1;
  if (code < 0) return 0;
  const fsCcdReal* s = o->size;
  for (int j = 0; j < 4; j++) {
    int c = code >> (9 - 3 * j) & 7;
    fsi_ccd_global(res + 3 * j, o->mat, o->pos, (c & 1) ? s[0] : -s[0], (c & 2) ? s[1] : -s[1],
                   (c & 4) ? s[2] : -s[2]);
  }
  return 4;
}

/// Mesh polygon idx (mesh-local) in world coordinates, its vertices reversed (meshFace).
FS_HD int fsi_ccd_mesh_face(fsCcdReal* res, const fsiCcdObj* o, int idx) {
  const fsModel* m = o->m;
  int p = m->mesh_polyadr[o->mesh] + idx, nv = m->mesh_polyvertnum[p];
  const int* pv = m->mesh_polyvert + m->mesh_polyvertadr[p];
  for (int i = nv - 1, j = 0; i >= 0; i--, j++) fsi_ccd_mesh_vertex(res + 3 * j, o, pv[i]);
  return nv;
}

/// Number of distinct vertices (1, 2, 3) of a feature's ids vi with points v [3 x 3],
/// the distinct ones first (simplexDim).
FS_HD int fsi_ccd_feature_dim(int vi[3], fsCcdReal v[9]) {
  if (vi[0] == vi[1]) {
    if (vi[0] == vi[2]) return 1;
    vi[1] = vi[2];
    fsi_ccd_copy(v + 3, v + 6, 3);
    return 2;
  }
  return (vi[2] == vi[0] || vi[2] == vi[1]) ? 2 : 3;
}

FS_HD int fsi_ccd_normals(fsCcdReal* res, int* resind, int dim, const fsiCcdObj* o, const int vi[3],
                          const fsCcdReal dir[3]) {
  return o->type == FS_GEOM_BOX ? fsi_ccd_box_normals(res, resind, dim, o, vi, dir)
                                : fsi_ccd_mesh_normals(res, resind, dim, o, vi);
}
FS_HD int fsi_ccd_edges(fsCcdReal* res, fsCcdReal* endverts, int dim, const fsiCcdObj* o,
                        const fsCcdReal v[9], int v1i) {
  return o->type == FS_GEOM_BOX ? fsi_ccd_box_edges(res, endverts, dim, o, v, v1i)
                                : fsi_ccd_mesh_edges(res, endverts, dim, o, v, v1i);
}
FS_HD int fsi_ccd_face(fsCcdReal* res, const fsiCcdObj* o, int idx) {
  return o->type == FS_GEOM_BOX ? fsi_ccd_box_face(res, o, idx) : fsi_ccd_mesh_face(res, o, idx);
}

/// The pair of normals n1[nn1], n2[nn2] most opposed, if within FS_CCD_FACE_TOL of
/// facing each other (MuJoCo 3.16: the best pair, the first of equals): their ids.
FS_HD int fsi_ccd_aligned_faces(int res[2], const fsCcdReal* n1, int nn1, const fsCcdReal* n2,
                                int nn2) {
  fsCcdReal best = -FS_CCD_FACE_TOL;
  int found = 0;
  for (int i = 0; i < nn1; i++)
    for (int j = 0; j < nn2; j++) {
      fsCcdReal dot = fsi_ccd_dot(n1 + 3 * i, n2 + 3 * j);
      if (best > dot) {
        res[0] = i, res[1] = j;
        best = dot;
        found = 1;
      }
    }
  return found;
}

/// An edge direction edge[nedge] within FS_CCD_EDGE_TOL of perpendicular to a face
/// normal face[nface] that points along dir (MuJoCo 3.16: faces with normal . dir <=
/// mjMINVAL are skipped); res = (edge, face), the first found, faces outer.
FS_HD int fsi_ccd_aligned_edge(int res[2], const fsCcdReal* edge, int nedge, const fsCcdReal* face,
                               int nface, const fsCcdReal dir[3]) {
  for (int i = 0; i < nface; i++) {
    if (!(fsi_ccd_dot(face + 3 * i, dir) > FS_CCD_MINVAL)) continue;
    for (int j = 0; j < nedge; j++)
      if (fabs(fsi_ccd_dot(edge + 3 * j, face + 3 * i)) < FS_CCD_EDGE_TOL) {
        res[0] = j, res[1] = i;
        return 1;
      }
  }
  return 0;
}

/// Multiple contacts from the EPA face (MuJoCo's multicontact): the features of both
/// shapes that make the face, aligned faces or an edge along a face, clipped.
FS_HD void fsi_ccd_multicontact(const fsiCcdVertex fv[3], fsiCcdStatus* st, const fsiCcdObj* o1,
                                const fsiCcdObj* o2, fsiCcdMulti* w) {
  const fsModel* m = o1->m;
  if (o1->type == FS_GEOM_MESH && !m->mesh_polynum[o1->mesh]) return;
  if (o2->type == FS_GEOM_MESH && !m->mesh_polynum[o2->mesh]) return;
  int v1i[3], v2i[3];
  fsCcdReal v1[9], v2[9];
  for (int i = 0; i < 3; i++) {
    const fsiCcdVertex* pv = fv + i;
    v1i[i] = pv->index1;
    v2i[i] = pv->index2;
    fsi_ccd_copy(v1 + 3 * i, pv->vert1, 3);
    fsi_ccd_copy(v2 + 3 * i, pv->vert2, 3);
  }
  int nface1 = fsi_ccd_feature_dim(v1i, v1), nface2 = fsi_ccd_feature_dim(v2i, v2);
  fsCcdReal dir[3], dir_neg[3];
  fsi_ccd_sub(dir, st->x2, st->x1);
  fsi_ccd_sub(dir_neg, st->x1, st->x2);
  int nn1 = fsi_ccd_normals(w->n1, w->idx1, nface1, o1, v1i, dir_neg);
  int nn2 = fsi_ccd_normals(w->n2, w->idx2, nface2, o2, v2i, dir);
  int res[2], edge1 = 0, edge2 = 0;
  if (nn1 <= 0 || nn2 <= 0 || !fsi_ccd_aligned_faces(res, w->n1, nn1, w->n2, nn2)) {
    if (nface1 < 3 && nn2 != 0 && (nface1 <= nface2 || nn1 == 0)) {
      // an edge of shape 1 along a face of shape 2 (facing along x2 - x1)
      nn1 = fsi_ccd_edges(w->n1, w->endverts, nface1, o1, v1, v1i[0]);
      if (nn2 <= 0 || nn1 <= 0 || !fsi_ccd_aligned_edge(res, w->n1, nn1, w->n2, nn2, dir)) return;
      edge1 = 1;
    } else if (nface2 < 3) { // a face of shape 1 (facing along x1 - x2) along an edge of 2
      int faces1 = nn1 > 0;
      nn2 = fsi_ccd_edges(w->n2, w->endverts, nface2, o2, v2, v2i[0]);
      if (!faces1 || nn2 <= 0 || !fsi_ccd_aligned_edge(res, w->n2, nn2, w->n1, nn1, dir_neg))
        return;
      edge2 = 1;
    } else {
      return;
    }
  }
  int i = res[0], j = res[1];
  if (edge1) {
    fsi_ccd_copy(w->face1, v1, 3);
    fsi_ccd_copy(w->face1 + 3, w->endverts + 3 * i, 3);
    nface1 = 2;
  } else {
    nface1 = fsi_ccd_face(w->face1, o1, edge2 ? w->idx1[j] : w->idx1[i]);
  }
  if (edge2) {
    fsi_ccd_copy(w->face2, v2, 3);
    fsi_ccd_copy(w->face2 + 3, w->endverts + 3 * i, 3);
    nface2 = 2;
  } else {
    nface2 = fsi_ccd_face(w->face2, o2, w->idx2[j]);
  }
  fsCcdReal wdir[3];
  int n;
  if (edge1) { // clip shape 1's edge by shape 2's face: the witness points swap roles
    fsi_ccd_scl(wdir, w->n2 + 3 * j, -1.0);
    n = fsi_ccd_polygon_clip(st->x2, st->x1, st->dist, st->max_contacts, w, w->face2, nface2,
                             w->face1, nface1, w->n2 + 3 * j, wdir);
  } else if (edge2) {
    fsi_ccd_scl(wdir, w->n1 + 3 * j, -1.0);
    n = fsi_ccd_polygon_clip(st->x1, st->x2, st->dist, st->max_contacts, w, w->face1, nface1,
                             w->face2, nface2, w->n1 + 3 * j, wdir);
  } else { // face-face
    fsi_ccd_copy(wdir, w->n2 + 3 * j, 3);
    n = fsi_ccd_polygon_clip(st->x1, st->x2, st->dist, st->max_contacts, w, w->face1, nface1,
                             w->face2, nface2, w->n1 + 3 * i, wdir);
  }
  if (n > 0) st->nx = n;
}

//--------------------------------- mjc_ccd, mjc_Convex --------------------------------------------

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
  fsiCcdObj o1, o2;     // the box and the mesh
  fsiCcdContact con[5]; // the pair's contacts: 1, 4 (multicontact) or 5 (perturbation)
} fsiCcdWork;
#ifdef __cplusplus
static_assert(sizeof(fsiCcdWork) <= 8 * FS_CCD_WORK_DOUBLES, "FS_CCD_WORK_DOUBLES too small");
#else
_Static_assert(sizeof(fsiCcdWork) <= 8 * FS_CCD_WORK_DOUBLES, "FS_CCD_WORK_DOUBLES too small");
#endif

/// MuJoCo's mjc_ccd without distances: GJK, then EPA if the shapes intersect, then the
/// multi-contact step if max_contacts > 1. Returns the smallest witness distance
/// (negative: penetrating); witness points in w->st.
FS_HD fsCcdReal fsi_ccd(const fsModel* m, fsiCcdWork* w, fsiCcdObj* o1, fsiCcdObj* o2,
                        int max_contacts) {
  fsiCcdStatus* st = &w->st;
  fsi_ccd_copy(st->x1, o1->pos, 3);
  fsi_ccd_copy(st->x2, o2->pos, 3);
  st->gjk_iterations = 0;
  st->tolerance = m->ccd_tolerance;
  st->max_iterations = m->ccd_iterations;
  st->max_contacts = max_contacts;
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

/// mju_makeFrame from a normal alone (f[3..8] 0): y if the normal is not near it, else
/// z, made orthogonal; their cross product.
FS_HD void fsi_ccd_make_frame(fsCcdReal f[9]) {
  fsi_ccd_normalize(f);
  f[3] = f[4] = f[5] = 0;
  if (f[1] < 0.5 && f[1] > -0.5)
    f[4] = 1;
  else
    f[5] = 1;
  fsCcdReal s = fsi_ccd_dot(f, f + 3);
  for (int j = 0; j < 3; j++) f[3 + j] -= f[j] * s;
  fsi_ccd_normalize(f + 3);
  fsi_ccd_cross(f + 6, f, f + 3);
}

/// Rotation matrix of angle about the unit axis (mju_axisAngle2Quat, mju_quat2Mat).
FS_HD void fsi_ccd_axis_angle_mat(fsCcdReal r[9], const fsCcdReal axis[3], fsCcdReal angle) {
  fsCcdReal s = sin(angle * 0.5), q[4] = {cos(angle * 0.5), axis[0] * s, axis[1] * s, axis[2] * s};
  fsCcdReal ww = q[0] * q[0], wx = q[0] * q[1], wy = q[0] * q[2], wz = q[0] * q[3];
  fsCcdReal xx = q[1] * q[1], xy = q[1] * q[2], xz = q[1] * q[3];
  fsCcdReal yy = q[2] * q[2], yz = q[2] * q[3], zz = q[3] * q[3];
  r[0] = ww + xx - yy - zz;
  r[4] = ww - xx + yy - zz;
  r[8] = ww - xx - yy + zz;
  r[1] = 2 * (xy - wz);
  r[2] = 2 * (xz + wy);
  r[3] = 2 * (xy + wz);
  r[5] = 2 * (yz - wx);
  r[6] = 2 * (xz - wy);
  r[7] = 2 * (yz + wx);
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

/// Box g1 against convex mesh g2 with margin (margin + gap) into slots k..., w the lane's
/// scratch: skipped if their bounding spheres are beyond the margin (mj_filterSphere) or
/// the mesh's bounding sphere is beyond a face slab of the box (fsi_mesh_beyond_box),
/// else MuJoCo 3.16's mjc_Convex under native CCD. Returns the number of contacts (at
/// most fs_model_pair_maxcon's bound: 1, 4 or 5).
FS_HD FSI_CCD_NOINLINE int fsi_box_mesh(const fsModel* m, fsData* d, int k, int g1, int g2,
                                        fsReal margin_, fsiCcdWork* w) {
  const fsReal *p1 = d->geom_xpos + 3 * g1, *p2 = d->geom_xpos + 3 * g2;
  fsCcdReal margin = margin_;
  fsCcdReal dif[3] = {(fsCcdReal)p1[0] - p2[0], (fsCcdReal)p1[1] - p2[1], (fsCcdReal)p1[2] - p2[2]};
  fsCcdReal bound = (fsCcdReal)m->geom_rbound[g1] + m->geom_rbound[g2] + margin;
  if (fsi_ccd_dot(dif, dif) > bound * bound) return 0; // mj_filterSphere
  if (fsi_mesh_beyond_box(m, d, g1, g2, margin_)) return 0;
  fsiCcdObj *o1 = &w->o1, *o2 = &w->o2;
  fsiCcdContact* con = w->con;
  fsi_ccd_obj(o1, m, d, g1, margin);
  fsi_ccd_obj(o2, m, d, g2, margin);
  int multi = !(m->disableflags & FS_DSBL_MULTICCD);
  int max_contacts = (margin > 0 || !multi) ? 1 : 4; // maxContacts
  int ncon = fsi_ccd_penetration(m, w, o1, o2, max_contacts, margin, con);
  if (max_contacts == 1 && ncon == 1 && multi)
    ncon = fsi_ccd_perturb(m, w, o1, o2, g1, g2, margin, con);
  for (int i = 0; i < ncon; i++) {
    fsReal pos[3], nrm[3];
    for (int j = 0; j < 3; j++) pos[j] = (fsReal)con[i].pos[j], nrm[j] = (fsReal)con[i].normal[j];
    fsi_precon(d, k + i, (fsReal)con[i].dist, pos, nrm, 0);
  }
  return ncon;
}

#endif
