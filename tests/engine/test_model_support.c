// The model check of the batched stepper: a model using many unsupported features
// gets ONE error that lists every one of them; the models the stepper runs pass,
// NeuroMechFly as exported (meshes and capsules, contacts on; tethered: a mocap body)
// among them, with rows for every contact slot; what the collision stage, the rows or
// the solver lack is refused in one error (a tethered model's too, without its mocap
// body). Built for the collision stage alone (FS_BUILD_COLLISION: the
// collision tests), no rows are made.
#include <stdio.h>
#include <string.h>

#include "common/model/model.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

static void expect_ok(const char* path, int disable) {
  mjModel* m = fs_test_load_model(path);
  m->opt.disableflags |= disable;
  fsError err = {{0}, FS_OK};
  int rc = fs_model_support(m, path, &err);
  CHECK_MSG(rc == 0, "%s (disable 0x%x) refused: %s", path, disable, err.msg);
  mj_deleteModel(m);
}

static void unsupported_model(void) {
  const char* path = fs_test_model("cuda_unsupported.xml");
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_support(m, path, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, path);
  CHECK_CONTAINS(err.msg,
                 "flysim's engine (host and cuda backends) does not implement 12 features");
  CHECK_CONTAINS(err.msg, "integrator implicitfast");
  CHECK_CONTAINS(err.msg, "the ellipsoid fluid model on 1 geom");
  CHECK_CONTAINS(err.msg, "2 contact pairs between two moving bodies with noslip");
  CHECK_CONTAINS(err.msg, "gravity compensation on 1 body");
  CHECK_CONTAINS(err.msg, "ball joint limits (the rows implement hinge and slide limits) on 1 "
                          "joint (first: 'jb'");
  CHECK_CONTAINS(err.msg, "dof friction loss with noslip (noslip implements contact rows only) "
                          "on 1 joint (first: 'ja'");
  CHECK(strstr(err.msg, "'ja', id 0); fix: remove the") == NULL); // ja's hinge limit is fine
  CHECK_CONTAINS(err.msg, "tendon forces");
  CHECK_CONTAINS(err.msg, "active connect, weld or flex equality constraints");
  CHECK_CONTAINS(err.msg, "transmissions other than a hinge/slide joint, a fixed tendon or a body "
                          "(adhesion) on 2 "
                          "actuators (first: 'on_ball'");
  CHECK_CONTAINS(err.msg, "activation dynamics other than integrator, filter and filterexact "
                          "(muscle, user, or any under the RK4 integrator) on 1 actuator "
                          "(first: 'muscle'");
  CHECK_CONTAINS(err.msg, "gain types other than fixed and affine on 1 actuator (first: 'muscle'");
  CHECK_CONTAINS(err.msg, "bias types other than none and affine on 1 actuator (first: 'muscle'");
  // fs_model_build refuses with the same message
  fsModel fm;
  fsError err2 = {{0}, FS_OK};
  CHECK(fs_model_build(m, path, &fm, &err2) == -1);
  CHECK(strcmp(err.msg, err2.msg) == 0);
  mj_deleteModel(m);
}

// A tethered model: the mocap body, the trees under it and a hinge's range are accepted;
// what remains unsupported (a weld to the mocap body) is listed.
static void tethered_unsupported(void) {
  const char* path = fs_test_model("cuda_tethered_unsupported.xml");
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_support(m, path, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, "flysim's engine (host and cuda backends) does not implement 1 feature "
                          "this model uses:");
  CHECK_CONTAINS(err.msg, "(1) active connect, weld or flex equality constraints, or tendon "
                          "equalities of spatial tendons (the rows implement joint and "
                          "fixed-tendon equalities, contacts, hinge and slide limits and dof "
                          "friction loss) on 1 equality");
  CHECK(strstr(err.msg, "joint limits") == NULL);
  CHECK(strstr(err.msg, "mocap") == NULL);
  mj_deleteModel(m);
  expect_ok(fs_test_model("cuda_tethered.xml"), 0);
}

