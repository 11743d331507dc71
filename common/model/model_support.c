// The model check (common/model/model.h): what flysim's engine, host and cuda backends alike,
// implements of an mjModel. fs_model_support / fs_model_support_for list, in one error, every
// feature a model uses that the step does not implement, each with its fix; and the
// helpers the build shares (common/model/model_build.c): whether contacts are on, and how many
// contacts a pair can make.
#include "common/model/model.h"
#include "common/engine/collision_convex.h" // the convex pairs and the collider's bounds

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Unsupported features found so far, appended to one error message.
typedef struct Problems {
  fsError* err;
  int n;
} Problems;

static void problem(Problems* p, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(Problems* p, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  p->n++;
  fs_fail_append(p->err, " (%d) %s;", p->n, buf);
}

// Count of objects with a feature, and the first of them.
typedef struct Found {
  int count, first;
} Found;

static void found(Found* f, int id) {
  if (!f->count++) f->first = id;
}

static const char* name_of(const mjModel* m, int type, int id) {
  const char* s = mj_id2name(m, type, id);
  return s && s[0] ? s : "(unnamed)";
}

// "N <what>s (first: 'name', id k)" for a feature found on some objects.
static void problem_found(Problems* p, const mjModel* m, const Found* f, int type, const char* what,
                          const char* fix) {
  if (!f->count) return;
  const char* noun = mju_type2Str(type);
  size_t len = strlen(noun);
  int y = f->count > 1 && len > 0 && noun[len - 1] == 'y'; // equality -> equalities
  problem(p, "%s on %d %.*s%s (first: '%s', id %d); fix: %s", what, f->count,
          (int)(y ? len - 1 : len), noun, f->count == 1 ? "" : (y ? "ies" : "s"),
          name_of(m, type, f->first), f->first, fix);
}

#define FS_STR2(x) #x
#define FS_STR(x)  FS_STR2(x)
// Body b has dofs on its way to the world.
static int body_moves(const mjModel* m, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (m->body_dofnum[b]) return 1;
  return 0;
}

static int disabled(const mjModel* m, int flag) {
  return (m->opt.disableflags & flag) != 0;
}

// Rows of a kind (mjDSBL_CONTACT, _LIMIT, _FRICTIONLOSS, _EQUALITY) that the flags leave on:
// neither their own flag nor the constraint flag disables them.
static int rows_on(const mjModel* m, int flag) {
  return !disabled(m, flag) && !disabled(m, mjDSBL_CONSTRAINT);
}

int fs_model_contacts_enabled(const mjModel* m) {
  return rows_on(m, mjDSBL_CONTACT);
}

static void check_options(const mjModel* m, Problems* p) {
  static const char* integrators[] = {"Euler", "RK4", "implicit", "implicitfast", "discrete"};
  int it = m->opt.integrator;
  if (it != mjINT_EULER && it != mjINT_RK4)
    problem(p, "integrator %s (Euler and RK4 are implemented); fix: integrator=\"Euler\"",
            it >= 0 && it < 5 ? integrators[it] : "unknown");
  if (m->opt.enableflags & mjENBL_SLEEP)
    problem(p, "sleeping (enable flag sleep); fix: remove <flag sleep=\"enable\"/>");
  if (m->opt.density != 0 || m->opt.viscosity != 0) { // the inertia-box model is implemented
    int nellipsoid = 0;
    for (int g = 0; g < m->ngeom; g++) nellipsoid += m->geom_fluid[mjNFLUID * g] > 0;
    if (nellipsoid)
      problem(p,
              "the ellipsoid fluid model on %d geom%s (fluidshape=\"ellipsoid\"; the "
              "inertia-box model is implemented); fix: fluidshape=\"none\"",
              nellipsoid, nellipsoid == 1 ? "" : "s");
  }
  if (m->nflex) problem(p, "%ld flexes; fix: remove them", (long)m->nflex);
  if (m->nplugin) problem(p, "%ld plugins; fix: remove them", (long)m->nplugin);
  if (m->ngravcomp)
    problem(p, "gravity compensation on %ld bod%s; fix: gravcomp=\"0\"", (long)m->ngravcomp,
            m->ngravcomp == 1 ? "y" : "ies");
}

// Contacts geoms g1, g2 can make in the collision stage: MuJoCo's mj_maxContact for the
// pairs the stage implements (a plane against a sphere, capsule, ellipsoid, cylinder, box or
// mesh; a sphere against a sphere, capsule, cylinder or box; a capsule against a capsule or box;
// the convex pairs (fsi_convex_types) under native CCD: 1 with multiccd off or with a sphere or an
// ellipsoid, 5 with a margin (the perturbation's extra contacts), 4 between boxes and meshes at
// margin 0); 0 for the pairs it does not, among them a capsule's or cylinder's convex pairs at
// margin 0 under multiccd (MuJoCo 3.16's multi-contact for capsules and cylinders: their segment
// ends and cap rims as polytope features, not implemented). One case per pair type, lower geom type
// first, as the stage's dispatch (common/engine/stage_collision.h, fsi_collide_pair_at).
int fs_model_pair_maxcon(const mjModel* m, int g1, int g2, double margin_gap) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
  if (t1 > t2) {
    int t = t1;
    t1 = t2;
    t2 = t;
  }
  if (fsi_convex_types(t1, t2)) {
    if (disabled(m, mjDSBL_NATIVECCD)) return 0;
    if (disabled(m, mjDSBL_MULTICCD)) return 1;
    if (t1 == mjGEOM_SPHERE || t1 == mjGEOM_ELLIPSOID || t2 == mjGEOM_ELLIPSOID) return 1;
    if (margin_gap > 0) return 5;
    return fsi_ccd_polytope(t1) && fsi_ccd_polytope(t2) ? 4 : 0; // 0: refused (check_convex)
  }
  if (t1 == mjGEOM_SPHERE)
    return t2 == mjGEOM_SPHERE || t2 == mjGEOM_CAPSULE || t2 == mjGEOM_CYLINDER ||
           t2 == mjGEOM_BOX;                                  // mjc_Sphere*
  if (t1 == mjGEOM_CAPSULE && t2 == mjGEOM_CAPSULE) return 2; // mjc_CapsuleCapsule
  if (t1 == mjGEOM_CAPSULE && t2 == mjGEOM_BOX) return 4;     // mjc_CapsuleBox (makes 2 at most)
  if (t1 != mjGEOM_PLANE) return 0;
  switch (t2) {
  case mjGEOM_SPHERE:
  case mjGEOM_ELLIPSOID:
    return 1;
  case mjGEOM_CAPSULE:
    return 2;
  case mjGEOM_MESH:
  case mjGEOM_CYLINDER:
  case mjGEOM_BOX:
    return 4;
  default:
    return 0;
  }
}

