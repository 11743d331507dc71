// What common/api/backend.h gives every backend: its own copy of the control sequence.
#include <stdlib.h>
#include <string.h>

#include "common/api/backend.h"
#include "common/base/error.h"

void fs_ctrl_seq_free(fsCtrlSeq* seq) {
  free(seq->value);
  free(seq->actuator);
  free(seq->world_row);
  memset(seq, 0, sizeof *seq);
}

int fs_ctrl_seq_set(fsCtrlSeq* seq, const fsCtrlSeqSpec* spec, int N, fsError* err) {
  if (!spec) {
    fs_ctrl_seq_free(seq);
    return 0;
  }
  const char* what = "the control sequence";
  size_t nvalue = (size_t)spec->nrow * (size_t)spec->ncol;
  fsCtrlSeq copy = {spec->nrow, spec->ncol, NULL, NULL, NULL, spec->step0};
  if (!(copy.value = fs_calloc(err, what, nvalue, sizeof(double))) ||
      !(copy.actuator = fs_calloc(err, what, (size_t)spec->ncol, sizeof(int))) ||
      !(copy.world_row = fs_calloc(err, what, (size_t)N, sizeof(int64_t)))) {
    fs_ctrl_seq_free(&copy);
    return -1;
  }
  memcpy(copy.value, spec->value, nvalue * sizeof(double));
  memcpy(copy.actuator, spec->actuator, (size_t)spec->ncol * sizeof(int));
  memcpy(copy.world_row, spec->world_row, (size_t)N * sizeof(int64_t));
  fs_ctrl_seq_free(seq);
  *seq = copy;
  return 0;
}
