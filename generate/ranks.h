// flysim generate's processes: MPI ranks when flysim was built with MPI and runs under
// mpirun (or srun), else one process. The rest of generate/ calls these and never MPI.
#ifndef FLYSIM_GENERATE_RANKS_H
#define FLYSIM_GENERATE_RANKS_H

typedef struct fsRanks {
  int rank, size; // this process and how many (0 and 1 without MPI)
  int local_rank; // on this node (for --gpus-per-node)
  int mpi;        // 1 if MPI was started
} fsRanks;

/// Start MPI if this process was launched by mpirun/srun and flysim has MPI.
void fs_ranks_init(fsRanks* r, int* argc, char*** argv);
void fs_ranks_finalize(fsRanks* r);

/// 1 if this flysim was built with MPI.
int fs_ranks_have_mpi(void);

/// Wait for every rank.
void fs_ranks_barrier(const fsRanks* r);

/// Sum (op 0), minimum (1) or maximum (2) of x over the ranks, on every rank.
double fs_ranks_reduce(const fsRanks* r, double x, int op);

#endif