// NeuroMechFly as exported: accepted with contacts on, and with them or the whole
// constraint solver disabled; in FlyGym's tethered world too (mocap thorax, six trees).
static void fly(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s", fs_test_asset("mesh.mjb"));
  expect_ok(path, 0);
  expect_ok(fs_test_asset("capsule.mjb"), 0);
  expect_ok(fs_test_asset("worlds/tethered.mjb"), 0);
  expect_ok(fs_test_asset("worlds/tethered_capsule.mjb"), 0);
  // FlyGym's rough terrains: the capsule fly against the ground's boxes and planes
  expect_ok(fs_test_asset("worlds/gapped_capsule.mjb"), 0);
  expect_ok(fs_test_asset("worlds/blocks_capsule.mjb"), 0);
  expect_ok(fs_test_asset("worlds/mixed_capsule.mjb"), 0);
  expect_ok(path, mjDSBL_CONTACT);
  expect_ok(path, mjDSBL_CONSTRAINT);
}

static void expect_collision_ok(const char* path) {
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  fsModel fm;
  int rc = fs_model_build_for(m, path, &fm, FS_BUILD_COLLISION, &err);
  CHECK_MSG(rc == 0, "%s refused for the collision stage: %s", path, err.msg);
  if (!rc) {
    int bound = 0, most = 0; // every pair's contact bound; the largest
    for (int p = 0; p < fm.npair; p++) {
      bound += fm.pair_maxcon[p];
      most = fm.pair_maxcon[p] > most ? fm.pair_maxcon[p] : most;
    }
    // every pair a candidate (nothing culled), the largest bound's slots each
    CHECK(fm.ncandmax == fm.npair && fm.nslot == most);
    CHECK(fm.nprecon == fm.npair * most && fm.nconmax == fm.nprecon && bound > 0);
    printf("%s: %d pairs, %d contact slots per world\n", path, fm.npair, fm.nconmax);
    fs_model_free(&fm);
  }
  mj_deleteModel(m);
}

