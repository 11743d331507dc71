// Cubic resampling of uniformly sampled series, as SciPy's
// interp1d(kind="cubic") does for FlyGym's MotionSnippet: a not-a-knot cubic
// spline through the samples, held at the last sample past the end.
#ifndef FLYSIM_COMMON_INPUTS_RESAMPLE_H
#define FLYSIM_COMMON_INPUTS_RESAMPLE_H

#ifdef __cplusplus
extern "C" {
#endif

/// Number of output samples on the grid k * dt_out covering [0, n_in * dt_in),
/// as numpy.arange(0, n_in * dt_in, dt_out) counts them.
int fs_resample_count(int n_in, double dt_in, double dt_out);

/// Resample the columns of in (n_in x ncol, row-major, spacing dt_in) onto
/// out (n_out x ncol, spacing dt_out, starting at time 0). Needs n_in >= 4.
/// scratch holds 2 * n_in doubles. Samples past the last input time take the
/// last input value.
void fs_resample_cubic(const double* in, int n_in, int ncol, double dt_in, double* out, int n_out,
                       double dt_out, double* scratch);

#ifdef __cplusplus
}
#endif
#endif
