// The dataset spec (generate/spec.h), read with libyaml's document API.
#include "generate/spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/inputs/inputs.h"
#include "common/cli/verb_options.h"
#include "common/replay/record.h"

static const struct {
  const char* group; // under vary:
  const char* key;
  double dflt; // NaN: the model's value
  int model;
} kAxes[FS_NAXIS] = {
    {"clip", "file", 0, 0},
    {"clip", "start_row", 0, 0},
    {"clip", "time_scale", 1, 0},
    {"clip", "amplitude_scale", 1, 0},
    {"clip", "target_noise", 0, 0},
    {"model", "kp", NAN, 1},
    {"model", "damping_scale", 1, 1},
    {"model", "stiffness_scale", 1, 1},
    {"model", "friction_scale", 1, 1},
    {"model", "mass_scale", 1, 1},
    {"model", "adhesion_gain_scale", 1, 1},
    {"model", "gravity_z", NAN, 1},
    {"initial", "pose_noise", 0, 0},
    {"initial", "velocity_noise", 0, 0},
    {"initial", "spawn_height", 0, 0},
};

const char* fs_gen_axis_key(int axis) {
  static char keys[FS_NAXIS][64];
  if (axis < 0 || axis >= FS_NAXIS) return "?";
  if (!keys[axis][0])
    snprintf(keys[axis], sizeof keys[axis], "vary.%s.%s", kAxes[axis].group, kAxes[axis].key);
  return keys[axis];
}

int fs_gen_axis_is_model(int axis) {
  return axis >= 0 && axis < FS_NAXIS && kAxes[axis].model;
}

void fs_dist_describe(const fsDist* d, char* out, size_t n) {
  switch (d->kind) {
  case FS_DIST_UNIFORM:
    snprintf(out, n, "uniform [%g, %g]", d->a, d->b);
    break;
  case FS_DIST_NORMAL:
    snprintf(out, n, "normal (mean %g, std %g)", d->a, d->b);
    break;
  case FS_DIST_LIST:
    snprintf(out, n, "one of %d values", d->nlist);
    break;
  default:
    snprintf(out, n, isnan(d->a) ? "the model's" : "fixed %g", d->a);
  }
}

//---------------------------------- YAML helpers ------------------------------------------------

typedef struct Ctx {
  const char* path;
  yaml_document_t* doc;
  fsError* err;
  int model_given, world_given; // the model and world keys (one of them names the model)
} Ctx;

static int line_of(const yaml_node_t* n) {
  return n ? (int)n->start_mark.line + 1 : 0;
}

static int fail_at(Ctx* c, const yaml_node_t* n, const char* key, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(Ctx* c, const yaml_node_t* n, const char* key, const char* fmt, ...) {
  char msg[1600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fs_fail(c->err, "%s:%d: %s: %s", c->path, line_of(n), key, msg);
}

static const char* scalar(const yaml_node_t* n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char*)n->data.scalar.value : NULL;
}

// A key given twice in one mapping, anywhere in the document: an error (YAML leaves it to
// the reader; libyaml keeps both and the parse would take the last silently).
static int duplicate_keys(Ctx* c) {
  for (yaml_node_t* n = c->doc->nodes.start; n < c->doc->nodes.top; n++) {
    if (n->type != YAML_MAPPING_NODE) continue;
    for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
      for (yaml_node_pair_t* q = n->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t* kp = yaml_document_get_node(c->doc, p->key);
        yaml_node_t* kq = yaml_document_get_node(c->doc, q->key);
        const char *a = scalar(kp), *b = scalar(kq);
        if (a && b && !strcmp(a, b))
          return fail_at(c, kp, a, "given twice (also at line %d); fix: keep one", line_of(kq));
      }
  }
  return 0;
}

// The deepest nesting of flow brackets ([ and {) outside quotes and comments: libyaml takes
// seconds over thousands of them (a spec needs a few).
static int flow_depth(const char* text, size_t n) {
  int depth = 0, most = 0;
  char quote = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = text[i];
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '#') {
      while (i < n && text[i] != '\n') i++;
    } else if (ch == '[' || ch == '{') {
      if (++depth > most) most = depth;
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      depth--;
    }
  }
  return most;
}

