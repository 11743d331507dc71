// The model's contact pairs (common/model/model.h, fsPairTable): the geom pairs MuJoCo's
// mj_collision can ever collide, in the order its contacts come out, with their contact
// parameters -- the explicit <pair>s and the pairs its broadphase finds by
// contype/conaffinity -- so that the collision stage (common/engine/stage_collision.h) treats
// them all as one static pair list.
//
// mj_collision (engine_collision_driver.c) walks the body pairs its broadphase returns in
// signature order ((body1 << 16) + body2, body1 < body2) and, before each, the explicit
// pairs whose signature is not above it (the compiler sorts them by signature); then the
// body pair's geom pairs; then the explicit pairs left. Which body pairs the broadphase
// returns depends on the state (bounding boxes), but the order of those it returns does not,
// so the merged list below is MuJoCo's order of every pair it may test, and the collision
// stage's bounding-sphere pre-test and colliders decide, per step, which make contacts (a
// pair the broadphase's boxes leave out cannot touch within its margin + gap).
//
// A body pair's geoms collide when (filterBodyPair, canCollide2, the exclude list,
// filterBitmask, the merged explicit pairs, mjCOLLISIONFUNC): the bodies are not welded
// together, not both without dofs (their weld bodies'), not parent and child (weld bodies
// other than the world's) unless filterparent is disabled, not <exclude>d; the geoms'
// contype of one and conaffinity of the other share a bit; no explicit pair has the same
// two geoms; MuJoCo has a collision function for their types. Within a body pair, geoms in
// the order of the first body's, then the second's; where the midphase runs (enabled, both
// bodies have a bounding volume hierarchy, not both of one geom) MuJoCo sorts the body
// pair's contacts by their geom ids (lower geom type first), so the pairs go in that order.
#include "common/model/model.h"

#include <stdlib.h>
#include <string.h>

double fs_pair_margin_gap(const mjModel* m, const fsPairTable* t, int p) {
  const double* prm = t->param + (size_t)FS_PAIR_NPARAM * p;
  int override = (m->opt.enableflags & mjENBL_OVERRIDE) != 0;
  return (override ? m->opt.o_margin : prm[FS_PAIR_MARGIN]) + prm[FS_PAIR_GAP];
}

void fs_pair_table_free(fsPairTable* t) {
  free(t->geom1);
  free(t->geom2);
  free(t->dim);
  free(t->mjpair);
  free(t->param);
  memset(t, 0, sizeof *t);
}

// Room for n pairs; -1 when out of memory.
static int table_reserve(fsPairTable* t, int n, fsError* err) {
  if (n <= t->cap) return 0;
  int cap = t->cap ? 2 * t->cap : 64;
  while (cap < n) cap *= 2;
  int* g1 = realloc(t->geom1, (size_t)cap * sizeof(int));
  if (g1) t->geom1 = g1;
  int* g2 = realloc(t->geom2, (size_t)cap * sizeof(int));
  if (g2) t->geom2 = g2;
  int* dim = realloc(t->dim, (size_t)cap * sizeof(int));
  if (dim) t->dim = dim;
  int* mp = realloc(t->mjpair, (size_t)cap * sizeof(int));
  if (mp) t->mjpair = mp;
  double* prm = realloc(t->param, (size_t)cap * FS_PAIR_NPARAM * sizeof(double));
  if (prm) t->param = prm;
  if (!g1 || !g2 || !dim || !mp || !prm) return fs_fail(err, "out of memory listing contact pairs");
  t->cap = cap;
  return 0;
}

// Explicit pair k as the table holds it: the mjModel's geoms and parameters.
static void add_explicit(const mjModel* m, fsPairTable* t, int k) {
  int i = t->n++;
  t->geom1[i] = m->pair_geom1[k];
  t->geom2[i] = m->pair_geom2[k];
  t->dim[i] = m->pair_dim[k];
  t->mjpair[i] = k;
  double* p = t->param + (size_t)FS_PAIR_NPARAM * i;
  for (int j = 0; j < mjNREF; j++) {
    p[FS_PAIR_SOLREF + j] = m->pair_solref[mjNREF * k + j];
    p[FS_PAIR_SOLREFFRICTION + j] = m->pair_solreffriction[mjNREF * k + j];
  }
  for (int j = 0; j < mjNIMP; j++) p[FS_PAIR_SOLIMP + j] = m->pair_solimp[mjNIMP * k + j];
  for (int j = 0; j < 5; j++) p[FS_PAIR_FRICTION + j] = m->pair_friction[5 * k + j];
  p[FS_PAIR_MARGIN] = m->pair_margin[k];
  p[FS_PAIR_GAP] = m->pair_gap[k];
  p[FS_PAIR_ADHESION] = m->pair_adhesion[k];
}

