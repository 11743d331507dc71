// Errors: one message that names the file, the field and the fix (fsError, the public
// header's), and the status the failing call returns.
//
// Functions that can fail take an `fsError*` last and return -1 (or NULL) after
// writing the message; callers pass the message up unchanged or prefix context.
#ifndef FLYSIM_COMMON_BASE_ERROR_H
#define FLYSIM_COMMON_BASE_ERROR_H

#include <flysim/flysim.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Write a printf-style message into err (if not NULL), status FS_ERR_RUNTIME; returns -1.
int fs_fail(fsError* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// fs_fail with the status the public call returns (fsStatus).
int fs_fail_status(fsError* err, fsStatus status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// Append a printf-style note to err's message; returns -1.
int fs_fail_append(fsError* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// Out-of-memory error naming what was being allocated (FS_ERR_MEMORY); returns -1.
int fs_fail_oom(fsError* err, const char* what, double bytes);

/// calloc that reports failure into err; NULL on failure.
void* fs_calloc(fsError* err, const char* what, unsigned long long count, unsigned long long size);

/// strdup that reports failure into err; NULL on failure.
char* fs_strdup(fsError* err, const char* s);

#ifdef __cplusplus
}
#endif
#endif
