// The library's version (include/flysim/flysim.h).
#include <flysim/flysim.h>

#include "common/api/version.h"

int fs_version(void) {
  return FLYSIM_VERSION;
}

const char* fs_version_string(void) {
  return FLYSIM_VERSION_STRING;
}
