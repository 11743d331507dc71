// The batched stepper's arrays: ONE definition of each, in X-macro tables that
// drive the structs, host and device allocation, upload, download, world views
// and the tests' comparisons with MuJoCo; and ONE list of the stages (FS_STAGES: their
// ids, names and dispatch).
//
// Model arrays (fsModel): uploaded once. Names, shapes and meaning follow
// mjModel; rows marked "flysim" are derived at upload (documented per row).
// World data (fsData): one array per field holding every world, world-major:
// field[w * size * cols + i * cols + c]. A world's slice is contiguous, so the
// lanes of the warp that runs it read consecutive addresses.
#ifndef FLYSIM_COMMON_ENGINE_FIELDS_H
#define FLYSIM_COMMON_ENGINE_FIELDS_H

#include <stddef.h>

#include "common/exec/real.h"

#define FS_NPOLY    2  // mjNPOLY: high-order stiffness / damping coefficients
#define FS_NGAIN    10 // mjNGAIN
#define FS_NBIAS    10 // mjNBIAS
#define FS_NDYN     10 // mjNDYN
#define FS_NWARNING 7  // mjNWARNING
#define FS_NISLAND  20 // mjNISLAND: islands with solver statistics

// The convex collider's scratch (fsiCcdWork, common/engine/collision_convex.h: GJK's
// status, EPA's polytope or the multi-contact's polygons) lives in the world's data
// (ccd_work), not on a lane's stack: FS_CCD_LANES lanes' of FS_CCD_WORK_DOUBLES each, in
// models with convex pairs only. A world's first FS_CCD_LANES lanes collide those pairs.
#define FS_CCD_LANES        4
#define FS_CCD_WORK_DOUBLES 2260 // sizeof(fsiCcdWork) / 8 at least (checked where defined)

// MuJoCo's warning indices (mjtWarning) that the smooth step raises.
enum {
  FS_WARN_CONTACTFULL = 1, // the collision stage (contact buffer full)
  FS_WARN_CNSTRFULL = 2,   // the constraint rows (row buffer full)
  FS_WARN_BADQPOS = 3,
  FS_WARN_BADQVEL = 4,
  FS_WARN_BADQACC = 5,
  FS_WARN_BADCTRL = 6
};

// Disable bits (mjtDisableBit) the smooth step honours.
enum {
  FS_DSBL_CONSTRAINT = 1 << 0,
  FS_DSBL_EQUALITY = 1 << 1,
  FS_DSBL_FRICTIONLOSS = 1 << 2,
  FS_DSBL_LIMIT = 1 << 3,
  FS_DSBL_CONTACT = 1 << 4,
  FS_DSBL_SPRING = 1 << 5,
  FS_DSBL_DAMPER = 1 << 6,
  FS_DSBL_GRAVITY = 1 << 7,
  FS_DSBL_CLAMPCTRL = 1 << 8,
  FS_DSBL_ACTUATION = 1 << 11,
  FS_DSBL_REFSAFE = 1 << 12, // constraint rows: solref[0] >= 2 * timestep unless set
  FS_DSBL_SENSOR = 1 << 13,
  FS_DSBL_EULERDAMP = 1 << 15,
  FS_DSBL_AUTORESET = 1 << 16,
};

// Enable bits (mjtEnableBit) the collision stage honours.
enum { FS_ENBL_OVERRIDE = 1 << 0 };

// Geom types (mjtGeom) and the contact parameter sizes (mjNREF, mjNIMP).
enum {
  FS_GEOM_PLANE = 0,
  FS_GEOM_HFIELD,
  FS_GEOM_SPHERE,
  FS_GEOM_CAPSULE,
  FS_GEOM_ELLIPSOID,
  FS_GEOM_CYLINDER,
  FS_GEOM_BOX,
  FS_GEOM_MESH,
  FS_GEOM_SDF
};
#define FS_NREF    2
#define FS_NIMP    5
#define FS_NEQDATA 11 // mjNEQDATA
#define FS_NSENS   3  // mjNSENS: a sensor's integer parameters

// Joint, transmission, gain and bias types (mjtJoint, mjtTrn, mjtGain, mjtBias).
enum { FS_JNT_FREE = 0, FS_JNT_BALL = 1, FS_JNT_SLIDE = 2, FS_JNT_HINGE = 3 };
enum { FS_EQ_JOINT = 2, FS_EQ_TENDON = 3 }; // mjtEq's kinds whose rows flysim makes
enum { FS_WRAP_JOINT = 1, FS_WRAP_PULLEY = 2, FS_WRAP_SITE = 3 }; // mjtWrap: a tendon's path
enum { FS_TRN_JOINT = 0, FS_TRN_JOINTINPARENT = 1, FS_TRN_TENDON = 3, FS_TRN_BODY = 5 };
enum { FS_GAIN_FIXED = 0, FS_GAIN_AFFINE = 1 };
enum { FS_BIAS_NONE = 0, FS_BIAS_AFFINE = 1 };
/// Activation dynamics (mjtDyn) the engine implements.
enum { FS_DYN_NONE = 0, FS_DYN_INTEGRATOR = 1, FS_DYN_FILTER = 2, FS_DYN_FILTEREXACT = 3 };

// The sensor types (mjtSensor: X(ID, value)) the sensor stage computes
// (common/engine/stage_sensor.h): the one list behind FS_SENS_<ID> and the model's check,
// which refuses the sensordata of a model with any other kind, by name
// (fs_model_sensors_lack; common/model/model_support.c holds the values to MuJoCo's).
#define FS_SENSORS(X)                                                                              \
  X(TOUCH, 0)                                                                                      \
  X(ACCELEROMETER, 1)                                                                              \
  X(FORCE, 4)                                                                                      \
  X(TORQUE, 5)                                                                                     \
  X(VELOCIMETER, 2)                                                                                \
  X(GYRO, 3)                                                                                       \
  X(MAGNETOMETER, 6)                                                                               \
  X(JOINTPOS, 9)                                                                                   \
  X(JOINTVEL, 10)                                                                                  \
  X(TENDONPOS, 11)                                                                                 \
  X(TENDONVEL, 12)                                                                                 \
  X(ACTUATORPOS, 13)                                                                               \
  X(ACTUATORVEL, 14)                                                                               \
  X(ACTUATORFRC, 15)                                                                               \
  X(JOINTACTFRC, 16)                                                                               \
  X(TENDONACTFRC, 17)                                                                              \
  X(BALLQUAT, 18)                                                                                  \
  X(BALLANGVEL, 19)                                                                                \
  X(JOINTLIMITPOS, 20)                                                                             \
  X(JOINTLIMITVEL, 21)                                                                             \
  X(JOINTLIMITFRC, 22)                                                                             \
  X(TENDONLIMITPOS, 23)                                                                            \
  X(TENDONLIMITVEL, 24)                                                                            \
  X(TENDONLIMITFRC, 25)                                                                            \
  X(FRAMEPOS, 26)                                                                                  \
  X(FRAMEQUAT, 27)                                                                                 \
  X(FRAMEXAXIS, 28)                                                                                \
  X(FRAMEYAXIS, 29)                                                                                \
  X(FRAMEZAXIS, 30)                                                                                \
  X(FRAMELINVEL, 31)                                                                               \
  X(FRAMEANGVEL, 32)                                                                               \
  X(FRAMELINACC, 33)                                                                               \
  X(FRAMEANGACC, 34)                                                                               \
  X(SUBTREECOM, 35)                                                                                \
  X(SUBTREELINVEL, 36)                                                                             \
  X(SUBTREEANGMOM, 37)                                                                             \
  X(INSIDESITE, 38)                                                                                \
  X(CONTACT, 42)                                                                                   \
  X(CLOCK, 45)
enum {
#define FS_X(id, value) FS_SENS_##id = value,
  FS_SENSORS(FS_X)
#undef FS_X
};
/// Object types (mjtObj) of the sensors' objects and references; data types (mjtDataType).
enum { FS_OBJ_UNKNOWN = 0, FS_OBJ_BODY = 1, FS_OBJ_XBODY = 2, FS_OBJ_GEOM = 5, FS_OBJ_SITE = 6 };
enum { FS_DATATYPE_REAL = 0, FS_DATATYPE_POSITIVE = 1 };
/// A contact sensor's data fields (mjtConDataField: bits of sensor_intprm[0]) that the stage
/// writes, and its reductions (sensor_intprm[1]).
enum {
  FS_CONDATA_FOUND = 0,
  FS_CONDATA_FORCE,
  FS_CONDATA_TORQUE,
  FS_CONDATA_DIST,
  FS_CONDATA_POS,
  FS_CONDATA_NORMAL,
  FS_CONDATA_TANGENT,
  FS_NCONDATA
};
enum { FS_REDUCE_NONE = 0, FS_REDUCE_MINDIST, FS_REDUCE_MAXFORCE, FS_REDUCE_NETFORCE };

