// flysim bench's outputs: the table on the terminal, and with --out DIR:
//   bench.csv       a row a point: stepper, backend, precision, graph, worlds, threads,
//                   steps, repeats, world-steps/s (median, min, max), x realtime, bytes
//                   per world, the kernel's registers, local bytes, shared bytes,
//                   block, occupancy, problem worlds, peer, ok, error
//   bench.json      the same rows, and the run: machine (CPU, cores, memory), GPU
//                   (name, SMs, memory, clock, driver, runtime), flysim and MuJoCo
//                   versions, commit, command line, model, clip, date
//   throughput.png  world-steps/s against worlds, log-log, a line per stepper and
//                   variant, the peers, and the published anchors (scripts/plot_bench.py)
#ifndef FLYSIM_BENCH_BENCH_IO_H
#define FLYSIM_BENCH_BENCH_IO_H

#include <stdio.h>

#include "bench/sweep.h"

/// The run a bench.json describes.
typedef struct fsBenchMeta {
  const char* command_line;
  const char* model_path;
  const char* targets_path;
  int nstep, nwarmup, repeats;
} fsBenchMeta;

void fs_bench_print_header(FILE* f);
void fs_bench_print_row(FILE* f, const fsBenchRow* r);

/// Peer ratios: each flysim row against the peer's row at the same worlds, printed.
void fs_bench_print_ratios(FILE* f, const fsBenchRow* rows, int n);

/// For each recording row, its throughput over the same point's without recording.
void fs_bench_print_record_cost(FILE* f, const fsBenchRow* rows, int n);

int fs_bench_write_csv(const char* path, const fsBenchRow* rows, int n, fsError* err);
int fs_bench_write_json(const char* path, const fsBenchRow* rows, int n, const fsBenchMeta* meta,
                        fsError* err);

/// DIR/throughput.png from DIR/bench.json.
int fs_bench_plot(const char* json_path, const char* dir, fsError* err);

#endif
