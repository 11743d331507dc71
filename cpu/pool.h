// A fixed pool of worker threads that run one job at a time: fs_pool_start hands
// every worker fn(arg, worker index) and returns; fs_pool_wait blocks until all
// have returned. The caller's thread stays free in between (it writes HDF5).
#ifndef FLYSIM_CPU_POOL_H
#define FLYSIM_CPU_POOL_H

#include "common/base/error.h"

typedef struct fsPool fsPool;
typedef void (*fsPoolFn)(void* arg, int worker);

fsPool* fs_pool_create(int nworker, fsError* err);
void fs_pool_start(fsPool* p, fsPoolFn fn, void* arg);
void fs_pool_wait(fsPool* p);
void fs_pool_destroy(fsPool* p);

/// Number of online CPU cores.
int fs_cpu_count(void);

#endif