// Does the model make constraint rows other than contacts (limits, friction loss, active
// equality constraints), as its flags leave them on?
static int other_rows(const mjModel* m) {
  int limits = rows_on(m, mjDSBL_LIMIT), friction = rows_on(m, mjDSBL_FRICTIONLOSS);
  int eq = rows_on(m, mjDSBL_EQUALITY);
  for (int j = 0; j < m->njnt; j++)
    if (limits && m->jnt_limited[j]) return 1;
  for (int k = 0; k < m->ntendon; k++)
    if ((limits && m->tendon_limited[k]) || (friction && m->tendon_frictionloss[k] > 0)) return 1;
  for (int i = 0; i < m->nv; i++)
    if (friction && m->dof_frictionloss[i] > 0) return 1;
  for (int k = 0; k < m->neq; k++)
    if (eq && m->eq_active0[k]) return 1;
  return 0;
}

// The pairs' rows that the solver's layouts cannot hold, counted (found: the first pair id):
// pairs whose rows move two branches of a tree or two trees (the sparse Hessian's tree layout
// holds a dof's ancestors only: the host's where MuJoCo's Jacobian is sparse, the lanes' and
// the GPU's always; where the rows are dense, islands join the trees) and, for noslip, pairs
// of two moving bodies (its rows hold the chain's dofs, not the common ancestors that M^-1/2
// adds); and pairs without rows, or with a moving plane.
typedef struct RowLayout {
  Found branches, noslip, still, plane;
} RowLayout;

static void row_layouts(const mjModel* m, const fsPairTable* t, RowLayout* r) {
  memset(r, 0, sizeof *r);
  int* chain = calloc((size_t)m->nv + 1, sizeof(int));
  int* side = calloc((size_t)m->nv + 1, sizeof(int));
  for (int k = 0; k < t->n && chain && side; k++) {
    int g[2] = {t->geom1[k], t->geom2[k]};
    int n = fs_model_pair_chain(m, g[0], g[1], chain, side), sides = 0;
    if (!n) found(&r->still, k);
    for (int i = 0; i < n; i++) sides |= 1 << side[i];
    int b1 = m->body_weldid[m->geom_bodyid[g[0]]], b2 = m->body_weldid[m->geom_bodyid[g[1]]];
    int moves1 = body_moves(m, b1), moves2 = body_moves(m, b2);
    if (sides == 3) found(&r->branches, k);
    if (moves1 && moves2) found(&r->noslip, k);
    for (int s = 0; s < 2; s++)
      if (m->geom_type[g[s]] == mjGEOM_PLANE && body_moves(m, m->geom_bodyid[g[s]]))
        found(&r->plane, k);
  }
  free(chain);
  free(side);
}