// mjtSameFrame: how a body's inertial frame relates to its body frame.
enum {
  FS_SAMEFRAME_NONE = 0,
  FS_SAMEFRAME_BODY,
  FS_SAMEFRAME_INERTIA,
  FS_SAMEFRAME_BODYROT,
  FS_SAMEFRAME_INERTIAROT
};

// Sizes of the model (fsModel members). "one" sizes per-world scalars.
#define FS_MODEL_SIZES(X)                                                                          \
  X(nq)            /* generalized coordinates */                                                   \
  X(nv)            /* degrees of freedom */                                                        \
  X(nu)            /* actuators = controls = force outputs (one each) */                           \
  X(na)            /* activations (one an actuator with dynamics) */                               \
  X(nbody)         /* bodies, world included */                                                    \
  X(njnt)          /* joints */                                                                    \
  X(ntendon)       /* tendons */                                                                   \
  X(nwrap)         /* wrap objects of all tendons */                                               \
  X(nJten)         /* non-zeros of the tendons' Jacobians (MuJoCo's sparsity: a slot per wrap) */  \
  X(nC)            /* non-zeros of the reduced inertia (MuJoCo's M, qLD, qH layout) */             \
  X(nJmom)         /* non-zeros of the actuator moments (static sparsity, flysim) */               \
  X(nlevel)        /* depths of the body tree, world = 0 (flysim) */                               \
  X(nleveladr)     /* nlevel + 1 */                                                                \
  X(ngeom)         /* geoms */                                                                     \
  X(nsite)         /* sites */                                                                     \
  X(npair)         /* contact pairs: <pair>s and contype/conaffinity's, MuJoCo's order (flysim) */ \
  X(nmocap)        /* mocap bodies */                                                              \
  X(nmesh)         /* meshes */                                                                    \
  X(nmeshvert)     /* vertices of all meshes */                                                    \
  X(nmeshgraph)    /* ints of all meshes' convex-hull graphs */                                    \
  X(nmeshpoly)     /* hull polygons (coplanar faces merged) of all meshes */                       \
  X(nmeshpolyvert) /* their vertices */                                                            \
  X(nmeshpolymap)  /* entries of the vertex -> polygons map */                                     \
  X(nmeshextrema)  /* nmesh * 27 */                                                                \
  X(nprecon)       /* contact slots: ncandmax * nslot, a slot row per candidate pair (flysim) */   \
  X(ncandmax)    /* candidate pairs a world tests in a step at most (flysim, collision_cull.h) */  \
  X(nalways)     /* pairs every world tests every step: all but the culled (flysim) */             \
  X(ncullgeom)   /* moving geoms with pairs against static geoms (culled pairs, flysim) */         \
  X(ncullstatic) /* static geoms of those pairs (flysim) */                                        \
  X(ncullpair)   /* ncullgeom * ncullstatic (flysim) */                                            \
  X(ncandword)   /* 32-pair words of the candidates' bitmap: ceil(npair / 32) if culled, else 0 */ \
  X(ncandblock)  /* 32-word blocks of that bitmap: ceil(ncandword / 32) */                         \
  X(nstaticgeom) /* the world body's geoms, the first ones: frames made once (flysim) */           \
  X(ngrid)       /* cells of the static geoms' grid (flysim) */                                    \
  X(ngridadr)    /* ngrid + 1 */                                                                   \
  X(ngridentry)  /* (cell, static geom) entries of the grid (flysim) */                            \
  X(nccdwork)    /* convex kernels' scratch (fsi_convex_kernel_types) a world, doubles, or 0 */    \
  X(nconmax)     /* contacts a world holds: nprecon unless lowered before allocating (flysim) */   \
  X(npairdof)    /* entries of all pairs' dof chains (flysim) */                                   \
  X(nefcmax)     /* constraint rows a world holds: the rows of every contact slot (flysim) */      \
  X(njmax)       /* non-zeros of a constraint row at most: the longest pair chain (flysim) */      \
  X(nefcJ)       /* nefcmax * njmax: the rows' non-zeros, a fixed njmax per row (flysim) */        \
  X(nefcD)       /* nefcmax * nv where MuJoCo's Jacobians are dense (host: efc_Jd), else 0 */      \
  X(ntree)       /* kinematic trees under the world */                                             \
  X(ndesc)       /* nC - nv: the reduced layout's off-diagonal entries (flysim) */                 \
  X(ndlevel)     /* depths of the reduced layout's rows (flysim) */                                \
  X(ndleveladr)  /* ndlevel + 1 */                                                                 \
  X(nH)          /* entries of the Hessian's layout: every dof's ancestors and itself (flysim) */  \
  X(nHdesc)      /* nH - nv */                                                                     \
  X(nL)          /* the Hessian factor's entries: nH, or nv * nv where efc_Jd is (host: dense) */  \
  X(nhlevel)     /* depths of the dof tree (flysim) */                                             \
  X(nhleveladr)  /* nhlevel + 1 */                                                                 \
  X(npairnv)     /* npair * nv when there are constraint rows, else 0 (flysim) */                  \
  X(ncone)       /* nconmax under the elliptic cone with contact rows, else 0 (flysim) */          \
  X(nLcone)      /* nL under the elliptic cone with contact rows, else 0 */                        \
  X(nconeJ)      /* 6 * nv under the elliptic cone with contact rows, else 0 */                    \
  X(ncg)         /* nv under the CG solver, else 0 */                                              \
  X(nidof)       /* nv where efc_Jd is (islands of several trees: the host's), else 0 */           \
  X(nitree)      /* ntree where efc_Jd is, else 0 */                                               \
  X(nrkq)        /* nq under the RK4 integrator, else 0 */                                         \
  X(nrk)         /* nv under the RK4 integrator, else 0 */                                         \
  X(nrkt)        /* 1 under the RK4 integrator, else 0 */                                          \
  X(nfluid)      /* nbody under fluid forces (density or viscosity), else 0 */                     \
  X(nvfluid)     /* nv under fluid forces, else 0 */                                               \
  X(one)         /* 1 */                                                                           \
  X(neq)         /* equality constraints */                                                        \
  X(nsensor)     /* sensors */                                                                     \
  X(nsensordata) /* their values a world: mjModel's nsensordata where the step computes them */    \
                 /*   (fsModel.sensors), else 0 */                                                 \
  X(nsubtreevel) /* nbody where a computed sensor needs mj_subtreeVel, else 0 */                   \
  X(nrnepost)    /* nbody where a computed sensor needs mj_rnePostConstraint, else 0 */

