// Errors: one message that names the file, the field and the fix.
//
// Functions that can fail take an `fsError*` last and return -1 (or NULL) after
// writing the message; callers pass the message up unchanged or prefix context.
#ifndef FLYSIM_BASE_ERROR_H
#define FLYSIM_BASE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#define FS_ERROR_LEN 4096

/// The message of the first error on a path of calls.
typedef struct fsError {
  char msg[FS_ERROR_LEN];
} fsError;

/// Write a printf-style message into err (if not NULL); returns -1.
int fs_fail(fsError* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// Append a printf-style note to err's message; returns -1.
int fs_fail_append(fsError* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// Out-of-memory error naming what was being allocated; returns -1.
int fs_fail_oom(fsError* err, const char* what, double bytes);

/// calloc that reports failure into err; NULL on failure.
void* fs_calloc(fsError* err, const char* what, unsigned long long count, unsigned long long size);

/// strdup that reports failure into err; NULL on failure.
char* fs_strdup(fsError* err, const char* s);

#ifdef __cplusplus
}
#endif
#endif