// A pair of t as the messages name it: "geom 'a' with geom 'b', <pair> id k" or "..., by
// contype/conaffinity".
static const char* pair_name(const mjModel* m, const fsPairTable* t, int k, char* buf, size_t n) {
  char how[48];
  if (t->mjpair[k] >= 0)
    snprintf(how, sizeof how, "<pair> id %d", t->mjpair[k]);
  else
    snprintf(how, sizeof how, "by contype/conaffinity");
  snprintf(buf, n, "geom '%s' with geom '%s', %s", name_of(m, mjOBJ_GEOM, t->geom1[k]),
           name_of(m, mjOBJ_GEOM, t->geom2[k]), how);
  return buf;
}

// "N contact pairs <what> (first: <pair>); fix: <fix>" for pairs found.
static void problem_pairs(Problems* p, const mjModel* m, const fsPairTable* t, const Found* f,
                          const char* what, const char* fix) {
  if (!f->count) return;
  char buf[400];
  problem(p, "%d contact pair%s %s (first: %s); fix: %s", f->count, f->count == 1 ? "" : "s", what,
          pair_name(m, t, f->first, buf, sizeof buf), fix);
}

// Whether this build's rows and Hessian keep the tree layout: the lanes' always, the host's
// where MuJoCo's Jacobians are sparse (else dense, as MuJoCo's).
static int tree_layout(const mjModel* m) {
#ifdef FS_ONE_LANE
  return mj_isSparse(m);
#else
  (void)m;
  return 1;
#endif
}

// What the constraint rows and the solver implement: MuJoCo's Newton and CG solvers over
// its contact rows under the pyramidal or the elliptic cone (noslip under the pyramidal
// one) with its approximate diagonal, for pairs that move something, within the solver's
// layouts (row_layouts); no surface velocity. The solver, the cone and the diagonal are
// checked wherever the model makes rows (contacts, limits, friction loss, equality), so
// that one message lists them with what else it refuses.
static void check_constraint(const mjModel* m, const fsPairTable* t, Problems* p) {
  int contacts = fs_model_contacts_enabled(m) && t->n > 0;
  int rows = contacts || other_rows(m);
  if (rows && m->opt.solver == mjSOL_PGS)
    problem(p, "the PGS constraint solver (flysim implements MuJoCo's Newton and CG solvers); "
               "fix: <option solver=\"Newton\"/>");
  if (contacts && m->opt.cone != mjCONE_PYRAMIDAL && m->opt.noslip_iterations > 0)
    problem(p, "noslip under elliptic friction cones (noslip implements the pyramidal cone); "
               "fix: <option cone=\"pyramidal\"/> or noslip_iterations=\"0\"");
  if (rows && m->opt.enableflags & mjENBL_DIAGEXACT)
    problem(p, "the exact constraint diagonal (enable flag diagexact); fix: remove <flag "
               "diagexact=\"enable\"/>");
  if (!contacts) return; // the pairs' checks below
  Found surf = {0, 0};
  for (int g = 0; g < m->ngeom; g++)
    for (int k = 0; k < 6; k++)
      if (m->geom_surfacevel[6 * g + k] != 0) {
        found(&surf, g);
        break;
      }
  problem_found(p, m, &surf, mjOBJ_GEOM, "surface velocity", "surfacevel=\"0 0 0 0 0 0\"");
  RowLayout r;
  row_layouts(m, t, &r);
  problem_pairs(p, m, t, &r.still,
                "between bodies without dofs (MuJoCo makes no rows for them and marks their "
                "contacts exclude 3)",
                "remove them");
  if (tree_layout(m))
    problem_pairs(p, m, t, &r.branches,
                  "whose rows move two branches of a tree or two trees (the sparse Hessian's "
                  "tree layout holds a dof's ancestors only)",
                  "<option jacobian=\"dense\"/> (MuJoCo's dense Jacobian, its default below "
                  "60 dofs) on the host backend, or contype/conaffinity or <exclude> that keep "
                  "the branches apart");
  if (m->opt.noslip_iterations > 0)
    problem_pairs(p, m, t, &r.noslip,
                  "between two moving bodies with noslip (noslip implements contacts with one "
                  "static geom)",
                  "noslip_iterations=\"0\"");
  problem_pairs(p, m, t, &r.plane, "with a plane on a moving body", "planes in static bodies");
}

