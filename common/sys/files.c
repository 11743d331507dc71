#include "common/sys/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_check_dirs(const char* dir, const char* what, fsError* err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return fs_fail(err, "%s %s: path longer than %zu characters; fix: a shorter path", what, dir,
                   sizeof buf - 1);
  if (!buf[0]) return 0;
  for (char* p = buf + 1;; p++) {
    if (*p != '/' && *p != 0) continue;
    char c = *p;
    *p = 0;
    struct stat st;
    if (stat(buf, &st)) return 0; // missing (created later) or unreadable (mkdir says why)
    if (!S_ISDIR(st.st_mode)) {
      const char* kind = S_ISREG(st.st_mode) ? "a file" : "a special file";
      if (!c)
        return fs_fail(err,
                       "%s %s is %s, not a folder; fix: name a folder with %s (it is created if "
                       "missing), or remove the file",
                       what, dir, kind, what);
      return fs_fail(err,
                     "%s %s: %s is %s, not a folder; fix: name a folder with %s (it is created "
                     "if missing), or remove the file %s",
                     what, dir, buf, kind, what, buf);
    }
    *p = c;
    if (!c) break;
  }
  return 0;
}

int fs_make_dirs(const char* dir, const char* what, fsError* err) {
  char buf[4096];
  if (fs_check_dirs(dir, what, err)) return -1;
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return fs_fail(err, "%s %s: path longer than %zu characters; fix: a shorter path", what, dir,
                   sizeof buf - 1);
  for (char* p = buf + 1;; p++) {
    if (*p != '/' && *p != 0) continue;
    char c = *p;
    *p = 0;
    if (mkdir(buf, 0777) && errno != EEXIST)
      return fs_fail(err, "%s %s: cannot create folder %s: %s; fix: choose a writable %s path",
                     what, dir, buf, strerror(errno), what);
    *p = c;
    if (!c) break;
  }
  return 0;
}

int fs_lock_dir(const char* dir, const char* what, fsError* err) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fs_fail(err, "%s %s: cannot open the folder: %s; fix: choose a readable %s path", what,
                   dir, strerror(errno), what);
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  int e = errno;
  close(fd);
  if (e == EWOULDBLOCK)
    return fs_fail(err,
                   "%s %s: another flysim run is writing there now (nothing of it touched); "
                   "fix: wait for it to finish, or give another %s folder",
                   what, dir, what);
  return fs_fail(err, "%s %s: cannot lock the folder: %s; fix: choose a local %s path", what, dir,
                 strerror(e), what);
}

int fs_find_program(const char* name, const char* env_var, const char* purpose, const char* fix,
                    char* out, size_t n, fsError* err) {
  const char* forced = getenv(env_var);
  if (forced && forced[0]) {
    if (access(forced, X_OK) == 0 && snprintf(out, n, "%s", forced) < (int)n) return 0;
    return fs_fail(err, "%s=%s: not an executable file; fix: point %s at %s or unset it", env_var,
                   forced, env_var, name);
  }
  if (fs_find_on_path(name, out, n, err) == 0) return 0;
  return fs_fail_append(err, "; %s; fix: %s, or set %s=/path/to/%s", purpose, fix, env_var, name);
}

int fs_make_parent_dirs(const char* path, const char* what, fsError* err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return fs_fail(err, "%s %s: path longer than %zu characters; fix: a shorter path", what, path,
                   sizeof buf - 1);
  char* slash = strrchr(buf, '/');
  if (!slash || slash == buf) return 0;
  *slash = 0;
  return fs_make_dirs(buf, what, err);
}

static int is_executable_file(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int fs_find_on_path(const char* name, char* out, size_t n, fsError* err) {
  if (!out || n < 2) return fs_fail(err, "fs_find_on_path: no room for the path of %s", name);
  const char* path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin"; // execvp's default
  for (const char* p = path;;) {
    size_t len = strcspn(p, ":");
    int k = len ? snprintf(out, n, "%.*s/%s", (int)len, p, name) : snprintf(out, n, "%s", name);
    if (k > 0 && (size_t)k < n && is_executable_file(out)) return 0;
    if (!p[len]) break;
    p += len + 1;
  }
  out[0] = 0;
  return fs_fail(err, "%s: not found in any folder of PATH (PATH=%s)", name, path);
}