static int to_double(Ctx* c, const yaml_node_t* n, const char* key, double* out) {
  const char* s = scalar(n);
  if (!s) return fail_at(c, n, key, "expected a number; fix: e.g. %s: 1.0", key);
  char* end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v))
    return fail_at(c, n, key, "'%s' is not a finite number; fix: e.g. %s: 1.0", s, key);
  *out = v;
  return 0;
}

static int to_int(Ctx* c, const yaml_node_t* n, const char* key, long lo, long hi, long* out) {
  const char* s = scalar(n);
  if (!s) return fail_at(c, n, key, "expected an integer; fix: e.g. %s: %ld", key, lo);
  char* end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno)
    return fail_at(c, n, key, "'%s' is not an integer; fix: e.g. %s: %ld", s, key, lo);
  if (v < lo || v > hi)
    return fail_at(c, n, key, "%lld is out of range; fix: an integer in [%ld, %ld]", v, lo, hi);
  *out = (long)v;
  return 0;
}

static int to_path(Ctx* c, const yaml_node_t* n, const char* key, char* out, size_t size) {
  const char* s = scalar(n);
  if (!s || !s[0] || strlen(s) >= size)
    return fail_at(c, n, key, "expected a file path; fix: e.g. %s: assets/walking_clip.h5", key);
  snprintf(out, size, "%s", s);
  return 0;
}

// Each item of a sequence node (or the node itself if it is a scalar).
static int items(const yaml_node_t* n, yaml_document_t* doc, yaml_node_t** out, int max) {
  if (n->type == YAML_SCALAR_NODE) {
    out[0] = (yaml_node_t*)n;
    return 1;
  }
  if (n->type != YAML_SEQUENCE_NODE) return -1;
  int k = 0;
  for (yaml_node_item_t* i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
    if (k == max) return -2;
    out[k++] = yaml_document_get_node(doc, *i);
  }
  return k;
}

//---------------------------------- distributions -----------------------------------------------

