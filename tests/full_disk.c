// A disk that fills, for the tests where no small tmpfs can be mounted (they need root with
// CAP_SYS_ADMIN): loaded with LD_PRELOAD (tests/cliutil.py's small_disk), it makes a folder
// a disk of a given size for this process. FLYSIM_FULL_DISK=DIR:BYTES:
//   - write and pwrite to files under DIR use up BYTES; a write past them fails with ENOSPC
//     (nothing of it written), as HDF5 meets a full disk;
//   - statvfs of DIR or a path under it says the bytes left, as flysim's check before a
//     block reads them;
//   - a file DIR/.full (the test writes it) fills the disk at once, as another program may.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define BLOCK 4096

static char g_dir[PATH_MAX]; // DIR, resolved ("": off)
static long long g_left;     // bytes left

static void init(void) __attribute__((constructor));
static void init(void) {
  const char* v = getenv("FLYSIM_FULL_DISK");
  const char* colon = v ? strrchr(v, ':') : NULL;
  if (!colon || colon == v || colon - v >= PATH_MAX) return;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", (int)(colon - v), v);
  if (!realpath(dir, g_dir)) g_dir[0] = 0;
  g_left = atoll(colon + 1);
}

// Whether path (resolved) is DIR or under it.
static int under(const char* path) {
  size_t n = strlen(g_dir);
  return g_dir[0] && !strncmp(path, g_dir, n) && (path[n] == '/' || path[n] == 0);
}

static int fd_under(int fd) {
  if (!g_dir[0] || fd < 0) return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = 0;
  return under(path);
}

static int path_under(const char* path) {
  char real[PATH_MAX];
  return g_dir[0] && path && realpath(path, real) && under(real);
}

// Bytes left: none once DIR/.full exists.
static long long left(void) {
  char full[PATH_MAX + 8];
  snprintf(full, sizeof full, "%s/.full", g_dir);
  struct stat st;
  long long l = __atomic_load_n(&g_left, __ATOMIC_SEQ_CST);
  return stat(full, &st) == 0 ? 0 : l;
}

// Take n bytes of the disk for a write to fd: 0, or -1 with ENOSPC.
static int take(int fd, size_t n) {
  if (!n || !fd_under(fd)) return 0;
  if (left() < (long long)n) {
    errno = ENOSPC;
    return -1;
  }
  __atomic_sub_fetch(&g_left, (long long)n, __ATOMIC_SEQ_CST);
  return 0;
}

// The next definition of a function (libc's): f = that of name.
#define NEXT(f, name)                                                                              \
  do {                                                                                             \
    void* p_ = dlsym(RTLD_NEXT, name);                                                             \
    memcpy(&(f), &p_, sizeof(f));                                                                  \
  } while (0)

ssize_t write(int fd, const void* buf, size_t n) {
  ssize_t (*f)(int, const void*, size_t);
  NEXT(f, "write");
  return take(fd, n) ? -1 : f(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  ssize_t (*f)(int, const void*, size_t, off_t);
  NEXT(f, "pwrite");
  return take(fd, n) ? -1 : f(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  ssize_t (*f)(int, const void*, size_t, off64_t);
  NEXT(f, "pwrite64");
  return take(fd, n) ? -1 : f(fd, buf, n, off);
}

// The bytes left, in blocks, as statvfs says them.
static unsigned long blocks_left(void) {
  long long l = left();
  return (unsigned long)((l > 0 ? l : 0) / BLOCK);
}

int statvfs(const char* path, struct statvfs* s) {
  int (*f)(const char*, struct statvfs*);
  NEXT(f, "statvfs");
  int rc = f(path, s);
  if (rc == 0 && path_under(path)) {
    s->f_frsize = s->f_bsize = BLOCK;
    s->f_bavail = s->f_bfree = blocks_left();
  }
  return rc;
}

int statvfs64(const char* path, struct statvfs64* s) {
  int (*f)(const char*, struct statvfs64*);
  NEXT(f, "statvfs64");
  int rc = f(path, s);
  if (rc == 0 && path_under(path)) {
    s->f_frsize = s->f_bsize = BLOCK;
    s->f_bavail = s->f_bfree = blocks_left();
  }
  return rc;
}