// X(type, name, size, cols): model arrays copied from mjModel (same names).
#define FS_MODEL_FIELDS_MJ(X)                                                                      \
  X(int, body_parentid, nbody, 1)              /* parent body */                                   \
  X(int, body_rootid, nbody, 1)                /* root of the kinematic tree */                    \
  X(int, body_jntnum, nbody, 1)                /* joints of the body */                            \
  X(int, body_jntadr, nbody, 1)                /* first joint */                                   \
  X(int, body_dofnum, nbody, 1)                /* dofs of the body */                              \
  X(int, body_dofadr, nbody, 1)                /* first dof */                                     \
  X(int, body_sameframe, nbody, 1)             /* inertial frame = body frame (mjtSameFrame) */    \
  X(int, body_mocapid, nbody, 1)               /* mocap id, -1: not a mocap body */                \
  X(fsReal, body_pos, nbody, 3)                /* position offset rel. to parent */                \
  X(fsReal, body_quat, nbody, 4)               /* orientation offset rel. to parent */             \
  X(fsReal, body_ipos, nbody, 3)               /* local position of the centre of mass */          \
  X(fsReal, body_iquat, nbody, 4)              /* local orientation of the inertia ellipsoid */    \
  X(fsReal, body_mass, nbody, 1)               /* mass */                                          \
  X(fsReal, body_subtreemass, nbody, 1)        /* mass of the subtree */                           \
  X(fsReal, body_inertia, nbody, 3)            /* diagonal inertia in the ipos/iquat frame */      \
  X(fsReal, body_invweight0, nbody, 2)         /* mean inverse inertia at qpos0: transl., rot. */  \
  X(int, jnt_type, njnt, 1)                    /* mjtJoint */                                      \
  X(int, jnt_qposadr, njnt, 1)                 /* first qpos */                                    \
  X(int, jnt_dofadr, njnt, 1)                  /* first dof */                                     \
  X(fsReal, jnt_pos, njnt, 3)                  /* local anchor position */                         \
  X(fsReal, jnt_axis, njnt, 3)                 /* local axis (hinge, slide) */                     \
  X(fsReal, jnt_stiffness, njnt, 1)            /* linear stiffness */                              \
  X(fsReal, jnt_stiffnesspoly, njnt, FS_NPOLY) /* high-order stiffness */                          \
  X(int, jnt_actfrclimited, njnt, 1)           /* joint-level actuator force limit */              \
  X(fsReal, jnt_actfrcrange, njnt, 2)          /* its range */                                     \
  X(int, jnt_limited, njnt, 1)                 /* range limits the joint */                        \
  X(fsReal, jnt_range, njnt, 2)                /* its range (hinge, slide) */                      \
  X(fsReal, jnt_margin, njnt, 1)               /* limit row made below this distance */            \
  X(fsReal, jnt_solref, njnt, FS_NREF)         /* limit rows' solver reference */                  \
  X(fsReal, jnt_solimp, njnt, FS_NIMP)         /* ... and impedance */                             \
  X(int, dof_bodyid, nv, 1)                    /* body of the dof */                               \
  X(int, dof_jntid, nv, 1)                     /* joint of the dof */                              \
  X(int, dof_parentid, nv, 1)                  /* parent dof, -1 at a root */                      \
  X(int, dof_treeid, nv, 1)                    /* kinematic tree of the dof */                     \
  X(int, dof_simplenum, nv, 1)                 /* consecutive simple dofs (fixed diagonal M) */    \
  X(fsReal, dof_M0, nv, 1)                     /* diagonal of M for simple dofs */                 \
  X(fsReal, dof_armature, nv, 1)               /* armature inertia */                              \
  X(fsReal, dof_damping, nv, 1)                /* linear damping */                                \
  X(fsReal, dof_dampingpoly, nv, FS_NPOLY)     /* high-order damping */                            \
  X(fsReal, dof_frictionloss, nv, 1)           /* dry friction: a friction-loss row's bound */     \
  X(fsReal, dof_solref, nv, FS_NREF)           /* friction-loss rows' solver reference */          \
  X(fsReal, dof_solimp, nv, FS_NIMP)           /* ... and impedance */                             \
  X(fsReal, dof_invweight0, nv, 1)             /* inverse inertia at qpos0 (rows' diagA) */        \
  X(fsReal, qpos0, nq, 1)                      /* qpos at reset */                                 \
  X(fsReal, qpos_spring, nq, 1)                /* spring reference */                              \
  X(int, M_rownnz, nv, 1)                      /* reduced inertia: non-zeros per row */            \
  X(int, M_rowadr, nv, 1)                      /* row addresses */                                 \
  X(int, M_colind, nC, 1)                      /* column indices (ancestors, then the diagonal) */ \
  X(int, tree_dofadr, ntree, 1)                /* first dof of the tree */                         \
  X(int, tree_dofnum, ntree, 1)                /* dofs of the tree (consecutive) */                \
  X(int, actuator_trntype, nu, 1)              /* mjtTrn */                                        \
  X(int, actuator_trnid, nu, 2)                /* transmission target */                           \
  X(int, actuator_gaintype, nu, 1)             /* mjtGain */                                       \
  X(int, actuator_biastype, nu, 1)             /* mjtBias */                                       \
  X(fsReal, actuator_gainprm, nu, FS_NGAIN)    /* gain parameters */                               \
  X(fsReal, actuator_biasprm, nu, FS_NBIAS)    /* bias parameters */                               \
  X(int, actuator_dyntype, nu, 1)              /* mjtDyn: activation dynamics */                   \
  X(fsReal, actuator_dynprm, nu, FS_NDYN)      /* dynamics parameters (filter: tau) */             \
  X(int, actuator_actadr, nu, 1)               /* first activation, -1: none */                    \
  X(int, actuator_actnum, nu, 1)               /* activations */                                   \
  X(int, actuator_actlimited, nu, 1)           /* activation clamped */                            \
  X(fsReal, actuator_actrange, nu, 2)          /* activation range */                              \
  X(int, actuator_actearly, nu, 1)             /* force from the next step's activation */         \
  X(fsReal, actuator_gear, nu, 6)              /* transmission gear */                             \
  X(int, actuator_ctrllimited, nu, 1)          /* control clamped */                               \
  X(fsReal, actuator_ctrlrange, nu, 2)         /* control range */                                 \
  X(int, actuator_forcelimited, nu, 1)         /* force clamped */                                 \
  X(fsReal, actuator_forcerange, nu, 2)        /* force range */                                   \
  X(int, tendon_adr, ntendon, 1)               /* first wrap object */                             \
  X(int, tendon_num, ntendon, 1)               /* wrap objects (fixed: joints) */                  \
  X(int, wrap_type, nwrap, 1)                  /* mjtWrap (a tendon path: joint, pulley, site) */  \
  X(int, wrap_objid, nwrap, 1)                 /* the object (fixed tendon: a joint; a site) */    \
  X(fsReal, wrap_prm, nwrap, 1)                /* its parameter (coefficient; pulley: divisor) */  \
  X(fsReal, tendon_stiffness, ntendon, 1)      /* spring stiffness */                              \
  X(fsReal, tendon_stiffnesspoly, ntendon, FS_NPOLY) /* ... high-order */                          \
  X(fsReal, tendon_damping, ntendon, 1)              /* damping */                                 \
  X(fsReal, tendon_dampingpoly, ntendon, FS_NPOLY)   /* ... high-order */                          \
  X(fsReal, tendon_lengthspring, ntendon, 2)         /* the spring's rest lengths (a dead band) */ \
  X(int, ten_J_rowadr, ntendon, 1)                   /* tendon's first Jacobian slot */            \
  X(int, ten_J_rownnz, ntendon, 1)                   /* its slots */                               \
  X(int, ten_J_colind, nJten, 1)                     /* each slot's dof (sorted) */                \
  X(int, geom_type, ngeom, 1)                        /* mjtGeom */                                 \
  X(int, geom_dataid, ngeom, 1)                      /* mesh id, -1: none */                       \
  X(int, geom_bodyid, ngeom, 1)                      /* body */                                    \
  X(int, geom_sameframe, ngeom, 1)      /* frame = body's / inertial frame (mjtSameFrame) */       \
  X(fsReal, geom_size, ngeom, 3)        /* type-specific sizes */                                  \
  X(fsReal, geom_rbound, ngeom, 1)      /* bounding-sphere radius, 0 for planes */                 \
  X(fsReal, geom_pos, ngeom, 3)         /* local position offset */                                \
  X(fsReal, geom_quat, ngeom, 4)        /* local orientation offset */                             \
  X(int, site_bodyid, nsite, 1)         /* body */                                                 \
  X(int, site_sameframe, nsite, 1)      /* frame = body's / inertial frame */                      \
  X(fsReal, site_pos, nsite, 3)         /* local position offset */                                \
  X(fsReal, site_quat, nsite, 4)        /* local orientation offset */                             \
  X(int, mesh_vertadr, nmesh, 1)        /* first vertex */                                         \
  X(int, mesh_vertnum, nmesh, 1)        /* vertices */                                             \
  X(int, mesh_graphadr, nmesh, 1)       /* convex-hull graph in mesh_graph, -1: none */            \
  X(fsReal, mesh_vert, nmeshvert, 3)    /* vertex positions (MuJoCo's floats) */                   \
  X(int, mesh_graph, nmeshgraph, 1)     /* hull graphs: nvert, nface, edgeadr, globalid, edges */  \
  X(int, mesh_extrema, nmeshextrema, 1) /* hull vertex (graph id) extreme in 3x3x3 directions */   \
  X(int, mesh_polynum, nmesh, 1)        /* hull polygons of the mesh */                            \
  X(int, mesh_polyadr, nmesh, 1)        /* first polygon */                                        \
  X(fsReal, mesh_polynormal, nmeshpoly, 3) /* polygon normals (mesh frame) */                      \
  X(int, mesh_polyvertadr, nmeshpoly, 1)   /* first vertex of the polygon in mesh_polyvert */      \
  X(int, mesh_polyvertnum, nmeshpoly, 1)   /* its vertices */                                      \
  X(int, mesh_polyvert, nmeshpolyvert, 1)  /* polygon vertices (mesh vertex ids, in order) */      \
  X(int, mesh_polymapadr, nmeshvert, 1)    /* polygons of each vertex: first in mesh_polymap */    \
  X(int, mesh_polymapnum, nmeshvert, 1)    /* ... how many */                                      \
  X(int, mesh_polymap, nmeshpolymap, 1)    /* polygon ids (mesh-local) */                          \
  X(int, eq_type, neq, 1)                  /* mjtEq (rows: joint, tendon) */                       \
  X(int, eq_obj1id, neq, 1)                /* its joint or tendon */                               \
  X(int, eq_obj2id, neq, 1)                /* the one it follows, -1: none */                      \
  X(int, eq_active0, neq, 1)               /* active (its rows made) */                            \
  X(fsReal, eq_data, neq, FS_NEQDATA)      /* joint, tendon: offset and polynomial coefficients */ \
  X(fsReal, eq_solref, neq, FS_NREF)       /* solver reference */                                  \
  X(fsReal, eq_solimp, neq, FS_NIMP)       /* solver impedance */                                  \
  X(fsReal, tendon_length0, ntendon, 1)    /* length at qpos0 */                                   \
  X(fsReal, tendon_invweight0, ntendon, 1) /* inverse inertia at qpos0 (rows' diagA) */            \
  X(int, tendon_limited, ntendon, 1)       /* length limited (limit rows) */                       \
  X(fsReal, tendon_range, ntendon, 2)      /* its range */                                         \
  X(fsReal, tendon_margin, ntendon, 1)     /* a limit row within this distance */                  \
  X(fsReal, tendon_solref_lim, ntendon, FS_NREF) /* limit rows' solver reference */                \
  X(fsReal, tendon_solimp_lim, ntendon, FS_NIMP) /* ... impedance */                               \
  X(fsReal, tendon_frictionloss, ntendon, 1)     /* friction loss (a row where > 0) */             \
  X(fsReal, tendon_solref_fri, ntendon, FS_NREF) /* friction-loss row's solver reference */        \
  X(fsReal, tendon_solimp_fri, ntendon, FS_NIMP) /* ... impedance */                               \
  X(int, body_weldid, nbody, 1)            /* top dof-less ancestor (a static body's: itself) */   \
  X(int, site_type, nsite, 1)              /* mjtGeom of the site's zone */                        \
  X(fsReal, site_size, nsite, 3)           /* its size */                                          \
  X(int, sensor_type, nsensor, 1)          /* mjtSensor */                                         \
  X(int, sensor_datatype, nsensor, 1)      /* mjtDataType: cutoff on both sides or above */        \
  X(int, sensor_objtype, nsensor, 1)       /* mjtObj of the sensed object */                       \
  X(int, sensor_objid, nsensor, 1)         /* its id */                                            \
  X(int, sensor_reftype, nsensor, 1)       /* mjtObj of the reference (frame, contact's 2nd) */    \
  X(int, sensor_refid, nsensor, 1)         /* its id, -1: none (the world frame) */                \
  X(int, sensor_intprm, nsensor, FS_NSENS) /* contact: data fields (bits), reduction, slots */     \
  X(int, sensor_dim, nsensor, 1)           /* values */                                            \
  X(int, sensor_adr, nsensor, 1)           /* first in sensordata */                               \
  X(fsReal, sensor_cutoff, nsensor, 1)     /* clamp of real and positive values, 0: none */

