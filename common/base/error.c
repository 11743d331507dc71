#include "common/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fs_fail(fsError* err, const char* fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->status = FS_ERR_RUNTIME;
  return -1;
}

int fs_fail_status(fsError* err, fsStatus status, const char* fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->status = status;
  return -1;
}

int fs_fail_append(fsError* err, const char* fmt, ...) {
  if (!err) return -1;
  size_t n = strlen(err->msg);
  if (n + 1 >= sizeof err->msg) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg + n, sizeof err->msg - n, fmt, ap);
  va_end(ap);
  return -1;
}

int fs_fail_oom(fsError* err, const char* what, double bytes) {
  return fs_fail_status(err, FS_ERR_MEMORY,
                        "out of memory allocating %s (%.3g MiB); fix: use fewer worlds or steps",
                        what, bytes / (1024.0 * 1024.0));
}

void* fs_calloc(fsError* err, const char* what, unsigned long long count, unsigned long long size) {
  if (count == 0) count = 1;
  void* p = calloc(count, size);
  if (!p) fs_fail_oom(err, what, (double)count * (double)size);
  return p;
}

char* fs_strdup(fsError* err, const char* s) {
  size_t n = strlen(s) + 1;
  char* p = malloc(n);
  if (!p) {
    fs_fail_oom(err, "a string", (double)n);
    return NULL;
  }
  memcpy(p, s, n);
  return p;
}
