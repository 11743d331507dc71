// The pool (cpu/pool.h): a job is published by bumping `generation` (release); a worker
// that sees it (acquire) runs its share and counts `pending` down; the last one down wakes
// the caller. Both sides spin up to the pool's spin time, then sleep on a condition
// variable; whoever changes what a sleeper waits for takes the lock before it signals, so
// that no wake-up is lost between a sleeper's last look and its wait.
//
// Spinning pays only while each of the pool's threads has a core of its own: on a machine
// busy with other work a spinning thread takes the time slices its partner needs (2 worlds
// on 2 threads of a 2-core VM running two builds: one-step calls at half the block rate
// with 100 us of spinning, near it without). So the caller looks at the machine's
// runnable threads (/proc/loadavg), at most every FS_POOL_LOOK_NS, and the pool spins only
// while the others' and the pool's together fit the cores this process may run on.
#include "cpu/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { FS_POOL_LOOK_NS = 10 * 1000 * 1000 };

struct fsPool {
  int n;                // threads in a job, the caller's included
  int nworker;          // workers started (n - 1 once created)
  pthread_t* threads;   // (n - 1)
  long spin_max_ns;     // how long a waiting thread spins before it sleeps, cores allowing
  atomic_long spin_ns;  // ... now: spin_max_ns, or 0 while the machine is busy
  long looked_ns;       // when the caller last looked at the machine's load
  int ncore;            // the cores this process may run on
  atomic_int spinning;  // workers spinning now (running, in the machine's count)
  pthread_mutex_t lock; // guards the sleeps
  pthread_cond_t start; // a new job (generation changed) or quit
  pthread_cond_t done;  // the last worker finished the job
  atomic_ulong generation;
  atomic_int pending; // workers still in the current job
  atomic_int quit;
  fsPoolFn fn; // the job (written before generation's release, read after its acquire)
  void* arg;
};

typedef struct {
  fsPool* pool;
  int index;
} WorkerArg;

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Spin until ready(p, x) or the pool's spin time has passed: 1 if ready.
static int spin_until(fsPool* p, int (*ready)(fsPool*, unsigned long), unsigned long x) {
  if (ready(p, x)) return 1;
  long spin = atomic_load_explicit(&p->spin_ns, memory_order_relaxed);
  if (spin <= 0) return 0;
  long end = now_ns() + spin;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      cpu_relax();
      if (ready(p, x)) return 1;
    }
    if (now_ns() >= end) return 0;
  }
}

// A job after generation `seen`, or quit.
static int job_ready(fsPool* p, unsigned long seen) {
  return atomic_load_explicit(&p->generation, memory_order_acquire) != seen ||
         atomic_load_explicit(&p->quit, memory_order_acquire);
}

// Every worker done with the current job.
static int job_done(fsPool* p, unsigned long unused) {
  (void)unused;
  return atomic_load_explicit(&p->pending, memory_order_acquire) == 0;
}

static void* worker_main(void* p) {
  WorkerArg* wa = p;
  fsPool* pool = wa->pool;
  int index = wa->index;
  free(wa);
  unsigned long seen = 0;
  for (;;) {
    atomic_fetch_add_explicit(&pool->spinning, 1, memory_order_relaxed);
    int ready = spin_until(pool, job_ready, seen);
    atomic_fetch_sub_explicit(&pool->spinning, 1, memory_order_relaxed);
    if (!ready) {
      pthread_mutex_lock(&pool->lock);
      while (!job_ready(pool, seen)) pthread_cond_wait(&pool->start, &pool->lock);
      pthread_mutex_unlock(&pool->lock);
    }
    if (atomic_load_explicit(&pool->quit, memory_order_acquire)) return NULL;
    seen = atomic_load_explicit(&pool->generation, memory_order_acquire);
    pool->fn(pool->arg, index);
    if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&pool->lock); // the caller may be between its last look and its wait
      pthread_cond_signal(&pool->done);
      pthread_mutex_unlock(&pool->lock);
    }
  }
}

