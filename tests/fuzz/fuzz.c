// The fuzz targets' driver (tests/fuzz/fuzz.h): the seed corpus, seeded mutations of it,
// and the verdict; or, under libFuzzer, its entry point.
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base/random.h"

enum { FUZZ_MAX_INPUT = 1 << 20, FUZZ_MAX_CORPUS = 256 };

static char g_tmpdir[512];

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* f) {
  (void)st, (void)flag, (void)f;
  return remove(path);
}

static void remove_tmpdir(void) {
  if (g_tmpdir[0]) nftw(g_tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char* fs_fuzz_tmpdir(void) {
  if (g_tmpdir[0]) return g_tmpdir;
  const char* base = getenv("TMPDIR");
  snprintf(g_tmpdir, sizeof g_tmpdir, "%s/flysim-%s-XXXXXX", base && base[0] ? base : "/tmp",
           fs_fuzz_target.name);
  if (!mkdtemp(g_tmpdir)) {
    perror("mkdtemp");
    exit(1);
  }
  atexit(remove_tmpdir);
  return g_tmpdir;
}

int fs_fuzz_write_file(const char* path, const unsigned char* data, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = n ? fwrite(data, 1, n, f) : 0;
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

int fs_fuzz_clear_message(const char* msg, const char* subject) {
  const char* why = NULL;
  if (!msg[0])
    why = "no message";
  else if (strncmp(msg, subject, strlen(subject)) != 0)
    why = "it does not start with what the input named";
  else if (!strstr(msg, "fix:") && !strstr(msg, "fix ") && !strstr(msg, "Fix:") &&
           !(strstr(msg, "see flysim ") && strstr(msg, "--help")))
    why = "it says no fix";
  if (why) fprintf(stderr, "%s: unclear message (%s): %s\n", fs_fuzz_target.name, why, msg);
  return why == NULL;
}

// --- the corpus ------------------------------------------------------------------------

typedef struct Input {
  unsigned char* data;
  size_t n;
} Input;

static Input g_corpus[FUZZ_MAX_CORPUS];
static int g_ncorpus;

static void add_input(const unsigned char* data, size_t n) {
  if (g_ncorpus == FUZZ_MAX_CORPUS || n > FUZZ_MAX_INPUT) {
    fprintf(stderr, "%s: corpus entry dropped (over %d entries or %d bytes)\n", fs_fuzz_target.name,
            FUZZ_MAX_CORPUS, FUZZ_MAX_INPUT);
    return;
  }
  Input* in = &g_corpus[g_ncorpus++];
  in->data = malloc(n ? n : 1);
  if (!in->data) exit(1);
  memcpy(in->data, data, n);
  in->n = n;
}

static int read_file(const char* path, unsigned char** data, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char* buf = malloc(FUZZ_MAX_INPUT);
  size_t k = buf ? fread(buf, 1, FUZZ_MAX_INPUT, f) : 0;
  fclose(f);
  if (!buf) return -1;
  *data = buf;
  *n = k;
  return 0;
}

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

// Every file of dir, in name order (the run is the same wherever the tree is).
static int load_corpus(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  char* names[FUZZ_MAX_CORPUS];
  int k = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL && k < FUZZ_MAX_CORPUS;)
    if (e->d_name[0] != '.') names[k++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)k, sizeof *names, cmp_str);
  for (int i = 0; i < k; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unsigned char* data;
    size_t n;
    if (read_file(path, &data, &n) == 0) {
      add_input(data, n);
      free(data);
    }
    free(names[i]);
  }
  return 0;
}

// --- mutations -------------------------------------------------------------------------

static size_t below(size_t n) {
  return n ? (size_t)(fs_random_uniform() * (double)n) : 0;
}

static unsigned char random_byte(void) {
  const char* a = fs_fuzz_target.alphabet;
  if (a && fs_random_uniform() < 0.8) return (unsigned char)a[below(strlen(a))];
  return (unsigned char)below(256);
}

// One edit of buf (n bytes of cap); returns the new length. `other` is another corpus
// entry for the splices.
static size_t mutate_once(unsigned char* buf, size_t n, size_t cap, const Input* other) {
  static const int64_t kInteresting[] = {
      0,   1,     -1,    2,         127,       128,       255,
      256, 32767, 65535, INT32_MAX, INT32_MIN, INT64_MAX, 0x7ff8000000000000};
  size_t at = below(n);
  switch (below(9)) {
  case 0: // flip a bit
    if (n) buf[at] ^= (unsigned char)(1u << below(8));
    break;
  case 1: // replace a byte
    if (n) buf[at] = random_byte();
    break;
  case 2: // insert bytes
    for (size_t k = 1 + below(4); k > 0 && n < cap; k--) {
      memmove(buf + at + 1, buf + at, n - at);
      buf[at] = random_byte();
      n++;
    }
    break;
  case 3: { // delete a run
    size_t len = 1 + below(16);
    if (at + len > n) len = n - at;
    memmove(buf + at, buf + at + len, n - at - len);
    n -= len;
    break;
  }
  case 4: { // an interesting integer of 1, 2, 4 or 8 bytes, little-endian
    size_t width = (size_t)1 << below(4);
    int64_t v = kInteresting[below(sizeof kInteresting / sizeof *kInteresting)];
    for (size_t k = 0; k < width && at + k < n; k++) buf[at + k] = (unsigned char)(v >> (8 * k));
    break;
  }
  case 5: { // duplicate a chunk in place
    size_t from = below(n), len = 1 + below(64);
    if (from + len > n) len = n - from;
    if (n + len <= cap) {
      memmove(buf + at + len, buf + at, n - at);
      memmove(buf + at, buf + from + (from >= at ? len : 0), len);
      n += len;
    }
    break;
  }
  case 6: { // copy a chunk over another
    size_t from = below(n), len = 1 + below(32);
    if (from + len > n) len = n - from;
    if (at + len > n) len = n - at;
    memmove(buf + at, buf + from, len);
    break;
  }
  case 7: // splice: this input's head, the other's tail
    if (other && other->n) {
      size_t from = below(other->n), len = other->n - from;
      if (at + len > cap) len = cap - at;
      memcpy(buf + at, other->data + from, len);
      n = at + len;
    }
    break;
  default: // truncate
    n = at;
  }
  return n;
}

// --- the run ---------------------------------------------------------------------------

static int g_accepted, g_refused, g_bad;

static void save_failing(const unsigned char* data, size_t n, int index, const char* kind) {
  const char* base = getenv("TMPDIR");
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/flysim-%s-failing", base && base[0] ? base : "/tmp",
           fs_fuzz_target.name);
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/%s-%d", dir, kind, index);
  if (fs_fuzz_write_file(path, data, n) == 0)
    fprintf(stderr, "%s: input %d saved: %s (rerun it alone: %s %s)\n", fs_fuzz_target.name, index,
            path, fs_fuzz_target.name, path);
}

