// Linear algebra of the constraint solver over tree-shaped sparse layouts (row i
// holds some of dof i's ancestors in increasing order, then the diagonal), and
// MuJoCo's orders of summation. Two layouts: M's (MuJoCo's reduced layout of M and
// qLD, in which a "simple" dof's row holds only its diagonal) and the Hessian's (every
// ancestor: a contact row moves a free body's 6 dofs together). One world per call
// (see common/exec/real.h for the lanes).
//
// Tree passes go by depth: rows of one depth have no ancestor relation, so lanes
// take them together; a row's value that MuJoCo accumulates in some order is
// accumulated by one lane in that order (the descendants through the layout's
// transpose). So the host float64 build gives MuJoCo's bits and the device runs the
// legs of a tree side by side (NeuroMechFly: 11 leg levels of 6 rows, then the 6
// levels of the free joint). On one lane (the host build) M x and the triangular
// solves' first passes run MuJoCo's own loops instead, each row's terms scattered into
// its ancestors: the same terms in the same order, without a lookup of the descendant's
// row per entry. Vectors and the Hessian are in the solver's real (fsSol,
// double); M, its factor and the constraint Jacobian are read in fsReal.
//
// Functions restricted to an island's dofs [d0, d1) (one tree's dofs are
// consecutive) leave the others alone.
#ifndef FLYSIM_COMMON_ENGINE_LINALG_H
#define FLYSIM_COMMON_ENGINE_LINALG_H

#include "common/engine/fields.h"

#if defined(FS_ONE_LANE) && defined(__AVX__) && !defined(__CUDACC__)
#include <immintrin.h>
#define FSI_DOT_AVX 1 // the host C build with AVX (FLYSIM_AVX): mju_dot's own vector sums
#endif

/// A tree-shaped layout: rows (nnz, address, columns), each entry's row, each dof's
/// descendants (rows holding it), and rows and entries by depth.
typedef struct fsLayout {
  const int *rownnz, *rowadr, *colind, *rowind;
  const int *descnum, *descadr, *desc;
  const int *levdofadr, *levdof, *leventryadr, *leventry;
  int nlevel;
} fsLayout;

/// M's layout (MuJoCo's M_rownnz, M_rowadr, M_colind).
FS_HD fsLayout fsi_layout_M(const fsModel* m) {
  fsLayout l = {m->M_rownnz,    m->M_rowadr,        m->M_colind,     m->M_rowind,
                m->dof_descnum, m->dof_descadr,     m->dof_desc,     m->dlevel_dofadr,
                m->dlevel_dof,  m->dlevel_entryadr, m->dlevel_entry, m->ndlevel};
  return l;
}

/// The Hessian's layout (H_*): every ancestor of every dof.
FS_HD fsLayout fsi_layout_H(const fsModel* m) {
  fsLayout l = {m->H_rownnz,   m->H_rowadr,        m->H_colind,     m->H_rowind,
                m->H_descnum,  m->H_descadr,       m->H_desc,       m->hlevel_dofadr,
                m->hlevel_dof, m->hlevel_entryadr, m->hlevel_entry, m->nhlevel};
  return l;
}

/// Tree passes: the block that follows runs for each dof `a` of [d0, d1) of layout L, a
/// dof's descendants before it (FSI_FOR_DOF_UP) or its ancestors before it
/// (FSI_FOR_DOF_DOWN). Many lanes: by depth, the rows of a level on the lanes, a sync
/// after each level, the dofs outside [d0, d1) skipped. One lane: dofs in decreasing
/// (up) or increasing (down) order, a dof's ancestors having lower indices (MuJoCo's
/// dof_parentid[j] < j): only the range's dofs visited, the same work per dof.
#ifdef FS_ONE_LANE
#define FSI_FOR_DOF_UP(L, a, d0, d1)   for (int a = (d1)-1; a >= (d0); a--)
#define FSI_FOR_DOF_DOWN(L, a, d0, d1) for (int a = (d0); a < (d1); a++)
#else
#define FSI_FOR_DOF_UP(L, a, d0, d1)                                                               \
  for (int lev_ = (L)->nlevel - 1; lev_ >= 0; FS_SYNC(), lev_--)                                   \
    FS_FOR_LANE(t_, (L)->levdofadr[lev_ + 1] - (L)->levdofadr[lev_])                               \
  for (int a = (L)->levdof[(L)->levdofadr[lev_] + t_], one_ = a >= (d0) && a < (d1); one_; one_ = 0)
