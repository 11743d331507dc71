// cuSOLVER as the oracle of the solver's factorisation on the GPU: after the Newton
// solve of NeuroMechFly's contact worlds on the device (tree-level reverse Cholesky
// of the Hessian, then rank-1 updates and downdates as rows change state,
// common/engine/linalg.h), each world's Hessian at the final states, H = M + J' D J (dense,
// assembled here from the downloaded rows), is factored by cuSOLVER's batched
// Cholesky (cusolverDnDpotrfBatched) and H x = grad solved (potrsBatched); x must
// match the stepper's own inv(H) grad (sol_Mgrad) to the conditioning of H: relative
// error <= 1e-8 in the solver's float64 arithmetic (both builds iterate in double).
// GPU only (77 without one); the same check on the host is engine_solver_host_*'s
// comparison with MuJoCo.
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/device.h"
#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

enum { NWORLD = 16 };

#define CU_CHECK(x)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define SOLVER_CHECK(x)                                                                            \
  do {                                                                                             \
    cusolverStatus_t s_ = (x);                                                                     \
    if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                           \
      fprintf(stderr, "%s:%d: %s: cusolver status %d\n", __FILE__, __LINE__, #x, (int)s_);         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

// World d's Hessian at its final Newton states, dense (nv x nv, column-major = row-
// major: symmetric): M (reduced layout) + sum over quadratic rows of D J' J.
static void dense_hessian(const fsModel* m, const fsData* d, double* H) {
  int nv = m->nv;
  memset(H, 0, sizeof(double) * nv * nv);
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < m->M_rownnz[i]; k++) {
      int j = m->M_colind[m->M_rowadr[i] + k];
      H[i * nv + j] = H[j * nv + i] = d->M[m->M_rowadr[i] + k];
    }
  for (int r = 0; r < d->nefc[0]; r++) {
    if (d->sol_state[r] != FS_CNSTRSTATE_QUADRATIC) continue;
    const fsReal* J = d->efc_J + (size_t)r * m->njmax;
    const int* col = m->pair_dof + d->efc_J_coladr[r];
    for (int a = 0; a < d->efc_J_rownnz[r]; a++)
      for (int b = 0; b < d->efc_J_rownnz[r]; b++)
        H[col[a] * nv + col[b]] += (double)d->efc_D[r] * J[a] * J[b];
  }
}

int main(void) {
  fshRunner r = fsh_runner();
  char fly[1024];
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  mjModel* mj = fs_test_load_model(fly);
  mj->opt.noslip_iterations = 0; // sol_Mgrad is the Newton's last
  fsModel m;
  fsError err;
  CHECK(fs_model_build(mj, fly, &m, &err) == 0);
  const fshContactNoise noise = {0.3, 0.3, -0.02, 0.002, 10, 0, 0};
  mjData** ref = fsh_moving_contact_worlds(mj, NWORLD, 7000, &noise, 5.0);
  fsWorlds b;
  CHECK(fs_worlds_alloc(&m, NWORLD, &b, &err) == 0);
  int rc = r.open(r.self, &m, NWORLD, &err);
  if (rc == FS_TEST_SKIP) {
    printf("skipped: no CUDA device\n");
    fs_worlds_free(&b);
    fsh_free_worlds(ref, NWORLD);
    fs_model_free(&m);
    mj_deleteModel(mj);
    return FS_TEST_SKIP;
  }
  CHECK_MSG(rc == 0, "%s", err.msg);
  for (int w = 0; w < NWORLD; w++) CHECK(fs_worlds_from_mj(&m, &b, w, mj, ref[w], -1, &err) == 0);
  CHECK_MSG(r.run(r.self, &b, FS_STAGE_CONSTRAINT, 0, &err) == 0, "%s", err.msg);

  int nv = m.nv, n = 0, used[NWORLD];
  double *H = calloc((size_t)NWORLD * nv * nv, sizeof(double)),
         *g = calloc((size_t)NWORLD * nv, sizeof(double));
  for (int w = 0; w < NWORLD; w++) { // worlds whose Newton factored H (iterations > 0)
    fsData d = fs_worlds_view(&m, &b, w);
    if (d.nisland[0] != 1 || d.solver_niter[0] == 0) continue;
    dense_hessian(&m, &d, H + (size_t)n * nv * nv);
    memcpy(g + (size_t)n * nv, d.sol_grad, sizeof(double) * nv);
    used[n++] = w;
  }
  CHECK(n > NWORLD / 2);
  cusolverDnHandle_t h;
  SOLVER_CHECK(cusolverDnCreate(&h));
  double *dH, *dg, **dHp, **dgp;
  int* dinfo;
  CU_CHECK(cudaMalloc((void**)&dH, sizeof(double) * n * nv * nv));
  CU_CHECK(cudaMalloc((void**)&dg, sizeof(double) * n * nv));
  CU_CHECK(cudaMalloc((void**)&dHp, sizeof(double*) * n));
  CU_CHECK(cudaMalloc((void**)&dgp, sizeof(double*) * n));
  CU_CHECK(cudaMalloc((void**)&dinfo, sizeof(int) * n));
  double** hp = malloc(sizeof(double*) * n * 2);
  for (int k = 0; k < n; k++) {
    hp[k] = dH + (size_t)k * nv * nv;
    hp[n + k] = dg + (size_t)k * nv;
  }
  CU_CHECK(cudaMemcpy(dH, H, sizeof(double) * n * nv * nv, cudaMemcpyHostToDevice));
  CU_CHECK(cudaMemcpy(dg, g, sizeof(double) * n * nv, cudaMemcpyHostToDevice));
  CU_CHECK(cudaMemcpy(dHp, hp, sizeof(double*) * n, cudaMemcpyHostToDevice));
  CU_CHECK(cudaMemcpy(dgp, hp + n, sizeof(double*) * n, cudaMemcpyHostToDevice));
  SOLVER_CHECK(cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, nv, dHp, nv, dinfo, n));
  int* info = malloc(sizeof(int) * n);
  CU_CHECK(cudaMemcpy(info, dinfo, sizeof(int) * n, cudaMemcpyDeviceToHost));
  for (int k = 0; k < n; k++) CHECK_MSG(info[k] == 0, "world %d: potrf info %d", used[k], info[k]);
  // potrsBatched's info is a device int, like potrfBatched's (one for the batch)
  int info1 = -1;
  SOLVER_CHECK(
      cusolverDnDpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, nv, 1, dHp, nv, dgp, nv, dinfo, n));
  CU_CHECK(cudaMemcpy(&info1, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_MSG(info1 == 0, "potrs info %d", info1);
  CU_CHECK(cudaMemcpy(g, dg, sizeof(double) * n * nv, cudaMemcpyDeviceToHost));
  double worst = 0;
  int worst_w = -1;
  for (int k = 0; k < n; k++) {
    fsData d = fs_worlds_view(&m, &b, used[k]);
    double num = 0, den = 0;
    for (int i = 0; i < nv; i++) {
      num = fmax(num, fabs(d.sol_Mgrad[i] - g[(size_t)k * nv + i]));
      den = fmax(den, fabs(g[(size_t)k * nv + i]));
    }
    double e = num / fmax(den, 1e-300);
    if (e > worst) {
      worst = e;
      worst_w = used[k];
    }
  }
  printf("%s: %d worlds, inv(H) grad from the stepper's factor vs cuSOLVER's batched Cholesky: "
         "worst relative error %.2e (world %d)\n",
         r.name, n, worst, worst_w);
  CHECK_MSG(worst <= 1e-8, "worst %.2e > 1e-8", worst);
  cusolverDnDestroy(h);
  cudaFree(dH), cudaFree(dg), cudaFree(dHp), cudaFree(dgp), cudaFree(dinfo);
  free(H), free(g), free(hp), free(info);
  r.close(r.self);
  fs_worlds_free(&b);
  fsh_free_worlds(ref, NWORLD);
  fs_model_free(&m);
  mj_deleteModel(mj);
  return fs_test_finish("cuda cusolver oracle");
}