// X(type, name, size, cols): model arrays flysim derives at upload. The contact pairs
// (pair_*, npair) are the explicit <pair>s and the geom pairs MuJoCo's broadphase may find
// by contype/conaffinity, in the order mj_collision makes their contacts
// (common/model/model_pairs.c), with their parameters (mjModel's pair_* for explicit pairs).
#define FS_MODEL_FIELDS_OWN(X)                                                                     \
  X(fsReal, dof_actarmature, nv, 1)           /* armature inherited from actuators (gear^2) */     \
  X(fsReal, dof_actdamping, nv, 1)            /* damping inherited from actuators (gear^2) */      \
  X(fsReal, dof_actdampingpoly, nv, FS_NPOLY) /* ... high-order */                                 \
  X(int, actuator_disabled, nu, 1)            /* group disabled by opt.disableactuator */          \
  X(int, moment_rownnz, nu, 1)                /* actuator moment sparsity (static) */              \
  X(int, moment_rowadr, nu, 1)                /* row addresses */                                  \
  X(int, moment_colind, nJmom, 1)             /* dof of each non-zero */                           \
  X(int, dof_momentnum, nv, 1)                /* transpose: moment entries acting on the dof */    \
  X(int, dof_momentadr, nv, 1)                /* first of them in dof_momentind */                 \
  X(int, dof_momentind, nJmom, 1)             /* index into actuator_moment, by actuator */        \
  X(int, dof_momentact, nJmom, 1)             /* the actuator of each */                           \
  X(int, level_bodyadr, nleveladr, 1)    /* bodies of depth k: level_body[adr[k]..adr[k+1]) */     \
  X(int, level_body, nbody, 1)           /* bodies sorted by depth, then id */                     \
  X(int, body_childnum, nbody, 1)        /* children of the body */                                \
  X(int, body_childadr, nbody, 1)        /* first in body_child */                                 \
  X(int, body_child, nbody, 1)           /* children, increasing id */                             \
  X(int, pair_dim, npair, 1)             /* contact dimensionality (condim) */                     \
  X(int, pair_geom1, npair, 1)           /* geom 1 */                                              \
  X(int, pair_geom2, npair, 1)           /* geom 2 */                                              \
  X(fsReal, pair_solref, npair, FS_NREF) /* solver reference: normal */                            \
  X(fsReal, pair_solreffriction, npair, FS_NREF) /* solver reference: friction (0 0: solref) */    \
  X(fsReal, pair_solimp, npair, FS_NIMP)         /* solver impedance */                            \
  X(fsReal, pair_margin, npair, 1)   /* contact kept in the solver below this distance */          \
  X(fsReal, pair_gap, npair, 1)      /* ... and detected up to margin + gap */                     \
  X(fsReal, pair_adhesion, npair, 1) /* adhesive force of the pair's contacts */                   \
  X(fsReal, pair_friction, npair, 5) /* tangent1, 2, spin, roll1, 2 */                             \
  X(int, pair_maxcon, npair, 1)   /* its contact bound: 1 sphere/ellipsoid, 2 capsule, 4 else */   \
  X(int, pair_moveside, npair, 1) /* moves: 1 geom 2 (collision order) alone, 0 geom 1, 2 both */  \
  X(int, always_pair, nalways, 1) /* the pairs tested every step (not culled), in order */         \
  X(int, cull_geom, ncullgeom, 1) /* moving geoms with culled pairs */                             \
  X(fsReal, cull_reach, ncullgeom, 1)  /* rbound + its culled pairs' largest margin + gap */       \
  X(fsReal, cull_aabb, ncullstatic, 6) /* static boxes: lo x, y, z, then hi x, y, z */             \
  X(fsReal, geom_static_xpos, nstaticgeom, 3) /* the world body's geoms' geom_xpos */              \
  X(fsReal, geom_static_xmat, nstaticgeom, 9) /* ... geom_xmat */                                  \
  X(int, cull_pair, ncullpair, 1) /* [i * ncullstatic + s]: pair of cull_geom i, static s; -1 */   \
  X(int, grid_adr, ngridadr, 1)   /* cell c's static geoms: grid_static[adr[c]..adr[c+1]) */       \
  X(int, grid_static, ngridentry, 1) /* static geoms (cull_aabb rows) overlapping each cell */     \
  X(int, pair_nv, npair, 1)     /* dofs its contacts move: the bodies' merged chain (0: none) */   \
  X(int, pair_dofadr, npair, 1) /* first in pair_dof */                                            \
  X(int, pair_dof, npairdof, 1) /* the chains: increasing dof ids (MuJoCo's mj_mergeChain) */      \
  X(int, pair_dofside, npairdof,                                                                   \
    1)                         /* each moves geom 1's body (0) or geom 2's (1; collision order) */ \
  X(int, pair_tree, npair, 1)  /* tree its contacts' rows act on: their island (-1: none) */       \
  X(int, pair_tree2, npair, 1) /* the other tree they join (two moving trees), else -1 */          \
  X(int, pair_chainpos, npairnv, 1) /* [p * nv + dof]: the dof's place in the chain, -1: none */   \
  X(int, M_rowind, nC, 1)           /* row of each entry of the reduced layout */                  \
  X(int, dof_descnum, nv, 1)        /* descendants of the dof: rows whose entries reach it */      \
  X(int, dof_descadr, nv, 1)        /* first in dof_desc */                                        \
  X(int, dof_desc, ndesc, 1)        /* descendants, increasing (the transpose of M_colind) */      \
  X(int, dlevel_dofadr, ndleveladr, 1)   /* dofs of depth k: dlevel_dof[adr[k]..adr[k+1]) */       \
  X(int, dlevel_dof, nv, 1)              /* dofs by depth (ancestors), then id */                  \
  X(int, dlevel_entryadr, ndleveladr, 1) /* reduced-layout entries of the rows of depth k */       \
  X(int, dlevel_entry, nC, 1)            /* entries by their row's depth */                        \
  X(int, H_rownnz, nv, 1)   /* the Hessian's layout (the reduced layout with every ancestor, */    \
  X(int, H_rowadr, nv, 1)   /*  also of MuJoCo's "simple" dofs, whose rows of M hold only the */   \
  X(int, H_colind, nH, 1)   /*  diagonal: a contact row couples a free body's 6 dofs) */           \
  X(int, H_rowind, nH, 1)   /* row of each entry */                                                \
  X(int, H_Madr, nH, 1)     /* the same entry in M's layout, -1: none */                           \
  X(int, H_descnum, nv, 1)  /* descendants of the dof in this layout */                            \
  X(int, H_descadr, nv, 1)  /* first in H_desc */                                                  \
  X(int, H_desc, nHdesc, 1) /* descendants, increasing */                                          \
  X(int, hlevel_dofadr, nhleveladr, 1)   /* dofs of depth k in this layout */                      \
  X(int, hlevel_dof, nv, 1)              /* dofs by depth, then id */                              \
  X(int, hlevel_entryadr, nhleveladr, 1) /* entries of the rows of depth k */                      \
  X(int, hlevel_entry, nH, 1)            /* entries by their row's depth */                        \
  X(int, eq_nv, neq, 1)                  /* dofs its row moves: the objects' merged (0: no row) */ \
  X(int, eq_dofadr, neq, 1)              /* first in pair_dof (increasing dof ids) */              \
  X(int, tendon_nv, ntendon, 1)     /* dofs its limit and friction-loss rows move (0: none) */     \
  X(int, tendon_dofadr, ntendon, 1) /* first in pair_dof (its ten_J columns) */

