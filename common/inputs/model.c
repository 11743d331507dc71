#include "common/inputs/model.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

// The line MuJoCo's MJCF error names ("line 4", "Line number=4"; the last one given),
// or 0 if none (MuJoCo says "line 0" for an error in an included file).
static int mjcf_error_line(const char* msg) {
  int line = 0;
  for (const char* p = msg; *p; p++) {
    if (strncasecmp(p, "line", 4) || (p > msg && isalpha((unsigned char)p[-1]))) continue;
    const char* q = p + 4;
    if (!strncasecmp(q, " number", 7)) q += 7;
    while (*q == ' ' || *q == '=' || *q == ':') q++;
    if (isdigit((unsigned char)*q)) line = atoi(q);
  }
  return line;
}

// MuJoCo's multi-line error text on one line: the first line, then the others in
// parentheses ("XML Error: ... (Element 'geom', line 4)"). out holds n >= 4 bytes.
static void one_line(const char* msg, char* out, size_t n) {
  size_t k = 0, room = n - 2; // 2 bytes kept for the closing ")"
  int nline = 0;
  out[0] = 0;
  for (const char* p = msg; *p && k + 1 < room;) {
    const char* end = p + strcspn(p, "\r\n");
    const char* next = end + strspn(end, "\r\n");
    while (p < end && isspace((unsigned char)*p)) p++;
    while (end > p && (isspace((unsigned char)end[-1]) || end[-1] == ':')) end--;
    if (end > p) {
      const char* sep = nline == 0 ? "" : nline == 1 ? " (" : ", ";
      int w = snprintf(out + k, room - k, "%s%.*s", sep, (int)(end - p), p);
      k = w < 0 ? k : k + (size_t)w < room ? k + (size_t)w : room - 1;
      nline++;
    }
    p = next;
  }
  if (nline > 1) snprintf(out + k, n - k, ")");
}

mjModel* fs_model_load(const char* path, fsError* err) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    fs_fail(err, "%s: a %s, not a model file; fix: the path of an MJCF (.xml) or MJB (.mjb) file",
            path, S_ISDIR(st.st_mode) ? "folder" : "special file");
    return NULL;
  }
  FILE* f = fopen(path, "rb");
  if (!f) {
    fs_fail(err,
            "%s: cannot open the model: %s; fix: pass an MJCF (.xml) or MJB (.mjb) file "
            "with --model, or run scripts/setup.sh to export the default NeuroMechFly",
            path, strerror(errno));
    return NULL;
  }
  fclose(f);
  char msg[1024] = "";
  mjModel* m = NULL;
  if (ends_with(path, ".mjb")) {
    m = mj_loadModel(path, NULL);
    if (!m)
      snprintf(msg, sizeof msg,
               "MuJoCo could not read it as MJB (a file saved by mj_saveModel of MuJoCo %s is "
               "needed; MJB files are tied to the MuJoCo version)",
               mj_versionString());
  } else {
    m = mj_loadXML(path, NULL, msg, sizeof msg);
  }
  if (!m && ends_with(path, ".mjb")) {
    fs_fail(err,
            "%s: cannot load the model: %s; fix: save it again with this MuJoCo, or pass its "
            "MJCF (.xml)",
            path, msg);
    return NULL;
  }
  if (!m) {
    char text[1024];
    one_line(msg[0] ? msg : "unknown MuJoCo error", text, sizeof text);
    int line = mjcf_error_line(msg);
    if (line > 0)
      fs_fail(err,
              "%s, line %d: cannot load the model: %s; fix: correct the MJCF at line %d, or "
              "pass an MJB (.mjb) or another model with --model",
              path, line, text, line);
    else
      fs_fail(err,
              "%s: cannot load the model: %s; fix: correct the MJCF (or a file it includes), "
              "or pass an MJB (.mjb) or another model with --model",
              path, text);
    return NULL;
  }
  return m;
}

int fs_actuator_is_position(const mjModel* m, int i) {
  const mjtNum* g = m->actuator_gainprm + (long)i * mjNGAIN;
  const mjtNum* b = m->actuator_biasprm + (long)i * mjNBIAS;
  return m->actuator_trntype[i] == mjTRN_JOINT && m->actuator_dyntype[i] == mjDYN_NONE &&
         m->actuator_gaintype[i] == mjGAIN_FIXED && m->actuator_biastype[i] == mjBIAS_AFFINE &&
         g[0] > 0 && b[0] == 0 && b[1] == -g[0];
}

