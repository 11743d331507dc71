// A fixed pool of n threads that run one job at a time, the calling thread one of them:
// fs_pool_run runs fn(arg, t) for t = 0 .. n-1, t = 0 on the caller's thread and the others
// on the pool's n - 1 workers, and returns when every one has returned. A pool of one
// thread has no workers and never hands off. Between jobs a worker spins for a while
// before it sleeps, and so does the caller waiting for the workers (FLYSIM_POOL_SPIN_US,
// default FS_POOL_SPIN_US), while the machine has a core for each of the pool's threads:
// a controller's one-step calls find the workers awake, where a wake-up costs a good
// share of a fly's world-step.
#ifndef FLYSIM_CPU_POOL_H
#define FLYSIM_CPU_POOL_H

#include "common/base/error.h"

/// How long a thread spins waiting (for the next job, or for the workers) before it sleeps,
/// in microseconds: FLYSIM_POOL_SPIN_US in the environment (0: never spin), read once a
/// pool, else this. No spinning while other work leaves fewer free cores than threads.
#define FS_POOL_SPIN_US 100

typedef struct fsPool fsPool;
typedef void (*fsPoolFn)(void* arg, int thread);

/// A pool of nthread threads (at least 1): the caller and nthread - 1 workers.
fsPool* fs_pool_create(int nthread, fsError* err);

/// fn(arg, t) for every thread t of the pool (t = 0: the calling thread); returns when all
/// have returned. Calls on one pool must not overlap.
void fs_pool_run(fsPool* p, fsPoolFn fn, void* arg);

void fs_pool_destroy(fsPool* p);

/// Number of online CPU cores.
int fs_cpu_count(void);

#endif
