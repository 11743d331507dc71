// Folders for outputs: mkdir -p with errors that name the option and the fix.
#ifndef FLYSIM_COMMON_FILES_H
#define FLYSIM_COMMON_FILES_H

#include "common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Create folder dir and its parents (mkdir -p). `what` names where the path came
/// from in errors (e.g. "--save-data").
int fs_make_dirs(const char* dir, const char* what, fsError* err);

/// Create the parents of file path ("out/run/x.h5" -> "out/run"); nothing for a bare
/// file name.
int fs_make_parent_dirs(const char* path, const char* what, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