// Geoms g1, g2 go to the convex collider (common/engine/collision_convex.h).
static int convex_pair(const mjModel* m, int g1, int g2) {
  return fsi_convex_types(m->geom_type[g1], m->geom_type[g2]);
}

// What the convex collider implements: MuJoCo's native CCD, within the fixed scratch of a
// lane (iterations; the polygon sizes and vertex degrees of the meshes that meet a box or
// a mesh, for the multi-contact step).
static void check_convex(const mjModel* m, const fsPairTable* t, Problems* p) {
  Found convex = {0, 0}, poly = {0, 0}, deg = {0, 0}, multi = {0, 0};
  for (int k = 0; k < t->n; k++) {
    int g1 = t->geom1[k], g2 = t->geom2[k];
    if (!convex_pair(m, g1, g2)) continue;
    found(&convex, k);
    if (!disabled(m, mjDSBL_NATIVECCD) &&
        !fs_model_pair_maxcon(m, g1, g2, fs_pair_margin_gap(m, t, k)))
      found(&multi, k);
    if (!fsi_ccd_polytope(m->geom_type[g1]) || !fsi_ccd_polytope(m->geom_type[g2])) continue;
    for (int s = 0; s < 2; s++) {
      int g = s ? g2 : g1;
      if (m->geom_type[g] != mjGEOM_MESH) continue;
      int mesh = m->geom_dataid[g];
      for (int q = m->mesh_polyadr[mesh]; q < m->mesh_polyadr[mesh] + m->mesh_polynum[mesh]; q++)
        if (m->mesh_polyvertnum[q] > FS_CCD_POLYMAX) found(&poly, mesh);
      for (int v = m->mesh_vertadr[mesh]; v < m->mesh_vertadr[mesh] + m->mesh_vertnum[mesh]; v++)
        if (m->mesh_polymapnum[v] > FS_CCD_DEGMAX) found(&deg, mesh);
    }
  }
  if (!convex.count) return;
  if (disabled(m, mjDSBL_NATIVECCD))
    problem(p,
            "contact pairs of meshes, ellipsoids or cylinders (%d, first: id %d) under libccd "
            "(disable flag nativeccd); fix: remove <flag nativeccd=\"disable\"/>",
            convex.count, convex.first);
  if (m->opt.ccd_iterations > FS_CCD_ITERMAX)
    problem(p,
            "ccd_iterations %d with contact pairs of meshes, ellipsoids or cylinders (the "
            "collider holds %d); fix: <option ccd_iterations=\"%d\"/> or fewer",
            m->opt.ccd_iterations, FS_CCD_ITERMAX, FS_CCD_ITERMAX);
  if (multi.count) {
    char buf[400];
    problem(p,
            "%d contact pair%s of a capsule or cylinder with a capsule, cylinder, box or mesh at "
            "margin 0 under multiccd (first: %s): MuJoCo 3.16's multi-contact for capsules and "
            "cylinders is not implemented; fix: <flag multiccd=\"disable\"/>, or a margin on "
            "these pairs",
            multi.count, multi.count == 1 ? "" : "s",
            pair_name(m, t, multi.first, buf, sizeof buf));
  }
  problem_found(p, m, &poly, mjOBJ_MESH,
                "hull polygons of more than " FS_STR(FS_CCD_POLYMAX) " vertices in pairs with a "
                                                                     "box or mesh",
                "simplify the mesh");
  problem_found(p, m, &deg, mjOBJ_MESH,
                "hull vertices in more than " FS_STR(FS_CCD_DEGMAX) " polygons in pairs with a "
                                                                    "box or mesh",
                "simplify the mesh");
}