#define FSI_FOR_DOF_DOWN(L, a, d0, d1)                                                             \
  for (int lev_ = 0; lev_ < (L)->nlevel; FS_SYNC(), lev_++)                                        \
    FS_FOR_LANE(t_, (L)->levdofadr[lev_ + 1] - (L)->levdofadr[lev_])                               \
  for (int a = (L)->levdof[(L)->levdofadr[lev_] + t_], one_ = a >= (d0) && a < (d1); one_; one_ = 0)
#endif

/// mju_dot's order: four running sums over the leading multiple of 4 (each started by its
/// first product), (s0 + s2) + (s1 + s3), then the 1-3 left (summed, then added). One lane;
/// with AVX the four sums are one vector register, as in MuJoCo's AVX build (the same
/// sums: 4 products an instruction).
FS_HD fsSol fsi_dot_mj(const fsSol* x, const fsSol* y, int n) {
  fsSol res = 0;
  int i = 0;
  if (n >= 4) {
#ifdef FSI_DOT_AVX
    __m256d s = _mm256_mul_pd(_mm256_loadu_pd(x), _mm256_loadu_pd(y));
    for (i = 4; i <= n - 4; i += 4)
      s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i)));
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    res = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
#else
    fsSol s0 = x[0] * y[0], s1 = x[1] * y[1], s2 = x[2] * y[2], s3 = x[3] * y[3];
    for (i = 4; i <= n - 4; i += 4) {
      s0 += x[i] * y[i];
      s1 += x[i + 1] * y[i + 1];
      s2 += x[i + 2] * y[i + 2];
      s3 += x[i + 3] * y[i + 3];
    }
    res = (s0 + s2) + (s1 + s3);
#endif
  }
  if (n - i == 3) res += x[i] * y[i] + x[i + 1] * y[i + 1] + x[i + 2] * y[i + 2];
  if (n - i == 2) res += x[i] * y[i] + x[i + 1] * y[i + 1];
  if (n - i == 1) res += x[i] * y[i];
  return res;
}

/// fsi_dot_mj over the entries ind[0..n) of x and y (mju_dot of gathered vectors: the
/// same sums, in scalars). One lane.
FS_HD fsSol fsi_dot_mj_list(const fsSol* x, const fsSol* y, const int* ind, int n) {
  fsSol res = 0;
  int i = 0;
  if (n >= 4) {
    fsSol s0 = x[ind[0]] * y[ind[0]], s1 = x[ind[1]] * y[ind[1]];
    fsSol s2 = x[ind[2]] * y[ind[2]], s3 = x[ind[3]] * y[ind[3]];
    for (i = 4; i <= n - 4; i += 4) {
      s0 += x[ind[i]] * y[ind[i]];
      s1 += x[ind[i + 1]] * y[ind[i + 1]];
      s2 += x[ind[i + 2]] * y[ind[i + 2]];
      s3 += x[ind[i + 3]] * y[ind[i + 3]];
    }
    res = (s0 + s2) + (s1 + s3);
  }
  fsSol tail = 0; // the 1-3 left, summed, then added
  for (int k = i; k < n; k++) tail = k == i ? x[ind[k]] * y[ind[k]] : tail + x[ind[k]] * y[ind[k]];
  if (i < n) res += tail;
  return res;
}

