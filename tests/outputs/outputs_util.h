// Helpers of the outputs tests (timing table, profile, plots, video): run the
// flysim executable with an environment and arguments, read back HDF5 datasets,
// and find out whether perf, EGL and ffmpeg can run here.
#ifndef FLYSIM_TESTS_OUTPUTS_OUTPUTS_UTIL_H
#define FLYSIM_TESTS_OUTPUTS_OUTPUTS_UTIL_H

#include <stddef.h>

#define FS_OUT_LEN (1 << 20)

/// Sinusoidal targets for tests/models/walker.xml (T x 6 at 1e-4 s) into path.
int out_write_walker_targets(const char* path, int T);

/// The walker's actuated DoF names, in target column order.
extern const char* const out_walker_dofs[6];

/// Run `env <env> flysim replay <args>` (2>&1); output into out (FS_OUT_LEN bytes,
/// heap); returns the exit status. env may be "".
int out_flysim(const char* env, const char* args, char** out);

/// Whole datasets of a file (malloc'd; NULL if missing): float/double/long long, dims
/// (up to 3) into dims (rank into *rank).
float* out_read_floats(const char* h5, const char* name, int* rank, long long dims[3]);
double* out_read_doubles(const char* h5, const char* name, long long* n);
long long* out_read_ints(const char* h5, const char* name, long long* n);

/// 1-D string dataset: n strings (free with out_free_strings).
char** out_read_strings(const char* h5, const char* name, int* n);
void out_free_strings(char** s, int n);

/// Integer / string attribute of an object ("/" for the file). Returns 0 if read.
int out_attr_int(const char* h5, const char* obj, const char* name, long long* v);
int out_attr_string(const char* h5, const char* obj, const char* name, char* v, size_t n);

/// 1 if the file exists and is not empty.
int out_file_nonempty(const char* path);

/// First bytes of a file equal magic (e.g. PNG's, PDF's).
int out_file_starts_with(const char* path, const char* magic, size_t n);

/// Why perf cannot profile this process ("" if it can): for skipping with 77.
const char* out_perf_unavailable(void);

/// Why EGL rendering is unavailable here ("" if it works).
const char* out_egl_unavailable(void);

/// Path of ffprobe/ffmpeg on PATH into out; 0 if found.
int out_find_tool(const char* name, char* out, size_t n);

/// Parse "name=value" lines of ffprobe's default output: value of key (or "").
void out_kv(const char* text, const char* key, char* value, size_t n);

#endif
