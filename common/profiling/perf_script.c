// perf script text -> samples -> speedscope JSON (see common/profiling/perf_script.h).
#include "common/profiling/perf_script.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys/json.h"

static unsigned long hash_str(const char* a, const char* b) {
  unsigned long h = 1469598103934665603UL;
  for (; *a; a++) h = (h ^ (unsigned char)*a) * 1099511628211UL;
  h = (h ^ 0xff) * 1099511628211UL;
  for (; *b; b++) h = (h ^ (unsigned char)*b) * 1099511628211UL;
  return h;
}

// Grow an array to hold need elements (doubling); -1 on failure.
static int grow(void** a, int* cap, long long need, size_t elem) {
  if (need <= *cap) return 0;
  long long c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  if (c > (1LL << 30)) return -1;
  void* p = realloc(*a, (size_t)c * elem);
  if (!p) return -1;
  *a = p;
  *cap = (int)c;
  return 0;
}

static int grow_ll(void** a, long long* cap, long long need, size_t elem) {
  if (need <= *cap) return 0;
  long long c = *cap ? *cap : 4096;
  while (c < need) c *= 2;
  void* p = realloc(*a, (size_t)c * elem);
  if (!p) return -1;
  *a = p;
  *cap = c;
  return 0;
}

static int rehash(fsPerfProfile* p, int cap) {
  int* h = malloc((size_t)cap * sizeof(int));
  if (!h) return -1;
  for (int i = 0; i < cap; i++) h[i] = -1;
  for (int f = 0; f < p->nframe; f++) {
    unsigned long k = hash_str(p->frames[f].name, p->frames[f].file) & (unsigned long)(cap - 1);
    while (h[k] >= 0) k = (k + 1) & (unsigned long)(cap - 1);
    h[k] = f;
  }
  free(p->hash);
  p->hash = h;
  p->hash_cap = cap;
  return 0;
}

// Index of frame (name, file), added if new; -1 on out of memory.
static int intern(fsPerfProfile* p, const char* name, const char* file) {
  if (2 * (p->nframe + 1) > p->hash_cap && rehash(p, p->hash_cap ? 2 * p->hash_cap : 1024))
    return -1;
  unsigned long mask = (unsigned long)(p->hash_cap - 1);
  unsigned long k = hash_str(name, file) & mask;
  for (; p->hash[k] >= 0; k = (k + 1) & mask) {
    const fsPerfFrame* f = &p->frames[p->hash[k]];
    if (!strcmp(f->name, name) && !strcmp(f->file, file)) return p->hash[k];
  }
  if (grow((void**)&p->frames, &p->frame_cap, p->nframe + 1, sizeof *p->frames)) return -1;
  fsPerfFrame* f = &p->frames[p->nframe];
  f->name = strdup(name);
  f->file = strdup(file);
  if (!f->name || !f->file) {
    free(f->name);
    free(f->file);
    return -1;
  }
  p->hash[k] = p->nframe;
  return p->nframe++;
}

static int thread_index(fsPerfProfile* p, int tid, const char* comm) {
  for (int i = 0; i < p->nthread; i++)
    if (p->threads[i].tid == tid) return i;
  if (grow((void**)&p->threads, &p->thread_cap, p->nthread + 1, sizeof *p->threads)) return -1;
  fsPerfThread* t = &p->threads[p->nthread];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  snprintf(t->comm, sizeof t->comm, "%s", comm);
  return p->nthread++;
}

// Drop the ".llvm.<digits>" that ThinLTO appends to internal function names.
static void strip_lto_suffix(char* name) {
  char* s = strstr(name, ".llvm.");
  if (!s) return;
  const char* d = s + 6;
  if (!*d) return;
  for (; *d; d++)
    if (!isdigit((unsigned char)*d)) return;
  *s = 0;
}