/// x . y over n elements, every lane gets it: MuJoCo's order on one lane, the lanes'
/// parts and a butterfly on many.
FS_HD fsSol fsi_lane_dot(const fsSol* x, const fsSol* y, int n) {
#ifdef FS_ONE_LANE
  return fsi_dot_mj(x, y, n);
#else
  fsSol part = 0;
  FS_FOR_LANE(i, n) part += x[i] * y[i];
  return fs_lane_sum(part);
#endif
}

/// mju_dotSparse's order: v[k] * x[ind[k]] in four running sums over the leading
/// multiple of 4, (s0 + s2) + (s1 + s3), then the rest one by one. One lane.
FS_HD fsSol fsi_dot_sparse(const fsSol* v, const fsSol* x, const int* ind, int n) {
  int nb = n / 4 * 4;
  fsSol s0 = 0, s1 = 0, s2 = 0, s3 = 0; // scalars: no local memory
  for (int k = 0; k < nb; k += 4) {
    s0 += v[k] * x[ind[k]];
    s1 += v[k + 1] * x[ind[k + 1]];
    s2 += v[k + 2] * x[ind[k + 2]];
    s3 += v[k + 3] * x[ind[k + 3]];
  }
  fsSol res = (s0 + s2) + (s1 + s3);
  for (int k = nb; k < n; k++) res += v[k] * x[ind[k]];
  return res;
}

/// res = M x over dofs [d0, d1), M symmetric in layout L (mju_mulSymVecSparse):
/// per dof j, its diagonal times x_j, then its row's ancestors from the nearest up,
/// then the entries (i, j) of its descendants i in increasing order. Lanes over dofs.
FS_HD void fsi_mul_sym(const fsLayout* L, const fsReal* M, const fsSol* x, fsSol* res, int d0,
                       int d1) {
#ifdef FS_ONE_LANE // mju_mulSymVecSparse's own loop: a row's own sum, then into its ancestors
  for (int j = d0; j < d1; j++) { // (a dof's descendants come after it, in increasing order)
    int adr = L->rowadr[j], pos = L->rownnz[j] - 1;
    fsSol s = M[adr + pos] * x[j];
    for (int k = pos - 1; k >= 0; k--) s += M[adr + k] * x[L->colind[adr + k]];
    res[j] = s;
    for (int k = 0; k < pos; k++) res[L->colind[adr + k]] += M[adr + k] * x[j];
  }
#else // each dof gathers its descendants' terms, in the same order
  FS_FOR_LANE(t, d1 - d0) {
    int j = d0 + t, adr = L->rowadr[j], pos = L->rownnz[j] - 1;
    fsSol s = M[adr + pos] * x[j];
    for (int k = pos - 1; k >= 0; k--) s += M[adr + k] * x[L->colind[adr + k]];
    const int* desc = L->desc + L->descadr[j];
    for (int q = 0; q < L->descnum[j]; q++) { // j sits at place pos of a descendant's row
      int i = desc[q];
      s += M[L->rowadr[i] + pos] * x[i];
    }
    res[j] = s;
  }
  FS_SYNC();
#endif
}