static void collision_build(void) {
  char fly[1024];
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  expect_collision_ok(fly);
  expect_collision_ok(fs_test_asset("capsule.mjb"));
  expect_collision_ok(fs_test_model("cuda_contact_primitives.xml"));
  expect_collision_ok(fs_test_model("cuda_contact_mesh.xml"));
  // the fly: 55 plane-mesh pairs of at most 4 contacts (MuJoCo 3.16's plane-mesh)
  mjModel* m = fs_test_load_model(fly);
  fsModel fm;
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_build_for(m, fly, &fm, FS_BUILD_COLLISION, &err) == 0);
  CHECK(fm.npair == 55 && fm.nconmax == 220);
  fs_model_free(&fm);
  // with contacts disabled, no contact slots at all
  m->opt.disableflags |= mjDSBL_CONTACT;
  CHECK(fs_model_build(m, fly, &fm, &err) == 0);
  CHECK(fm.nconmax == 0 && fm.nprecon == 0);
  fs_model_free(&fm);
  mj_deleteModel(m);

  // box-mesh pairs: MuJoCo's bound (4 at margin 0, 5 with a margin, 1 without multiccd);
  // libccd and more ccd iterations than the collider holds refused, with their fix
  const char* convex = fs_test_model("cuda_contact_convex.xml");
  m = fs_test_load_model(convex);
  CHECK(fs_model_build_for(m, convex, &fm, FS_BUILD_COLLISION, &err) == 0);
  CHECK(fm.npair == 8 && fm.nslot == 5 && fm.nconmax == 8 * 5); // every pair a candidate
  fs_model_free(&fm);
  m->opt.disableflags |= mjDSBL_MULTICCD;
  CHECK(fs_model_build_for(m, convex, &fm, FS_BUILD_COLLISION, &err) == 0);
  CHECK(fm.nslot == 1 && fm.nconmax == 8);
  fs_model_free(&fm);
  m->opt.disableflags |= mjDSBL_NATIVECCD;
  m->opt.ccd_iterations = 36; // FS_CCD_ITERMAX + 1
  CHECK(fs_model_support_for(m, convex, FS_BUILD_COLLISION, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, "does not implement 2 features");
  CHECK_CONTAINS(err.msg, "contact pairs of meshes, ellipsoids or cylinders (8, first: id 0) "
                          "under libccd");
  CHECK_CONTAINS(err.msg, "fix: remove <flag nativeccd=\"disable\"/>");
  CHECK_CONTAINS(err.msg, "ccd_iterations 36 with contact pairs of meshes");
  mj_deleteModel(m);

  // the curved shapes' convex pairs: 1 contact with a sphere or an ellipsoid, 5 with a margin
  // (the perturbation), 4 mesh-mesh or box-mesh at margin 0; a capsule's or cylinder's pair at
  // margin 0 under multiccd (MuJoCo 3.16's multi-contact for them) refused, with its fix
  const char* shapes = fs_test_model("cuda_contact_shapes.xml");
  m = fs_test_load_model(shapes);
  CHECK(fs_model_build_for(m, shapes, &fm, FS_BUILD_COLLISION, &err) == 0);
  int bounds[6] = {0};
  for (int p = 0; p < fm.npair; p++) bounds[fm.pair_maxcon[p] < 6 ? fm.pair_maxcon[p] : 0]++;
  CHECK_MSG(fm.npair == 20 && bounds[1] == 10 && bounds[4] == 2 && bounds[5] == 8,
            "%d pairs; bounds 1: %d, 4: %d, 5: %d", fm.npair, bounds[1], bounds[4], bounds[5]);
  CHECK(fm.nccdwork > 0);
  fs_model_free(&fm);
  m->pair_margin[mj_name2id(m, mjOBJ_PAIR, "cap_cyl")] = 0;
  CHECK(fs_model_support_for(m, shapes, FS_BUILD_COLLISION, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg,
                 "1 contact pair of a capsule or cylinder with a capsule, cylinder, box "
                 "or mesh at margin 0 under multiccd (first: geom 's_cyl' with geom 'cap'");
  CHECK_CONTAINS(err.msg, "fix: <flag multiccd=\"disable\"/>, or a margin on these pairs");
  m->opt.disableflags |= mjDSBL_MULTICCD;
  CHECK(fs_model_support_for(m, shapes, FS_BUILD_COLLISION, &err) == 0);
  mj_deleteModel(m);

  // the terrains' mesh fly: its box-mesh pairs accepted (the host stepper collides them)
  const char* blocks = fs_test_asset("worlds/blocks.mjb");
  m = fs_test_load_model(blocks);
  CHECK(fs_model_support(m, blocks, &err) == 0);
  mj_deleteModel(m);
  const char* mixed = fs_test_asset("worlds/mixed.mjb");
  m = fs_test_load_model(mixed);
  CHECK(fs_model_support(m, mixed, &err) == 0);
  mj_deleteModel(m);

  const char* path = fs_test_model("cuda_contact_unsupported.xml");
  m = fs_test_load_model(path);
  CHECK(fs_model_support_for(m, path, FS_BUILD_COLLISION, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, "does not implement 1 feature");
  CHECK_CONTAINS(err.msg, "2 contact pairs of geom types the collision stage does not implement "
                          "(hfield-sphere 1, box-box 1; first: geom 'terrain' with geom 'ball', "
                          "<pair> id 1)");
  mj_deleteModel(m);
}

// Built for the step (FS_BUILD_STEP): the fly and our contact models pass with rows
// for every contact slot (pyramidal: 4 per condim-3 contact) and adhesion moments over
// the dofs their contacts can move; what the rows or the solver do not implement is
// refused in one error; built for the collision stage, no rows.
static void constraint_build(void) {
  char models[5][1024]; // fs_test_model/fs_test_asset return rotating buffers: copies
  snprintf(models[0], sizeof models[0], "%s", fs_test_asset("mesh.mjb"));
  snprintf(models[1], sizeof models[1], "%s", fs_test_asset("capsule.mjb"));
  snprintf(models[2], sizeof models[2], "%s", fs_test_model("cuda_efc_walker.xml"));
  snprintf(models[3], sizeof models[3], "%s", fs_test_model("cuda_contact_primitives.xml"));
  snprintf(models[4], sizeof models[4], "%s", fs_test_model("walker_terrain.xml"));
  const char* fly = models[0];
  for (int i = 0; i < 5; i++) {
    mjModel* m = fs_test_load_model(models[i]);
    fsModel fm;
    fsError err = {{0}, FS_OK};
    int rc = fs_model_build(m, models[i], &fm, &err);
    CHECK_MSG(rc == 0, "%s refused for the step: %s", models[i], err.msg);
    if (rc) {
      mj_deleteModel(m);
      continue;
    }
    printf("%s: %d contact slots, %d rows of at most %d dofs, %d moment entries\n", models[i],
           fm.nconmax, fm.nefcmax, fm.njmax, fm.nJmom);
    if (i < 2) { // the fly: 55 condim-3 pairs; 42 joint actuators, 6 adhesion on 11-dof legs
      CHECK(fm.nefcmax == 4 * fm.nconmax && fm.njmax == 17);
      CHECK(fm.nJmom == 42 + 6 * 17);
    }
    // the rows and the Hessian's factor dense where MuJoCo's Jacobians are (nv < 60: the
    // held models), for the host; a model for the lanes keeps the chains and the tree
    // layout, and a bound applied after keeps it so
    int dense = !mj_isSparse(m);
    CHECK(dense == (i >= 2));
    CHECK(fm.dense_rows == 1 && fm.nefcJ == fm.nefcmax * fm.njmax);
    CHECK(fm.nefcD == (dense ? fm.nefcmax * fm.nv : 0));
    CHECK(fm.nL == (dense ? fm.nv * fm.nv : fm.nH));
    CHECK(fs_model_for_lanes(&fm, "model", NULL) == 0);
    CHECK(fm.dense_rows == 0 && fm.nefcD == 0 && fm.nL == fm.nH);
    fs_model_bound_contacts(&fm, 2);
    CHECK(fm.nconmax == 2 && fm.nefcD == 0 && fm.nL == fm.nH);
    fs_model_free(&fm);
    mj_deleteModel(m);
  }
  // built for the collision stage: no rows
  mjModel* m = fs_test_load_model(fly);
  fsModel fm;
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_build_for(m, fly, &fm, FS_BUILD_COLLISION, &err) == 0);
  CHECK(fm.nefcmax == 0 && fm.nJmom == 42);
  fs_model_free(&fm);
  mj_deleteModel(m);

  const char* path = fs_test_model("cuda_efc_unsupported.xml");
  m = fs_test_load_model(path);
  CHECK(fs_model_support(m, path, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, "does not implement 8 features");
  CHECK_CONTAINS(err.msg, "the PGS constraint solver");
  CHECK_CONTAINS(err.msg, "noslip under elliptic friction cones");
  CHECK_CONTAINS(err.msg, "the exact constraint diagonal (enable flag diagexact)");
  CHECK_CONTAINS(err.msg, "surface velocity on 1 geom (first: 'ball'");
  CHECK_CONTAINS(err.msg, "1 contact pair between bodies without dofs");
  CHECK_CONTAINS(err.msg, "joint limits under noslip on joints below another joint");
  CHECK_CONTAINS(err.msg, "dof friction loss with noslip");
  CHECK_CONTAINS(err.msg, "equality constraints with noslip (noslip implements contact rows "
                          "only) on 1 equality");
  mj_deleteModel(m);
}

// A model whose contacts come from contype/conaffinity alone (no <pair>), under the
// elliptic cone with noslip and PGS, with a joint limit: one message lists the solver and
// the noslip cone together, as for explicit pairs (issue 46).
static void all_at_once(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/all_at_once.xml", fs_test_tmpdir("model_support"));
  FILE* f = fopen(path, "w");
  fputs("<mujoco><option solver='PGS' cone='elliptic' noslip_iterations='2'/><worldbody>"
        "<geom type='plane' "
        "size='1 1 0.1'/><body pos='0 0 0.2'><joint type='slide' axis='0 0 1' range='-1 1'/>"
        "<geom size='0.1'/></body></worldbody></mujoco>",
        f);
  fclose(f);
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "does not implement 2 features");
  CHECK_CONTAINS(err.msg, "the PGS constraint solver");
  CHECK_CONTAINS(err.msg, "noslip under elliptic friction cones");
  // contacts off: the limit's rows still meet the solver, not the cone
  m->opt.disableflags |= mjDSBL_CONTACT;
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "does not implement 1 feature");
  CHECK_CONTAINS(err.msg, "the PGS constraint solver");
  CHECK(strstr(err.msg, "elliptic") == NULL);
  // no rows at all: neither matters
  m->opt.disableflags |= mjDSBL_LIMIT;
  CHECK_MSG(fs_model_support(m, path, &err) == 0, "%s", err.msg);
  mj_deleteModel(m);
}

