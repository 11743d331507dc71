// MuJoCo's own spread (common/parity/spread.h).
#include "common/parity/spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"

static void round_float(mjtNum* x, long n) {
  for (long k = 0; k < n; k++) x[k] = (float)x[k];
}

void fsh_round_state(const mjModel* mj, mjData* d) {
  round_float(d->qpos, mj->nq);
  round_float(d->qvel, mj->nv);
  round_float(d->ctrl, mj->nu);
  round_float(d->qacc_warmstart, mj->nv);
}

static double random_sign(void) {
  return fs_random_uniform() < 0.5 ? -1 : 1;
}

mjData** fsh_mj_steps(const mjModel* mj, mjData* const* ref, int nworld, int nstep, int how) {
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    mjData* x = d[w] = fsh_copy_data(mj, ref[w]);
    if (how == FSH_MJ_ULP) {
      for (int i = 0; i < mj->nq; i++) x->qpos[i] *= 1 + random_sign() * 0x1p-52;
      for (int i = 0; i < mj->nv; i++) x->qvel[i] *= 1 + random_sign() * 0x1p-52;
    }
    if (how == FSH_MJ_F32_EPS) { // rounded, then moved by 2^-23 relative up or down
      fsh_round_state(mj, x);
      for (int i = 0; i < mj->nq; i++)
        x->qpos[i] = (float)(x->qpos[i] * (1 + random_sign() * 0x1p-23));
      for (int i = 0; i < mj->nv; i++)
        x->qvel[i] = (float)(x->qvel[i] * (1 + random_sign() * 0x1p-23));
    }
    int rounded = how == FSH_MJ_F32 || how == FSH_MJ_F32_EPS;
    if (nstep == 0) {
      if (rounded) fsh_round_state(mj, x);
      mj_forward(mj, x);
    }
    for (int s = 0; s < nstep; s++) {
      if (rounded) fsh_round_state(mj, x);
      mj_step(mj, x);
    }
  }
  return d;
}

void fsh_step_floors(const mjModel* mj, mjData* const* ref, int nworld, int nstep, fshFloors* f) {
  memset(f, 0, sizeof *f);
#ifdef FS_REAL_FLOAT
  f->run[0] = fsh_mj_steps(mj, ref, nworld, nstep, FSH_MJ_F32);
  for (int j = 1; j < 4; j++) f->run[j] = fsh_mj_steps(mj, ref, nworld, nstep, FSH_MJ_F32_EPS);
#else
  mjModel* alt = mj_copyModel(NULL, mj);
  alt->opt.jacobian = mj_isSparse(mj) ? mjJAC_DENSE : mjJAC_SPARSE;
  f->run[0] = fsh_mj_steps(alt, ref, nworld, nstep, FSH_MJ_AS_IS);
  mj_deleteModel(alt);
  for (int j = 1; j < 4; j++) f->run[j] = fsh_mj_steps(mj, ref, nworld, nstep, FSH_MJ_ULP);
  if (nstep == 1) {
    f->run[4] = fsh_noslip_step_floor(mj, ref, nworld, FSH_SUM_SEQ);
    f->run[5] = fsh_noslip_step_floor(mj, ref, nworld, FSH_SUM_REV);
  }
#endif
}

void fsh_solver_floors(const mjModel* mj, mjData* const* ref, int nworld, fshFloors* f) {
  memset(f, 0, sizeof *f);
#ifndef FS_REAL_FLOAT
  mjModel* alt = mj_copyModel(NULL, mj);
  alt->opt.jacobian = mj_isSparse(mj) ? mjJAC_DENSE : mjJAC_SPARSE;
  f->run[0] = fsh_mj_steps(alt, ref, nworld, 0, FSH_MJ_AS_IS);
  mj_deleteModel(alt);
  f->run[1] = fsh_noslip_floor(mj, ref, nworld, FSH_SUM_SEQ, NULL);
  f->run[2] = fsh_noslip_floor(mj, ref, nworld, FSH_SUM_REV, NULL);
#else
  (void)mj, (void)ref, (void)nworld;
#endif
}