/// mat = its L'DL factor in place, in layout L (mj_factorI: L unit lower triangular
/// in the off-diagonal entries, D on the diagonal; diaginv = 1/D) with MuJoCo's
/// operations in its order, level-parallel. MuJoCo goes up the rows c = nv-1 .. 0, each
/// adding to each ancestor r's row its (unscaled) leading entries times -L(c, r)/D_c,
/// then scaling itself; so an entry (r, k) gets, from its start M(r, k), the terms of
/// r's descendants c in decreasing order, each row c read before its scaling. Here rows
/// of one depth at once (deepest first: their descendants are final), a lane per row
/// adding its descendants' rows in that order (a row's ancestors are the leading entries
/// of its descendants' rows); the rows are scaled at the end (a lane per row). The host
/// float64 build thus gives mj_factorI's bits.
FS_HD void fsi_factor_ld_levels(const fsLayout* L, fsReal* mat, fsReal* diaginv) {
  int nv = L->levdofadr[L->nlevel];
  FSI_FOR_DOF_UP(L, r, 0, nv) {
    int pos = L->rownnz[r] - 1;
    fsReal* row = mat + L->rowadr[r];
    const int* desc = L->desc + L->descadr[r];
    for (int q = L->descnum[r] - 1; q >= 0; q--) {
      int c = desc[q];
      const fsReal* crow = mat + L->rowadr[c];
      fsReal s = -crow[pos] * diaginv[c];
      FS_IVDEP // rows r and c apart
      for (int k = 0; k <= pos; k++) row[k] += crow[k] * s;
    }
    diaginv[r] = 1 / row[pos];
  }
  FS_FOR_LANE(r, nv) {
    fsReal* row = mat + L->rowadr[r];
    for (int k = 0; k < L->rownnz[r] - 1; k++) row[k] *= diaginv[r];
  }
  FS_SYNC();
}

/// x = inv(L' D L) x over dofs [d0, d1) with MuJoCo's factor in layout L (qLD: L unit
/// lower triangular, D on the diagonal; diaginv = 1/D), in mj_solveLD's order: x <- inv(L') x
/// (each dof less its descendants' L x, deepest index first, zeros skipped), x <-
/// inv(D) x, x <- inv(L) x (each dof less its row's L x, summed from the root in
/// mju_dotSparse's order: four running sums, (s0 + s2) + (s1 + s3), then the rest). Rows of
/// one depth at once. Defined for x in the solver's real (fsi_solve_ld_levels) and in
/// the step's (fsi_solve_ld_real, the same function in the float64 builds).
#ifdef FS_ONE_LANE // mj_solveLD's own loop: each row, deepest index first, into its ancestors
#define FSI_SOLVE_LD_UP(T)                                                                         \
  for (int c = d1 - 1; c >= d0; c--) {                                                             \
    T xc = x[c];                                                                                   \
    if (xc == 0) continue;                                                                         \
    int adr = L->rowadr[c];                                                                        \
    for (int k = 0; k < L->rownnz[c] - 1; k++) x[L->colind[adr + k]] -= LD[adr + k] * xc;          \
  }
#else // each dof gathers its descendants' terms, in the same order
#define FSI_SOLVE_LD_UP(T)                                                                         \
  FSI_FOR_DOF_UP(L, a, d0, d1) {                                                                   \
    int pos = L->rownnz[a] - 1;                                                                    \
    const int* desc = L->desc + L->descadr[a];                                                     \
    T xa = x[a];                                                                                   \
    for (int q = L->descnum[a] - 1; q >= 0; q--) {                                                 \
      T xc = x[desc[q]];                                                                           \
      if (xc != 0) xa -= LD[L->rowadr[desc[q]] + pos] * xc;                                        \
    }                                                                                              \
    x[a] = xa;                                                                                     \
  }
#endif
#define FSI_DEFINE_SOLVE_LD_LEVELS(name, T)                                                        \
  FS_HD void name(const fsLayout* L, const fsReal* LD, const fsReal* diaginv, T* x, int d0,        \
                  int d1) {                                                                        \
    FSI_SOLVE_LD_UP(T)                                                                             \
    FS_FOR_LANE(t, d1 - d0) x[d0 + t] *= diaginv[d0 + t];                                          \
    FS_SYNC();                                                                                     \
    FSI_FOR_DOF_DOWN(L, k, d0, d1) {                                                               \
      int adr = L->rowadr[k], pos = L->rownnz[k] - 1;                                              \
      const fsReal* v = LD + adr;                                                                  \
      const int* ind = L->colind + adr;                                                            \
      int nb = pos / 4 * 4;                                                                        \
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                            \
      for (int a = 0; a < nb; a += 4) {                                                            \
        s0 += v[a] * x[ind[a]];                                                                    \
        s1 += v[a + 1] * x[ind[a + 1]];                                                            \
        s2 += v[a + 2] * x[ind[a + 2]];                                                            \
        s3 += v[a + 3] * x[ind[a + 3]];                                                            \
      }                                                                                            \
      T s = (s0 + s2) + (s1 + s3);                                                                 \
      for (int a = nb; a < pos; a++) s += v[a] * x[ind[a]];                                        \
      x[k] -= s;                                                                                   \
    }                                                                                              \
  }