// "\t  23d69a mj_island (/path/lib.so)" -> frame index; -1 on out of memory.
static int parse_stack_line(fsPerfProfile* p, char* line) {
  char* s = line;
  while (isspace((unsigned char)*s)) s++;
  while (*s && !isspace((unsigned char)*s)) s++; // the address
  while (isspace((unsigned char)*s)) s++;
  char* end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) *--end = 0;
  const char* file = "[unknown]";
  char* open = NULL;
  if (end > s && end[-1] == ')') {
    for (char* q = end - 1; q >= s; q--)
      if (*q == '(' && (q == s || q[-1] == ' ')) {
        open = q;
        break;
      }
  }
  if (open) {
    end[-1] = 0;
    file = open + 1;
    const char* slash = strrchr(file, '/');
    if (slash && slash[1]) file = slash + 1;
    *open = 0;
    for (char* q = open; q > s && isspace((unsigned char)q[-1]);) *--q = 0;
  }
  if (!*s) s = "[unknown]";
  strip_lto_suffix(s);
  return intern(p, s, file);
}

// "comm tid time: period event:" -> thread and weight. Returns 0 if the line is a
// sample header.
static int parse_header(char* line, int* tid, char* comm, size_t ncomm, double* ms) {
  char* tok[64];
  int n = 0;
  for (char* t = strtok(line, " \t\r\n"); t && n < 64; t = strtok(NULL, " \t\r\n")) tok[n++] = t;
  for (int i = 1; i < n; i++) {
    size_t len = strlen(tok[i]);
    if (len < 2 || tok[i][len - 1] != ':' || !isdigit((unsigned char)tok[i][0])) continue;
    char* end = NULL;
    *tid = (int)strtol(tok[i - 1], &end, 10);
    if (*end && *end != '/') continue;
    if (*end == '/') *tid = atoi(end + 1); // pid/tid
    comm[0] = 0;
    for (int k = 0; k < i - 1; k++) {
      size_t used = strlen(comm);
      snprintf(comm + used, ncomm - used, "%s%s", k ? " " : "", tok[k]);
    }
    *ms = 1.0;
    if (i + 1 < n && isdigit((unsigned char)tok[i + 1][0])) *ms = atof(tok[i + 1]) * 1e-6;
    return 0;
  }
  return -1;
}

// Close the current sample: reverse its stack (perf prints the leaf first).
static void end_sample(fsPerfProfile* p) {
  long long a = p->sample_off[p->nsample], b = p->nstack - 1;
  for (; a < b; a++, b--) {
    int t = p->stack_frames[a];
    p->stack_frames[a] = p->stack_frames[b];
    p->stack_frames[b] = t;
  }
  p->nsample++;
  p->sample_off[p->nsample] = p->nstack;
}

static int begin_sample(fsPerfProfile* p, int thread, double ms) {
  if (grow((void**)&p->sample_thread, &p->sample_cap, p->nsample + 1, sizeof(int))) return -1;
  int cap = p->sample_cap;
  void* w = realloc(p->sample_ms, (size_t)cap * sizeof(double));
  if (!w) return -1;
  p->sample_ms = w;
  void* o = realloc(p->sample_off, (size_t)(cap + 1) * sizeof(long long));
  if (!o) return -1;
  p->sample_off = o;
  p->sample_thread[p->nsample] = thread;
  p->sample_ms[p->nsample] = ms;
  p->sample_off[p->nsample] = p->nstack;
  p->threads[thread].nsample++;
  return 0;
}

