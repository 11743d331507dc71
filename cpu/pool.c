#include "cpu/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fsPool {
  int n;
  pthread_t* threads;
  pthread_mutex_t lock;
  pthread_cond_t start; // a new job (generation changed) or shutdown
  pthread_cond_t done;  // a worker finished the job
  unsigned long generation;
  int running; // workers still in the current job
  int quit;
  fsPoolFn fn;
  void* arg;
};

typedef struct {
  fsPool* pool;
  int index;
} WorkerArg;

static void* worker_main(void* p) {
  WorkerArg* wa = p;
  fsPool* pool = wa->pool;
  int index = wa->index;
  free(wa);
  unsigned long seen = 0;
  for (;;) {
    pthread_mutex_lock(&pool->lock);
    while (!pool->quit && pool->generation == seen) pthread_cond_wait(&pool->start, &pool->lock);
    if (pool->quit) {
      pthread_mutex_unlock(&pool->lock);
      return NULL;
    }
    seen = pool->generation;
    fsPoolFn fn = pool->fn;
    void* arg = pool->arg;
    pthread_mutex_unlock(&pool->lock);

    fn(arg, index);

    pthread_mutex_lock(&pool->lock);
    if (--pool->running == 0) pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->lock);
  }
}

fsPool* fs_pool_create(int nworker, fsError* err) {
  if (nworker < 1) nworker = 1;
  fsPool* p = fs_calloc(err, "the thread pool", 1, sizeof *p);
  if (!p) return NULL;
  p->threads = fs_calloc(err, "the thread pool", (unsigned)nworker, sizeof(pthread_t));
  if (!p->threads) {
    free(p);
    return NULL;
  }
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  for (int i = 0; i < nworker; i++) {
    WorkerArg* wa = malloc(sizeof *wa);
    if (!wa) {
      fs_fail_oom(err, "the thread pool", sizeof *wa);
      fs_pool_destroy(p);
      return NULL;
    }
    wa->pool = p;
    wa->index = i;
    int rc = pthread_create(&p->threads[i], NULL, worker_main, wa);
    if (rc != 0) {
      free(wa);
      fs_fail(err,
              "cannot start worker thread %d of %d: %s; fix: fewer worker threads "
              "(fsBatchOptions.nthread, --threads)",
              i, nworker, strerror(rc));
      fs_pool_destroy(p);
      return NULL;
    }
    p->n++;
  }
  return p;
}

void fs_pool_start(fsPool* p, fsPoolFn fn, void* arg) {
  pthread_mutex_lock(&p->lock);
  p->fn = fn;
  p->arg = arg;
  p->running = p->n;
  p->generation++;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
}

void fs_pool_wait(fsPool* p) {
  pthread_mutex_lock(&p->lock);
  while (p->running > 0) pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

void fs_pool_destroy(fsPool* p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->quit = 1;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->n; i++) pthread_join(p->threads[i], NULL);
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
