// Reading and writing a batch's views as doubles (view_io.h).
#include "tests/api/view_io.h"

#include <stdlib.h>

#include "tests/testutil.h"

double* fs_test_read_view(fsBatch b, const char* name, fsView* v) {
  fsError err;
  int rc = fs_batch_view(b, name, v, &err);
  CHECK_MSG(rc == FS_OK, "view %s: %s", name, err.msg);
  if (rc) return NULL;
  size_t n = (size_t)(v->shape[0] * v->shape[1] * v->shape[2]);
  size_t es = v->dtype == FS_DTYPE_F64 ? 8 : 4;
  void* raw = malloc(n * es);
  double* out = malloc(n * sizeof(double));
  rc = fs_batch_read(b, name, raw, n * es, &err);
  CHECK_MSG(rc == FS_OK, "read %s: %s", name, err.msg);
  for (size_t i = 0; i < n; i++)
    out[i] = v->dtype == FS_DTYPE_F64   ? ((double*)raw)[i]
             : v->dtype == FS_DTYPE_F32 ? ((float*)raw)[i]
                                        : ((int*)raw)[i];
  free(raw);
  return out;
}

void fs_test_write_view(fsBatch b, const char* name, const double* x, size_t n) {
  fsView v;
  fsError err;
  CHECK(fs_batch_view(b, name, &v, &err) == FS_OK);
  size_t es = v.dtype == FS_DTYPE_F64 ? 8 : 4;
  void* raw = malloc(n * es);
  for (size_t i = 0; i < n; i++) {
    if (v.dtype == FS_DTYPE_F64)
      ((double*)raw)[i] = x[i];
    else
      ((float*)raw)[i] = (float)x[i];
  }
  int rc = fs_batch_write(b, name, raw, n * es, &err);
  CHECK_MSG(rc == FS_OK, "write %s: %s", name, err.msg);
  free(raw);
}