static int parse_dist(Ctx* c, const yaml_node_t* n, const char* key, fsDist* d) {
  memset(d, 0, sizeof *d);
  d->given = 1;
  if (n->type == YAML_SCALAR_NODE) return to_double(c, n, key, &d->a);
  static const char* fix = "fix: a number, {fixed: x}, {uniform: [lo, hi]}, {normal: [mean, "
                           "std]} or {list: [a, b, ...]}";
  if (n->type != YAML_MAPPING_NODE || n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
    return fail_at(c, n, key, "not a distribution; %s", fix);
  yaml_node_pair_t* p = n->data.mapping.pairs.start;
  const char* kind = scalar(yaml_document_get_node(c->doc, p->key));
  yaml_node_t* v = yaml_document_get_node(c->doc, p->value);
  if (!kind) return fail_at(c, n, key, "not a distribution; %s", fix);
  if (!strcmp(kind, "fixed")) return to_double(c, v, key, &d->a);
  yaml_node_t* it[4096];
  int k = v->type == YAML_SEQUENCE_NODE ? items(v, c->doc, it, 4096) : -1;
  if (!strcmp(kind, "uniform") || !strcmp(kind, "normal")) {
    if (k != 2)
      return fail_at(c, v, key, "%s takes two numbers; fix: {%s: [%s]}", kind, kind,
                     kind[0] == 'u' ? "lo, hi" : "mean, std");
    if (to_double(c, it[0], key, &d->a) || to_double(c, it[1], key, &d->b)) return -1;
    d->kind = kind[0] == 'u' ? FS_DIST_UNIFORM : FS_DIST_NORMAL;
    if (d->kind == FS_DIST_UNIFORM && d->a > d->b)
      return fail_at(c, v, key, "uniform [%g, %g]: lo > hi; fix: {uniform: [%g, %g]}", d->a, d->b,
                     d->b, d->a);
    if (d->kind == FS_DIST_NORMAL && d->b < 0)
      return fail_at(c, v, key, "normal std %g < 0; fix: a std >= 0", d->b);
    return 0;
  }
  if (!strcmp(kind, "list")) {
    if (k < 1) return fail_at(c, v, key, "list takes 1 to 4096 numbers; fix: {list: [a, b]}");
    d->kind = FS_DIST_LIST;
    d->list = calloc((size_t)k, sizeof(double));
    if (!d->list) return fs_fail_oom(c->err, "a list distribution", k * 8.0);
    d->nlist = k;
    for (int i = 0; i < k; i++)
      if (to_double(c, it[i], key, &d->list[i])) return -1;
    return 0;
  }
  return fail_at(c, n, key, "unknown distribution '%s'; %s", kind, fix);
}

// The values a distribution can take, checked against [lo, hi] (NaN: unbounded).
static int check_range(Ctx* c, const yaml_node_t* n, const char* key, const fsDist* d, double lo,
                       double hi, const char* what) {
  double vmin = d->a, vmax = d->a;
  if (d->kind == FS_DIST_UNIFORM) vmax = d->b;
  if (d->kind == FS_DIST_NORMAL) {
    if (d->b > 0 && (!isnan(lo) || !isnan(hi)))
      return fail_at(c, n, key, "a normal distribution can leave %s; fix: a uniform or a list",
                     what);
  }
  if (d->kind == FS_DIST_LIST)
    for (int i = 0; i < d->nlist; i++) {
      vmin = i == 0 || d->list[i] < vmin ? d->list[i] : vmin;
      vmax = i == 0 || d->list[i] > vmax ? d->list[i] : vmax;
    }
  if ((!isnan(lo) && vmin < lo) || (!isnan(hi) && vmax > hi))
    return fail_at(c, n, key, "values from %g to %g leave %s; fix: values within it", vmin, vmax,
                   what);
  return 0;
}

//---------------------------------- the spec ----------------------------------------------------

static void defaults(fsGenSpec* s) {
  snprintf(s->model, sizeof s->model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(s->targets[0], sizeof s->targets[0], "%s/walking_clip.h5", fs_assets_dir());
  s->ntargets = 1;
  s->worlds = 16;
  s->steps = 1000;
  s->record_every = 1;
  s->block_worlds = 64;
  s->warmup_sec = 0.05;
  s->record = FS_RECORD_REPLAY_DEFAULT | 1u << FS_SERIES_QPOS | 1u << FS_SERIES_QVEL;
  s->backend = FS_BACKEND_CPU;
  s->precision = 32;
  for (int a = 0; a < FS_NAXIS; a++)
    s->axis[a] = (fsDist){FS_DIST_FIXED, kAxes[a].dflt, 0, NULL, 0, 0};
}

static int parse_vary(Ctx* c, const yaml_node_t* n, fsGenSpec* s) {
  if (n->type != YAML_MAPPING_NODE)
    return fail_at(c, n, "vary",
                   "expected a mapping of clip, model, initial; fix: see "
                   "flysim generate --example-spec");
  for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(c->doc, p->key);
    yaml_node_t* g = yaml_document_get_node(c->doc, p->value);
    const char* group = scalar(k);
    int known = 0;
    for (int a = 0; a < FS_NAXIS; a++) known |= group && !strcmp(group, kAxes[a].group);
    if (!known)
      return fail_at(c, k, "vary", "unknown group '%s'; fix: one of clip, model, initial",
                     group ? group : "?");
    if (g->type != YAML_MAPPING_NODE)
      return fail_at(c, g, group, "expected a mapping of axes; fix: see --example-spec");
    for (yaml_node_pair_t* q = g->data.mapping.pairs.start; q < g->data.mapping.pairs.top; q++) {
      yaml_node_t* ak = yaml_document_get_node(c->doc, q->key);
      const char* name = scalar(ak);
      int axis = -1;
      for (int a = 0; a < FS_NAXIS && axis < 0; a++)
        if (name && !strcmp(kAxes[a].group, group) && !strcmp(kAxes[a].key, name)) axis = a;
      if (axis < 0) {
        char choices[512] = "";
        for (int a = 0; a < FS_NAXIS; a++)
          if (!strcmp(kAxes[a].group, group))
            snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s",
                     choices[0] ? ", " : "", kAxes[a].key);
        return fail_at(c, ak, "vary", "unknown axis '%s.%s'; fix: one of %s", group,
                       name ? name : "?", choices);
      }
      fsDist* d = &s->axis[axis];
      free(d->list);
      yaml_node_t* v = yaml_document_get_node(c->doc, q->value);
      const char* key = fs_gen_axis_key(axis);
      if (parse_dist(c, v, key, d)) return -1;
      int bad = 0;
      switch (axis) {
      case FS_AXIS_CLIP_FILE:
        bad = check_range(c, v, key, d, 0, s->ntargets - 1, "the targets' indices");
        if (!bad && d->kind != FS_DIST_FIXED && d->kind != FS_DIST_LIST)
          bad = fail_at(c, v, key, "a clip is chosen by index; fix: a number or {list: [...]}");
        break;
      case FS_AXIS_CLIP_START:
        bad = check_range(c, v, key, d, 0, NAN, "the clip (rows from 0)");
        break;
      case FS_AXIS_CLIP_TIME_SCALE:
      case FS_AXIS_DAMPING_SCALE:
      case FS_AXIS_STIFFNESS_SCALE:
      case FS_AXIS_FRICTION_SCALE:
      case FS_AXIS_MASS_SCALE:
      case FS_AXIS_ADHESION_SCALE:
      case FS_AXIS_KP:
        bad = check_range(c, v, key, d, 1e-9, NAN, "the positive numbers");
        break;
      case FS_AXIS_CLIP_NOISE:
      case FS_AXIS_POSE_NOISE:
      case FS_AXIS_VELOCITY_NOISE:
        bad = check_range(c, v, key, d, 0, NAN, "the standard deviations (>= 0)");
        break;
      default:
        break;
      }
      if (bad) return -1;
    }
  }
  return 0;
}