// What the collision stage implements: the pairs of fs_pair_table (explicit, and by
// contype/conaffinity through MuJoCo's broadphase filters) of any two of a plane, sphere,
// capsule, ellipsoid, cylinder, box and convex mesh but box-box. The pairs of
// other types are listed by type with their counts. Explicit pairs out of signature order (the
// compiler sorts them; an MJB may not) beside broadphase pairs make MuJoCo's order depend on the
// state.
static void check_collision(const mjModel* m, const fsPairTable* t, Problems* p) {
  static const char* types[] = {"plane",    "hfield", "sphere", "capsule", "ellipsoid",
                                "cylinder", "box",    "mesh",   "sdf"};
  if (!fs_model_contacts_enabled(m)) return;
  int count[mjNGEOMTYPES][mjNGEOMTYPES], first = -1, n = 0;
  memset(count, 0, sizeof count);
  for (int k = 0; k < t->n; k++) {
    int g1 = t->geom1[k], g2 = t->geom2[k];
    if (fs_model_pair_maxcon(m, g1, g2, 0) || convex_pair(m, g1, g2)) continue;
    int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
    count[t1 < t2 ? t1 : t2][t1 < t2 ? t2 : t1]++;
    if (first < 0) first = k;
    n++;
  }
  if (n) {
    char list[400] = "", buf[400];
    for (int a = 0; a < mjNGEOMTYPES; a++)
      for (int b = a; b < mjNGEOMTYPES; b++)
        if (count[a][b]) {
          size_t len = strlen(list);
          snprintf(list + len, sizeof list - len, "%s%s-%s %d", len ? ", " : "",
                   a < 9 ? types[a] : "?", b < 9 ? types[b] : "?", count[a][b]);
        }
    problem(p,
            "%d contact pair%s of geom types the collision stage does not implement (%s; first: "
            "%s); fix: contype/conaffinity or <exclude> that keep them apart, or pairs of any two "
            "of a plane, sphere, capsule, ellipsoid, cylinder, box and mesh but box-box",
            n, n == 1 ? "" : "s", list, pair_name(m, t, first, buf, sizeof buf));
  }
  check_convex(m, t, p);
  int sorted = 1;
  for (int k = 1; k < m->npair; k++) sorted &= m->pair_signature[k - 1] <= m->pair_signature[k];
  if (!sorted && t->n > t->nexplicit)
    problem(p, "explicit contact pairs out of MuJoCo's signature order beside contacts by "
               "contype/conaffinity (MuJoCo's contact order then depends on the state); fix: "
               "compile the model from its MJCF");
}

// Joint limits and dof friction loss: the rows implement hinge and slide limits and every
// dof's friction loss, not ball joints' cone limits, nor noslip over friction-loss rows or
// the limit rows of a dof with ancestors (noslip's Y = J M^-1/2 of such a row reaches the
// ancestors, and a dof row holds its dof alone).
static void check_joints(const mjModel* m, Problems* p) {
  Found ball = {0, 0}, friction = {0, 0}, limit = {0, 0};
  int limits_on = rows_on(m, mjDSBL_LIMIT), friction_on = rows_on(m, mjDSBL_FRICTIONLOSS);
  for (int j = 0; j < m->njnt; j++) {
    if (limits_on && m->jnt_limited[j] && m->jnt_type[j] == mjJNT_BALL)
      found(&ball, j);
    else if (limits_on && m->jnt_limited[j] && m->opt.noslip_iterations > 0 &&
             m->dof_parentid[m->jnt_dofadr[j]] >= 0)
      found(&limit, j);
  }
  for (int i = 0; i < m->nv; i++)
    if (friction_on && m->dof_frictionloss[i] != 0 && m->opt.noslip_iterations > 0)
      found(&friction, m->dof_jntid[i]);
  problem_found(p, m, &ball, mjOBJ_JOINT,
                "ball joint limits (the rows implement hinge and slide limits)",
                "remove the ball joints' ranges or disable limits (<flag limit=\"disable\"/>)");
  problem_found(p, m, &friction, mjOBJ_JOINT,
                "dof friction loss with noslip (noslip implements contact rows only)",
                "noslip_iterations=\"0\", frictionloss=\"0\" or <flag frictionloss=\"disable\"/>");
  problem_found(
      p, m, &limit, mjOBJ_JOINT,
      "joint limits under noslip on joints below another joint (noslip's rows of a dof hold "
      "that dof alone)",
      "noslip_iterations=\"0\", or no ranges or <flag limit=\"disable\"/>");
  Found sameframe = {0, 0};
  for (int b = 1; b < m->nbody; b++)
    if (m->body_sameframe[b] == mjSAMEFRAME_INERTIA ||
        m->body_sameframe[b] == mjSAMEFRAME_INERTIAROT)
      found(&sameframe, b);
  problem_found(p, m, &sameframe, mjOBJ_BODY, "inertial frame defined by itself",
                "report this model");
}

// Is tendon k fixed (a linear combination of joints)?
static int tendon_fixed(const mjModel* m, int k) {
  return m->tendon_num[k] > 0 && m->wrap_type[m->tendon_adr[k]] == mjWRAP_JOINT;
}

// Does an actuator with damping (its own damping or dampingpoly) act on tendon k? MuJoCo
// adds it to the tendon's damper (mj_actuatorDamping).
static int tendon_actuator_damping(const mjModel* m, int k) {
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_trntype[a] != mjTRN_TENDON || m->actuator_trnid[2 * a] != k) continue;
    int on = m->actuator_damping[a] != 0;
    for (int j = 0; j < mjNPOLY; j++) on |= m->actuator_dampingpoly[mjNPOLY * a + j] != 0;
    if (on) return 1;
  }
  return 0;
}