void fsh_floors_free(fshFloors* f, int nworld) {
  for (int k = 0; k < FSH_NFLOOR; k++)
    if (f->run[k]) fsh_free_worlds(f->run[k], nworld);
  memset(f, 0, sizeof *f);
}

// MuJoCo's values of a compared field in world d (n of them).
static const mjtNum* mj_values(const mjModel* mj, const mjData* d, const char* name, int* n) {
  *n = !strcmp(name, "qpos") ? (int)mj->nq : (int)mj->nv;
  if (!strcmp(name, "sensordata")) *n = (int)mj->nsensordata;
  if (!strcmp(name, "subtree_linvel") || !strcmp(name, "subtree_angmom")) *n = 3 * (int)mj->nbody;
  if (!strcmp(name, "cacc") || !strcmp(name, "cfrc_int") || !strcmp(name, "cfrc_ext"))
    *n = 6 * (int)mj->nbody;
  if (!strcmp(name, "efc_force") || !strcmp(name, "efc_b")) {
    *n = d->nefc;
    return !strcmp(name, "efc_force") ? d->efc_force : d->efc_b;
  }
  return fs_mj_field(d, name);
}

double fsh_mj_spread(const mjModel* mj, const char* name, mjData* const* a, mjData* const* b,
                     int nworld, const char* skip, const fshTol* tol) {
  double worst = 0;
  for (int w = 0; w < nworld; w++) {
    int na, nb;
    const mjtNum *x = mj_values(mj, a[w], name, &na), *y = mj_values(mj, b[w], name, &nb);
    if ((skip && skip[w]) || na != nb || !x || !y) continue;
    double scale = 0;
    for (int k = 0; k < nb; k++) scale = fmax(scale, fabs(y[k]));
    for (int k = 0; k < nb; k++) {
      double den = fmax(fabs(y[k]), tol->floor * scale), e = fabs(x[k] - y[k]);
      if (e > 0) worst = fmax(worst, den > 0 ? e / den : INFINITY); // NaN: not a spread
    }
  }
  return worst;
}

double fsh_floor_bound(const mjModel* mj, const char* name, const fshFloors* f, mjData* const* ref,
                       int nworld, const char* skip, const fshTol* tol, double* spread_out) {
  double spread = 0;
  for (int k = 0; k < FSH_NFLOOR; k++)
    if (f->run[k])
      spread = fmax(spread, fsh_mj_spread(mj, name, f->run[k], ref, nworld, skip, tol));
  if (spread_out) *spread_out = spread;
  return fmax(tol->rel, FSH_FLOOR_RATIO * spread);
}

//---------------------------------- noslip's decisions

// Row i of MuJoCo's AR dotted with f, in `order`: FSH_SUM_MJ mju_dotSparse's (mju_dot's
// where AR is dense: four running sums, (s0 + s2) + (s1 + s3), then the rest),
// FSH_SUM_SEQ one by one, FSH_SUM_REV one by one from the last.
static mjtNum ar_dot(const mjModel* mj, const mjData* d, int i, const mjtNum* f, int order) {
  int sparse = mj_isSparse(mj), n = sparse ? d->efc_AR_rownnz[i] : d->nefc;
  const mjtNum* v =
      d->efc_AR + (sparse ? (size_t)d->efc_AR_rowadr[i] : (size_t)i * (size_t)d->nefc);
  const int* ind = sparse ? d->efc_AR_colind + d->efc_AR_rowadr[i] : NULL;
#define AT(k) (v[k] * f[ind ? ind[k] : (k)])
  mjtNum s = 0;
  if (order == FSH_SUM_SEQ) {
    for (int k = 0; k < n; k++) s += AT(k);
  } else if (order == FSH_SUM_REV) {
    for (int k = n - 1; k >= 0; k--) s += AT(k);
  } else {
    int nb = n / 4 * 4;
    mjtNum s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int k = 0; k < nb; k += 4) {
      s0 += AT(k);
      s1 += AT(k + 1);
      s2 += AT(k + 2);
      s3 += AT(k + 3);
    }
    s = (s0 + s2) + (s1 + s3);
    for (int k = nb; k < n; k++) s += AT(k);
  }
#undef AT
  return s;
}

