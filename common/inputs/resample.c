#include "common/inputs/resample.h"

#include <math.h>

int fs_resample_count(int n_in, double dt_in, double dt_out) {
  double span = (double)n_in * dt_in / dt_out;
  // numpy.arange's length is ceil(span); forgive representation error in span.
  double n = ceil(span - 1e-9 * (span > 1.0 ? span : 1.0));
  return n < 1 ? 1 : (int)n;
}

// Second derivatives m[0..n-1] of the not-a-knot cubic spline through y
// (stride `stride`) on a uniform grid of spacing h. The interior equations
//   m[i-1] + 4 m[i] + m[i+1] = 6 (y[i-1] - 2 y[i] + y[i+1]) / h^2
// with the not-a-knot conditions m[0] - 2 m[1] + m[2] = 0 (and at the end)
// give m[1] and m[n-2] directly; the rest is a tridiagonal solve (Thomas).
static void spline_moments(const double* y, int n, int stride, double h, double* m, double* c) {
  const double s = 6.0 / (h * h);
#define Y(i)   y[(long)(i)*stride]
#define RHS(i) (s * (Y((i)-1) - 2.0 * Y(i) + Y((i) + 1)))
  m[1] = RHS(1) / 6.0;
  m[n - 2] = RHS(n - 2) / 6.0;
  // Unknowns m[2..n-3]: forward sweep with m[1] and m[n-2] moved to the right side.
  int lo = 2, hi = n - 3;
  if (lo <= hi) {
    double prev_c = 0.0, prev_d = 0.0;
    for (int i = lo; i <= hi; i++) {
      double d = RHS(i);
      if (i == lo) d -= m[1];
      if (i == hi) d -= m[n - 2];
      double denom = 4.0 - (i == lo ? 0.0 : prev_c);
      double ci = 1.0 / denom;
      double di = (d - (i == lo ? 0.0 : prev_d)) / denom;
      c[i] = ci;
      m[i] = di;
      prev_c = ci;
      prev_d = di;
    }
    for (int i = hi - 1; i >= lo; i--) m[i] -= c[i] * m[i + 1];
  }
  m[0] = 2.0 * m[1] - m[2];
  m[n - 1] = 2.0 * m[n - 2] - m[n - 3];
#undef RHS
#undef Y
}

void fs_resample_cubic(const double* in, int n_in, int ncol, double dt_in, double* out, int n_out,
                       double dt_out, double* scratch) {
  double* m = scratch;
  double* c = scratch + n_in;
  const double h = dt_in;
  for (int j = 0; j < ncol; j++) {
    const double* y = in + j;
    spline_moments(y, n_in, ncol, h, m, c);
    for (int k = 0; k < n_out; k++) {
      double t = (double)k * dt_out;
      double u = t / h;
      double v;
      if (u >= (double)(n_in - 1)) {
        v = y[(long)(n_in - 1) * ncol];
      } else {
        int i = (int)floor(u);
        if (i < 0) i = 0;
        double a = ((double)(i + 1) * h - t) / h; // weight of sample i
        double b = 1.0 - a;                       // weight of sample i + 1
        double yi = y[(long)i * ncol], yj = y[(long)(i + 1) * ncol];
        v = a * yi + b * yj + ((a * a * a - a) * m[i] + (b * b * b - b) * m[i + 1]) * h * h / 6.0;
      }
      out[(long)k * ncol + j] = v;
    }
  }
}