static double now_s(void);

static void run_one(const unsigned char* data, size_t n, int index) {
  double t0 = now_s();
  int rc = fs_fuzz_target.one(data, n);
  if (now_s() - t0 > 1.0) { // a slow input is a finding too (a parser's quadratic path)
    fprintf(stderr, "%s: input %d took %.1f s\n", fs_fuzz_target.name, index, now_s() - t0);
    save_failing(data, n, index, "slow");
  }
  if (rc == FS_FUZZ_ACCEPTED)
    g_accepted++;
  else if (rc == FS_FUZZ_REFUSED)
    g_refused++;
  else {
    g_bad++;
    fprintf(stderr, "%s: input %d (%zu bytes) went wrong (above)\n", fs_fuzz_target.name, index, n);
    save_failing(data, n, index, "input");
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long env_long(const char* name, long fallback) {
  const char* v = getenv(name);
  if (!v || !v[0]) return fallback;
  char* end;
  long x = strtol(v, &end, 10);
  if (*end || x < 0) {
    fprintf(stderr, "%s: %s='%s' is not a non-negative integer; fix: unset it\n",
            fs_fuzz_target.name, name, v);
    exit(2);
  }
  return x;
}

#ifdef FLYSIM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t n) {
  static int ready = 0;
  if (!ready) {
    ready = 1;
    if (fs_fuzz_target.setup && fs_fuzz_target.setup(add_input)) abort();
  }
  if (fs_fuzz_target.one(data, n) == FS_FUZZ_BAD) abort();
  return 0;
}
#else
int main(int argc, char** argv) {
  const fsFuzzTarget* t = &fs_fuzz_target;
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR | FILE (tests/fuzz/fuzz.h)\n", t->name);
    return 2;
  }
  if (t->setup && t->setup(add_input)) {
    fprintf(stderr, "%s: FAILED (set-up)\n", t->name);
    return 1;
  }
  struct stat st;
  if (stat(argv[1], &st) == 0 && S_ISREG(st.st_mode)) { // one input alone
    unsigned char* data;
    size_t n;
    if (read_file(argv[1], &data, &n)) return 2;
    run_one(data, n, 0);
    free(data);
    printf("%s: %s: %s\n", t->name, argv[1],
           g_bad        ? "FAILED"
           : g_accepted ? "accepted"
                        : "refused");
    return g_bad ? 1 : 0;
  }
  int nseed = g_ncorpus; // the set-up's own seeds first
  if (load_corpus(argv[1]) || g_ncorpus == nseed) {
    fprintf(stderr, "%s: no corpus in %s; fix: pass tests/fuzz/corpus/<target>\n", t->name,
            argv[1]);
    return 2;
  }
  unsigned seed = (unsigned)env_long("FLYSIM_FUZZ_SEED", t->seed);
  long iterations = env_long("FLYSIM_FUZZ_ITERATIONS", t->iterations);
  double seconds = (double)env_long("FLYSIM_FUZZ_SECONDS", 0);
  printf("%s: seed %u, %d corpus inputs, then %s\n", t->name, seed, g_ncorpus,
         seconds > 0 ? "mutations until the time is up" : "mutations");
  fflush(stdout);
  for (int i = 0; i < g_ncorpus; i++) run_one(g_corpus[i].data, g_corpus[i].n, i);
  fs_random_seed(seed);
  unsigned char* buf = malloc(FUZZ_MAX_INPUT);
  if (!buf) return 1;
  double t0 = now_s();
  long i = 0;
  for (; seconds > 0 ? now_s() - t0 < seconds : i < iterations; i++) {
    const Input* src = &g_corpus[i % g_ncorpus];
    const Input* other = &g_corpus[below((size_t)g_ncorpus)];
    memcpy(buf, src->data, src->n);
    size_t n = src->n;
    for (size_t k = 1 + below(4); k > 0; k--) n = mutate_once(buf, n, FUZZ_MAX_INPUT, other);
    run_one(buf, n, g_ncorpus + (int)i);
  }
  free(buf);
  printf("%s: %ld mutated inputs in %.1f s: %d accepted, %d refused with a clear message, "
         "%d wrong\n",
         t->name, i, now_s() - t0, g_accepted, g_refused, g_bad);
  if (g_accepted == 0 || g_refused == 0) {
    fprintf(stderr, "%s: every input %s: the corpus or the mutations reach too little\n", t->name,
            g_accepted ? "accepted" : "refused");
    g_bad++;
  }
  for (int k = 0; k < g_ncorpus; k++) free(g_corpus[k].data);
  printf("%s: %s\n", t->name, g_bad ? "FAILED" : "passed");
  return g_bad ? 1 : 0;
}
#endif
