// The model build (common/model/model.h): fs_model_build* converts an mjModel (after the
// check, common/model/model_support.c) into the stepper's fsModel: sizes, options, the arrays
// copied by name and converted to fsReal, and the arrays flysim derives (actuator-inherited
// armature and damping, the moments' static sparsity, the body tree by depth, the contact
// pairs' slots and dof chains, the solver's layouts); the contact bound, the model's and a
// world's bytes, and the descriptions of the fields (common/engine/fields.h) and of the stages.
#include "common/model/model.h"

#include "common/engine/collision_convex.h" // the convex pairs (fsi_convex_types)
#include "common/engine/collision_cull.h"
#include "common/engine/stage_position.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// common/engine/fields.h restates MuJoCo's constants for the device side; keep them equal.
_Static_assert((int)FS_NWARNING == (int)mjNWARNING && (int)FS_NPOLY == (int)mjNPOLY &&
                   (int)FS_NGAIN == (int)mjNGAIN && (int)FS_NBIAS == (int)mjNBIAS,
               "common/engine/fields.h: MuJoCo's array sizes changed");
_Static_assert((int)FS_WARN_BADQPOS == (int)mjWARN_BADQPOS &&
                   (int)FS_WARN_BADQVEL == (int)mjWARN_BADQVEL &&
                   (int)FS_WARN_BADQACC == (int)mjWARN_BADQACC &&
                   (int)FS_WARN_BADCTRL == (int)mjWARN_BADCTRL,
               "common/engine/fields.h: MuJoCo's warnings changed");
_Static_assert((int)FS_DSBL_CONSTRAINT == (int)mjDSBL_CONSTRAINT &&
                   (int)FS_DSBL_CONTACT == (int)mjDSBL_CONTACT &&
                   (int)FS_DSBL_SPRING == (int)mjDSBL_SPRING &&
                   (int)FS_DSBL_DAMPER == (int)mjDSBL_DAMPER &&
                   (int)FS_DSBL_GRAVITY == (int)mjDSBL_GRAVITY &&
                   (int)FS_DSBL_CLAMPCTRL == (int)mjDSBL_CLAMPCTRL &&
                   (int)FS_DSBL_ACTUATION == (int)mjDSBL_ACTUATION &&
                   (int)FS_DSBL_EULERDAMP == (int)mjDSBL_EULERDAMP &&
                   (int)FS_DSBL_AUTORESET == (int)mjDSBL_AUTORESET,
               "common/engine/fields.h: MuJoCo's disable flags changed");
_Static_assert((int)FS_JNT_FREE == (int)mjJNT_FREE && (int)FS_JNT_BALL == (int)mjJNT_BALL &&
                   (int)FS_JNT_SLIDE == (int)mjJNT_SLIDE && (int)FS_JNT_HINGE == (int)mjJNT_HINGE &&
                   (int)FS_TRN_JOINT == (int)mjTRN_JOINT &&
                   (int)FS_TRN_JOINTINPARENT == (int)mjTRN_JOINTINPARENT &&
                   (int)FS_TRN_BODY == (int)mjTRN_BODY && (int)FS_GAIN_FIXED == (int)mjGAIN_FIXED &&
                   (int)FS_GAIN_AFFINE == (int)mjGAIN_AFFINE &&
                   (int)FS_BIAS_NONE == (int)mjBIAS_NONE &&
                   (int)FS_BIAS_AFFINE == (int)mjBIAS_AFFINE &&
                   (int)FS_SAMEFRAME_BODY == (int)mjSAMEFRAME_BODY &&
                   (int)FS_SAMEFRAME_BODYROT == (int)mjSAMEFRAME_BODYROT &&
                   (int)FS_SAMEFRAME_INERTIA == (int)mjSAMEFRAME_INERTIA &&
                   (int)FS_SAMEFRAME_INERTIAROT == (int)mjSAMEFRAME_INERTIAROT,
               "common/engine/fields.h: MuJoCo's enums changed");
_Static_assert((int)FS_GEOM_PLANE == (int)mjGEOM_PLANE &&
                   (int)FS_GEOM_SPHERE == (int)mjGEOM_SPHERE &&
                   (int)FS_GEOM_CAPSULE == (int)mjGEOM_CAPSULE &&
                   (int)FS_GEOM_ELLIPSOID == (int)mjGEOM_ELLIPSOID &&
                   (int)FS_GEOM_CYLINDER == (int)mjGEOM_CYLINDER &&
                   (int)FS_GEOM_BOX == (int)mjGEOM_BOX && (int)FS_GEOM_MESH == (int)mjGEOM_MESH &&
                   (int)FS_GEOM_SDF == (int)mjGEOM_SDF && (int)FS_NREF == (int)mjNREF &&
                   (int)FS_NIMP == (int)mjNIMP && (int)FS_ENBL_OVERRIDE == (int)mjENBL_OVERRIDE &&
                   (int)FS_WARN_CONTACTFULL == (int)mjWARN_CONTACTFULL,
               "common/engine/fields.h: MuJoCo's collision constants changed");
_Static_assert((int)FS_CNSTR_CONTACT_FRICTIONLESS == (int)mjCNSTR_CONTACT_FRICTIONLESS &&
                   (int)FS_CNSTR_CONTACT_PYRAMIDAL == (int)mjCNSTR_CONTACT_PYRAMIDAL &&
                   (int)FS_DSBL_REFSAFE == (int)mjDSBL_REFSAFE &&
                   (int)FS_WARN_CNSTRFULL == (int)mjWARN_CNSTRFULL &&
                   (int)FS_CNSTR_EQUALITY == (int)mjCNSTR_EQUALITY &&
                   (int)FS_CNSTR_FRICTION_DOF == (int)mjCNSTR_FRICTION_DOF &&
                   (int)FS_CNSTR_FRICTION_TENDON == (int)mjCNSTR_FRICTION_TENDON &&
                   (int)FS_CNSTR_LIMIT_JOINT == (int)mjCNSTR_LIMIT_JOINT &&
                   (int)FS_CNSTR_LIMIT_TENDON == (int)mjCNSTR_LIMIT_TENDON &&
                   (int)FS_DSBL_EQUALITY == (int)mjDSBL_EQUALITY &&
                   (int)FS_EQ_JOINT == (int)mjEQ_JOINT && (int)FS_EQ_TENDON == (int)mjEQ_TENDON &&
                   (int)FS_NEQDATA == (int)mjNEQDATA,
               "common/engine/fields.h: MuJoCo's constraint constants changed");

//---------------------------------- field tables and stage names ----------------------------------

