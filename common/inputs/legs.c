// The legs of a model, named by its joints (common/inputs/legs.h).
#include "common/inputs/legs.h"

#include <stdio.h>
#include <string.h>

void fs_leg_of(const char* name, char* leg, size_t n) {
  leg[0] = 0;
  if (!name) return;
  const char* base = strrchr(name, '/');
  base = base ? base + 1 : name;
  const char* best = NULL;
  for (const char* tok = base; tok;) { // the last '-' token holding a '_'
    const char* end = strchr(tok, '-');
    size_t len = end ? (size_t)(end - tok) : strlen(tok);
    const char* us = memchr(tok, '_', len);
    if (us && us > tok) best = tok;
    tok = end ? end + 1 : NULL;
  }
  if (!best) return;
  size_t len = (size_t)(strchr(best, '_') - best);
  if (len >= n) len = n - 1;
  memcpy(leg, best, len);
  leg[len] = 0;
}

int fs_leg_columns(const fsReplayBinding* b, const char* leg, int* cols, int max) {
  int k = 0;
  for (int a = 0; a < b->nact && k < max; a++) {
    char l[32];
    if (b->actuator_joint[a] < 0) continue;
    fs_leg_of(b->joint_names[b->actuator_joint[a]], l, sizeof l);
    if (l[0] && !strcmp(l, leg)) cols[k++] = a;
  }
  return k;
}

void fs_leg_list(const fsReplayBinding* b, char* out, size_t n) {
  out[0] = 0;
  for (int a = 0; a < b->nact; a++) {
    char l[32], word[40];
    if (b->actuator_joint[a] < 0) continue;
    fs_leg_of(b->joint_names[b->actuator_joint[a]], l, sizeof l);
    snprintf(word, sizeof word, " %s ", l);
    char padded[1100];
    snprintf(padded, sizeof padded, " %s ", out);
    if (!l[0] || strstr(padded, word)) continue;
    size_t used = strlen(out);
    snprintf(out + used, n - used, "%s%s", used ? " " : "", l);
  }
}