#define FS_MODEL_FIELDS(X) FS_MODEL_FIELDS_MJ(X) FS_MODEL_FIELDS_OWN(X)

/// The model: sizes, options and arrays (host or device pointers, same struct).
typedef struct fsModel {
#define FS_X(name) int name;
  FS_MODEL_SIZES(FS_X)
#undef FS_X
  double timestep;   // opt.timestep (double: time advances by it)
  fsReal gravity[3]; // opt.gravity
  int disableflags;  // opt.disableflags (mjtDisableBit)
  int flg_eulerdamp; // Euler integrates damping implicitly (MuJoCo's mj_EulerSkip test)
  int rk4;           // opt.integrator RK4: mj_RungeKutta's four stages (else Euler)
  fsReal density;    // opt.density, viscosity, wind: the medium of fluid forces (mj_fluid,
  fsReal viscosity;  //   the inertia-box model; on when density or viscosity is not 0)
  fsReal wind[3];
  fsReal magnetic[3]; // opt.magnetic: the magnetometers' field
  int sensors;        // the step computes the sensors (every one of a kind it implements, and
                      //   mjDSBL_SENSOR off: fs_model_sensors_lack); nsensordata is then mjModel's
  int tendon_passive; // tendons with springs or dampers (mj_springdamper's tendon part)
  int enableflags;    // opt.enableflags (mjtEnableBit)
  fsReal o_margin;    // opt.o_margin, o_solref, o_solimp, o_friction: contact override
  fsReal o_solref[FS_NREF];
  fsReal o_solimp[FS_NIMP];
  fsReal o_friction[5];
  fsReal impratio;         // opt.impratio: friction-to-normal impedance ratio of contacts
  int jac_sparse;          // MuJoCo's mj_isSparse: its Jacobians are sparse (sets sums' order)
  int dense_rows;          // rows, Hessian dense where jac_sparse is 0 (host; fs_model_for_lanes)
  int iterations;          // opt.iterations: Newton iterations at most (per island)
  double tolerance;        // opt.tolerance: the solver's convergence tolerance
  int ls_iterations;       // opt.ls_iterations: line-search evaluations at most
  double ls_tolerance;     // opt.ls_tolerance: line-search gradient tolerance (x tolerance)
  int noslip_iterations;   // opt.noslip_iterations: 0 = no noslip
  double noslip_tolerance; // opt.noslip_tolerance
  double meaninertia;      // stat.meaninertia: scales the monolithic solve and noslip
  int islands;             // constraint islands (mjDSBL_ISLAND off): one solve per island
  int warmstart;           // mjDSBL_WARMSTART off: start from the best of qacc_warmstart/smooth
  int adhesion;            // flg_adhesion: contacts with adhesion pull (mj_passive)
  int ccd_iterations;      // opt.ccd_iterations: GJK and EPA iterations (convex pairs)
  double ccd_tolerance;    // opt.ccd_tolerance: their tolerance (the collider is double)
  int nslot;               // contact slots per candidate pair: the largest pair_maxcon
  int nbranchpair;         // pairs whose rows move two branches of a tree (or two trees): the
                           //   Hessian's tree layout cannot hold them (fs_model_for_lanes)
  int ndofrow;             // equality, friction-loss and limit rows a world may make (before
                           //   contacts; equality rows first, of the joint and tendon kinds)
  int dofrow_adr;          // their one-dof chains: pair_dof[dofrow_adr + j] = j (ndofrow > 0)
  int elliptic;            // opt.cone elliptic: a contact of condim d > 1 makes d rows
  int solver_cg;           // opt.solver CG: conjugate gradients (else Newton)
  fsReal grid_lo[2];       // static geoms' grid (collision_cull.h): its low corner in x, y,
  fsReal grid_inv[2];      //   1 / cell size,
  int grid_n[2];           //   cells along x, y (ngrid = grid_n[0] * grid_n[1]),
  fsReal grid_z[2];        //   the lowest and highest z of its boxes (cull_aabb)
#define FS_X(type, name, size, cols) type* name;
  FS_MODEL_FIELDS(FS_X)
#undef FS_X
} fsModel;

/// The stages, in mj_step's order: X(ID, name, function). The one list of them: it gives
/// fsStage (FS_STAGE_<ID>), fs_stage_name ("name") and fs_stage_run's dispatch (function, the
/// stage alone: common/engine/stage_forward.h), and fs_step calls the functions in this order (its
/// list of calls, the pipeline's documentation, is held to this one by
/// tests/engine/test_stage_list.py). Each function is MuJoCo's of that name: kinematics to
/// transmission are mj_fwdPosition, actuator_velocity to rne mj_fwdVelocity, then mj_forward's
/// rest and mj_Euler; noslip is mj_fwdConstraint's noslip alone, from efc_force (the tests'
/// entry: fs_step runs it within fwd_constraint). A stage writes the data fields of its ID
/// (FS_DATA_FIELDS below).
#define FS_STAGES(X)                                                                               \
  X(KINEMATICS, "kinematics", fs_kinematics)                               /* bodies' frames */    \
  X(COM_POS, "com_pos", fs_com_pos)                                        /* cinert, cdof */      \
  X(MAKE_M, "make_m", fs_make_m)                                           /* mj_crb, M */         \
  X(FACTOR_M, "factor_m", fs_factor_m)                                     /* M's L'DL factor */   \
  X(COLLISION, "collision", fs_collision)                                  /* explicit pairs */    \
  X(MAKE_CONSTRAINT, "make_constraint", fs_make_constraint)                /* contact rows */      \
  X(TRANSMISSION, "transmission", fs_transmission)                         /* lengths, moments */  \
  X(ACTUATOR_VELOCITY, "actuator_velocity", fs_actuator_velocity)          /* moment * qvel */     \
  X(COM_VEL, "com_vel", fs_com_vel)                                        /* cvel, cdof_dot */    \
  X(PASSIVE, "passive", fs_passive)                                        /* + adhesion's pull */ \
  X(REFERENCE_CONSTRAINT, "reference_constraint", fs_reference_constraint) /* efc_vel, efc_aref */ \
  X(RNE, "rne", fs_rne)                                                    /* qfrc_bias */         \
  X(ACTUATION, "fwd_actuation", fs_fwd_actuation)                          /* actuator forces */   \
  X(ACCELERATION, "fwd_acceleration", fs_fwd_acceleration)                 /* qacc_smooth */       \
  X(CONSTRAINT, "fwd_constraint", fs_fwd_constraint)                       /* Newton, noslip */    \
  X(NOSLIP, "noslip", fs_noslip)                                           /* alone (tests) */     \
  X(SENSOR, "sensor", fs_sensor)                                           /* sensordata */        \
  X(EULER, "euler", fs_euler)                                              /* implicit damping */

/// (sensor: mj_sensorPos, mj_sensorVel and mj_sensorAcc at once, after the constraint solve,
/// from the first forward of the step: nothing they read changes between.)
/// Stage ids: FS_STAGE_STATE, then FS_STAGES' in order.
typedef enum fsStage {
  FS_STAGE_STATE = 0, // not a stage: state and inputs
#define FS_X(id, name, function) FS_STAGE_##id,
  FS_STAGES(FS_X)
#undef FS_X
      FS_NSTAGE
} fsStage;

/// What a data field is: MuJoCo's (same name in mjData), a member of MuJoCo's
/// contacts (contact_<member> is mjData.contact[i].<member>; ncon is mjData.ncon),
/// MuJoCo's constraint rows (efc_<x> is mjData.efc_<x>, rows < nefc; efc_J holds
/// each row's non-zeros in flysim's layout, see below), flysim's own (per-world
/// bookkeeping) or scratch (a stage's intermediates).
enum { FS_KIND_MJ = 0, FS_KIND_CONTACT, FS_KIND_EFC, FS_KIND_OWN, FS_KIND_SCRATCH };