int fs_perf_script_parse(FILE* f, const char* path, fsPerfProfile* p, fsError* err) {
  char* line = NULL;
  size_t cap = 0;
  int in_sample = 0, rc = 0;
  while (getline(&line, &cap, f) >= 0) {
    if (line[0] == '\n' || line[0] == 0) {
      if (in_sample) end_sample(p);
      in_sample = 0;
    } else if (line[0] == ' ' || line[0] == '\t') {
      if (!in_sample) continue;
      int fr = parse_stack_line(p, line);
      if (fr < 0 || grow_ll((void**)&p->stack_frames, &p->stack_cap, p->nstack + 1, sizeof(int))) {
        rc =
            fs_fail(err, "%s: out of memory reading the profile; fix: profile a shorter run", path);
        break;
      }
      p->stack_frames[p->nstack++] = fr;
    } else {
      if (in_sample) end_sample(p);
      in_sample = 0;
      int tid = 0;
      char comm[64];
      double ms = 1.0;
      if (parse_header(line, &tid, comm, sizeof comm, &ms)) continue;
      int t = thread_index(p, tid, comm);
      if (t < 0 || begin_sample(p, t, ms)) {
        rc =
            fs_fail(err, "%s: out of memory reading the profile; fix: profile a shorter run", path);
        break;
      }
      in_sample = 1;
    }
  }
  if (rc == 0 && in_sample) end_sample(p);
  free(line);
  return rc;
}

void fs_perf_profile_free(fsPerfProfile* p) {
  for (int i = 0; i < p->nframe; i++) {
    free(p->frames[i].name);
    free(p->frames[i].file);
  }
  free(p->frames);
  free(p->sample_thread);
  free(p->sample_ms);
  free(p->sample_off);
  free(p->stack_frames);
  free(p->threads);
  free(p->hash);
  memset(p, 0, sizeof *p);
}

void fs_perf_profile_count(const fsPerfProfile* p, const char* name, long long* total,
                           long long* self) {
  *total = *self = 0;
  for (int s = 0; s < p->nsample; s++) {
    long long a = p->sample_off[s], b = p->sample_off[s + 1];
    if (b > a && !strcmp(p->frames[p->stack_frames[b - 1]].name, name)) (*self)++;
    for (long long k = a; k < b; k++)
      if (!strcmp(p->frames[p->stack_frames[k]].name, name)) {
        (*total)++;
        break;
      }
  }
}

