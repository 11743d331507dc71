// Collision (mj_collision) for the model's contact pairs, one world per call (see
// common/exec/real.h for the lanes): the collision driver, as MuJoCo's
// engine_collision_driver.c and MuJoCo Warp's collision_driver.py are -- which pairs a world
// tests, their bounding-sphere pre-test (mj_filterSphere), the one dispatch by geom type
// pair to the colliders (fsi_collide_pair_at, MuJoCo's mjCOLLISIONFUNC table) and the
// contacts in MuJoCo's order (mj_setContact). In the step after factor_m, as in
// mj_fwdPosition (common/engine/stage_forward.h).
//
// The pairs are static: the explicit <pair>s and the geom pairs MuJoCo's broadphase may find
// by contype/conaffinity, merged at model time in the order mj_collision makes their contacts
// (common/model/model_pairs.c), so that a step needs no broadphase of its own: every pair is
// tested by the bounding-sphere pre-test (MuJoCo's broadphase and midphase boxes only skip
// pairs that cannot touch within their margin). The world's candidate pairs are every pair, or,
// when the model pairs moving geoms with static ones, the pairs tested every step and
// those whose static geom is near its moving geom (collision_cull.h), in pair order.
// Lanes take the candidates, each candidate's narrowphase writes at most pair_maxcon[p]
// contacts into its own nslot slots of the precon_* scratch (MuJoCo's mjPreContact
// buffer), then one lane counts them in candidate order and the lanes move every slot's
// contact to its place in contact_*: pairs in model order, a pair's contacts in the
// order its collision function made them -- MuJoCo's d->contact order.
//
// The colliders, a header for each role (MuJoCo's engine_collision_*.c in brackets); each
// includes only headers below it in this list:
//   collision_convex.h     the convex pairs (meshes, ellipsoids, cylinders): mjc_Convex,
//                          native CCD (_convex.c)
//   collision_multiccd.h   its multi-contact at margin 0: multicontact (_gjk.c)
//   collision_gjk.h        GJK and EPA (_gjk.c)
//   collision_box.h        sphere-box, capsule-box (_box.c)
//   collision_primitive.h  a plane against a sphere, capsule, cylinder, box (_primitive.c),
//                          ellipsoid or convex mesh (mjc_PlaneConvex, _convex.c); sphere-
//                          sphere, sphere-capsule, sphere-cylinder, capsule-capsule
//                          (_primitive.c)
//   collision_support.h    the convex shapes' support functions (_convex.c, _gjk.c)
//   collision_cull.h       the static pair culling (flysim's: MuJoCo has no explicit-pair
//                          culling)
// A new collider: a function of the pair's geoms (lower geom type first) that writes its
// contacts from slot k and returns how many, in the header of its role; its case in
// fsi_collide_pair_at; its contact bound in fs_model_pair_maxcon and its pair type in the
// model check (common/model/model_support.c).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_COLLISION_H
#define FLYSIM_COMMON_ENGINE_STAGE_COLLISION_H

#include "common/engine/fields.h"
#include "common/engine/spatial.h"
#include "common/engine/collision_cull.h"
#include "common/engine/collision_primitive.h"
#include "common/engine/collision_box.h"
#include "common/engine/collision_convex.h"

#define FS_MINMU ((fsReal)1e-5) // mjMINMU: smallest friction coefficient

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

/// Convex pairs (and sphere-cylinder: fsi_convex_kernel_types) in this build's step
/// (FSI_CONVEX): the host builds always; on the device only the kernels compiled with
/// FS_DEVICE_CONVEX (cuda/step_kernel_convex.cu's
/// step_kernel<Convex>, cuda/test_kernels.cu's kernels), which the cuda backend launches for
/// models with convex pairs (nccdwork > 0). The collider is a call with a large register
/// footprint: compiled into every model's step kernel it cost that kernel spills around
/// the call (ptxas, sm_90), so the other step kernels leave it out, and trap if handed
/// a model with convex pairs (never silently without their contacts).
#if !defined(__CUDA_ARCH__) || defined(FS_DEVICE_CONVEX)
#define FSI_CONVEX 1
#else
#define FSI_CONVEX 0
#endif

