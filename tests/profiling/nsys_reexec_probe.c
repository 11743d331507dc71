// A tiny flysim stand-in for test_nsys_reexec: finds --profile PATH (or
// --profile=PATH) in its arguments and calls fs_nsys_reexec as `flysim replay` does.
// Prints PROCEED and exits 0 if fs_nsys_reexec returns 0 (guard set); prints the
// error and exits 3 if it fails. On success it is replaced by nsys and never returns.
#include <stdio.h>
#include <string.h>

#include "common/profiling/profile_nsys.h"

int main(int argc, char** argv) {
  const char* output = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--profile") && i + 1 < argc) output = argv[i + 1];
    if (!strncmp(argv[i], "--profile=", 10)) output = argv[i] + 10;
  }
  if (!output) {
    fprintf(stderr, "nsys_reexec_probe: no --profile PATH\n");
    return 2;
  }
  fsError err = {{0}, FS_OK};
  if (fs_nsys_reexec(argc, argv, output, &err)) {
    fprintf(stderr, "error: %s\n", err.msg);
    return 3;
  }
  printf("PROCEED\n");
  return 0;
}
