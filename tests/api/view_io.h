// Reading and writing a batch's views as doubles, for the API tests (test_batch,
// test_tethered): one copy of the dtype conversions both need.
#ifndef FLYSIM_TESTS_API_VIEW_IO_H
#define FLYSIM_TESTS_API_VIEW_IO_H

#include <stddef.h>

#include <flysim/flysim.h>

/// Every element of view `name` as double (exact: float32 and int widen without
/// rounding), via fs_batch_read; *v gets the view. NULL (a failed check) if there is no
/// such view. The caller frees the result.
double* fs_test_read_view(fsBatch b, const char* name, fsView* v);

/// Write n doubles into view `name` (rounded to the view's real), via fs_batch_write.
void fs_test_write_view(fsBatch b, const char* name, const double* x, size_t n);

#endif