int fs_position_actuators(const mjModel* m) {
  int n = 0;
  for (int i = 0; i < m->nu; i++) n += fs_actuator_is_position(m, i);
  return n;
}

// Does the model joint name equal the DoF name, exactly or after "prefix/"?
static int joint_matches(const char* joint, const char* dof) {
  if (!joint) return 0;
  if (!strcmp(joint, dof)) return 1;
  const char* slash = strrchr(joint, '/');
  return slash && !strcmp(slash + 1, dof);
}

static int bind_joints(const mjModel* m, fsReplayBinding* b, fsError* err) {
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE) b->njoint++;
  b->joint_id = fs_calloc(err, "joint ids", (unsigned)b->njoint, sizeof(int));
  b->joint_qposadr = fs_calloc(err, "joint addresses", (unsigned)b->njoint, sizeof(int));
  b->joint_names = fs_calloc(err, "joint names", (unsigned)b->njoint, sizeof(char*));
  if (!b->joint_id || !b->joint_qposadr || !b->joint_names) return -1;
  int k = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE) continue;
    b->joint_id[k] = j;
    b->joint_qposadr[k] = m->jnt_qposadr[j];
    const char* name = mj_id2name(m, mjOBJ_JOINT, j);
    b->joint_names[k] = name ? name : "";
    k++;
  }
  return 0;
}

static int bind_adhesion(const mjModel* m, fsReplayBinding* b, fsError* err) {
  for (int i = 0; i < m->nu; i++)
    if (m->actuator_trntype[i] == mjTRN_BODY) b->nadhesion++;
  b->adhesion = fs_calloc(err, "adhesion actuators", (unsigned)b->nadhesion, sizeof(int));
  if (!b->adhesion) return -1;
  int k = 0;
  for (int i = 0; i < m->nu; i++)
    if (m->actuator_trntype[i] == mjTRN_BODY) b->adhesion[k++] = i;
  return 0;
}

// Report every target DoF without a position actuator, and what the model offers.
static int fail_unbound(const mjModel* m, const char* model_path, const fsTargets* t,
                        const fsReplayBinding* b, int nmissing, fsError* err) {
  fs_fail(err,
          "%s: no position actuator drives %d of the %d DoFs named in %s '/dof_names':", model_path,
          nmissing, t->ndof, t->path);
  int shown = 0;
  for (int a = 0; a < t->ndof && shown < 12; a++)
    if (b->actuator[a] < 0) {
      fs_fail_append(err, " %s", t->names[a]);
      shown++;
    }
  if (nmissing > shown) fs_fail_append(err, " ... (%d more)", nmissing - shown);
  int npos = fs_position_actuators(m);
  fs_fail_append(err, ". The model has %d position actuators", npos);
  shown = 0;
  for (int i = 0; i < m->nu && shown < 4; i++)
    if (fs_actuator_is_position(m, i)) {
      const char* jn = mj_id2name(m, mjOBJ_JOINT, m->actuator_trnid[2 * i]);
      fs_fail_append(err, "%s%s", shown ? ", " : " (on joints ", jn ? jn : "?");
      shown++;
    }
  if (shown) fs_fail_append(err, "%s)", npos > shown ? ", ..." : "");
  return fs_fail_append(err, ". Fix: use the model these targets were exported for, or "
                             "targets whose DoF names are joints driven by position actuators");
}

// The keyframe every world resets to: "neutral", else the first, else none (-1: qpos0).
static void bind_key(const mjModel* m, fsReplayBinding* b) {
  b->key = m->nkey > 0 ? 0 : -1;
  int neutral = mj_name2id(m, mjOBJ_KEY, "neutral");
  if (neutral >= 0) b->key = neutral;
}