// The machine's runnable threads now (/proc/loadavg's fourth field, "running/total"),
// or -1 where it cannot be read.
static int runnable_threads(void) {
  FILE* f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  int running = -1, total;
  if (fscanf(f, "%*f %*f %*f %d/%d", &running, &total) != 2) running = -1;
  fclose(f);
  return running;
}

// The caller, before a job: spin only while the other runnable threads and the pool's n
// fit the cores (the count includes the caller and the workers spinning now); looked up at
// most every FS_POOL_LOOK_NS.
static void look_at_load(fsPool* p) {
  if (p->spin_max_ns <= 0) return;
  long now = now_ns();
  if (p->looked_ns && now - p->looked_ns < FS_POOL_LOOK_NS) return;
  p->looked_ns = now;
  int running = runnable_threads();
  if (running < 0) return; // unknown: as configured
  int ours = 1 + atomic_load_explicit(&p->spinning, memory_order_relaxed);
  int others = running > ours ? running - ours : 0;
  atomic_store_explicit(&p->spin_ns, others + p->n <= p->ncore ? p->spin_max_ns : 0,
                        memory_order_relaxed);
}

// The cores this process may run on (its affinity), else the online ones.
static int usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return fs_cpu_count();
}

// FLYSIM_POOL_SPIN_US, else FS_POOL_SPIN_US; in nanoseconds.
static long spin_ns_of_env(void) {
  const char* s = getenv("FLYSIM_POOL_SPIN_US");
  char* end;
  long us = s && *s ? strtol(s, &end, 10) : FS_POOL_SPIN_US;
  if (s && *s && (*end || us < 0 || us > 1000000)) us = FS_POOL_SPIN_US;
  return us * 1000L;
}

fsPool* fs_pool_create(int nthread, fsError* err) {
  if (nthread < 1) nthread = 1;
  fsPool* p = fs_calloc(err, "the thread pool", 1, sizeof *p);
  if (!p) return NULL;
  p->n = nthread;
  p->spin_max_ns = spin_ns_of_env();
  p->ncore = usable_cores();
  atomic_init(&p->spin_ns, p->n <= p->ncore ? p->spin_max_ns : 0);
  atomic_init(&p->spinning, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->pending, 0);
  atomic_init(&p->quit, 0);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  if (nthread == 1) return p;
  p->threads = fs_calloc(err, "the thread pool", (unsigned)(nthread - 1), sizeof(pthread_t));
  if (!p->threads) {
    fs_pool_destroy(p);
    return NULL;
  }
  for (int i = 1; i < nthread; i++) {
    WorkerArg* wa = malloc(sizeof *wa);
    if (!wa) {
      fs_fail_oom(err, "the thread pool", sizeof *wa);
      fs_pool_destroy(p);
      return NULL;
    }
    wa->pool = p;
    wa->index = i;
    int rc = pthread_create(&p->threads[i - 1], NULL, worker_main, wa);
    if (rc != 0) {
      free(wa);
      fs_fail(err,
              "cannot start worker thread %d of %d: %s; fix: fewer worker threads "
              "(fsBatchOptions.nthread, --threads)",
              i, nthread - 1, strerror(rc));
      fs_pool_destroy(p);
      return NULL;
    }
    p->nworker++;
  }
  return p;
}

void fs_pool_run(fsPool* p, fsPoolFn fn, void* arg) {
  if (p->n == 1) {
    fn(arg, 0);
    return;
  }
  look_at_load(p);
  p->fn = fn;
  p->arg = arg;
  atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  pthread_mutex_lock(&p->lock); // a worker may be between its last look and its wait
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  fn(arg, 0);
  if (spin_until(p, job_done, 0)) return;
  pthread_mutex_lock(&p->lock);
  while (!job_done(p, 0)) pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

void fs_pool_destroy(fsPool* p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  atomic_store_explicit(&p->quit, 1, memory_order_release);
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nworker; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->start);
  pthread_cond_destroy(&p->done);
  free(p->threads);
  free(p);
}

int fs_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}