/// Constraint types (mjtConstraint) of the rows flysim makes: equality (joint, tendon), dof
/// and tendon friction loss, joint and tendon limits, contacts (in MuJoCo's row order).
enum {
  FS_CNSTR_EQUALITY = 0,
  FS_CNSTR_FRICTION_DOF = 1,
  FS_CNSTR_FRICTION_TENDON = 2,
  FS_CNSTR_LIMIT_JOINT = 3,
  FS_CNSTR_LIMIT_TENDON = 4,
  FS_CNSTR_CONTACT_FRICTIONLESS = 5,
  FS_CNSTR_CONTACT_PYRAMIDAL = 6,
  FS_CNSTR_CONTACT_ELLIPTIC = 7
};

/// Constraint states (mjtConstraintState): a friction-loss row is linear beyond its bound.
enum {
  FS_CNSTRSTATE_SATISFIED = 0,
  FS_CNSTRSTATE_QUADRATIC = 1,
  FS_CNSTRSTATE_LINEARNEG = 2,
  FS_CNSTRSTATE_LINEARPOS = 3,
  FS_CNSTRSTATE_CONE = 4 // an elliptic contact in the cone's middle zone
};

/// What went wrong in a world's solve (solver_error bits); MuJoCo stops with an error.
enum { FS_SOLVER_RANK = 1 }; // the Newton Hessian lost rank ("rank-deficient sparse Hessian")

