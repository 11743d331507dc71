// Folders for outputs: mkdir -p with errors that name the option and the fix.
#ifndef FLYSIM_COMMON_SYS_FILES_H
#define FLYSIM_COMMON_SYS_FILES_H

#include <stddef.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Create folder dir and its parents (mkdir -p). `what` names where the path came
/// from in errors (e.g. "--save-data").
int fs_make_dirs(const char* dir, const char* what, fsError* err);

/// Check, creating nothing, that no part of dir that exists is a file (or anything
/// else that is not a folder): what fs_make_dirs will need, said before a run.
int fs_check_dirs(const char* dir, const char* what, fsError* err);

/// Hold folder dir for this process (an exclusive flock on the folder itself, released when
/// the descriptor returned is closed or the process ends): a second run on the same folder
/// is refused before it touches a file there. Returns the descriptor, or -1 with an error
/// naming `what`, the folder and the fix.
int fs_lock_dir(const char* dir, const char* what, fsError* err);

/// Create the parents of file path ("out/run/x.h5" -> "out/run"); nothing for a bare
/// file name.
int fs_make_parent_dirs(const char* path, const char* what, fsError* err);

/// A helper program: $env_var if set (it must be executable), else `name` on PATH;
/// the error says what the program is for (`purpose`) and how to get it (`fix`).
int fs_find_program(const char* name, const char* env_var, const char* purpose, const char* fix,
                    char* out, size_t n, fsError* err);

/// Search $PATH for an executable regular file `name` (no '/'), as execvp would
/// (an empty PATH entry is the current folder). Returns 0 with the path in out,
/// or -1 if not found (err names PATH; callers add the fix).
int fs_find_on_path(const char* name, char* out, size_t n, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