static int parse_record(Ctx* c, const yaml_node_t* n, fsGenSpec* s) {
  yaml_node_t* it[64];
  int k = items(n, c->doc, it, 64);
  if (k < 1) return fail_at(c, n, "record", "expected a list of series; fix: [angles, qpos, qvel]");
  char list[1024] = "";
  for (int i = 0; i < k; i++) {
    const char* v = scalar(it[i]);
    if (!v) return fail_at(c, it[i], "record", "expected a series name; fix: e.g. qpos");
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", v);
  }
  fsError e;
  if (fs_record_parse(list, &s->record, &e)) return fail_at(c, n, "record", "%s", e.msg);
  return 0;
}

static int parse_top(Ctx* c, const char* key, yaml_node_t* v, fsGenSpec* s) {
  long x = 0;
  if (!strcmp(key, "model") || !strcmp(key, "world")) {
    int world = key[0] == 'w';
    if (world ? c->model_given : c->world_given)
      return fail_at(c, v, key, "model and world both name the model; fix: keep one of them");
    *(world ? &c->world_given : &c->model_given) = 1;
    if (!world) return to_path(c, v, key, s->model, sizeof s->model);
    const char* name = scalar(v);
    fsError e;
    if (!name) return fail_at(c, v, key, "expected a world's name; fix: e.g. world: blocks");
    if (!fs_world_model_path(name, s->model, sizeof s->model, &e)) return 0;
    const char* msg = e.msg; // "--world: ...": the key names it here
    return fail_at(c, v, key, "%s", strncmp(msg, "--world: ", 9) ? msg : msg + 9);
  }
  if (!strcmp(key, "targets")) {
    yaml_node_t* it[FS_GEN_MAX_TARGETS];
    int k = items(v, c->doc, it, FS_GEN_MAX_TARGETS);
    if (k < 1)
      return fail_at(c, v, key, "expected 1 to %d clip files; fix: [assets/walking_clip.h5]",
                     FS_GEN_MAX_TARGETS);
    for (int i = 0; i < k; i++)
      if (to_path(c, it[i], key, s->targets[i], sizeof s->targets[i])) return -1;
    s->ntargets = k;
    return 0;
  }
  if (!strcmp(key, "disable")) {
    yaml_node_t* it[32];
    int k = items(v, c->doc, it, 32);
    if (k < 0) return fail_at(c, v, key, "expected a list of flags; fix: [contact]");
    for (int i = 0; i < k; i++) {
      fsError e;
      const char* f = scalar(it[i]);
      if (!f || fs_parse_disable(f, &s->disable, &e))
        return fail_at(c, it[i], key, "%s", f ? e.msg : "expected a flag name; fix: contact");
    }
    return 0;
  }
  if (!strcmp(key, "worlds"))
    return to_int(c, v, key, 1, 1L << 24, &x) ? -1 : (s->worlds = (int)x, 0);
  if (!strcmp(key, "steps"))
    return to_int(c, v, key, 1, FS_GEN_MAX_STEPS, &x) ? -1 : (s->steps = (int)x, 0);
  if (!strcmp(key, "record_every"))
    return to_int(c, v, key, 1, 1L << 28, &x) ? -1 : (s->record_every = (int)x, 0);
  if (!strcmp(key, "block_worlds"))
    return to_int(c, v, key, 1, 1L << 24, &x) ? -1 : (s->block_worlds = (int)x, 0);
  if (!strcmp(key, "seed")) {
    if (to_int(c, v, key, 0, 0x7fffffffffffffffL, &x)) return -1;
    s->seed = (uint64_t)x;
    return 0;
  }
  if (!strcmp(key, "warmup_sec")) {
    if (to_double(c, v, key, &s->warmup_sec)) return -1;
    return s->warmup_sec < 0 ? fail_at(c, v, key, "negative; fix: seconds >= 0") : 0;
  }
  if (!strcmp(key, "record")) return parse_record(c, v, s);
  if (!strcmp(key, "backend")) {
    const char* b = scalar(v);
    s->backend = b && !strcmp(b, "cpu")    ? FS_BACKEND_CPU
                 : b && !strcmp(b, "host") ? FS_BACKEND_HOST
                 : b && !strcmp(b, "cuda") ? FS_BACKEND_CUDA
                                           : -1;
    return s->backend < 0 ? fail_at(c, v, key, "'%s'; fix: cpu, host or cuda", b ? b : "?") : 0;
  }
  if (!strcmp(key, "precision")) {
    const char* p = scalar(v);
    s->precision = p && !strcmp(p, "f32") ? 32 : p && !strcmp(p, "f64") ? 64 : 0;
    return s->precision ? 0 : fail_at(c, v, key, "'%s'; fix: f32 or f64", p ? p : "?");
  }
  if (!strcmp(key, "max_contacts"))
    return to_int(c, v, key, 1, 1L << 20, &x) ? -1 : (s->max_contacts = (int)x, 0);
  if (!strcmp(key, "max_candidates"))
    return to_int(c, v, key, 1, 1L << 24, &x) ? -1 : (s->max_candidates = (int)x, 0);
  if (!strcmp(key, "vary")) return 1; // after the targets are known
  return fail_at(
      c, v, key,
      "unknown key; fix: one of model, world, targets, disable, worlds, steps, record_every, "
      "block_worlds, seed, warmup_sec, record, backend, precision, max_contacts, max_candidates, "
      "vary");
}