// MuJoCo's AR(i, j), 0 where it holds none.
static mjtNum ar_at(const mjModel* mj, const mjData* d, int i, int j) {
  if (!mj_isSparse(mj)) return d->efc_AR[(size_t)i * d->nefc + j];
  for (int k = 0; k < d->efc_AR_rownnz[i]; k++)
    if (d->efc_AR_colind[d->efc_AR_rowadr[i] + k] == j) return d->efc_AR[d->efc_AR_rowadr[i] + k];
  return 0;
}

// mj_solNoSlip on the rows list[0 .. n) (an island's, or all), f in and out: dry friction
// rows, then pyramidal contacts' pairs of opposing edges, as MuJoCo's, the residuals
// summed in `order`. Returns -1 for a row noslip treats otherwise (elliptic cones).
static int noslip_rows(const mjModel* mj, const mjData* d, const int* list, int n, mjtNum* f,
                       int order) {
  const mjtNum* R = d->efc_R;
  mjtNum scale = 1 / (mj->stat.meaninertia * (mj->nv > 1 ? mj->nv : 1));
  for (int iter = 0; iter < mj->opt.noslip_iterations; iter++) {
    mjtNum improvement = 0;
    if (iter == 0)
      for (int c = 0; c < n; c++) improvement += 0.5 * f[list[c]] * f[list[c]] * R[list[c]];
    for (int c = 0; c < n; c++) { // dry friction
      int i = list[c];
      if (d->efc_type[i] != mjCNSTR_FRICTION_DOF && d->efc_type[i] != mjCNSTR_FRICTION_TENDON)
        continue;
      mjtNum res = d->efc_b[i] + ar_dot(mj, d, i, f, order) - R[i] * f[i], old = f[i];
      mjtNum ainv = 1 / fmax(mjMINVAL, ar_at(mj, d, i, i) - R[i]), fl = d->efc_frictionloss[i];
      f[i] = fmin(fmax(f[i] - res * ainv, -fl), fl);
      mjtNum delta = f[i] - old;
      improvement -= 0.5 * delta * delta / ainv + delta * res;
    }
    for (int c = 0; c < n; c++) { // pyramidal contacts: pairs of opposing edges
      int i = list[c];
      if (d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) return -1;
      if (d->efc_type[i] != mjCNSTR_CONTACT_PYRAMIDAL) continue;
      int dim = d->contact[d->efc_id[i]].dim;
      for (int j = i; j < i + 2 * (dim - 1); j += 2) {
        mjtNum res[2], old[2] = {f[j], f[j + 1]}, A[4], bc[2];
        for (int k = 0; k < 2; k++)
          res[k] = d->efc_b[j + k] + ar_dot(mj, d, j + k, f, order) - R[j + k] * f[j + k];
        for (int r = 0; r < 2; r++)
          for (int s = 0; s < 2; s++) A[2 * r + s] = ar_at(mj, d, j + r, j + s);
        for (int r = 0; r < 2; r++) A[3 * r] = fmax(1e-10, A[3 * r] - R[j + r]);
        for (int k = 0; k < 2; k++) bc[k] = res[k] - (A[2 * k] * old[0] + A[2 * k + 1] * old[1]);
        mjtNum mid = 0.5 * (f[j] + f[j + 1]);
        mjtNum K1 = A[0] + A[3] - A[1] - A[2], K0 = mid * (A[0] - A[3]) + bc[0] - bc[1];
        if (K1 < mjMINVAL) {
          f[j] = f[j + 1] = mid;
        } else {
          mjtNum y = -K0 / K1;
          f[j] = y < -mid ? 0 : (y > mid ? 2 * mid : mid + y);
          f[j + 1] = y < -mid ? 2 * mid : (y > mid ? 0 : mid - y);
        }
        mjtNum dl[2] = {f[j] - old[0], f[j + 1] - old[1]};
        mjtNum quad = dl[0] * (A[0] * dl[0] + A[1] * dl[1]);
        quad += dl[1] * (A[2] * dl[0] + A[3] * dl[1]);
        mjtNum change = 0.5 * quad + (dl[0] * res[0] + dl[1] * res[1]);
        if (change > 1e-10) {
          f[j] = old[0];
          f[j + 1] = old[1];
          change = 0;
        }
        improvement -= change;
      }
      c += 2 * (dim - 1) - 1;
    }
    if (improvement * scale < mj->opt.noslip_tolerance) break;
  }
  return 0;
}