/// 1 if pair p goes to MuJoCo's convex collider (fsi_convex_types), with a lane's scratch.
FS_HD int fsi_pair_convex(const fsModel* m, int p) {
  int t1 = m->geom_type[m->pair_geom1[p]], t2 = m->geom_type[m->pair_geom2[p]];
  return fsi_convex_types(t1, t2);
}

/// Narrowphase of pair p into slots k.. (its bound, pair_maxcon[p]); returns the number
/// of contacts. The pair is skipped by MuJoCo's bounding-sphere pre-test
/// (fsi_pair_filtered), then collided with margin + gap by the collision function of
/// its geom types (MuJoCo's mjCOLLISIONFUNC, lower type first): one case per pair type.
/// w: the lane's scratch for a convex pair (fsi_pair_convex), else unused.
FS_HD int fsi_collide_pair_at(const fsModel* m, fsData* d, int p, int k, fsiCcdWork* w) {
  int g1, g2;
  fsi_pair_geoms(m, p, &g1, &g2);
  fsReal margin = fsi_pair_margin(m, p) + m->pair_gap[p];
  if (fsi_pair_filtered(m, d, p, margin)) return 0;
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
#if FSI_CONVEX
  if (fsi_convex_types(t1, t2)) return fsi_convex(m, d, k, g1, g2, margin, w); // collision_convex.h
#else
  (void)w; // the convex kernels' pairs: not reached (fs_collision traps first)
#endif
  switch (t1) {
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
    switch (t2) {
    case FS_GEOM_SPHERE:
      return fsi_sphere_sphere_pair(m, d, k, g1, g2, margin);
    case FS_GEOM_CAPSULE:
      return fsi_sphere_capsule(m, d, k, g1, g2, margin);
#if FSI_CONVEX // the convex kernels' alone on the device (fsi_convex_kernel_types)
    case FS_GEOM_CYLINDER:
      return fsi_sphere_cylinder(m, d, k, g1, g2, margin);
#endif
    case FS_GEOM_BOX:
      return fsi_sphere_box_pair(m, d, k, g1, g2, margin);
    default: // refused by the model check
      return 0;
    }
  case FS_GEOM_CAPSULE:
    switch (t2) {
    case FS_GEOM_CAPSULE:
      return fsi_capsule_capsule(m, d, k, g1, g2, margin);
    case FS_GEOM_BOX:
      return fsi_capsule_box(m, d, k, g1, g2, margin);
    default: // refused by the model check
      return 0;
    }
  default: // refused by the model check
    return 0;
  }
}

/// The solreffriction of pair p's contacts (mj_setContact): opt's solref under the override
/// flag, else the pair's; NULL (0 0) where it has none.
FS_HD const fsReal* fsi_pair_solreffriction(const fsModel* m, int p) {
  const fsReal* sr = m->pair_solreffriction + FS_NREF * p;
  if (m->enableflags & FS_ENBL_OVERRIDE) return m->o_solref;
  return sr[0] != 0 || sr[1] != 0 ? sr : NULL;
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
  const fsReal* srf = fsi_pair_solreffriction(m, p);
  for (int j = 0; j < FS_NREF; j++) {
    d->contact_solref[FS_NREF * c + j] = ovr ? m->o_solref[j] : m->pair_solref[FS_NREF * p + j];
    d->contact_solreffriction[FS_NREF * c + j] = srf ? srf[j] : 0;
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
/// geom's static geoms near it (collision_cull.h), ranked by pair id. More than ncandmax:
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

/// mj_collision for the model's pairs: ncon and contact_* in MuJoCo's order. The
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
  if (m->nccdwork) __trap(); // a kernel without the convex collider (FSI_CONVEX)
#endif
  if (!FSI_CONVEX || !m->nccdwork) {
    FS_FOR_LANE(i, ncand) {
      d->cand_ncon[i] = fsi_collide_pair_at(m, d, d->cand_pair[i], i * nslot, NULL);
    }
  } else { // convex pairs on the first FS_CCD_LANES lanes, each with its scratch
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