// X(type, name, size, cols, stage, kind): per-world data.
#define FS_DATA_FIELDS(X)                                                                          \
  X(fsReal, qpos, nq, 1, STATE, MJ)                        /* position */                          \
  X(fsReal, qvel, nv, 1, STATE, MJ)                        /* velocity */                          \
  X(fsReal, ctrl, nu, 1, STATE, MJ)                        /* control */                           \
  X(fsReal, qfrc_applied, nv, 1, STATE, MJ)                /* applied generalized force */         \
  X(fsReal, qacc_warmstart, nv, 1, STATE, MJ)              /* last qacc (solver warm start) */     \
  X(double, time, one, 1, STATE, MJ)                       /* simulation time */                   \
  X(fsReal, mocap_pos, nmocap, 3, STATE, MJ)               /* mocap bodies' position */            \
  X(fsReal, mocap_quat, nmocap, 4, STATE, MJ)              /* ... and orientation */               \
  X(fsReal, act, na, 1, STATE, MJ)                         /* actuator activation */               \
  X(int, warning_number, one, FS_NWARNING, STATE, OWN)     /* MuJoCo's warning counters */         \
  X(fsReal, xpos, nbody, 3, KINEMATICS, MJ)                /* body frame position */               \
  X(fsReal, xquat, nbody, 4, KINEMATICS, MJ)               /* body frame orientation */            \
  X(fsReal, xmat, nbody, 9, KINEMATICS, MJ)                /* ... as a matrix */                   \
  X(fsReal, xipos, nbody, 3, KINEMATICS, MJ)               /* centre of mass */                    \
  X(fsReal, ximat, nbody, 9, KINEMATICS, MJ)               /* inertial frame orientation */        \
  X(fsReal, xanchor, njnt, 3, KINEMATICS, MJ)              /* joint anchor */                      \
  X(fsReal, xaxis, njnt, 3, KINEMATICS, MJ)                /* joint axis */                        \
  X(fsReal, geom_xpos, ngeom, 3, KINEMATICS, MJ)           /* geom position */                     \
  X(fsReal, geom_xmat, ngeom, 9, KINEMATICS, MJ)           /* geom orientation */                  \
  X(fsReal, site_xpos, nsite, 3, KINEMATICS, MJ)           /* site position */                     \
  X(fsReal, site_xmat, nsite, 9, KINEMATICS, MJ)           /* site orientation */                  \
  X(fsReal, subtree_com, nbody, 3, COM_POS, MJ)            /* centre of mass of each subtree */    \
  X(fsReal, cinert, nbody, 10, COM_POS, MJ)                /* com-based body inertia and mass */   \
  X(fsReal, cdof, nv, 6, COM_POS, MJ)                      /* com-based motion axis (rot:lin) */   \
  X(fsReal, crb, nbody, 10, MAKE_M, MJ)                    /* com-based composite inertia */       \
  X(fsReal, M, nC, 1, MAKE_M, MJ)                          /* inertia, reduced sparse layout */    \
  X(fsReal, qLD, nC, 1, FACTOR_M, MJ)                      /* L'*D*L factor of M, same layout */   \
  X(fsReal, qLDiagInv, nv, 1, FACTOR_M, MJ)                /* 1/diag(D) */                         \
  X(int, ncand, one, 1, COLLISION, OWN)                    /* candidate pairs tested */            \
  X(int, cand_overflow, one, 1, COLLISION, OWN)            /* candidates dropped: ncandmax full */ \
  X(int, cand_gnum, ncullgeom, 1, COLLISION, SCRATCH)      /* each moving geom's candidates */     \
  X(int, cand_gadr, ncullgeom, 1, COLLISION, SCRATCH)      /* its first in cand_raw */             \
  X(int, cand_raw, ncandmax, 1, COLLISION, SCRATCH)        /* candidates, by geom */               \
  X(int, cand_used, ncandblock, 1, COLLISION, SCRATCH)     /* cand_bits' words in use (bits) */    \
  X(int, cand_bits, ncandword, 1, COLLISION, SCRATCH)      /* candidate pair ids' bitmap */        \
  X(int, cand_below, ncandword, 1, COLLISION, SCRATCH)     /* candidates in the words before */    \
  X(int, cand_pair, ncandmax, 1, COLLISION, SCRATCH)       /* candidates in pair order */          \
  X(int, cand_ncon, ncandmax, 1, COLLISION, SCRATCH)       /* contacts each candidate made */      \
  X(int, cand_conout, ncandmax, 1, COLLISION, SCRATCH)     /* its first contact in contact_* */    \
  X(double, ccd_work, nccdwork, 1, COLLISION, SCRATCH)     /* convex pairs: GJK, EPA, multiccd */  \
  X(fsReal, precon_dist, nprecon, 1, COLLISION, SCRATCH)   /* each candidate's contacts (nslot */  \
  X(fsReal, precon_pos, nprecon, 3, COLLISION, SCRATCH)    /*  slots a candidate): MuJoCo's   */   \
  X(fsReal, precon_normal, nprecon, 3, COLLISION, SCRATCH) /*  mjPreContact: distance, point, */   \
  X(fsReal, precon_tangent, nprecon, 3, COLLISION, SCRATCH) /*  normal, first tangent or 0     */  \
  X(int, ncon, one, 1, COLLISION, CONTACT)                  /* contacts (pairs in model order) */  \
  X(int, contact_overflow, one, 1, COLLISION, OWN)          /* contacts dropped: nconmax full */   \
  X(fsReal, contact_dist, nconmax, 1, COLLISION, CONTACT)   /* distance, negative: penetration */  \
  X(fsReal, contact_pos, nconmax, 3, COLLISION, CONTACT)    /* midpoint between the geoms */       \
  X(fsReal, contact_frame, nconmax, 9, COLLISION, CONTACT)  /* normal (geom 0 -> 1), tangents */   \
  X(fsReal, contact_includemargin, nconmax, 1, COLLISION, CONTACT) /* margin for force */          \
  X(fsReal, contact_friction, nconmax, 5, COLLISION, CONTACT) /* tangent1, 2, spin, roll1, 2 */    \
  X(fsReal, contact_solref, nconmax, FS_NREF, COLLISION, CONTACT)         /* normal */             \
  X(fsReal, contact_solreffriction, nconmax, FS_NREF, COLLISION, CONTACT) /* friction */           \
  X(fsReal, contact_solimp, nconmax, FS_NIMP, COLLISION, CONTACT)         /* impedance */          \
  X(fsReal, contact_adhesion, nconmax, 1, COLLISION, CONTACT)             /* adhesive force */     \
  X(int, contact_dim, nconmax, 1, COLLISION, CONTACT)                     /* 1, 3, 4 or 6 */       \
  X(int, contact_geom, nconmax, 2, COLLISION, CONTACT)    /* geom ids (the pair's, plane 1st) */   \
  X(int, contact_exclude, nconmax, 1, COLLISION, CONTACT) /* 1: in the gap (no force) */           \
  X(int, contact_pair, nconmax, 1, COLLISION, OWN)        /* the pair that made it */              \
  X(int, contact_efc_address, nconmax, 1, MAKE_CONSTRAINT, CONTACT) /* first row, -1: none */      \
  X(fsReal, contact_mu, nconmax, 1, MAKE_CONSTRAINT, CONTACT) /* regularized cone's friction */    \
  X(int, nefc, one, 1, MAKE_CONSTRAINT, EFC)         /* rows: friction loss, limits, contacts */   \
  X(int, efc_overflow, one, 1, MAKE_CONSTRAINT, OWN) /* rows dropped: nefcmax full */              \
  X(int, nefc_dof, one, 1, MAKE_CONSTRAINT, OWN)     /* the first: friction loss, limits */        \
  X(int, efc_type, nefcmax, 1, MAKE_CONSTRAINT, EFC) /* mjtConstraint */                           \
  X(int, efc_id, nefcmax, 1, MAKE_CONSTRAINT, EFC)   /* the dof, joint or contact */               \
  X(int, efc_J_rownnz, nefcmax, 1, MAKE_CONSTRAINT, EFC) /* non-zeros: 1, or the pair's pair_nv */ \
  X(int, efc_J_coladr, nefcmax, 1, MAKE_CONSTRAINT, OWN) /* columns: pair_dof[adr..adr+rownnz) */  \
  X(fsReal, efc_J, nefcJ, 1, MAKE_CONSTRAINT, EFC)       /* row r: [r*njmax, r*njmax + rownnz) */  \
  X(double, efc_Jd, nefcD, 1, MAKE_CONSTRAINT, SCRATCH) /* the rows dense: row r at [r*nv, +nv) */ \
  X(fsReal, efc_pos, nefcmax, 1, MAKE_CONSTRAINT,                                                  \
    EFC) /* position: limit's or contact's distance */                                             \
  X(fsReal, efc_margin, nefcmax, 1, MAKE_CONSTRAINT, EFC) /* inclusion margin */                   \
  X(fsReal, efc_frictionloss, nefcmax, 1, MAKE_CONSTRAINT,                                         \
    EFC)                                                 /* friction-loss rows' bound, else 0 */   \
  X(fsReal, efc_diagA, nefcmax, 1, MAKE_CONSTRAINT, EFC) /* R * imp / (1 - imp) */                 \
  X(fsReal, efc_KBIP, nefcmax, 4, MAKE_CONSTRAINT, EFC)  /* stiffness, damping, imp, imp' */       \
  X(fsReal, efc_D, nefcmax, 1, MAKE_CONSTRAINT, EFC)     /* constraint mass: 1 / R */              \
  X(fsReal, efc_R, nefcmax, 1, MAKE_CONSTRAINT, EFC)     /* regularizer */                         \
  X(fsReal, actuator_length, nu, 1, TRANSMISSION, MJ)    /* actuator length */                     \
  X(fsReal, actuator_moment, nJmom, 1, TRANSMISSION, MJ) /* moments (model's sparsity) */          \
  X(fsReal, actuator_velocity, nu, 1, ACTUATOR_VELOCITY, MJ) /* actuator velocity */               \
  X(fsReal, cvel, nbody, 6, COM_VEL, MJ)                     /* com-based velocity (rot:lin) */    \
  X(fsReal, cdof_dot, nv, 6, COM_VEL, MJ)                    /* time derivative of cdof */         \
  X(fsReal, qfrc_spring, nv, 1, PASSIVE, MJ)                 /* passive spring force */            \
  X(fsReal, qfrc_damper, nv, 1, PASSIVE, MJ)                 /* passive damper force */            \
  X(fsReal, qfrc_adhesion, nv, 1, PASSIVE, MJ)               /* contact adhesion's pull */         \
  X(fsReal, qfrc_fluid, nvfluid, 1, PASSIVE, MJ)             /* fluid forces (inertia box) */      \
  X(fsReal, fluid_bfrc, nfluid, 6, PASSIVE, SCRATCH)        /* body's fluid torque:force, world */ \
  X(fsReal, qfrc_passive, nv, 1, PASSIVE, MJ)               /* total passive force */              \
  X(fsReal, efc_vel, nefcmax, 1, REFERENCE_CONSTRAINT, EFC) /* J * qvel */                         \
  X(fsReal, efc_aref, nefcmax, 1, REFERENCE_CONSTRAINT, EFC) /* reference acceleration */          \
  X(fsReal, qfrc_bias, nv, 1, RNE, MJ)                       /* C(qpos, qvel) incl. gravity */     \
  X(fsReal, rne_cacc, nbody, 6, RNE, SCRATCH)                /* com-based acceleration */          \
  X(fsReal, rne_cfrc, nbody, 6, RNE, SCRATCH)                /* com-based body force */            \
  X(fsReal, act_dot, na, 1, ACTUATION, MJ)                   /* activation's time derivative */    \
  X(fsReal, actuator_force, nu, 1, ACTUATION, MJ)            /* actuator force */                  \
  X(fsReal, qfrc_actuator, nv, 1, ACTUATION, MJ)             /* actuator force in joint space */   \
  X(fsReal, qfrc_smooth, nv, 1, ACCELERATION, MJ)            /* net unconstrained force */         \
  X(fsReal, qacc_smooth, nv, 1, ACCELERATION, MJ)            /* unconstrained acceleration */      \
  X(fsReal, qfrc_constraint, nv, 1, CONSTRAINT, MJ)          /* constraint force */                \
  X(fsReal, qacc, nv, 1, CONSTRAINT, MJ)                     /* acceleration */                    \
  X(double, efc_b, nefcmax, 1, CONSTRAINT, EFC)     /* J * qacc_smooth - aref (solver's real) */   \
  X(fsReal, efc_force, nefcmax, 1, CONSTRAINT, EFC) /* constraint force of each row */             \
  X(int, efc_state, nefcmax, 1, CONSTRAINT, EFC)    /* mjtConstraintState (see the solver) */      \
  X(int, nisland, one, 1, CONSTRAINT, OWN)          /* islands solved (MuJoCo's d->nisland) */     \
  X(int, solver_niter, one, FS_NISLAND, CONSTRAINT, OWN)   /* per island: Newton + noslip its. */  \
  X(int, solver_nnoslip, one, FS_NISLAND, CONSTRAINT, OWN) /* ... of which noslip */               \
  X(double, solver_improvement, one, FS_NISLAND, CONSTRAINT, OWN) /* Newton's last, scaled */      \
  X(double, solver_gradient, one, FS_NISLAND, CONSTRAINT, OWN)    /* ... and its gradient */       \
  X(int, solver_error, one, 1, CONSTRAINT, OWN)                   /* FS_SOLVER_* bits, 0: none */  \
  X(int, efc_tree, nefcmax, 1, CONSTRAINT, SCRATCH)     /* the row's tree (its island) */          \
  X(int, efc_JT_rownnz, nv, 1, CONSTRAINT, SCRATCH)     /* J's transpose: rows moving the dof */   \
  X(int, efc_JT_rowadr, nv, 1, CONSTRAINT, SCRATCH)     /* ... their first entry */                \
  X(int, efc_JT_row, nefcJ, 1, CONSTRAINT, SCRATCH)     /* ... each row, in row order */           \
  X(int, efc_JT_adr, nefcJ, 1, CONSTRAINT, SCRATCH)     /* ... its entry's index in efc_J */       \
  X(int, tree_island, ntree, 1, CONSTRAINT, SCRATCH)    /* the tree's island, -1: no rows */       \
  X(int, island_dof, nidof, 1, CONSTRAINT, SCRATCH)     /* an island's dofs (map_idof2dof) */      \
  X(int, island_tree, nitree, 1, CONSTRAINT, SCRATCH)   /* ... and trees (map_itree2tree) */       \
  X(int, sol_state, nefcmax, 1, CONSTRAINT, SCRATCH)    /* Newton's row states */                  \
  X(int, sol_oldstate, nefcmax, 1, CONSTRAINT, SCRATCH) /* ... before the last step */             \
  X(double, sol_force, nefcmax, 1, CONSTRAINT, SCRATCH) /* efc_force in the solver's real */       \
  X(double, sol_Jaref, nefcmax, 1, CONSTRAINT, SCRATCH) /* J * qacc - aref */                      \
  X(double, sol_Jv, nefcmax, 1, CONSTRAINT, SCRATCH)    /* J * search */                           \
  X(double, sol_quad, nefcmax, 3, CONSTRAINT, SCRATCH)  /* each row's cost along the search */     \
  X(double, sol_D, nefcmax, 1, CONSTRAINT, SCRATCH)     /* the Hessian's row weights */            \
  X(double, sol_qacc, nv, 1, CONSTRAINT, SCRATCH)       /* qacc in the solver's real */            \
  X(double, sol_qfrc, nv, 1, CONSTRAINT, SCRATCH)       /* qfrc_constraint ... */                  \
  X(double, sol_vec, nv, 1, CONSTRAINT, SCRATCH)        /* a vector read in the solver's real */   \
  X(double, sol_Ma, nv, 1, CONSTRAINT, SCRATCH)         /* M * qacc */                             \
  X(double, sol_Mv, nv, 1, CONSTRAINT, SCRATCH)         /* M * search */                           \
  X(double, sol_grad, nv, 1, CONSTRAINT, SCRATCH)       /* gradient of the cost */                 \
  X(double, sol_Mgrad, nv, 1, CONSTRAINT, SCRATCH)      /* inv(H) grad (inv(M) grad at first) */   \
  X(double, sol_search, nv, 1, CONSTRAINT, SCRATCH)     /* search direction */                     \
  X(double, sol_dense, nv, 1, CONSTRAINT, SCRATCH)      /* Cholesky scratch (dense row, diag) */   \
  X(double, sol_H, nH, 1, CONSTRAINT, SCRATCH)          /* Hessian M + J'DJ (H_* layout) */        \
  X(double, sol_L, nL, 1, CONSTRAINT, SCRATCH)          /* its factor (L'L; nefcD: LL') */         \
  X(double, sol_Lcone, nLcone, 1, CONSTRAINT, SCRATCH)  /* ... with the cones' Hessians added */   \
  X(double, sol_coneH, ncone, 36, CONSTRAINT, SCRATCH)  /* a contact's cone Hessian (dim, dim) */  \
  X(double, sol_coneJ, nconeJ, 1, CONSTRAINT, SCRATCH)  /* L' J of a cone's rows (dim, columns) */ \
  X(double, sol_gradold, ncg, 1, CONSTRAINT, SCRATCH) /* CG: the last gradient, then its change */ \
  X(double, sol_Mgradold, ncg, 1, CONSTRAINT, SCRATCH)  /* ... M \ gradient */                     \
  X(double, noslip_Y, nefcJ, 1, CONSTRAINT, SCRATCH)    /* rows of J * M^-1/2 (efc_J's layout) */  \
  X(double, noslip_u, nv, 1, CONSTRAINT, SCRATCH)       /* Y' * force */                           \
  X(double, noslip_sqrtinv, nv, 1, CONSTRAINT, SCRATCH) /* 1 / sqrt(D) of M's L'DL factor */       \
  X(double, noslip_A, nefcmax, 2, CONSTRAINT, SCRATCH)  /* (AR - R) diagonal, next off-diag. */    \
  X(fsReal, qH, nC, 1, EULER, MJ)                       /* factor of M + h*diag(damping) */        \
  X(fsReal, qHDiagInv, nv, 1, EULER, MJ)                /* its 1/diag(D) */                        \
  X(fsReal, euler_qacc, nv, 1, EULER, SCRATCH)          /* acceleration Euler integrates */        \
  X(fsReal, rk_qpos, nrkq, 4, EULER, SCRATCH)           /* RK4: each stage's qpos (X[i]) */        \
  X(fsReal, rk_qvel, nrk, 4, EULER, SCRATCH)            /* ... its qvel */                         \
  X(fsReal, rk_qacc, nrk, 4, EULER, SCRATCH)            /* ... its qacc (F[i]) */                  \
  X(fsReal, rk_dx, nrk, 2, EULER, SCRATCH)              /* the step: velocity, acceleration */     \
  X(double, rk_time, nrkt, 1, EULER, SCRATCH)           /* the step's start time */                \
  X(fsReal, sensordata, nsensordata, 1, SENSOR, MJ) /* the sensors' values (sensor_adr); last: */  \
  /*   the kernels' parameter layout as before */                                                  \
  X(fsReal, subtree_linvel, nsubtreevel, 3, SENSOR, MJ) /* mj_subtreeVel: linear velocity */       \
  X(fsReal, subtree_angmom, nsubtreevel, 3, SENSOR, MJ) /* ... angular momentum about its com */   \
  X(fsReal, subtree_bodyvel, nsubtreevel, 6, SENSOR, SCRATCH) /* each body's velocity (world) */   \
  X(fsReal, cacc, nrnepost, 6, SENSOR, MJ)     /* mj_rnePostConstraint: com-based acceleration */  \
  X(fsReal, cfrc_int, nrnepost, 6, SENSOR, MJ) /* ... interaction force with the parent */         \
  X(fsReal, cfrc_ext, nrnepost, 6, SENSOR, MJ) /* ... external force (contacts) */