int fs_gen_spec_parse(const char* path, const char* text, size_t n, fsGenSpec* s, fsError* err) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  defaults(s);
  s->text = malloc(n + 1);
  if (!s->text) return fs_fail_oom(err, "the spec", (double)n);
  memcpy(s->text, text, n);
  s->text[n] = 0;
  if (n > FS_GEN_SPEC_MAX_BYTES)
    return fs_fail(err,
                   "%s: %zu bytes, more than a spec may be (%d); fix: a spec of a few lines "
                   "(flysim generate --example-spec)",
                   path, n, FS_GEN_SPEC_MAX_BYTES);
  int depth = flow_depth(text, n);
  if (depth > FS_GEN_SPEC_MAX_DEPTH)
    return fs_fail(err,
                   "%s: brackets nested %d deep, more than a spec may be (%d); fix: a spec "
                   "of a few lines (flysim generate --example-spec)",
                   path, depth, FS_GEN_SPEC_MAX_DEPTH);
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser)) return fs_fail(err, "%s: cannot start libyaml", path);
  yaml_parser_set_input_string(&parser, (const unsigned char*)text, n);
  int rc = -1;
  if (!yaml_parser_load(&parser, &doc)) {
    fs_fail(err, "%s:%d: not valid YAML: %s%s%s; fix: check the indentation and the colons", path,
            (int)parser.problem_mark.line + 1, parser.problem ? parser.problem : "?",
            parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    return -1;
  }
  Ctx c = {path, &doc, err, 0, 0};
  yaml_node_t* root = yaml_document_get_root_node(&doc);
  yaml_node_t* vary = NULL;
  if (duplicate_keys(&c)) goto done;
  if (!root || root->type != YAML_MAPPING_NODE) {
    fail_at(&c, root, "spec",
            "expected a mapping of keys; fix: start from flysim generate "
            "--example-spec");
    goto done;
  }
  for (yaml_node_pair_t* p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
       p++) {
    yaml_node_t* k = yaml_document_get_node(&doc, p->key);
    yaml_node_t* v = yaml_document_get_node(&doc, p->value);
    const char* key = scalar(k);
    int r = parse_top(&c, key ? key : "?", v, s);
    if (r < 0) goto done;
    if (r == 1) vary = v;
  }
  if (vary && parse_vary(&c, vary, s)) goto done;
  if (s->record_every > s->steps) {
    fs_fail(err, "%s: record_every %d > steps %d records nothing; fix: record_every <= steps", path,
            s->record_every, s->steps);
    goto done;
  }
  if (!s->record) {
    fs_fail(err, "%s: record is empty; fix: e.g. record: [angles, qpos, qvel]", path);
    goto done;
  }
  if (s->max_contacts && s->backend == FS_BACKEND_CPU) {
    fs_fail(err,
            "%s: max_contacts bounds the buffers of flysim's stepper, and backend is cpu "
            "(MuJoCo's mj_step, whose arena grows with the contacts); fix: drop max_contacts, "
            "or backend: host or cuda",
            path);
    goto done;
  }
  if (s->max_candidates && s->backend == FS_BACKEND_CPU) {
    fs_fail(err,
            "%s: max_candidates bounds the pairs flysim's stepper tests, and backend is cpu "
            "(MuJoCo's mj_step, which tests every pair); fix: drop max_candidates, or backend: "
            "host or cuda",
            path);
    goto done;
  }
  rc = 0;
done:
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  return rc;
}

