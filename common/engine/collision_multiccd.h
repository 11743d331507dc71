// The convex collider's multi-contact step at margin + gap = 0 (collision_convex.h): MuJoCo
// 3.16's multicontact in engine_collision_gjk.c (MuJoCo Warp's collision_gjk.py),
// operation for operation. From the EPA face (collision_gjk.h), the features of either
// shape that make it -- a vertex, an edge or a face (simplexDim) -- their faces' normals
// (boxNormals, meshNormals) and edges' directions (boxEdgeNormals, meshEdgeNormals); a pair
// of faces aligned within ~5 deg, or an edge along a face; then the one polygon clipped
// against the other (polygonClip, reduced by polygonQuad): up to 4 contacts' witness points
// and distances in the status.
#ifndef FLYSIM_COMMON_ENGINE_COLLISION_MULTICCD_H
#define FLYSIM_COMMON_ENGINE_COLLISION_MULTICCD_H

#include "common/engine/collision_gjk.h"

#define FS_CCD_POLYMAX  16     // vertices of a mesh's hull polygon at most (mesh_polyvertnum)
#define FS_CCD_DEGMAX   32     // hull polygons at a mesh vertex at most (mesh_polymapnum)
#define FS_CCD_FACE_TOL 0.996  // mjFACE_TOL: faces aligned (~5.1 deg)
#define FS_CCD_EDGE_TOL 0.0888 // mjEDGE_TOL: edge along a face

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

/// Unit direction of an edge feature v1 v2 (dim 2) and its far end in endverts: the first
/// case of boxEdgeNormals and of meshEdgeNormals, the same for a box or a mesh.
FS_HD int fsi_ccd_edge_dir(fsCcdReal* res, fsCcdReal* endverts, const fsCcdReal v[9]) {
  fsi_ccd_copy(endverts, v + 3, 3);
  fsi_ccd_sub(res, v + 3, v);
  fsi_ccd_normalize(res);
  return 1;
}

/// Unit directions along the mesh edges of the feature (meshEdgeNormals): the edge v1 v2
/// (dim 2), or from vertex v1i to the previous vertex of each of its polygons (dim 1);
/// their far ends in endverts.
FS_HD int fsi_ccd_mesh_edges(fsCcdReal* res, fsCcdReal* endverts, int dim, const fsiCcdObj* o,
                             const fsCcdReal v[9], int v1i) {
  if (dim == 2) return fsi_ccd_edge_dir(res, endverts, v);
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
  if (dim == 2) return fsi_ccd_edge_dir(res, endverts, v);
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

#endif