/// Data field indices (FS_FIELD_<name>), in table order.
enum {
#define FS_X(type, name, size, cols, stage, kind) FS_FIELD_##name,
  FS_DATA_FIELDS(FS_X)
#undef FS_X
      FS_NDATA_FIELD
};

/// One world's data (a view: pointers into the batch), or a batch's base pointers.
typedef struct fsData {
#define FS_X(type, name, size, cols, stage, kind) type* name;
  FS_DATA_FIELDS(FS_X)
#undef FS_X
} fsData;

/// World w's field `name` in a batch whose base pointers are `base`, laid out as world_bytes
/// says. 0: a device batch (each field's worlds side by side, world w's rows at
/// w x size x cols). > 0: a host batch (common/model/worlds.h: each world's fields together in
/// a block of world_bytes bytes, a whole number of cache lines, so that no two worlds, and no
/// two threads stepping them, share a line).
#define FS_DATA_GLOBAL(m, base, world_bytes, w, type, name, size, cols)                            \
  ((world_bytes) ? (type*)((char*)(base)->name + (size_t)(w) * (world_bytes))                      \
                 : (base)->name + (size_t)(w) * (m)->size * (cols))

/// World w's view of the batch whose base pointers are `base` (world_bytes: its layout, as
/// FS_DATA_GLOBAL's).
FS_HD fsData fs_data_world(const fsModel* m, const fsData* base, size_t world_bytes, int w) {
  fsData d;
#define FS_X(type, name, size, cols, stage, kind)                                                  \
  d.name = FS_DATA_GLOBAL(m, base, world_bytes, w, type, name, size, cols);
  FS_DATA_FIELDS(FS_X)
#undef FS_X
  return d;
}

// Field descriptions for loops over the tables (allocation, copies, tests).
enum { FS_TYPE_fsReal = 0, FS_TYPE_double, FS_TYPE_int };

typedef struct fsFieldInfo {
  const char* name;
  int type;        // FS_TYPE_*
  size_t size_off; // offsetof(fsModel, size symbol)
  int cols;
  int stage;      // fsStage (data) or -1 (model)
  int kind;       // FS_KIND_* (data) or -1 (model)
  size_t ptr_off; // offsetof(fsModel or fsData, name)
} fsFieldInfo;

/// Element size of a field type.
static inline size_t fs_type_size(int type) {
  return type == FS_TYPE_fsReal   ? sizeof(fsReal)
         : type == FS_TYPE_double ? sizeof(double)
                                  : sizeof(int);
}

/// Rows of field f in model m (its size symbol's value).
static inline int fs_field_rows(const fsModel* m, const fsFieldInfo* f) {
  return *(const int*)((const char*)m + f->size_off);
}

/// Bytes of field f in model m (one world's, for a data field).
static inline size_t fs_field_bytes(const fsModel* m, const fsFieldInfo* f) {
  return (size_t)fs_field_rows(m, f) * (size_t)f->cols * fs_type_size(f->type);
}

/// Address of the pointer member of field f in a struct (fsModel or fsData).
static inline void** fs_field_ptr(void* s, const fsFieldInfo* f) {
  return (void**)((char*)s + f->ptr_off);
}

/// 1 if model m uses the rows and solvers beyond NeuroMechFly's (equality, friction loss,
/// limits, elliptic cones with contact rows, the CG solver with rows): what the kernels
/// do not compile yet (FSI_ROWS, common/engine/stage_constraint.h).
FS_HD int fs_model_general_rows(const fsModel* m) {
  return m->ndofrow > 0 || m->ncone > 0 || m->ncg > 0;
}

/// The views a caller writes between steps (fsView.writable: the next step reads them),
/// MuJoCo's inputs of mjData by name: one list for every backend. The cpu backend views
/// each of them; host and cuda the ones FS_DATA_FIELDS holds, all STATE fields
/// (xfrc_applied is the cpu backend's alone).
#define FS_WRITABLE_VIEWS(X)                                                                       \
  X(qpos) X(qvel) X(act) X(ctrl) X(qfrc_applied) X(xfrc_applied) X(mocap_pos) X(mocap_quat)

/// 1 if the view `name` is one a caller writes (FS_WRITABLE_VIEWS).
static inline int fs_view_writable(const char* name) {
#define FS_X(field)                                                                                \
  if (!strcmp(name, #field)) return 1;
  FS_WRITABLE_VIEWS(FS_X)
#undef FS_X
  return 0;
}

/// 1 if data field f is a view of the engine's backends (host, cuda): MuJoCo's own
/// (FS_KIND_MJ), and ncon.
static inline int fs_field_is_view(const fsFieldInfo* f) {
  return f->kind == FS_KIND_MJ || !strcmp(f->name, "ncon");
}

#endif
