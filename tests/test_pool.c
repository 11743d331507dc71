// The thread pool both CPU backends step on (cpu/pool.h): a pool of one thread runs the job
// on the caller's thread (no hand-off), a larger one runs share 0 there and every other
// share once on a worker of its own, job after job with none lost, spinning or not.
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu/pool.h"
#include "tests/testutil.h"

enum { MAX_THREADS = 8 };

typedef struct Job {
  pthread_t caller;
  int ran[MAX_THREADS];      // times each share ran in this job
  pthread_t by[MAX_THREADS]; // the thread that ran it
  atomic_long sum;           // the jobs' work, summed over shares
  long work;                 // loop iterations a share
} Job;

static void share(void* arg, int t) {
  Job* j = arg;
  j->ran[t]++;
  j->by[t] = pthread_self();
  long x = 0;
  for (long i = 0; i < j->work; i++) x += i & 7;
  atomic_fetch_add(&j->sum, x + 1);
}

// n threads, `jobs` jobs of a little work each (none: the hand-offs alone).
static void check_pool(int n, int jobs, long work) {
  fsError err;
  fsPool* p = fs_pool_create(n, &err);
  CHECK_MSG(p != NULL, "fs_pool_create(%d): %s", n, err.msg);
  if (!p) return;
  Job j = {.caller = pthread_self(), .work = work};
  atomic_init(&j.sum, 0);
  long expect = 0;
  for (long i = 0; i < work; i++) expect += i & 7;
  int bad = 0;
  for (int k = 0; k < jobs && !bad; k++) {
    for (int t = 0; t < n; t++) j.ran[t] = 0;
    fs_pool_run(p, share, &j);
    for (int t = 0; t < n; t++) bad |= j.ran[t] != 1;
    bad |= !pthread_equal(j.by[0], j.caller);
    for (int t = 1; t < n; t++) bad |= pthread_equal(j.by[t], j.caller);
    CHECK_MSG(!bad, "%d threads, job %d: every share once, share 0 on the caller's thread", n, k);
  }
  for (int a = 1; a < n; a++)
    for (int b = a + 1; b < n; b++)
      CHECK_MSG(!pthread_equal(j.by[a], j.by[b]), "%d threads: shares %d and %d on one worker", n,
                a, b);
  if (!bad) CHECK(atomic_load(&j.sum) == (long)jobs * n * (expect + 1));
  fs_pool_destroy(p);
}

int main(void) {
  // the default spin, then none (every wait a sleep), then spinning up to 10 ms
  const char* spin[3] = {NULL, "0", "10000"};
  for (int s = 0; s < 3; s++) {
    if (spin[s])
      setenv("FLYSIM_POOL_SPIN_US", spin[s], 1);
    else
      unsetenv("FLYSIM_POOL_SPIN_US");
    for (int n = 1; n <= 4; n++) {
      check_pool(n, 3000, 0);
      check_pool(n, 300, 20000);
    }
  }
  fsError err;
  fsPool* p = fs_pool_create(3, &err); // created and destroyed without a job
  CHECK(p != NULL);
  fs_pool_destroy(p);
  return fs_test_finish("test_pool");
}