int fs_replay_bind(const mjModel* m, const char* model_path, const fsTargets* t, fsReplayBinding* b,
                   fsError* err) {
  memset(b, 0, sizeof *b);
  b->nact = t->ndof;
  b->actuator = fs_calloc(err, "actuator map", (unsigned)t->ndof, sizeof(int));
  b->actuator_joint = fs_calloc(err, "actuator joints", (unsigned)t->ndof, sizeof(int));
  b->actuator_names = fs_calloc(err, "actuator names", (unsigned)t->ndof, sizeof(char*));
  if (!b->actuator || !b->actuator_joint || !b->actuator_names) goto fail;
  if (bind_joints(m, b, err) || bind_adhesion(m, b, err)) goto fail;

  int nmissing = 0;
  for (int a = 0; a < t->ndof; a++) {
    b->actuator[a] = -1;
    for (int i = 0; i < m->nu; i++) {
      if (!fs_actuator_is_position(m, i)) continue;
      int jnt = m->actuator_trnid[2 * i];
      if (!joint_matches(mj_id2name(m, mjOBJ_JOINT, jnt), t->names[a])) continue;
      if (b->actuator[a] >= 0) {
        fs_fail(err,
                "%s: DoF '%s' (from %s) is driven by two position actuators (%d and %d); "
                "fix: keep one position actuator per joint",
                model_path, t->names[a], t->path, b->actuator[a], i);
        goto fail;
      }
      b->actuator[a] = i;
    }
    if (b->actuator[a] < 0) {
      nmissing++;
      continue;
    }
    const char* an = mj_id2name(m, mjOBJ_ACTUATOR, b->actuator[a]);
    b->actuator_names[a] = an ? an : "";
    int jnt = m->actuator_trnid[2 * b->actuator[a]];
    b->actuator_joint[a] = -1;
    for (int k = 0; k < b->njoint; k++)
      if (b->joint_id[k] == jnt) b->actuator_joint[a] = k;
    if (b->actuator_joint[a] < 0) {
      fs_fail(err,
              "%s: DoF '%s' is a multi-DoF joint; fix: position actuators of a replay must "
              "drive hinge or slide joints",
              model_path, t->names[a]);
      goto fail;
    }
  }
  if (nmissing) {
    fail_unbound(m, model_path, t, b, nmissing, err);
    goto fail;
  }
  bind_key(m, b);
  return 0;

fail:
  fs_replay_binding_free(b);
  return -1;
}

int fs_replay_bind_controls(const mjModel* m, const fsTargets* t, fsReplayBinding* b,
                            fsError* err) {
  memset(b, 0, sizeof *b);
  if (t->ndof != m->nu)
    return fs_fail(err, "internal: a control clip of %d columns for a model of %ld actuators",
                   t->ndof, (long)m->nu);
  b->nact = (int)m->nu;
  b->actuator = fs_calloc(err, "actuator map", (unsigned)m->nu, sizeof(int));
  b->actuator_joint = fs_calloc(err, "actuator joints", (unsigned)m->nu, sizeof(int));
  b->actuator_names = fs_calloc(err, "actuator names", (unsigned)m->nu, sizeof(char*));
  if (!b->actuator || !b->actuator_joint || !b->actuator_names || bind_joints(m, b, err) ||
      bind_adhesion(m, b, err)) {
    fs_replay_binding_free(b);
    return -1;
  }
  for (int a = 0; a < m->nu; a++) {
    const char* an = mj_id2name(m, mjOBJ_ACTUATOR, a);
    b->actuator[a] = a;
    b->actuator_names[a] = an ? an : "";
    b->actuator_joint[a] = -1;
    if (!fs_actuator_is_position(m, a)) continue;
    for (int k = 0; k < b->njoint; k++)
      if (b->joint_id[k] == m->actuator_trnid[2 * a]) b->actuator_joint[a] = k;
  }
  bind_key(m, b);
  return 0;
}

void fs_model_round_to_float(mjModel* m) {
  MJMODEL_POINTERS_PREAMBLE(m)
#define XNV X
#define X(type, name, nr, nc)                                                                      \
  if (_Generic(m->name, mjtNum * : 1, default : 0))                                                \
    for (long k = 0; k < (long)m->nr * (nc); k++)                                                  \
      ((mjtNum*)m->name)[k] = (float)((mjtNum*)m->name)[k];
  MJMODEL_POINTERS
#undef X
#undef XNV
  m->opt.timestep = (float)m->opt.timestep;
  for (int k = 0; k < 3; k++) m->opt.gravity[k] = (float)m->opt.gravity[k];
}

void fs_replay_reset_world(const mjModel* m, const fsReplayBinding* b, mjData* d) {
  if (b->key >= 0)
    mj_resetDataKeyframe(m, d, b->key);
  else
    mj_resetData(m, d);
  for (int i = 0; i < b->nadhesion; i++) d->ctrl[b->adhesion[i]] = 1.0;
}

int fs_replay_tracked_columns(const fsReplayBinding* b) {
  int n = 0;
  for (int a = 0; a < b->nact; a++) n += b->actuator_joint[a] >= 0;
  return n;
}

void fs_replay_binding_free(fsReplayBinding* b) {
  if (!b) return;
  free(b->actuator);
  free(b->actuator_joint);
  free(b->actuator_names);
  free(b->adhesion);
  free(b->joint_id);
  free(b->joint_qposadr);
  free(b->joint_names);
  memset(b, 0, sizeof *b);
}
