// flysim generate's processes (generate/ranks.h).
#include "generate/ranks.h"

#include <stdlib.h>

#if FLYSIM_WITH_MPI
#include <mpi.h>

static int launched_by_mpi(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK") ||
         getenv("SLURM_PROCID");
}

void fs_ranks_init(fsRanks* r, int* argc, char*** argv) {
  r->rank = 0;
  r->size = 1;
  r->local_rank = 0;
  r->mpi = 0;
  if (!launched_by_mpi()) return;
  MPI_Init(argc, argv);
  r->mpi = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r->size);
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!local) local = getenv("SLURM_LOCALID");
  r->local_rank = local ? atoi(local) : r->rank;
}

void fs_ranks_finalize(fsRanks* r) {
  if (r->mpi) MPI_Finalize();
  r->mpi = 0;
}

int fs_ranks_have_mpi(void) {
  return 1;
}

void fs_ranks_barrier(const fsRanks* r) {
  if (r->mpi) MPI_Barrier(MPI_COMM_WORLD);
}

double fs_ranks_reduce(const fsRanks* r, double x, int op) {
  if (!r->mpi) return x;
  double y = x;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE,
                op == 0   ? MPI_SUM
                : op == 1 ? MPI_MIN
                          : MPI_MAX,
                MPI_COMM_WORLD);
  return y;
}

#else

void fs_ranks_init(fsRanks* r, int* argc, char*** argv) {
  (void)argc, (void)argv;
  r->rank = 0;
  r->size = 1;
  r->local_rank = 0;
  r->mpi = 0;
}

void fs_ranks_finalize(fsRanks* r) {
  (void)r;
}

int fs_ranks_have_mpi(void) {
  return 0;
}

void fs_ranks_barrier(const fsRanks* r) {
  (void)r;
}

double fs_ranks_reduce(const fsRanks* r, double x, int op) {
  (void)r, (void)op;
  return x;
}

#endif