FSI_DEFINE_SOLVE_LD_LEVELS(fsi_solve_ld_levels, fsSol)
#ifdef FS_REAL_FLOAT
FSI_DEFINE_SOLVE_LD_LEVELS(fsi_solve_ld_real, fsReal)
#else
#define fsi_solve_ld_real fsi_solve_ld_levels
#endif

/// F = the reverse Cholesky factor of H over dofs [d0, d1) (H = F' F, F lower
/// triangular in layout L: a tree's pattern has no fill-in), in
/// mju_cholFactorNumeric's order: row r's entries start from H's and lose, for each
/// descendant c of r in increasing order, F(c, r) F(c, .) (r's row is the leading part
/// of c's); then the diagonal's square root (clamped below at mjMINVAL) and the row
/// scaled by its inverse. Rows of one depth at once, a lane per row. Returns 1 (every
/// lane) if a diagonal was clamped: MuJoCo's rank-deficient Hessian.
FS_HD int fsi_chol_factor(const fsLayout* L, const fsSol* H, fsSol* F, int d0, int d1) {
  int bad = 0;
  FSI_FOR_DOF_UP(L, r, d0, d1) {
    int adr = L->rowadr[r], pos = L->rownnz[r] - 1;
    fsSol* row = F + adr;
    FS_IVDEP // F apart from H
    for (int k = 0; k <= pos; k++) row[k] = H[adr + k];
    const int* desc = L->desc + L->descadr[r];
    for (int q = 0; q < L->descnum[r]; q++) {
      const fsSol* crow = F + L->rowadr[desc[q]];
      fsSol f = crow[pos];
      FS_IVDEP // rows r and desc[q] apart
      for (int k = 0; k <= pos; k++) row[k] -= crow[k] * f;
    }
    fsSol dd = row[pos];
    if (dd < FS_SOL_MINVAL) {
      dd = FS_SOL_MINVAL;
      bad = 1;
    }
    fsSol Lrr = sqrt(dd);
    for (int k = 0; k < pos; k++) row[k] = row[k] * (1 / Lrr);
    row[pos] = Lrr;
  }
  return FS_ANY(bad);
}

/// res = inv(F' F) vec over dofs [d0, d1) (mju_cholSolveSparse's order): res <-
/// inv(F') res (each dof less its descendants' F res, deepest index first, zeros
/// skipped, then divided by its diagonal unless 0), res <- inv(F) res (each dof less
/// its row's F res in mju_dotSparse's order, then divided). res may be vec.
FS_HD void fsi_chol_solve(const fsLayout* L, const fsSol* F, const fsSol* vec, fsSol* res, int d0,
                          int d1) {
  if (res != vec) {
    FS_FOR_LANE(t, d1 - d0) res[d0 + t] = vec[d0 + t];
    FS_SYNC();
  }
#ifdef FS_ONE_LANE // mju_cholSolveSparse's own loop: each row final, then into its ancestors
  for (int c = d1 - 1; c >= d0; c--) {
    int adr = L->rowadr[c], pos = L->rownnz[c] - 1;
    fsSol xc = res[c];
    if (xc == 0) continue;
    res[c] = xc /= F[adr + pos];
    for (int k = 0; k < pos; k++) res[L->colind[adr + k]] -= F[adr + k] * xc;
  }
#else // each dof gathers its descendants' terms, in the same order
  FSI_FOR_DOF_UP(L, a, d0, d1) {
    int pos = L->rownnz[a] - 1;
    const int* desc = L->desc + L->descadr[a];
    fsSol x = res[a];
    for (int q = L->descnum[a] - 1; q >= 0; q--) {
      fsSol xc = res[desc[q]];
      if (xc != 0) x -= F[L->rowadr[desc[q]] + pos] * xc;
    }
    if (x != 0) x /= F[L->rowadr[a] + pos];
    res[a] = x;
  }
#endif
  FSI_FOR_DOF_DOWN(L, k, d0, d1) {
    int adr = L->rowadr[k], pos = L->rownnz[k] - 1;
    fsSol x = res[k];
    if (pos > 0) x -= fsi_dot_sparse(F + adr, res, L->colind + adr, pos);
    res[k] = x / F[adr + pos];
  }
}