const fsFieldInfo fs_model_fields[] = {
#define FS_X(type, name, size, cols)                                                               \
  {#name, FS_TYPE_##type, offsetof(fsModel, size), cols, -1, -1, offsetof(fsModel, name)},
    FS_MODEL_FIELDS(FS_X)
#undef FS_X
};
const int fs_model_nfield = (int)(sizeof fs_model_fields / sizeof fs_model_fields[0]);

const fsFieldInfo fs_data_fields[] = {
#define FS_X(type, name, size, cols, stage, kind)                                                  \
  {#name,          FS_TYPE_##type,        offsetof(fsModel, size), cols, FS_STAGE_##stage,         \
   FS_KIND_##kind, offsetof(fsData, name)},
    FS_DATA_FIELDS(FS_X)
#undef FS_X
};
const int fs_data_nfield = (int)(sizeof fs_data_fields / sizeof fs_data_fields[0]);

const char* fs_stage_name(int stage) {
#define FS_X(id, name, function) name,
  static const char* names[FS_NSTAGE] = {"state", FS_STAGES(FS_X)}; // FS_STAGE_STATE, the rest
#undef FS_X
  return stage >= 0 && stage < FS_NSTAGE ? names[stage] : "?";
}

//---------------------------------- the build -----------------------------------------------------

static void copy_num(fsReal* dst, const mjtNum* src, long n) {
  for (long i = 0; i < n; i++) dst[i] = (fsReal)src[i];
}
static void copy_int(int* dst, const int* src, long n) {
  for (long i = 0; i < n; i++) dst[i] = src[i];
}
static void copy_byte(int* dst, const mjtByte* src, long n) {
  for (long i = 0; i < n; i++) dst[i] = src[i];
}
static void copy_bool(int* dst, const mjtBool* src, long n) {
  for (long i = 0; i < n; i++) dst[i] = src[i] ? 1 : 0;
}
static void copy_float(fsReal* dst, const float* src, long n) {
  for (long i = 0; i < n; i++) dst[i] = (fsReal)src[i];
}
// Copy an mjModel array into the model's, converting by the source's type.
#define FS_COPY(dst, src, n)                                                                       \
  _Generic((src), mjtNum *: copy_num, int *: copy_int, mjtByte *: copy_byte,                  \
           mjtBool *: copy_bool, float *: copy_float)(dst, src, n)

// Depth of every body (world 0) into depth; returns the number of levels.
static int body_depths(const mjModel* mj, int* depth) {
  int nlevel = 1;
  depth[0] = 0;
  for (int i = 1; i < mj->nbody; i++) {
    depth[i] = depth[mj->body_parentid[i]] + 1; // parents precede children
    if (depth[i] + 1 > nlevel) nlevel = depth[i] + 1;
  }
  return nlevel;
}

// Bodies by level, and each body's children.
static void derive_tree(const mjModel* mj, fsModel* m, const int* depth) {
  int nb = m->nbody, k = 0;
  for (int lev = 0; lev < m->nlevel; lev++) {
    m->level_bodyadr[lev] = k;
    for (int i = 0; i < nb; i++)
      if (depth[i] == lev) m->level_body[k++] = i;
  }
  m->level_bodyadr[m->nlevel] = k;
  for (int i = 1; i < nb; i++) m->body_childnum[mj->body_parentid[i]]++;
  for (int i = 0, adr = 0; i < nb; i++) {
    m->body_childadr[i] = adr;
    adr += m->body_childnum[i];
  }
  int* fill = calloc((size_t)nb, sizeof(int));
  for (int i = 1; i < nb; i++) {
    int p = mj->body_parentid[i];
    m->body_child[m->body_childadr[p] + fill[p]++] = i;
  }
  free(fill);
}

// Armature and damping joint jnt inherits from actuators (MuJoCo's
// mj_actuatorArmature / mj_actuatorDamping: jnt_actuatorid -1 none, >= 0 that
// actuator, < -1 every joint actuator on the joint), each times gear^2.
static void actuator_inherit(const mjModel* mj, int jnt, double* armature, double* damping,
                             double poly[mjNPOLY]) {
  *armature = *damping = 0;
  for (int k = 0; k < mjNPOLY; k++) poly[k] = 0;
  int id = mj->jnt_actuatorid[jnt];
  if (id == -1) return;
  for (int a = 0; a < mj->nactuator; a++) {
    int t = mj->actuator_trntype[a];
    if (id >= 0
            ? a != id
            : (mj->actuator_trnid[2 * a] != jnt || (t != mjTRN_JOINT && t != mjTRN_JOINTINPARENT)))
      continue;
    double g = mj->actuator_gear[6 * mj->actuator_outadr[a]];
    *armature += mj->actuator_armature[a] * (g * g);
    *damping += mj->actuator_damping[a] * (g * g);
    for (int k = 0; k < mjNPOLY; k++)
      poly[k] += mj->actuator_dampingpoly[mjNPOLY * a + k] * (g * g);
  }
}

// Per-dof inherited armature and damping, disabled actuators, and whether Euler
// integrates damping implicitly (mj_EulerSkip's test).
static void derive_dofs(const mjModel* mj, fsModel* m) {
  int damping = 0;
  for (int i = 0; i < m->nv; i++) {
    double arm, damp, poly[mjNPOLY];
    int jnt = mj->dof_jntid[i];
    actuator_inherit(mj, jnt, &arm, &damp, poly);
    m->dof_actarmature[i] = (fsReal)arm;
    m->dof_actdamping[i] = (fsReal)damp;
    for (int k = 0; k < mjNPOLY; k++) m->dof_actdampingpoly[FS_NPOLY * i + k] = (fsReal)poly[k];
    int poly_nz = 0;
    for (int k = 0; k < mjNPOLY; k++) poly_nz |= mj->dof_dampingpoly[mjNPOLY * i + k] != 0;
    if (mj->dof_damping[i] > 0 || poly_nz || mj->jnt_actuatorid[jnt] != -1) damping = 1;
  }
  m->flg_eulerdamp = damping && !(mj->opt.disableflags & (mjDSBL_EULERDAMP | mjDSBL_DAMPER));
  for (int a = 0; a < m->nu; a++) {
    int g = mj->actuator_group[a];
    m->actuator_disabled[a] = g >= 0 && g <= 30 && (mj->opt.disableactuator & (1 << g));
  }
}

// Dofs of actuator a's moment row into dofs (nv), increasing; returns how many.
// Joint transmission: its dof. Fixed tendon: its Jacobian's columns (MuJoCo's ten_J_colind,
// its joints' dofs, a zero coefficient's too). Body transmission: every dof a contact of the body
// can move (the ancestor dofs of both geoms' bodies of each pair with a geom on
// the body) when the model has constraint rows (with_rows), else none (no
// contacts: MuJoCo's row is empty). MuJoCo's row holds the non-zeros among these.
static int moment_dofs(const mjModel* mj, const fsPairTable* pt, int a, int with_rows, int* dofs) {
  if (mj->actuator_trntype[a] == mjTRN_TENDON) {
    int t = mj->actuator_trnid[2 * a], n = mj->ten_J_rownnz[t];
    memcpy(dofs, mj->ten_J_colind + mj->ten_J_rowadr[t], (size_t)n * sizeof(int));
    return n;
  }
  if (mj->actuator_trntype[a] != mjTRN_BODY) {
    dofs[0] = mj->jnt_dofadr[mj->actuator_trnid[2 * a]];
    return 1;
  }
  if (!with_rows) return 0;
  int body = mj->actuator_trnid[2 * a], n = 0;
  char* mark = calloc((size_t)mj->nv + 1, 1);
  for (int p = 0; p < pt->n; p++) {
    int b[2] = {mj->geom_bodyid[pt->geom1[p]], mj->geom_bodyid[pt->geom2[p]]};
    if (b[0] != body && b[1] != body) continue;
    for (int s = 0; s < 2; s++) {
      int w = mj->body_weldid[b[s]];
      for (int i = mj->body_dofnum[w] ? mj->body_dofadr[w] + mj->body_dofnum[w] - 1 : -1; i >= 0;
           i = mj->dof_parentid[i])
        mark[i] = 1;
    }
  }
  for (int i = 0; i < mj->nv; i++)
    if (mark[i]) dofs[n++] = i;
  free(mark);
  return n;
}

// Static moment sparsity and its transpose (per dof, by actuator).
static void derive_moments(const mjModel* mj, const fsPairTable* pt, fsModel* m, int with_rows) {
  int adr = 0;
  for (int a = 0; a < m->nu; a++) {
    m->moment_rowadr[a] = adr;
    m->moment_rownnz[a] = moment_dofs(mj, pt, a, with_rows, m->moment_colind + adr);
    adr += m->moment_rownnz[a];
  }
  for (int k = 0; k < m->nJmom; k++) m->dof_momentnum[m->moment_colind[k]]++;
  for (int i = 0, s = 0; i < m->nv; i++) {
    m->dof_momentadr[i] = s;
    s += m->dof_momentnum[i];
  }
  int* fill = calloc((size_t)m->nv + 1, sizeof(int));
  for (int a = 0; a < m->nu; a++)
    for (int k = m->moment_rowadr[a]; k < m->moment_rowadr[a] + m->moment_rownnz[a]; k++) {
      int i = m->moment_colind[k], slot = m->dof_momentadr[i] + fill[i]++;
      m->dof_momentind[slot] = k;
      m->dof_momentact[slot] = a;
    }
  free(fill);
}

// Pair p's contact bound (fs_model_pair_maxcon), 0 with contacts off.
static int pair_maxcon(const mjModel* mj, const fsPairTable* pt, int p) {
  if (!fs_model_contacts_enabled(mj)) return 0;
  return fs_model_pair_maxcon(mj, pt->geom1[p], pt->geom2[p], fs_pair_margin_gap(mj, pt, p));
}

// Pair p's geoms in collision order: lower geom type first.
static void pair_collision_geoms(const mjModel* mj, const fsPairTable* pt, int p, int* g1,
                                 int* g2) {
  int a = pt->geom1[p], b = pt->geom2[p], swap = mj->geom_type[a] > mj->geom_type[b];
  *g1 = swap ? b : a;
  *g2 = swap ? a : b;
}

// The static pair culling's plan (common/engine/collision_cull.h), made with the sizes and written
// into the model's arrays after they are allocated.
typedef struct CullPlan {
  int* pair_static; // (npair) the pair's static geom's row in the plan, -1: always tested
  int* pair_moving; // (npair) its moving geom's row
  int* geom_row;    // (ngeom) a geom's row: moving geoms' in cull_geom, static in cull_aabb
  int* geoms;       // (ncullgeom) the moving geoms
  int* statics;     // (ncullstatic) the static geoms
  double* reach;    // (ncullgeom) rbound + the largest margin + gap of its culled pairs
  fsReal* aabb;     // (ncullstatic x 6) world boxes: lo x, y, z, then hi x, y, z; padded
} CullPlan;

static void cull_plan_free(CullPlan* c) {
  free(c->pair_static);
  free(c->pair_moving);
  free(c->geom_row);
  free(c->geoms);
  free(c->statics);
  free(c->reach);
  free(c->aabb);
  memset(c, 0, sizeof *c);
}

// Body b has dofs on its way to the world (its contacts' rows act on them).
static int body_moves(const mjModel* mj, int b) {
  for (; b > 0; b = mj->body_parentid[b])
    if (mj->body_dofnum[b]) return 1;
  return 0;
}

// Geom g never moves: its body is welded to the world and no mocap body is on the way.
static int geom_static(const mjModel* mj, int g) {
  int b = mj->geom_bodyid[g];
  if (mj->body_weldid[b] != 0) return 0;
  for (; b > 0; b = mj->body_parentid[b])
    if (mj->body_mocapid[b] >= 0) return 0;
  return 1;
}

// A pair culled: one geom static and bounded (not a plane), the other moving.
static int pair_cullable(const mjModel* mj, const fsPairTable* pt, int p, int* moving, int* fixed) {
  int a = pt->geom1[p], b = pt->geom2[p];
  int sa = geom_static(mj, a), sb = geom_static(mj, b);
  if (sa == sb) return 0;
  *fixed = sa ? a : b;
  *moving = sa ? b : a;
  int t = mj->geom_type[*fixed];
  return t != mjGEOM_PLANE && t != mjGEOM_HFIELD && mj->geom_rbound[*fixed] > 0;
}

/// The grid cells [x[0], x[1]] x [y[0], y[1]] a static box (cull_aabb's row) overlaps:
/// one function for the sizing of the grid and its filling.
static void static_cells(const fsModel* m, const fsReal* box, int x[2], int y[2]) {
  for (int k = 0; k < 2; k++) {
    x[k] = fsi_grid_cell(m, box[3 * k], 0);
    y[k] = fsi_grid_cell(m, box[3 * k + 1], 1);
  }
}

// Sizes of the culling and its plan: which pairs are culled, the moving and static geoms,
// their reach and boxes, and the grid's placement (m->grid_*). No culled pairs (or contacts
// off): ncullgeom 0 and every pair a candidate. Returns -1 when out of memory.
static int cull_plan(const mjModel* mj, const fsPairTable* pt, fsModel* m, CullPlan* c,
                     fsError* err) {
  memset(c, 0, sizeof *c);
  m->grid_n[0] = m->grid_n[1] = 1;
  m->grid_inv[0] = m->grid_inv[1] = 1;
  int np = pt->n, ng = (int)mj->ngeom;
  c->pair_static = fs_calloc(err, "culled pairs", (unsigned long long)np + 1, sizeof(int));
  c->pair_moving = fs_calloc(err, "culled pairs", (unsigned long long)np + 1, sizeof(int));
  c->geom_row = fs_calloc(err, "culled geoms", (unsigned long long)ng + 1, sizeof(int));
  c->geoms = fs_calloc(err, "moving geoms", (unsigned long long)ng + 1, sizeof(int));
  c->statics = fs_calloc(err, "static geoms", (unsigned long long)ng + 1, sizeof(int));
  c->reach = fs_calloc(err, "reach", (unsigned long long)ng + 1, sizeof(double));
  c->aabb = fs_calloc(err, "static boxes", 6ull * ng + 6, sizeof(fsReal));
  if (!c->pair_static || !c->pair_moving || !c->geom_row || !c->geoms || !c->statics || !c->reach ||
      !c->aabb) {
    cull_plan_free(c);
    return -1;
  }
  for (int g = 0; g < ng; g++) c->geom_row[g] = -1;
  for (int p = 0; p < np; p++) {
    int mv, st;
    c->pair_static[p] = -1;
    if (!fs_model_contacts_enabled(mj) || !pair_cullable(mj, pt, p, &mv, &st)) continue;
    if (c->geom_row[mv] < 0) {
      c->geom_row[mv] = m->ncullgeom;
      c->geoms[m->ncullgeom] = mv;
      c->reach[m->ncullgeom++] = mj->geom_rbound[mv];
    }
    if (c->geom_row[st] < 0) {
      c->geom_row[st] = m->ncullstatic;
      c->statics[m->ncullstatic++] = st;
    }
    double margin = fs_pair_margin_gap(mj, pt, p);
    double r = mj->geom_rbound[mv] + (margin > 0 ? margin : 0);
    int i = c->geom_row[mv];
    c->reach[i] = r > c->reach[i] ? r : c->reach[i];
    c->pair_static[p] = c->geom_row[st];
    c->pair_moving[p] = i;
  }
  m->ncullpair = m->ncullgeom * m->ncullstatic;
  if (!m->ncullgeom) return 0;
  // a second pair of the same two geoms is tested every step (the table holds one)
  int* seen = fs_calloc(err, "culled pair table", (unsigned long long)m->ncullpair, sizeof(int));
  if (!seen) {
    cull_plan_free(c);
    return -1;
  }
  for (int p = 0; p < np; p++) {
    if (c->pair_static[p] < 0) continue;
    int* e = seen + (long)c->pair_moving[p] * m->ncullstatic + c->pair_static[p];
    if (*e) c->pair_static[p] = -1;
    *e = 1;
  }
  free(seen);
  // static boxes from the geoms' world frames (qpos-independent), padded outwards so
  // that rounding them to fsReal keeps them holding the geoms
  mjData* d = mj_makeData(mj);
  if (!d) {
    cull_plan_free(c);
    return fs_fail(err, "out of memory placing the static geoms");
  }
  mj_kinematics(mj, d);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  double ext[2] = {0, 0};
  double pad_rel = sizeof(fsReal) == 4 ? 1e-5 : 1e-9;
  for (int s = 0; s < m->ncullstatic; s++) {
    int g = c->statics[s];
    const mjtNum *pos = d->geom_xpos + 3 * g, *mat = d->geom_xmat + 9 * g;
    const mjtNum* box = mj->geom_aabb + 6 * g; // local centre, half sizes
    // x and y place the box in the grid; z bounds its height (collision_cull.h's test in z)
    for (int a = 0; a < 3; a++) {
      double cen = pos[a], half = 0;
      for (int j = 0; j < 3; j++) {
        cen += mat[3 * a + j] * box[j];
        half += fabs(mat[3 * a + j]) * box[3 + j];
      }
      double pad = pad_rel * (1 + fabs(cen) + half);
      c->aabb[6 * s + a] = (fsReal)(cen - half - pad);
      c->aabb[6 * s + 3 + a] = (fsReal)(cen + half + pad);
      lo[a] = fmin(lo[a], cen - half - pad);
      hi[a] = fmax(hi[a], cen + half + pad);
      if (a < 2) ext[a] += 2 * (half + pad);
    }
  }
  mj_deleteData(d);
  // the boxes' span in z: a query clear of it has no candidates (rounding is monotonic, so
  // these are the least and greatest of the stored bounds)
  m->grid_z[0] = (fsReal)lo[2];
  m->grid_z[1] = (fsReal)hi[2];
  // the grid: cells as large as the static boxes on average, along each axis
  for (int a = 0; a < 2; a++) {
    double cell = ext[a] / m->ncullstatic, span = hi[a] - lo[a];
    if (!(cell > 0)) cell = 1;
    double n = ceil(span / cell);
    n = n < 1 ? 1 : (n > 1024 ? 1024 : n);
    if (span > 0) cell = span / n;
    m->grid_n[a] = (int)n;
    m->grid_lo[a] = (fsReal)lo[a];
    m->grid_inv[a] = (fsReal)(1 / cell);
  }
  m->ngrid = m->grid_n[0] * m->grid_n[1];
  m->ngridadr = m->ngrid + 1;
  for (int s = 0; s < m->ncullstatic; s++) {
    int x[2], y[2];
    static_cells(m, c->aabb + 6 * s, x, y);
    m->ngridentry += (x[1] - x[0] + 1) * (y[1] - y[0] + 1);
  }
  return 0;
}

// Each pair's geoms, parameters and contact bound; the always-tested pairs; the culling's
// arrays and grid (common/engine/collision_cull.h) from the plan. Without contacts (disabled)
// no slots: the collision stage returns none.
static void derive_pairs(const mjModel* mj, const fsPairTable* pt, fsModel* m, const CullPlan* c) {
  int na = 0;
  for (int p = 0; p < m->npair; p++) {
    const double* prm = pt->param + (size_t)FS_PAIR_NPARAM * p;
    m->pair_geom1[p] = pt->geom1[p];
    m->pair_geom2[p] = pt->geom2[p];
    m->pair_dim[p] = pt->dim[p];
    for (int k = 0; k < FS_NREF; k++) {
      m->pair_solref[FS_NREF * p + k] = (fsReal)prm[FS_PAIR_SOLREF + k];
      m->pair_solreffriction[FS_NREF * p + k] = (fsReal)prm[FS_PAIR_SOLREFFRICTION + k];
    }
    for (int k = 0; k < FS_NIMP; k++)
      m->pair_solimp[FS_NIMP * p + k] = (fsReal)prm[FS_PAIR_SOLIMP + k];
    for (int k = 0; k < 5; k++) m->pair_friction[5 * p + k] = (fsReal)prm[FS_PAIR_FRICTION + k];
    m->pair_margin[p] = (fsReal)prm[FS_PAIR_MARGIN];
    m->pair_gap[p] = (fsReal)prm[FS_PAIR_GAP];
    m->pair_adhesion[p] = (fsReal)prm[FS_PAIR_ADHESION];
    m->pair_maxcon[p] = pair_maxcon(mj, pt, p);
    int g1, g2; // which of the geoms move (collision order): 1 geom 2 alone, 0 geom 1, 2 both
    pair_collision_geoms(mj, pt, p, &g1, &g2);
    int move1 = body_moves(mj, mj->geom_bodyid[g1]), move2 = body_moves(mj, mj->geom_bodyid[g2]);
    m->pair_moveside[p] = move1 && move2 ? 2 : !move1;
    if (c->pair_static[p] < 0 && na < m->nalways) m->always_pair[na++] = p;
  }
  if (!m->ncullgeom) return;
  for (int i = 0; i < m->ncullgeom; i++) {
    m->cull_geom[i] = c->geoms[i];
    m->cull_reach[i] = (fsReal)c->reach[i];
  }
  for (int k = 0; k < 6 * m->ncullstatic; k++) m->cull_aabb[k] = c->aabb[k];
  for (int k = 0; k < m->ncullpair; k++) m->cull_pair[k] = -1;
  for (int p = 0; p < m->npair; p++) {
    int s = c->pair_static[p];
    if (s < 0) continue;
    m->cull_pair[(long)c->pair_moving[p] * m->ncullstatic + s] = p;
  }
  // the grid's cells (CSR): each static box in every cell it overlaps
  for (int pass = 0; pass < 2; pass++) {
    int* count = m->grid_adr; // pass 0 counts into adr[c + 1], pass 1 fills
    if (pass == 1) {
      for (int k = 0; k < m->ngrid; k++) count[k + 1] += count[k];
    }
    for (int s = 0; s < m->ncullstatic; s++) {
      int xr[2], yr[2];
      static_cells(m, m->cull_aabb + 6 * s, xr, yr);
      for (int y = yr[0]; y <= yr[1]; y++)
        for (int x = xr[0]; x <= xr[1]; x++) {
          int cell = y * m->grid_n[0] + x;
          if (pass == 0)
            count[cell + 1]++;
          else
            m->grid_static[count[cell]++] = s;
        }
    }
  }
  for (int k = m->ngrid; k > 0; k--) m->grid_adr[k] = m->grid_adr[k - 1]; // back to starts
  m->grid_adr[0] = 0;
}

// Dof chain of the contacts of geoms g1, g2 (MuJoCo's mj_mergeChain of the two geoms'
// bodies, common ancestors skipped) into chain (nv), each dof's side (0: g1's body, 1:
// g2's) into side (or NULL); returns its length.
int fs_model_pair_chain(const mjModel* m, int g1, int g2, int* chain, int* side) {
  int b1 = m->body_weldid[m->geom_bodyid[g1]];
  int b2 = m->body_weldid[m->geom_bodyid[g2]];
  int d1 = m->body_dofnum[b1] ? m->body_dofadr[b1] + m->body_dofnum[b1] - 1 : -1;
  int d2 = m->body_dofnum[b2] ? m->body_dofadr[b2] + m->body_dofnum[b2] - 1 : -1;
  int n = 0;
  while (d1 >= 0 || d2 >= 0) {
    int da = d1 > d2 ? d1 : d2;
    if (d1 == da && d2 == da) break; // common ancestors: no relative motion
    if (side) side[n] = d2 == da;
    chain[n++] = da;
    if (d1 == da) d1 = m->dof_parentid[d1];
    if (d2 == da) d2 = m->dof_parentid[d2];
  }
  for (int i = 0; i < n / 2; i++) { // increasing
    int t = chain[i];
    chain[i] = chain[n - 1 - i];
    chain[n - 1 - i] = t;
    if (!side) continue;
    t = side[i];
    side[i] = side[n - 1 - i];
    side[n - 1 - i] = t;
  }
  return n;
}

// The dofs equality i's row moves (its joint's or fixed tendon's, merged with the second
// object's), increasing, into chain (nv; NULL: only counted); 0 unless it makes a row: an
// active joint or tendon equality with constraint and equality rows on.
static int eq_chain(const mjModel* mj, int i, int* chain) {
  if ((mj->opt.disableflags & (mjDSBL_CONSTRAINT | mjDSBL_EQUALITY)) || !mj->eq_active0[i] ||
      (mj->eq_type[i] != mjEQ_JOINT && mj->eq_type[i] != mjEQ_TENDON))
    return 0;
  int n = 0;
  for (int j = 0; j < mj->nv; j++) {
    int on = 0;
    for (int s = 0; s < 2; s++) {
      int obj = s ? mj->eq_obj2id[i] : mj->eq_obj1id[i];
      if (obj < 0) continue;
      if (mj->eq_type[i] == mjEQ_JOINT) {
        on |= mj->jnt_dofadr[obj] == j;
        continue;
      }
      for (int k = mj->ten_J_rowadr[obj]; k < mj->ten_J_rowadr[obj] + mj->ten_J_rownnz[obj]; k++)
        on |= mj->ten_J_colind[k] == j;
    }
    if (on && chain) chain[n] = j;
    n += on;
  }
  return n;
}

// Rows tendon k makes, as the flags leave them on: one of friction loss (frictionloss > 0),
// two of limits (limited: both sides within the margin at once where the range is narrower
// than it). The model check refuses them on spatial tendons that wrap geoms.
static int tendon_rows(const mjModel* mj, int k) {
  int flags = mj->opt.disableflags;
  if (flags & mjDSBL_CONSTRAINT) return 0;
  return (!(flags & mjDSBL_FRICTIONLOSS) && mj->tendon_frictionloss[k] > 0) +
         (!(flags & mjDSBL_LIMIT) && mj->tendon_limited[k] ? 2 : 0);
}

// The dofs tendon k's limit and friction-loss rows move (its Jacobian's columns, MuJoCo's
// ten_J_colind, each once: a joint listed twice has two slots), increasing, into chain
// (NULL: only counted); 0 unless it makes rows.
static int tendon_chain(const mjModel* mj, int k, int* chain) {
  if (!tendon_rows(mj, k)) return 0;
  int n = 0;
  for (int q = 0, adr = mj->ten_J_rowadr[k]; q < mj->ten_J_rownnz[k]; q++) {
    int col = mj->ten_J_colind[adr + q];
    if (q && col == mj->ten_J_colind[adr + q - 1]) continue;
    if (chain) chain[n] = col;
    n++;
  }
  return n;
}

// Each pair's dof chain (contact rows only; else none), then the dofs' one-entry chains
// (friction-loss and limit rows only), then each equality's (its row's; 0 entries: none),
// then each tendon's (its limit and friction-loss rows').
static void derive_chains(const mjModel* mj, const fsPairTable* pt, fsModel* m) {
  int adr = 0;
  for (int p = 0; p < m->npair && m->npairnv; p++) {
    int g1, g2;
    pair_collision_geoms(mj, pt, p, &g1, &g2);
    m->pair_dofadr[p] = adr;
    m->pair_nv[p] = fs_model_pair_chain(mj, g1, g2, m->pair_dof + adr, m->pair_dofside + adr);
    int sides = 0;
    for (int k = 0; k < m->pair_nv[p]; k++) sides |= 1 << m->pair_dofside[adr + k];
    m->nbranchpair += sides == 3;
    adr += m->pair_nv[p];
  }
  for (int j = 0; j < m->nv && m->ndofrow; j++) m->pair_dof[m->dofrow_adr + j] = j;
  adr = m->dofrow_adr + m->nv;
  for (int i = 0; i < m->neq; i++) {
    m->eq_dofadr[i] = adr;
    m->eq_nv[i] = m->ndofrow ? eq_chain(mj, i, m->pair_dof + adr) : 0;
    adr += m->eq_nv[i];
  }
  for (int k = 0; k < m->ntendon; k++) {
    m->tendon_dofadr[k] = adr;
    m->tendon_nv[k] = m->ndofrow ? tendon_chain(mj, k, m->pair_dof + adr) : 0;
    adr += m->tendon_nv[k];
  }
}

// Equality, friction-loss and limit rows a world may make, as the flags leave them on: one
// for each active joint or tendon equality, one for each dof with friction loss, two for
// each limited hinge or slide joint (both sides within the margin at once where the range is
// narrower than it), and each tendon's (tendon_rows).
static int dof_rows(const mjModel* mj) {
  int on = !(mj->opt.disableflags & mjDSBL_CONSTRAINT), n = 0;
  for (int i = 0; i < mj->neq; i++) n += eq_chain(mj, i, NULL) > 0;
  for (int i = 0; i < mj->nv && on && !(mj->opt.disableflags & mjDSBL_FRICTIONLOSS); i++)
    n += mj->dof_frictionloss[i] != 0;
  for (int j = 0; j < mj->njnt && on && !(mj->opt.disableflags & mjDSBL_LIMIT); j++)
    n += mj->jnt_limited[j] && (mj->jnt_type[j] == mjJNT_HINGE || mj->jnt_type[j] == mjJNT_SLIDE)
             ? 2
             : 0;
  for (int k = 0; k < mj->ntendon; k++) n += tendon_chain(mj, k, NULL) ? tendon_rows(mj, k) : 0;
  return n;
}

// The rows' share of the sizes, ndofrow rows before the contacts': the one-dof chains of
// friction loss and limits after the pairs' (nv entries, a non-zero each), then each
// equality's chain, then each tendon's.
static void dof_row_sizes(const mjModel* mj, fsModel* m) {
  m->dofrow_adr = m->npairdof;
  m->npairdof += m->nv;
  m->njmax = m->njmax > 1 ? m->njmax : 1;
  for (int i = 0; i < mj->neq + mj->ntendon; i++) {
    int n = i < mj->neq ? eq_chain(mj, i, NULL) : tendon_chain(mj, i - mj->neq, NULL);
    m->npairdof += n;
    m->njmax = n > m->njmax ? n : m->njmax;
  }
  m->nefcmax += m->ndofrow;
}

// Rows of a contact of condim dim under the pyramidal cone: 1, or 2 per friction
// direction.
static int contact_rows(int dim) {
  return dim == 1 ? 1 : 2 * (dim - 1);
}

// Sizes of the constraint rows: the friction-loss and limit rows (with_rows), each pair's
// chain and rows for every contact slot (MuJoCo's pyramidal count per contact; with
// contacts); none unless built for them.
static void constraint_sizes(const mjModel* mj, const fsPairTable* pt, fsModel* m, int with_rows,
                             int contacts) {
  m->impratio = (fsReal)mj->opt.impratio;
  m->elliptic = mj->opt.cone == mjCONE_ELLIPTIC;
  m->solver_cg = mj->opt.solver == mjSOL_CG;
  m->jac_sparse = mj_isSparse(mj);
  m->dense_rows = 1; // the host's; the cuda backend's models: fs_model_for_lanes
  m->ndofrow = with_rows ? dof_rows(mj) : 0;
  if (!contacts) {
    if (m->ndofrow) dof_row_sizes(mj, m);
    fs_model_row_sizes(m); // none: nefcJ and nefcD 0, nL = nH
    return;
  }
  int* chain = calloc((size_t)mj->nv + 1, sizeof(int));
  int rows = 0; // the most rows a contact makes
  for (int p = 0; p < m->npair; p++) {
    int n = fs_model_pair_chain(mj, pt->geom1[p], pt->geom2[p], chain, NULL);
    m->npairdof += n;
    m->njmax = n > m->njmax ? n : m->njmax;
    m->nefcmax += pair_maxcon(mj, pt, p) * contact_rows(pt->dim[p]);
    rows = contact_rows(pt->dim[p]) > rows ? contact_rows(pt->dim[p]) : rows;
  }
  free(chain);
  if (m->ncullgeom) m->nefcmax = m->nprecon * rows; // the candidates' slots, not every pair's
  m->npairnv = m->npair * m->nv;
  if (m->ndofrow) dof_row_sizes(mj, m);
  fs_model_row_sizes(m);
}

// The solver's options (mjOption, mjStatistic) and flags.
static void solver_options(const mjModel* mj, fsModel* m) {
  m->iterations = mj->opt.iterations;
  m->tolerance = mj->opt.tolerance;
  m->ls_iterations = mj->opt.ls_iterations;
  m->ls_tolerance = mj->opt.ls_tolerance;
  m->noslip_iterations = mj->opt.noslip_iterations;
  m->noslip_tolerance = mj->opt.noslip_tolerance;
  m->meaninertia = mj->stat.meaninertia;
  m->islands = !(mj->opt.disableflags & mjDSBL_ISLAND);
  m->warmstart = !(mj->opt.disableflags & mjDSBL_WARMSTART);
  m->adhesion = mj->flg_adhesion != 0;
}

// Depth of a dof: its ancestors (its row of the reduced layout, less the diagonal).
static int dof_depth(const mjModel* mj, int i) {
  return mj->M_rownnz[i] - 1;
}

// Levels of the dof tree: the deepest dof's depth + 1 (1 without dofs).
static int dof_levels(const mjModel* mj) {
  int n = 1;
  for (int i = 0; i < mj->nv; i++)
    if (dof_depth(mj, i) + 1 > n) n = dof_depth(mj, i) + 1;
  return n;
}

// Depth of a dof in its tree (its ancestors through dof_parentid).
static int dof_tree_depth(const mjModel* mj, int i) {
  int n = 0;
  for (int j = mj->dof_parentid[i]; j >= 0; j = mj->dof_parentid[j]) n++;
  return n;
}

// Sizes of the Hessian's layout: every dof's ancestors and itself.
static void hessian_sizes(const mjModel* mj, fsModel* m) {
  m->nH = 0;
  m->nhlevel = 1;
  for (int i = 0; i < mj->nv; i++) {
    int dep = dof_tree_depth(mj, i);
    m->nH += dep + 1;
    if (dep + 1 > m->nhlevel) m->nhlevel = dep + 1;
  }
  m->nHdesc = m->nH - m->nv;
  m->nhleveladr = m->nhlevel + 1;
}

// What a tree-shaped layout's rows (rownnz, rowadr, colind: each row the dof's
// ancestors kept by the layout, increasing, then the diagonal) give the solver's tree
// passes: each entry's row; each dof's descendants (the rows holding it), increasing;
// rows and entries by depth (a row's entries less the diagonal), nlevel depths.
typedef struct Layout {
  const int *rownnz, *rowadr, *colind;
  int *rowind, *descnum, *descadr, *desc, *levdofadr, *levdof, *leventryadr, *leventry;
  int nlevel;
} Layout;

static void derive_layout(int nv, const Layout* l) {
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < l->rownnz[i]; k++) l->rowind[l->rowadr[i] + k] = i;
  for (int i = 0; i < nv; i++) // every ancestor a of i gets i as a descendant
    for (int k = 0; k < l->rownnz[i] - 1; k++) l->descnum[l->colind[l->rowadr[i] + k]]++;
  for (int i = 0, a = 0; i < nv; i++) {
    l->descadr[i] = a;
    a += l->descnum[i];
  }
  int* fill = calloc((size_t)nv + 1, sizeof(int));
  for (int i = 0; i < nv; i++) // increasing i: each list increases
    for (int k = 0; k < l->rownnz[i] - 1; k++) {
      int a = l->colind[l->rowadr[i] + k];
      l->desc[l->descadr[a] + fill[a]++] = i;
    }
  free(fill);
  int kd = 0, ke = 0;
  for (int lev = 0; lev < l->nlevel; lev++) {
    l->levdofadr[lev] = kd;
    l->leventryadr[lev] = ke;
    for (int i = 0; i < nv; i++) {
      if (l->rownnz[i] - 1 != lev) continue;
      l->levdof[kd++] = i;
      for (int k = 0; k < l->rownnz[i]; k++) l->leventry[ke++] = l->rowadr[i] + k;
    }
  }
  l->levdofadr[l->nlevel] = kd;
  l->leventryadr[l->nlevel] = ke;
}

// The Hessian's layout (rows: ancestors through dof_parentid, increasing, then the
// diagonal), its entries' places in M's layout, and what derive_layout gives.
static void derive_hessian(const mjModel* mj, fsModel* m) {
  int nv = m->nv, adr = 0;
  for (int i = 0; i < nv; i++) {
    int dep = dof_tree_depth(mj, i);
    m->H_rowadr[i] = adr;
    m->H_rownnz[i] = dep + 1;
    m->H_colind[adr + dep] = i;
    for (int j = mj->dof_parentid[i], k = dep - 1; j >= 0; j = mj->dof_parentid[j], k--)
      m->H_colind[adr + k] = j;
    for (int k = 0; k <= dep; k++) {
      int e = adr + k, col = m->H_colind[e];
      m->H_Madr[e] = -1;
      for (int q = 0; q < m->M_rownnz[i]; q++)
        if (m->M_colind[m->M_rowadr[i] + q] == col) m->H_Madr[e] = m->M_rowadr[i] + q;
    }
    adr += dep + 1;
  }
  Layout l = {m->H_rownnz,   m->H_rowadr,        m->H_colind,     m->H_rowind,
              m->H_descnum,  m->H_descadr,       m->H_desc,       m->hlevel_dofadr,
              m->hlevel_dof, m->hlevel_entryadr, m->hlevel_entry, m->nhlevel};
  derive_layout(nv, &l);
}

// What the solver derives: each pair's tree and the places of the dofs in its chain;
// M's layout's and the Hessian's (derive_layout).
static void derive_solver(const mjModel* mj, fsModel* m) {
  int nv = m->nv;
  for (int p = 0; p < m->npair; p++) {
    m->pair_tree[p] =
        m->npairnv && m->pair_nv[p] ? mj->dof_treeid[m->pair_dof[m->pair_dofadr[p]]] : -1;
    int t1 = mj->body_treeid[mj->geom_bodyid[m->pair_geom1[p]]];
    int t2 = mj->body_treeid[mj->geom_bodyid[m->pair_geom2[p]]];
    m->pair_tree2[p] = t1 >= 0 && t2 >= 0 && t1 != t2 ? (t1 == m->pair_tree[p] ? t2 : t1) : -1;
    if (!m->npairnv) continue;
    for (int j = 0; j < nv; j++) m->pair_chainpos[p * nv + j] = -1;
    for (int k = 0; k < m->pair_nv[p]; k++)
      m->pair_chainpos[p * nv + m->pair_dof[m->pair_dofadr[p] + k]] = k;
  }
  Layout l = {m->M_rownnz,    m->M_rowadr,        m->M_colind,     m->M_rowind,
              m->dof_descnum, m->dof_descadr,     m->dof_desc,     m->dlevel_dofadr,
              m->dlevel_dof,  m->dlevel_entryadr, m->dlevel_entry, m->ndlevel};
  derive_layout(nv, &l);
  derive_hessian(mj, m);
}

// The world body's geoms' frames, as the kinematics makes them (fsi_local_to_global from
// the world body's frame: origin, identity): they never change, so the kinematics copies
// them (FlyGym's terrains: hundreds of boxes, 10 % of a step's instructions on blocks).
static void derive_static_frames(fsModel* m) {
  static const fsReal zero[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0},
                      eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  fsData world;
  memset(&world, 0, sizeof world);
  world.xpos = world.xipos = (fsReal*)zero;
  world.xquat = (fsReal*)unit;
  world.xmat = world.ximat = (fsReal*)eye;
  for (int g = 0; g < m->nstaticgeom; g++)
    fsi_local_to_global(&world, m->geom_static_xpos + 3 * g, m->geom_static_xmat + 9 * g,
                        m->geom_pos + 3 * g, m->geom_quat + 4 * g, 0, m->geom_sameframe[g]);
}

static int alloc_model(fsModel* m, fsError* err) {
  for (int f = 0; f < fs_model_nfield; f++) {
    const fsFieldInfo* fi = &fs_model_fields[f];
    size_t n = (size_t)fs_field_rows(m, fi) * (size_t)fi->cols;
    void* p = fs_calloc(err, fi->name, n ? n : 1, fs_type_size(fi->type));
    if (!p) return -1;
    *fs_field_ptr(m, fi) = p;
  }
  return 0;
}

int fs_model_build(const mjModel* mj, const char* model_path, fsModel* m, fsError* err) {
  return fs_model_build_for(mj, model_path, m, FS_BUILD_STEP, err);
}

// Candidates a world holds by default when pairs are culled: the always-tested pairs and
// this many per moving geom (a geom near a few static boxes at once; more: a problem world).
#define FS_CANDIDATES_PER_GEOM 8

// Sizes and options of the collision stage's model; the culling's plan (cull_plan).
static int collision_sizes(const mjModel* mj, const fsPairTable* pt, fsModel* m, CullPlan* plan,
                           fsError* err) {
  m->ngeom = (int)mj->ngeom;
  m->nsite = (int)mj->nsite;
  m->npair = pt->n;
  m->nmesh = (int)mj->nmesh;
  m->nmeshvert = (int)mj->nmeshvert;
  m->nmeshgraph = (int)mj->nmeshgraph;
  m->nmeshpoly = (int)mj->nmeshpoly;
  m->nmeshpolyvert = (int)mj->nmeshpolyvert;
  m->nmeshpolymap = (int)mj->nmeshpolymap;
  m->nmeshextrema = 27 * (int)mj->nmesh;
  if (cull_plan(mj, pt, m, plan, err)) return -1;
  int nculled = 0, nconvex = 0;
  for (int p = 0; p < m->npair; p++) {
    int k = pair_maxcon(mj, pt, p);
    m->nslot = k > m->nslot ? k : m->nslot;
    nculled += plan->pair_static[p] >= 0;
    int t1 = mj->geom_type[pt->geom1[p]], t2 = mj->geom_type[pt->geom2[p]];
    nconvex += k > 0 && fsi_convex_kernel_types(t1, t2);
  }
  m->nccdwork = nconvex ? FS_CCD_LANES * FS_CCD_WORK_DOUBLES : 0;
  m->nalways = m->npair - nculled;
  m->ncandword = m->ncullgeom ? (m->npair + 31) / 32 : 0;
  m->ncandblock = (m->ncandword + 31) / 32;
  while (m->nstaticgeom < m->ngeom && mj->geom_bodyid[m->nstaticgeom] == 0) m->nstaticgeom++;
  m->ncandmax = m->npair;
  if (m->ncullgeom && nculled > FS_CANDIDATES_PER_GEOM * m->ncullgeom)
    m->ncandmax = m->nalways + FS_CANDIDATES_PER_GEOM * m->ncullgeom;
  m->nprecon = m->ncandmax * m->nslot;
  m->nconmax = m->nprecon;
  m->enableflags = mj->opt.enableflags;
  m->o_margin = (fsReal)mj->opt.o_margin;
  for (int k = 0; k < FS_NREF; k++) m->o_solref[k] = (fsReal)mj->opt.o_solref[k];
  for (int k = 0; k < FS_NIMP; k++) m->o_solimp[k] = (fsReal)mj->opt.o_solimp[k];
  for (int k = 0; k < 5; k++) m->o_friction[k] = (fsReal)mj->opt.o_friction[k];
  m->ccd_iterations = mj->opt.ccd_iterations;
  m->ccd_tolerance = mj->opt.ccd_tolerance;
  return 0;
}

// fs_model_build_for from the check on, with the model's pairs (pt): -1 (err says why) when
// out of memory; the caller frees what it allocated.
static int build_with_pairs(const mjModel* mj, const fsPairTable* pt, fsModel* m, fsBuildFor use,
                            int* depth, CullPlan* plan, fsError* err) {
  m->nq = (int)mj->nq;
  m->nv = (int)mj->nv;
  m->nu = (int)mj->nu;
  m->na = (int)mj->na;
  m->nbody = (int)mj->nbody;
  m->njnt = (int)mj->njnt;
  m->ntendon = (int)mj->ntendon;
  m->neq = (int)mj->neq;
  m->nwrap = (int)mj->nwrap;
  m->nJten = (int)mj->nJten;
  m->nC = (int)mj->nC;
  m->ntree = (int)mj->ntree;
  m->nmocap = (int)mj->nmocap;
  m->ndesc = m->nC - m->nv;
  m->ndlevel = dof_levels(mj);
  m->ndleveladr = m->ndlevel + 1;
  hessian_sizes(mj, m);
  m->nlevel = body_depths(mj, depth);
  m->nleveladr = m->nlevel + 1;
  m->one = 1;
  if (collision_sizes(mj, pt, m, plan, err)) return -1;
  int with_rows = use == FS_BUILD_STEP && fs_model_contacts_enabled(mj) && pt->n > 0;
  constraint_sizes(mj, pt, m, use == FS_BUILD_STEP, with_rows);
  solver_options(mj, m);
  int* dofs = fs_calloc(err, "moment dofs", (unsigned long long)mj->nv + 1, sizeof(int));
  if (!dofs) return -1;
  for (int a = 0; a < m->nu; a++) m->nJmom += moment_dofs(mj, pt, a, with_rows, dofs);
  free(dofs);
  m->timestep = mj->opt.timestep;
  m->rk4 = mj->opt.integrator == mjINT_RK4;
  m->nrkq = m->rk4 ? m->nq : 0; // mj_RungeKutta's stages
  m->nrk = m->rk4 ? m->nv : 0;
  m->nrkt = m->rk4;
  m->density = (fsReal)mj->opt.density;
  m->viscosity = (fsReal)mj->opt.viscosity;
  for (int k = 0; k < 3; k++) m->wind[k] = (fsReal)mj->opt.wind[k];
  int fluid = mj->opt.density != 0 || mj->opt.viscosity != 0;
  m->nfluid = fluid ? m->nbody : 0; // mj_fluid's forces, body by body, and their sum by dof
  m->nvfluid = fluid ? m->nv : 0;
  m->tendon_passive = 0;
  for (int t = 0; t < mj->ntendon; t++) {
    int on = mj->tendon_stiffness[t] != 0 || mj->tendon_damping[t] != 0;
    for (int k = 0; k < mjNPOLY; k++)
      on |= mj->tendon_stiffnesspoly[mjNPOLY * t + k] != 0 ||
            mj->tendon_dampingpoly[mjNPOLY * t + k] != 0;
    m->tendon_passive += on;
  }
  for (int k = 0; k < 3; k++) m->gravity[k] = (fsReal)mj->opt.gravity[k];
  m->disableflags = mj->opt.disableflags;
  for (int k = 0; k < 3; k++) m->magnetic[k] = (fsReal)mj->opt.magnetic[k];
  char lack[8];
  m->nsensor = (int)mj->nsensor;
  m->sensors = m->nsensor > 0 && fs_model_sensors_lack(mj, lack, sizeof lack) == 0;
  m->nsensordata = m->sensors ? (int)mj->nsensordata : 0;
  for (int i = 0; m->sensors && i < m->nsensor; i++) { // what mj_sensorVel, mj_sensorAcc call
    int t = mj->sensor_type[i];
    if (t == mjSENS_SUBTREELINVEL || t == mjSENS_SUBTREEANGMOM) m->nsubtreevel = m->nbody;
    if (t == mjSENS_ACCELEROMETER || t == mjSENS_FORCE || t == mjSENS_TORQUE ||
        t == mjSENS_FRAMELINACC || t == mjSENS_FRAMEANGACC)
      m->nrnepost = m->nbody;
  }
  if (alloc_model(m, err)) return -1;
#define FS_X(type, name, size, cols) FS_COPY(m->name, mj->name, (long)m->size*(cols));
  FS_MODEL_FIELDS_MJ(FS_X)
#undef FS_X
  derive_tree(mj, m, depth);
  derive_dofs(mj, m);
  derive_moments(mj, pt, m, with_rows);
  derive_pairs(mj, pt, m, plan);
  derive_chains(mj, pt, m);
  derive_solver(mj, m);
  derive_static_frames(m);
  return 0;
}

int fs_model_build_for(const mjModel* mj, const char* model_path, fsModel* m, fsBuildFor use,
                       fsError* err) {
  memset(m, 0, sizeof *m);
  if (fs_model_support_for(mj, model_path, use, err)) return -1;
  fsPairTable pt;
  if (fs_pair_table(mj, fs_model_contacts_enabled(mj), &pt, err)) return -1;
  int* depth = fs_calloc(err, "body depths", (unsigned long long)mj->nbody, sizeof(int));
  CullPlan plan;
  memset(&plan, 0, sizeof plan);
  int rc = depth ? build_with_pairs(mj, &pt, m, use, depth, &plan, err) : -1;
  free(depth);
  cull_plan_free(&plan);
  fs_pair_table_free(&pt);
  if (rc) fs_model_free(m);
  return rc;
}

void fs_model_free(fsModel* m) {
  if (!m) return;
  for (int f = 0; f < fs_model_nfield; f++) {
    void** p = fs_field_ptr(m, &fs_model_fields[f]);
    free(*p);
    *p = NULL;
  }
}

// The most rows one contact of the model's pairs makes.
static int most_contact_rows(const fsModel* m) {
  int rows = 0;
  for (int p = 0; p < m->npair; p++)
    rows = contact_rows(m->pair_dim[p]) > rows ? contact_rows(m->pair_dim[p]) : rows;
  return rows;
}

int fs_model_bound_candidates(fsModel* m, int n, const char* name, fsError* err) {
  if (n <= 0 || n >= m->npair) return 0;
  if (n < m->nalways)
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: max_candidates %d: %s tests %d of its pairs every step (those "
                          "not culled); fix: %d or more, or 0 (those and 8 per moving geom)",
                          n, name ? name : "the model", m->nalways, m->nalways);
  if (!m->ncullgeom) return 0; // every pair tested every step: nothing to bound
  m->ncandmax = n;
  m->nprecon = m->ncandmax * m->nslot;
  m->nconmax = m->nprecon;
  if (!m->npairnv) return 0; // no contact rows (built for the collision stage, or none)
  m->nefcmax = m->ndofrow + m->nprecon * most_contact_rows(m);
  fs_model_row_sizes(m);
  return 0;
}

void fs_model_bound_contacts(fsModel* m, int n) {
  if (n <= 0 || n >= m->nprecon) return;
  m->nconmax = n;
  if (!m->npairnv) return; // no contact rows (built for the collision stage, or none)
  int rows = most_contact_rows(m);
  if ((long)n * rows + m->ndofrow < m->nefcmax) m->nefcmax = n * rows + m->ndofrow;
  fs_model_row_sizes(m);
}

void fs_model_row_sizes(fsModel* m) {
  m->nefcJ = m->nefcmax * m->njmax;
  m->nefcD = m->dense_rows && !m->jac_sparse ? m->nefcmax * m->nv : 0;
  m->nL = m->nefcD ? m->nv * m->nv : m->nH;  // nv * nv >= nH
  int cones = m->elliptic && m->npairnv > 0; // contact rows under the elliptic cone
  m->ncone = cones ? m->nconmax : 0;
  m->nLcone = cones ? m->nL : 0;
  m->nconeJ = cones ? 6 * m->nv : 0;
  m->ncg = m->solver_cg && m->nefcmax > 0 ? m->nv : 0;
  m->nidof = m->nefcD ? m->nv : 0;
  m->nitree = m->nefcD ? m->ntree : 0;
}

int fs_model_for_lanes(fsModel* m, const char* name, fsError* err) {
  int neqrow = 0;
  for (int i = 0; i < m->neq; i++) neqrow += m->eq_nv[i] > 0;
  if (neqrow)
    return fs_fail_status(
        err, FS_ERR_MODEL,
        "%s: flysim's engine on the GPU does not implement %d equality "
        "constraint%s (the Hessian's tree layout holds rows of one dof or a "
        "contact's chain); fix: the host backend, or <flag equality=\"disable\"/>",
        name ? name : "the model", neqrow, neqrow == 1 ? "" : "s");
  if (m->nbranchpair)
    return fs_fail_status(err, FS_ERR_MODEL,
                          "%s: flysim's engine on the GPU does not implement %d contact pair%s "
                          "whose rows move two branches of a tree or two trees (the Hessian's "
                          "tree layout holds a dof's ancestors only); fix: the host backend, or "
                          "contype/conaffinity or <exclude> that keep the branches apart",
                          name ? name : "the model", m->nbranchpair,
                          m->nbranchpair == 1 ? "" : "s");
  m->dense_rows = 0;
  fs_model_row_sizes(m);
  return 0;
}

// What the kernels do not compile yet and the host runs, X(uses, what, fix): the one list
// behind fs_model_kernels_lack (FSI_ROWS, FSI_RK4, FSI_PASSIVE, FSI_ACT in common/engine).
#define KERNELS_LACK(X)                                                                            \
  X(fs_model_general_rows(m),                                                                      \
    "equality constraints, dof and tendon friction loss, joint and tendon limits, elliptic cones " \
    "or the CG solver",                                                                            \
    "<flag equality=\"disable\" frictionloss=\"disable\" limit=\"disable\"/>, "                    \
    "cone=\"pyramidal\", "                                                                         \
    "solver=\"Newton\"")                                                                           \
  X(m->rk4, "the RK4 integrator", "integrator=\"Euler\"")                                          \
  X(m->nvfluid > 0, "fluid forces", "density=\"0\" viscosity=\"0\"")                               \
  X(m->tendon_passive > 0, "tendon springs and dampers", "no stiffness or damping on tendons")     \
  X(m->na > 0, "activation dynamics", "dyntype=\"none\"")

int fs_model_kernels_lack(const fsModel* m, const char* name, fsError* err) {
  char what[512] = "", fix[512] = "";
  int n = 0;
#define FS_X(uses, text, how)                                                                      \
  if (uses) {                                                                                      \
    size_t a = strlen(what), b = strlen(fix);                                                      \
    snprintf(what + a, sizeof what - a, "%s%s", n ? ", nor " : "", text);                          \
    snprintf(fix + b, sizeof fix - b, "%s%s", n ? " and " : "", how);                              \
    n++;                                                                                           \
  }
  KERNELS_LACK(FS_X)
#undef FS_X
  if (!n) return 0;
  return fs_fail_status(err, FS_ERR_MODEL,
                        "%s: the cuda backend does not yet run %s, which this model uses (the "
                        "host backend does); fix: --backend host, or in the model %s",
                        name ? name : "the model", what, fix);
}

void fs_model_without_sensors(fsModel* m) {
  m->sensors = 0;
  m->nsensordata = m->nsubtreevel = m->nrnepost = 0;
}

size_t fs_model_bytes(const fsModel* m) {
  size_t n = 0;
  for (int f = 0; f < fs_model_nfield; f++) n += fs_field_bytes(m, &fs_model_fields[f]);
  return n;
}

size_t fs_world_bytes(const fsModel* m) {
  size_t n = 0;
  for (int f = 0; f < fs_data_nfield; f++) n += fs_field_bytes(m, &fs_data_fields[f]);
  return n;
}

void fs_world_describe(const fsModel* m, char* out, size_t n) {
  snprintf(out, n, "%d contacts, %d rows, %.0f KiB a world", m->nconmax, m->nefcmax,
           (double)fs_world_bytes(m) / 1024.0);
}