// Moving bodies that collide by contype/conaffinity (tests/models/cuda_contact_bodies.xml):
// accepted for the host, whose rows are dense below 60 dofs; its pairs as MuJoCo's broadphase
// finds them (filterparent, the weld, dof-less bodies, the exclude, the explicit pairs
// merged); for the lanes (the GPU) its rows across branches and trees refused; with islands
// on accepted too (islands join the trees); under a sparse Jacobian refused with the fix (a
// dense one), which works; with noslip its pairs of two moving bodies refused in one message
// with its limits under noslip.
static void moving_bodies(void) {
  const char* path = fs_test_model("cuda_contact_bodies.xml");
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  fsModel fm;
  CHECK_MSG(fs_model_build(m, path, &fm, &err) == 0, "%s", err.msg);
  printf("%s: %d pairs (%d explicit), %d of them across branches or trees\n", path, fm.npair,
         (int)m->npair, fm.nbranchpair);
  int hat = mj_name2id(m, mjOBJ_GEOM, "hat"), head = mj_name2id(m, mjOBJ_GEOM, "head");
  int ball = mj_name2id(m, mjOBJ_GEOM, "ball"), pill = mj_name2id(m, mjOBJ_GEOM, "pill");
  int upper1 = mj_name2id(m, mjOBJ_GEOM, "upper1"), chest = mj_name2id(m, mjOBJ_GEOM, "chest");
  int paddle = mj_name2id(m, mjOBJ_GEOM, "paddle"), floor = mj_name2id(m, mjOBJ_GEOM, "floor");
  int found[5] = {0, 0, 0, 0, 0}; // hat-head, ball-pill, upper1-chest, paddle-floor, chest-floor
  for (int p = 0; p < fm.npair; p++) {
    int a = fm.pair_geom1[p], b = fm.pair_geom2[p];
#define FS_IS(x, y) ((a == (x) && b == (y)) || (a == (y) && b == (x)))
    found[0] += FS_IS(hat, head);     // one weld body
    found[1] += FS_IS(ball, pill);    // excluded
    found[2] += FS_IS(upper1, chest); // parent and child
    found[3] += FS_IS(paddle, floor); // neither has dofs
    found[4] += FS_IS(chest, floor);  // explicit (condim 1), not the broadphase's too
    if (FS_IS(chest, floor)) CHECK(fm.pair_dim[p] == 1);
#undef FS_IS
  }
  CHECK(!found[0] && !found[1] && !found[2] && !found[3] && found[4] == 1);
  CHECK(fm.nbranchpair > 0);
  CHECK(fs_model_for_lanes(&fm, "bodies", &err) == -1);
  CHECK_CONTAINS(err.msg, "contact pairs whose rows move two branches of a tree or two trees");
  fs_model_free(&fm);
  m->opt.disableflags &= ~mjDSBL_ISLAND; // islands joining the trees: the host's dense rows
  CHECK_MSG(fs_model_support(m, path, &err) == 0, "islands on: %s", err.msg);
  m->opt.jacobian = mjJAC_SPARSE; // the tree layout: refused, with the fix that works
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "contact pairs whose rows move two branches of a tree or two trees");
  CHECK_CONTAINS(err.msg, "fix: <option jacobian=\"dense\"/>");
  m->opt.jacobian = mjJAC_DENSE;
  CHECK_MSG(fs_model_support(m, path, &err) == 0, "the fix, a dense Jacobian: %s", err.msg);
  m->opt.jacobian = mjJAC_AUTO;
  m->opt.noslip_iterations = 3;
  CHECK(fs_model_support(m, path, &err) == -1);
  printf("%s\n", err.msg);
  CHECK_CONTAINS(err.msg, "does not implement 2 features");
  CHECK_CONTAINS(err.msg, "contact pairs between two moving bodies with noslip");
  CHECK_CONTAINS(err.msg, "joint limits under noslip on joints below another joint");
  m->opt.disableflags |= mjDSBL_FILTERPARENT; // the parents' and children's pairs join
  m->opt.disableflags |= mjDSBL_ISLAND;
  m->opt.noslip_iterations = 0;
  CHECK_MSG(fs_model_build(m, path, &fm, &err) == 0, "%s", err.msg);
  int parent = 0;
  for (int p = 0; p < fm.npair; p++)
    parent += (fm.pair_geom1[p] == upper1 && fm.pair_geom2[p] == chest) ||
              (fm.pair_geom1[p] == chest && fm.pair_geom2[p] == upper1);
  CHECK(parent == 1);
  fs_model_free(&fm);
  mj_deleteModel(m);
}