// Is tendon k's path one the engine computes: fixed, or spatial through sites and pulleys
// (no geom wrapping)?
static int tendon_path_ok(const mjModel* m, int k) {
  if (tendon_fixed(m, k)) return 1;
  for (int w = m->tendon_adr[k]; w < m->tendon_adr[k] + m->tendon_num[k]; w++)
    if (m->wrap_type[w] != mjWRAP_SITE && m->wrap_type[w] != mjWRAP_PULLEY) return 0;
  return 1;
}

// Does tendon k make limit or friction-loss rows, as the flags leave them on?
static int tendon_rowed(const mjModel* m, int k) {
  return (rows_on(m, mjDSBL_LIMIT) && m->tendon_limited[k]) ||
         (rows_on(m, mjDSBL_FRICTIONLOSS) && m->tendon_frictionloss[k] > 0);
}

// Does tendon k act on the state beyond what the engine implements (a fixed tendon's
// actuator transmission, springs and dampers and limit and friction-loss rows of fixed
// tendons and of spatial ones through sites and pulleys): stiffness or damping on a spatial
// tendon that wraps a geom or with an actuator's damping, armature, an actuator on a
// spatial tendon or under a total force limit (actfrcrange), an active limit or friction
// loss on a spatial tendon that wraps a geom?
static int tendon_acts(const mjModel* m, int k) {
  int spring_damper = m->tendon_stiffness[k] != 0 || m->tendon_damping[k] != 0;
  for (int j = 0; j < mjNPOLY; j++)
    spring_damper |= m->tendon_stiffnesspoly[mjNPOLY * k + j] != 0 ||
                     m->tendon_dampingpoly[mjNPOLY * k + j] != 0;
  return (spring_damper && (!tendon_path_ok(m, k) || tendon_actuator_damping(m, k))) ||
         m->tendon_armature[k] != 0 ||
         (m->tendon_actuatorid[k] != -1 && (!tendon_fixed(m, k) || m->tendon_actfrclimited[k])) ||
         (!tendon_path_ok(m, k) && tendon_rowed(m, k));
}

static void check_tendons_equality(const mjModel* m, Problems* p) {
  Found tendon = {0, 0}, eq = {0, 0}, tendon_noslip = {0, 0}, tendon_tree = {0, 0};
  for (int k = 0; k < m->ntendon; k++) {
    if (tendon_acts(m, k)) {
      found(&tendon, k);
    } else if (tendon_rowed(m, k)) {
      if (m->opt.noslip_iterations > 0) found(&tendon_noslip, k);
      if (tree_layout(m)) found(&tendon_tree, k);
    }
  }
  problem_found(p, m, &tendon, mjOBJ_TENDON,
                "tendon forces (stiffness, damping, a limit or friction loss on a spatial "
                "tendon that wraps a geom, stiffness or damping beside an actuator's damping, "
                "armature, an actuator on a spatial tendon or an actuator force range)",
                "remove them (tendons that only measure are accepted)");
  problem_found(p, m, &tendon_noslip, mjOBJ_TENDON,
                "tendon limits or friction loss with noslip (noslip implements contact rows only)",
                "noslip_iterations=\"0\", or no tendon ranges and frictionloss");
  problem_found(p, m, &tendon_tree, mjOBJ_TENDON,
                "tendon limits or friction loss where the rows keep the tree layout (the lanes, "
                "or the host with MuJoCo's sparse Jacobian, its default from 60 dofs), which "
                "holds rows of one dof or a contact's chain",
                "<option jacobian=\"dense\"/> on the host backend, or <flag limit=\"disable\" "
                "frictionloss=\"disable\"/>");
  int eq_on = rows_on(m, mjDSBL_EQUALITY);
  Found noslip = {0, 0}, rowed = {0, 0};
  for (int k = 0; k < m->neq && eq_on; k++) {
    if (!m->eq_active0[k]) continue;
    int type = m->eq_type[k], obj[2] = {m->eq_obj1id[k], m->eq_obj2id[k]};
    int rows = type == mjEQ_JOINT;
    if (type == mjEQ_TENDON)
      rows = tendon_fixed(m, obj[0]) && (obj[1] < 0 || tendon_fixed(m, obj[1]));
    if (!rows) {
      found(&eq, k);
      continue;
    }
    found(&rowed, k);
    if (m->opt.noslip_iterations > 0) found(&noslip, k);
  }
  problem_found(p, m, &eq, mjOBJ_EQUALITY,
                "active connect, weld or flex equality constraints, or tendon "
                "equalities of spatial tendons (the rows implement joint and fixed-tendon "
                "equalities, contacts, hinge and slide limits and dof friction loss)",
                "remove them or <flag equality=\"disable\"/>");
  problem_found(p, m, &noslip, mjOBJ_EQUALITY,
                "equality constraints with noslip (noslip implements contact rows only)",
                "noslip_iterations=\"0\"");
  if (tree_layout(m))
    problem_found(p, m, &rowed, mjOBJ_EQUALITY,
                  "equality constraints where the rows keep the tree layout (the lanes, or the "
                  "host with MuJoCo's sparse Jacobian, its default from 60 dofs), which holds "
                  "rows of one dof or a contact's chain",
                  "<option jacobian=\"dense\"/> on the host backend, or <flag "
                  "equality=\"disable\"/>");
}

