// The host runner: the stages run where the batch is (cpu/serial.h).
#include <stdio.h>

#include "cpu/serial.h"
#include "common/parity/harness.h"

typedef struct HostRunner {
  const fsModel* m;
} HostRunner;

static int host_open(void* self, fsModel* m, int nworld, fsError* err) {
  (void)nworld;
  ((HostRunner*)self)->m = m;
  double x;
  return fs_serial_perturb_passive(m, &x, err);
}

static int host_run(void* self, fsWorlds* b, int what, int n, fsError* err) {
  (void)err;
  const fsModel* m = ((HostRunner*)self)->m;
  if (what == FSH_FORWARD)
    fs_serial_forward(m, b);
  else if (what == FSH_STEP)
    fs_serial_step(m, b, n);
  else
    fs_serial_stage(m, b, what);
  return 0;
}

static void host_close(void* self) {
  (void)self;
}

fshRunner fsh_runner_host(void) {
  static HostRunner self;
  static char name[32];
  snprintf(name, sizeof name, "host %s", fs_serial_real_name());
  return (fshRunner){name, &self, host_open, host_run, host_close};
}