int fs_gen_spec_load(const char* path, fsGenSpec* s, fsError* err) {
  memset(s, 0, sizeof *s);
  FILE* f = fopen(path, "rb");
  if (!f && errno == EINTR) // a FIFO that no one writes, and Ctrl-C
    return fs_fail(err, "%s: interrupted while opening the spec (a FIFO no one writes?)", path);
  if (!f)
    return fs_fail(err, "%s: cannot read the spec: %s; fix: flysim generate --example-spec > %s",
                   path, strerror(errno), path);
  char* buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      char* grown = realloc(buf, cap = cap ? 2 * cap : 8192);
      if (!grown || cap > (64u << 20)) {
        free(grown ? grown : buf);
        fclose(f);
        return fs_fail(err, "%s: the spec is too large (over 64 MiB)", path);
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int cut = ferror(f) && errno == EINTR;
  fclose(f);
  if (cut) {
    free(buf);
    return fs_fail(err, "%s: interrupted while reading the spec", path);
  }
  int rc = fs_gen_spec_parse(path, buf ? buf : "", n, s, err);
  free(buf);
  return rc;
}

void fs_gen_spec_free(fsGenSpec* s) {
  for (int a = 0; a < FS_NAXIS; a++) free(s->axis[a].list);
  free(s->text);
  memset(s, 0, sizeof *s);
}