static void check_actuators(const mjModel* m, Problems* p) {
  Found trn = {0, 0}, dyn = {0, 0}, gain = {0, 0}, bias = {0, 0}, other = {0, 0};
  for (int i = 0; i < m->nu && i < m->nactuator; i++) {
    int t = m->actuator_trntype[i];
    int joint_ok = (t == mjTRN_JOINT || t == mjTRN_JOINTINPARENT) &&
                   (m->jnt_type[m->actuator_trnid[2 * i]] == mjJNT_HINGE ||
                    m->jnt_type[m->actuator_trnid[2 * i]] == mjJNT_SLIDE);
    int tendon_ok = t == mjTRN_TENDON && tendon_fixed(m, m->actuator_trnid[2 * i]);
    if (!joint_ok && !tendon_ok && t != mjTRN_BODY) found(&trn, i);
    int dt = m->actuator_dyntype[i],
        dyn_ok = dt == mjDYN_INTEGRATOR || dt == mjDYN_FILTER || dt == mjDYN_FILTEREXACT;
    if (dt == mjDYN_NONE ? m->actuator_actnum[i] != 0
                         : !dyn_ok || m->actuator_actnum[i] != 1 || m->opt.integrator == mjINT_RK4)
      found(&dyn, i);
    if (m->actuator_gaintype[i] != mjGAIN_FIXED && m->actuator_gaintype[i] != mjGAIN_AFFINE)
      found(&gain, i);
    if (m->actuator_biastype[i] != mjBIAS_NONE && m->actuator_biastype[i] != mjBIAS_AFFINE)
      found(&bias, i);
    if (m->actuator_plugin[i] >= 0 || m->actuator_delay[i] != 0 || m->actuator_ctrlnum[i] != 1 ||
        m->actuator_outnum[i] != 1)
      found(&other, i);
  }
  problem_found(p, m, &trn, mjOBJ_ACTUATOR,
                "transmissions other than a hinge/slide joint, a fixed tendon or a body (adhesion)",
                "use actuators on hinge or slide joints or on fixed tendons");
  problem_found(p, m, &dyn, mjOBJ_ACTUATOR,
                "activation dynamics other than integrator, filter and filterexact (muscle, "
                "user, or any under the RK4 integrator)",
                "dyntype=\"integrator\", \"filter\", \"filterexact\" or \"none\" (Euler for "
                "activations)");
  problem_found(p, m, &gain, mjOBJ_ACTUATOR, "gain types other than fixed and affine",
                "use position, motor or general actuators with fixed or affine gain");
  problem_found(p, m, &bias, mjOBJ_ACTUATOR, "bias types other than none and affine",
                "use position, motor or general actuators with affine bias");
  problem_found(p, m, &other, mjOBJ_ACTUATOR, "plugins, delays or multi-input/output actuators",
                "use single-input actuators without delay");
  if (m->nu != m->nactuator || m->nout != m->nactuator)
    problem(p, "%ld controls and %ld force outputs for %ld actuators (one each is implemented)",
            (long)m->nu, (long)m->nout, (long)m->nactuator);
}

int fs_model_support(const mjModel* m, const char* model_path, fsError* err) {
  return fs_model_support_for(m, model_path, FS_BUILD_STEP, err);
}

int fs_model_support_for(const mjModel* m, const char* model_path, fsBuildFor use, fsError* err) {
  Problems p = {err, 0};
  fsPairTable t;
  if (fs_pair_table(m, fs_model_contacts_enabled(m), &t, err)) return -1;
  fs_fail(err, "%s: ", model_path);
  check_options(m, &p);
  check_collision(m, &t, &p);
  if (use == FS_BUILD_STEP) check_constraint(m, &t, &p);
  fs_pair_table_free(&t);
  check_joints(m, &p);
  check_tendons_equality(m, &p);
  check_actuators(m, &p);
  if (!p.n) {
    if (err) err->msg[0] = 0;
    return 0;
  }
  if (!err) return -1;
  // Prefix the count now that it is known; end the list with a full stop.
  char list[FS_ERROR_LEN];
  snprintf(list, sizeof list, "%s", err->msg + strlen(model_path) + 2);
  size_t n = strlen(list);
  if (n && list[n - 1] == ';') list[n - 1] = '.';
  return fs_fail(err,
                 "%s: flysim's engine (host and cuda backends) does not implement %d feature%s "
                 "this model uses:%s",
                 model_path, p.n, p.n == 1 ? "" : "s", list);
}