// The geom pair's sort key where MuJoCo's midphase sorts a body pair's contacts: the
// geom ids, lower geom type first (contactcompare).
static void collision_ids(const mjModel* m, int a, int b, int* lo, int* hi) {
  int swap = m->geom_type[a] > m->geom_type[b];
  *lo = swap ? b : a;
  *hi = swap ? a : b;
}

// Geom pair (g1, g2) found by the broadphase, with MuJoCo's mixed parameters (mj_contactParam
// of the geoms in collision order, lower type first:
// the higher priority's, else condim and friction the larger, solref and solimp mixed by
// solmix (solref the smaller where either is direct), adhesion summed; margin and gap summed;
// no solreffriction).
static void add_geoms(const mjModel* m, fsPairTable* t, int g1, int g2) {
  int i = t->n++, a, b;
  t->geom1[i] = g1;
  t->geom2[i] = g2;
  t->mjpair[i] = -1;
  collision_ids(m, g1, g2, &a, &b); // mixed in collision order (mixing is not symmetric)
  double* p = t->param + (size_t)FS_PAIR_NPARAM * i;
  const mjtNum *ref1 = m->geom_solref + mjNREF * a, *ref2 = m->geom_solref + mjNREF * b;
  const mjtNum *imp1 = m->geom_solimp + mjNIMP * a, *imp2 = m->geom_solimp + mjNIMP * b;
  const mjtNum *fr1 = m->geom_friction + 3 * a, *fr2 = m->geom_friction + 3 * b;
  double fri[3];
  p[FS_PAIR_ADHESION] = m->geom_adhesion[a] + m->geom_adhesion[b];
  if (m->geom_priority[a] != m->geom_priority[b]) {
    int hi = m->geom_priority[a] > m->geom_priority[b] ? a : b;
    t->dim[i] = m->geom_condim[hi];
    for (int j = 0; j < mjNREF; j++) p[FS_PAIR_SOLREF + j] = m->geom_solref[mjNREF * hi + j];
    for (int j = 0; j < mjNIMP; j++) p[FS_PAIR_SOLIMP + j] = m->geom_solimp[mjNIMP * hi + j];
    for (int j = 0; j < 3; j++) fri[j] = m->geom_friction[3 * hi + j];
    p[FS_PAIR_ADHESION] = m->geom_adhesion[hi];
  } else {
    int d1 = m->geom_condim[a], d2 = m->geom_condim[b];
    t->dim[i] = d1 > d2 ? d1 : d2;
    double s1 = m->geom_solmix[a], s2 = m->geom_solmix[b], mix;
    if (s1 >= mjMINVAL && s2 >= mjMINVAL)
      mix = s1 / (s1 + s2);
    else if (s1 < mjMINVAL && s2 < mjMINVAL)
      mix = 0.5;
    else
      mix = s1 < mjMINVAL ? 0.0 : 1.0;
    for (int j = 0; j < mjNREF; j++)
      p[FS_PAIR_SOLREF + j] = ref1[0] > 0 && ref2[0] > 0 ? mix * ref1[j] + (1 - mix) * ref2[j]
                                                         : mju_min(ref1[j], ref2[j]);
    for (int j = 0; j < mjNIMP; j++) p[FS_PAIR_SOLIMP + j] = mix * imp1[j] + (1 - mix) * imp2[j];
    for (int j = 0; j < 3; j++) fri[j] = mju_max(fr1[j], fr2[j]);
  }
  double five[5] = {fri[0], fri[0], fri[1], fri[2], fri[2]};
  for (int j = 0; j < 5; j++) p[FS_PAIR_FRICTION + j] = five[j];
  for (int j = 0; j < mjNREF; j++) p[FS_PAIR_SOLREFFRICTION + j] = 0;
  p[FS_PAIR_MARGIN] = m->geom_margin[a] + m->geom_margin[b];
  p[FS_PAIR_GAP] = m->geom_gap[a] + m->geom_gap[b];
}

// MuJoCo's filterBodyPair for bodies b1, b2 (no sleeping): 1 if their geoms never collide.
static int body_pair_filtered(const mjModel* m, int b1, int b2) {
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return 1;
  if (!m->body_dofnum[w1] && !m->body_dofnum[w2]) return 1;
  int p1 = m->body_weldid[m->body_parentid[w1]], p2 = m->body_weldid[m->body_parentid[w2]];
  int filterparent = !(m->opt.disableflags & mjDSBL_FILTERPARENT);
  return filterparent && w1 && w2 && (w1 == p2 || w2 == p1);
}

// The exclude list (sorted by signature, as the compiler leaves it) holds signature s.
static int excluded(const mjModel* m, int s) {
  for (int k = 0; k < m->nexclude; k++)
    if (m->exclude_signature[k] == s) return 1;
  return 0;
}