int fsh_noslip_replay(const mjModel* mj, mjData* d, const mjtNum* newton, int order) {
  int nefc = d->nefc;
  if (mj->opt.noslip_iterations <= 0 || !d->efc_AR || nefc < 0) return -1;
  mjtNum* f = d->efc_force;
  for (int i = 0; i < nefc; i++) f[i] = newton[i];
  int* all = malloc(sizeof(int) * ((size_t)nefc + 1));
  for (int i = 0; i < nefc; i++) all[i] = i;
  int rc = 0;
  if (d->nisland > 0) {
    for (int k = 0; k < d->nisland && !rc; k++)
      rc = noslip_rows(mj, d, d->map_iefc2efc + d->island_iefcadr[k], d->island_nefc[k], f, order);
  } else {
    rc = noslip_rows(mj, d, all, nefc, f, order);
  }
  free(all);
  if (rc) return -1;
  mj_mulJacTVec(mj, d, d->qfrc_constraint, f); // the dual finish
  mj_solveM(mj, d, d->qacc, d->qfrc_constraint, 1);
  for (int i = 0; i < mj->nv; i++) d->qacc[i] += d->qacc_smooth[i];
  return 0;
}

mjData** fsh_noslip_floor(const mjModel* mj, mjData* const* ref, int nworld, int order,
                          double* self_err) {
  if (mj->opt.noslip_iterations <= 0) return NULL;
  mjModel* m0 = mj_copyModel(NULL, mj);
  m0->opt.noslip_iterations = 0;
  mjData** out = calloc((size_t)nworld, sizeof *out);
  if (self_err) *self_err = 0;
  int ok = 1;
  for (int w = 0; w < nworld && ok; w++) {
    mjData* newton = fsh_copy_data(mj, ref[w]);
    mj_forward(m0, newton);
    mjData* x = out[w] = fsh_copy_data(mj, ref[w]);
    if (newton->nefc != x->nefc) {
      ok = 0; // a world MuJoCo lets go bad: not a floor
    } else if (fsh_noslip_replay(mj, x, newton->efc_force, order)) {
      ok = 0;
    } else if (self_err && order == FSH_SUM_MJ) {
      for (int i = 0; i < x->nefc; i++)
        if (x->efc_force[i] != ref[w]->efc_force[i])
          *self_err = fmax(*self_err, fabs(x->efc_force[i] - ref[w]->efc_force[i]) /
                                          fmax(fabs(ref[w]->efc_force[i]), 1e-300));
    }
    mj_deleteData(newton);
  }
  mj_deleteModel(m0);
  if (!ok) {
    for (int w = 0; w < nworld; w++)
      if (out[w]) mj_deleteData(out[w]);
    free(out);
    return NULL;
  }
  return out;
}

mjData** fsh_noslip_step_floor(const mjModel* mj, mjData* const* start, int nworld, int order) {
  if (mj->opt.noslip_iterations <= 0 || mj->opt.integrator != mjINT_EULER) return NULL;
  mjModel* m0 = mj_copyModel(NULL, mj);
  m0->opt.noslip_iterations = 0;
  mjData** out = calloc((size_t)nworld, sizeof *out);
  for (int w = 0; w < nworld; w++) {
    mjData* x = out[w] = fsh_copy_data(mj, start[w]);
    mj_checkPos(mj, x); // mj_step's order: the checks, mj_forward, the check, Euler
    mj_checkVel(mj, x);
    mjData* newton = fsh_copy_data(mj, x);
    mj_forward(m0, newton);
    mj_forward(mj, x);
    mj_checkAcc(mj, x);
    if (newton->nefc == x->nefc) fsh_noslip_replay(mj, x, newton->efc_force, order);
    mj_deleteData(newton);
    mj_Euler(mj, x);
  }
  mj_deleteModel(m0);
  return out;
}