// The sensor kinds of FS_SENSORS are MuJoCo's (mjtSensor values).
#define FS_X(id, value) _Static_assert((int)FS_SENS_##id == (int)mjSENS_##id, "FS_SENSORS: " #id);
FS_SENSORS(FS_X)
#undef FS_X

// The MJCF element of each sensor kind (mjtSensor order), for messages.
static const char* const kSensorElement[] = {"touch",
                                             "accelerometer",
                                             "velocimeter",
                                             "gyro",
                                             "force",
                                             "torque",
                                             "magnetometer",
                                             "rangefinder",
                                             "camprojection",
                                             "jointpos",
                                             "jointvel",
                                             "tendonpos",
                                             "tendonvel",
                                             "actuatorpos",
                                             "actuatorvel",
                                             "actuatorfrc",
                                             "jointactuatorfrc",
                                             "tendonactuatorfrc",
                                             "ballquat",
                                             "ballangvel",
                                             "jointlimitpos",
                                             "jointlimitvel",
                                             "jointlimitfrc",
                                             "tendonlimitpos",
                                             "tendonlimitvel",
                                             "tendonlimitfrc",
                                             "framepos",
                                             "framequat",
                                             "framexaxis",
                                             "frameyaxis",
                                             "framezaxis",
                                             "framelinvel",
                                             "frameangvel",
                                             "framelinacc",
                                             "frameangacc",
                                             "subtreecom",
                                             "subtreelinvel",
                                             "subtreeangmom",
                                             "insidesite",
                                             "distance",
                                             "normal",
                                             "fromto",
                                             "contact",
                                             "e_potential",
                                             "e_kinetic",
                                             "clock",
                                             "tactile",
                                             "plugin",
                                             "user"};
_Static_assert(sizeof kSensorElement / sizeof *kSensorElement == mjSENS_USER + 1,
               "kSensorElement: one name a sensor kind");

// Whether an object type is one the sensor stage reads (fsi_object_frame, the contact match:
// bodies, geoms, sites; joints, tendons, actuators by id): not a camera's or a flex's.
static int sensor_object_ok(int type) {
  return type != mjOBJ_CAMERA && type != mjOBJ_FLEX;
}

// What sensor i needs that the stage does not do, or NULL.
static const char* sensor_lacks(const mjModel* m, int i) {
  int type = m->sensor_type[i];
  int known = 0;
#define FS_X(id, value) known |= type == value;
  FS_SENSORS(FS_X)
#undef FS_X
  if (!known) return "kind";
  if (m->sensor_history[2 * i] > 0) return "delay or interval";
  if (!sensor_object_ok(m->sensor_objtype[i]) || !sensor_object_ok(m->sensor_reftype[i]))
    return "object (a camera or a flex)";
  if (type == mjSENS_CONTACT && (m->sensor_intprm[mjNSENS * i] >> FS_NCONDATA))
    return "data (linvel, angvel)";
  if ((type == mjSENS_TENDONPOS || type == mjSENS_TENDONVEL) &&
      !tendon_path_ok(m, m->sensor_objid[i]))
    return "tendon (a spatial tendon that wraps a geom)";
  return NULL;
}

int fs_model_sensors_lack(const mjModel* m, char* why, size_t n) {
  int count = 0;
  size_t at = 0;
  why[0] = 0;
  if (m->opt.disableflags & mjDSBL_SENSOR) {
    snprintf(why, n, "its sensors are disabled (<flag sensor=\"disable\"/>)");
    return (int)m->nsensor > 0 ? (int)m->nsensor : 1;
  }
  for (int i = 0; i < m->nsensor; i++) {
    const char* lack = sensor_lacks(m, i);
    if (!lack) continue;
    const char* name = mj_id2name(m, mjOBJ_SENSOR, i);
    int type = m->sensor_type[i];
    int k = snprintf(why + at, n - at, "%s'%s' (%s: its %s)", count ? ", " : "",
                     name ? name : "(unnamed)",
                     type >= 0 && type <= mjSENS_USER ? kSensorElement[type] : "?", lack);
    count++;
    if (k < 0 || (size_t)k >= n - at) break;
    at += (size_t)k;
  }
  return count;
}