// An explicit pair has geoms a and b (either order): MuJoCo collides it as that pair.
static int explicit_pair(const mjModel* m, int a, int b) {
  for (int k = 0; k < m->npair; k++)
    if ((m->pair_geom1[k] == a && m->pair_geom2[k] == b) ||
        (m->pair_geom1[k] == b && m->pair_geom2[k] == a))
      return 1;
  return 0;
}

// MuJoCo has a collision function for geom types t1 <= t2 (mjCOLLISIONFUNC: all but
// plane-plane, plane-heightfield, heightfield-heightfield).
static int has_collider(int t1, int t2) {
  return t1 > mjGEOM_HFIELD || t2 > mjGEOM_HFIELD;
}

// Sorts the n geom pairs in ab (a, b interleaved) by collision_ids (insertion: a body
// pair's few).
static void sort_midphase(const mjModel* m, int* ab, int n) {
  for (int i = 1; i < n; i++) {
    int a = ab[2 * i], b = ab[2 * i + 1], la, ha, j = i;
    collision_ids(m, a, b, &la, &ha);
    for (; j > 0; j--) {
      int lb, hb;
      collision_ids(m, ab[2 * j - 2], ab[2 * j - 1], &lb, &hb);
      if (lb < la || (lb == la && hb <= ha)) break;
      ab[2 * j] = ab[2 * j - 2];
      ab[2 * j + 1] = ab[2 * j - 1];
    }
    ab[2 * j] = a;
    ab[2 * j + 1] = b;
  }
}

// Scratch for a body pair's geom pairs (a, b interleaved), grown as needed.
typedef struct Scratch {
  int* ab;
  size_t cap; // geom pairs
} Scratch;

// The geom pairs of body pair (b1, b2) by contype/conaffinity, appended with their
// parameters after the explicit pairs up to its signature. Returns -1 out of memory.
static int add_body_pair(const mjModel* m, fsPairTable* t, int b1, int b2, int* next_explicit,
                         Scratch* sc, fsError* err) {
  int sig = (b1 << 16) + b2, n1 = m->body_geomnum[b1], n2 = m->body_geomnum[b2], n = 0;
  if (!n1 || !n2 || body_pair_filtered(m, b1, b2) || excluded(m, sig)) return 0;
  if ((size_t)n1 * (size_t)n2 > sc->cap) {
    int* ab = realloc(sc->ab, 2 * (size_t)n1 * (size_t)n2 * sizeof(int));
    if (!ab) return fs_fail(err, "out of memory listing contact pairs");
    sc->ab = ab;
    sc->cap = (size_t)n1 * (size_t)n2;
  }
  int* ab = sc->ab;
  for (int a = m->body_geomadr[b1]; a < m->body_geomadr[b1] + n1; a++)
    for (int b = m->body_geomadr[b2]; b < m->body_geomadr[b2] + n2; b++) {
      if (!(m->geom_contype[a] & m->geom_conaffinity[b]) &&
          !(m->geom_contype[b] & m->geom_conaffinity[a]))
        continue;
      int t1 = m->geom_type[a], t2 = m->geom_type[b];
      if (!has_collider(t1 < t2 ? t1 : t2, t1 < t2 ? t2 : t1) || explicit_pair(m, a, b)) continue;
      ab[2 * n] = a;
      ab[2 * n + 1] = b;
      n++;
    }
  if (!n) return 0;
  int midphase = !(m->opt.disableflags & mjDSBL_MIDPHASE) && m->body_bvhadr[b1] >= 0 &&
                 m->body_bvhadr[b2] >= 0 && !(n1 == 1 && n2 == 1);
  if (midphase) sort_midphase(m, ab, n);
  // the explicit pairs MuJoCo tests before this body pair's, then its own
  while (*next_explicit < m->npair && m->pair_signature[*next_explicit] <= sig) {
    if (table_reserve(t, t->n + 1, err)) return -1;
    add_explicit(m, t, (*next_explicit)++);
  }
  if (table_reserve(t, t->n + n, err)) return -1;
  for (int i = 0; i < n; i++) add_geoms(m, t, ab[2 * i], ab[2 * i + 1]);
  return 0;
}

int fs_pair_table(const mjModel* m, int broadphase, fsPairTable* t, fsError* err) {
  memset(t, 0, sizeof *t);
  if (table_reserve(t, (int)m->npair + 1, err)) return -1;
  int next = 0;
  Scratch sc = {NULL, 0};
  for (int b1 = 0; broadphase && b1 < m->nbody; b1++)
    for (int b2 = b1 + 1; b2 < m->nbody; b2++)
      if (add_body_pair(m, t, b1, b2, &next, &sc, err)) {
        free(sc.ab);
        fs_pair_table_free(t);
        return -1;
      }
  free(sc.ab);
  if (table_reserve(t, t->n + (int)m->npair - next, err)) {
    fs_pair_table_free(t);
    return -1;
  }
  while (next < m->npair) add_explicit(m, t, next++); // the explicit pairs after the last
  t->nexplicit = (int)m->npair;
  return 0;
}