/// The rotations of fsi_chol_update for x already in dense (rows d0..start, zero elsewhere).
FS_HD int fsi_chol_rotate(const fsLayout* L, fsSol* F, int start, int plus, fsSol* dense, int d0) {
  int bad = 0;
  for (int row = start; row >= d0; row--) {
    fsSol xr = dense[row];
    if (xr == 0) continue; // every lane reads the same value
    int nnz = L->rownnz[row] - 1, adr = L->rowadr[row];
    fsSol diag = F[adr + nnz];
    fsSol tmp = diag * diag + (plus ? xr * xr : -xr * xr);
    if (tmp < FS_SOL_MINVAL) {
      tmp = FS_SOL_MINVAL;
      bad = 1;
    }
    fsSol r = sqrt(tmp), c = diag / r, s = -xr / r, ss = plus ? -s : s;
    FS_SYNC(); // every lane has read the diagonal and dense[row]
    FS_LANE0 F[adr + nnz] = r;
    FS_FOR_LANE(k, nnz) {
      int j = L->colind[adr + k];
      fsSol dv = dense[j], mv = F[adr + k];
      F[adr + k] = c * mv + ss * dv;
      dense[j] = s * mv + c * dv;
    }
    FS_SYNC();
  }
  FS_SYNC(); // the rows skipped above were read without one
  return bad;
}

/// F' F +- x x' in place (mju_cholUpdateSparse) for x = scl * v: v has n non-zeros at
/// dofs ind (increasing); rows from the last of them down to d0, each with x's entry
/// non-zero rotated into F by a Givens rotation (lanes over the row's entries). dense is
/// scratch. Returns 1 (every lane) if a diagonal was clamped at mjMINVAL (MuJoCo's
/// rank loss: the caller refactors).
FS_HD int fsi_chol_update(const fsLayout* L, fsSol* F, const fsReal* v, fsSol scl, const int* ind,
                          int n, int plus, fsSol* dense, int d0) {
  if (n == 0) return 0;
  int start = ind[n - 1];
  FS_FOR_LANE(t, start + 1 - d0) dense[d0 + t] = 0;
  FS_SYNC();
  FS_FOR_LANE(k, n) dense[ind[k]] = v[k] * scl;
  FS_SYNC();
  return fsi_chol_rotate(L, F, start, plus, dense, d0);
}

/// fsi_chol_update for x = v in the solver's real (a cone's rows of L' J), added.
FS_HD int fsi_chol_update_sol(const fsLayout* L, fsSol* F, const fsSol* v, const int* ind, int n,
                              fsSol* dense, int d0) {
  if (n == 0) return 0;
  int start = ind[n - 1];
  FS_FOR_LANE(t, start + 1 - d0) dense[d0 + t] = 0;
  FS_SYNC();
  FS_FOR_LANE(k, n) dense[ind[k]] = v[k];
  FS_SYNC();
  return fsi_chol_rotate(L, F, start, 1, dense, d0);
}

#endif