// Thread indices, busiest first.
static int* threads_by_samples(const fsPerfProfile* p) {
  int* order = malloc((size_t)(p->nthread ? p->nthread : 1) * sizeof(int));
  if (!order) return NULL;
  for (int i = 0; i < p->nthread; i++) order[i] = i;
  for (int i = 1; i < p->nthread; i++)
    for (int j = i; j > 0 && p->threads[order[j]].nsample > p->threads[order[j - 1]].nsample; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  return order;
}

static void write_thread_profile(FILE* f, const fsPerfProfile* p, int t) {
  double total = 0;
  for (int s = 0; s < p->nsample; s++)
    if (p->sample_thread[s] == t) total += p->sample_ms[s];
  fprintf(f, "{\"type\":\"sampled\",\"name\":");
  char name[128];
  snprintf(name, sizeof name, "%s (thread %d, %lld samples)", p->threads[t].comm, p->threads[t].tid,
           p->threads[t].nsample);
  fs_json_string(f, name);
  fprintf(f, ",\"unit\":\"milliseconds\",\"startValue\":0,\"endValue\":%.6f,\"samples\":[", total);
  int first = 1;
  for (int s = 0; s < p->nsample; s++) {
    if (p->sample_thread[s] != t) continue;
    fprintf(f, "%s[", first ? "" : ",");
    for (long long k = p->sample_off[s]; k < p->sample_off[s + 1]; k++)
      fprintf(f, "%s%d", k > p->sample_off[s] ? "," : "", p->stack_frames[k]);
    fputc(']', f);
    first = 0;
  }
  fprintf(f, "],\"weights\":[");
  first = 1;
  for (int s = 0; s < p->nsample; s++) {
    if (p->sample_thread[s] != t) continue;
    fprintf(f, "%s%.6g", first ? "" : ",", p->sample_ms[s]);
    first = 0;
  }
  fprintf(f, "]}");
}

int fs_perf_speedscope_write(const fsPerfProfile* p, const char* path, const char* name,
                             const char* exporter, fsError* err) {
  int* order = threads_by_samples(p);
  if (!order) return fs_fail_oom(err, "the profile's thread list", (double)p->nthread);
  FILE* f = fopen(path, "w");
  if (!f) {
    free(order);
    return fs_fail(err, "%s: cannot write the profile: %s; fix: choose a writable --profile path",
                   path, strerror(errno));
  }
  fprintf(f, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":");
  fs_json_string(f, name);
  fprintf(f, ",\"exporter\":");
  fs_json_string(f, exporter);
  fprintf(f, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
  for (int i = 0; i < p->nframe; i++) {
    fprintf(f, "%s{\"name\":", i ? "," : "");
    fs_json_string(f, p->frames[i].name);
    fprintf(f, ",\"file\":");
    fs_json_string(f, p->frames[i].file);
    fputc('}', f);
  }
  fprintf(f, "]},\"profiles\":[");
  for (int i = 0; i < p->nthread; i++) {
    if (i) fputc(',', f);
    write_thread_profile(f, p, order[i]);
  }
  fprintf(f, "]}\n");
  free(order);
  int bad = ferror(f);
  if (fclose(f) || bad)
    return fs_fail(err, "%s: error writing the profile; fix: check free disk space", path);
  return 0;
}

// Does sample s have a frame named `under` on its stack (NULL: every sample does)?
static int sample_under(const fsPerfProfile* p, int s, const char* under) {
  if (!under) return 1;
  for (long long k = p->sample_off[s]; k < p->sample_off[s + 1]; k++)
    if (!strcmp(p->frames[p->stack_frames[k]].name, under)) return 1;
  return 0;
}

// Self and total (inclusive) sample counts of every frame over the samples under
// `under`; returns how many samples that is.
static long long count_frames(const fsPerfProfile* p, const char* under, long long* self,
                              long long* total, int* seen) {
  long long n = 0;
  for (int i = 0; i < p->nframe; i++) seen[i] = -1;
  for (int s = 0; s < p->nsample; s++) {
    if (!sample_under(p, s, under)) continue;
    n++;
    long long a = p->sample_off[s], b = p->sample_off[s + 1];
    if (b > a) self[p->stack_frames[b - 1]]++;
    for (long long k = a; k < b; k++) {
      int fr = p->stack_frames[k];
      if (seen[fr] != s) total[fr]++, seen[fr] = s;
    }
  }
  return n;
}

void fs_perf_profile_print_top(const fsPerfProfile* p, int nmax, const char* under, FILE* out) {
  if (p->nsample == 0 || p->nframe == 0) return;
  long long* self = calloc((size_t)p->nframe, sizeof(long long));
  long long* total = calloc((size_t)p->nframe, sizeof(long long));
  int* seen = malloc((size_t)p->nframe * sizeof(int));
  int* order = malloc((size_t)p->nframe * sizeof(int));
  long long n = self && total && seen && order ? count_frames(p, under, self, total, seen) : 0;
  if (n > 0) {
    for (int i = 0; i < p->nframe; i++) order[i] = i;
    for (int i = 1; i < p->nframe; i++) // insertion sort by self, then total
      for (int j = i; j > 0; j--) {
        int a = order[j - 1], b = order[j];
        if (self[b] < self[a] || (self[b] == self[a] && total[b] <= total[a])) break;
        order[j - 1] = b, order[j] = a;
      }
    char title[128];
    snprintf(title, sizeof title, "hottest functions%s%s (%lld samples)", under ? " under " : "",
             under ? under : "", n);
    fprintf(out, "  %-44s %8s %8s  %s\n", title, "self %", "total %", "binary");
    for (int i = 0; i < nmax && i < p->nframe && self[order[i]] > 0; i++) {
      const fsPerfFrame* f = &p->frames[order[i]];
      fprintf(out, "  %-44.44s %8.1f %8.1f  %s\n", f->name, 100.0 * self[order[i]] / n,
              100.0 * total[order[i]] / n, f->file);
    }
  }
  free(self);
  free(total);
  free(seen);
  free(order);
}