// Tendons' limits and friction loss (tests/models/tendon_rows.xml: fixed ones, spatial ones
// through sites and a pulley): accepted for the host's dense rows, each tendon's chain its
// Jacobian's columns once (a joint listed twice is one column); refused on the GPU (the
// kernels lack the rows), under a sparse Jacobian (the tree layout) with the fix that works,
// with noslip, and on a spatial tendon that wraps a geom, each in the one message.
static void tendon_rows(void) {
  const char* path = fs_test_model("tendon_rows.xml");
  mjModel* m = fs_test_load_model(path);
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_model_support(m, path, &err) == 0, "%s", err.msg);
  fsModel fm;
  CHECK_MSG(fs_model_build(m, path, &fm, &err) == 0, "%s", err.msg);
  int span = mj_name2id(m, mjOBJ_TENDON, "span"), elbow = mj_name2id(m, mjOBJ_TENDON, "elbow");
  int drag = mj_name2id(m, mjOBJ_TENDON, "drag"), zero = mj_name2id(m, mjOBJ_TENDON, "zero");
  int rope = mj_name2id(m, mjOBJ_TENDON, "rope"), path_ = mj_name2id(m, mjOBJ_TENDON, "path");
  CHECK(fm.tendon_nv[span] == 2 && fm.tendon_nv[elbow] == 2 && fm.tendon_nv[drag] == 1 &&
        fm.tendon_nv[zero] == 1);
  CHECK(fm.tendon_nv[rope] == m->ten_J_rownnz[rope] && fm.tendon_nv[path_] == 3);
  const int* chain = fm.pair_dof + fm.tendon_dofadr[elbow];
  CHECK(chain[0] == m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, "a1")] &&
        chain[1] == m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, "a2")]);
  // a1's friction loss, a2's limit sides, four tendons' friction loss, four tendons' sides
  CHECK_MSG(fm.ndofrow == 1 + 2 + 4 + 8, "ndofrow %d", fm.ndofrow);
  CHECK(fs_model_kernels_lack(&fm, "tendon_rows", &err) == -1);
  CHECK_CONTAINS(err.msg, "joint and tendon limits");
  fs_model_free(&fm);
  m->opt.jacobian = mjJAC_SPARSE;
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "tendon limits or friction loss where the rows keep the tree layout "
                          "(the lanes, or the host with MuJoCo's sparse Jacobian, its default "
                          "from 60 dofs), which holds rows of one dof or a contact's chain on 6 "
                          "tendons (first: 'span'");
  CHECK_CONTAINS(err.msg, "fix: <option jacobian=\"dense\"/> on the host backend");
  m->opt.jacobian = mjJAC_DENSE;
  CHECK_MSG(fs_model_support(m, path, &err) == 0, "the fix, a dense Jacobian: %s", err.msg);
  m->opt.noslip_iterations = 2;
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "tendon limits or friction loss with noslip (noslip implements contact "
                          "rows only) on 6 tendons");
  m->opt.noslip_iterations = 0;
  int wrap = m->tendon_adr[rope];
  m->wrap_type[wrap] = mjWRAP_SPHERE; // the check reads the path alone
  CHECK(fs_model_support(m, path, &err) == -1);
  CHECK_CONTAINS(err.msg, "a limit or friction loss on a spatial tendon that wraps a geom");
  CHECK_CONTAINS(err.msg, "on 1 tendon (first: 'rope'");
  m->wrap_type[wrap] = mjWRAP_SITE;
  m->opt.disableflags |= mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS; // no tendon rows: none built
  CHECK_MSG(fs_model_build(m, path, &fm, &err) == 0, "%s", err.msg);
  CHECK(fm.tendon_nv[span] == 0 && fm.ndofrow == 0);
  fs_model_free(&fm);
  mj_deleteModel(m);
}

int main(void) {
  all_at_once();
  moving_bodies();
  tendon_rows();
  unsupported_model();
  tethered_unsupported();
  collision_build();
  constraint_build();
  fly();
  expect_ok(fs_test_model("cuda_chain.xml"), 0);
  expect_ok(fs_test_model("cuda_free.xml"), 0);
  expect_ok(fs_test_model("cuda_limb.xml"), 0);
  expect_ok(fs_test_model("cuda_efc_limits.xml"), 0);   // limits and friction loss
  expect_ok(fs_test_model("cuda_efc_elliptic.xml"), 0); // ... under the elliptic cone
  // the limb's contacts are off by its own flag; switched back on, its geoms collide by
  // contype/conaffinity with ellipsoids (sphere-ellipsoid 2, capsule-ellipsoid 2): the
  // convex collider's pairs
  mjModel* m = fs_test_load_model(fs_test_model("cuda_limb.xml"));
  m->opt.disableflags &= ~mjDSBL_CONTACT;
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_model_support(m, "cuda_limb.xml", &err) == 0, "%s", err.msg);
  mj_deleteModel(m);
  return fs_test_finish("engine model support");
}
