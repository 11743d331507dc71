// Host emulation of a warp's lanes (builds with FS_EMULATE_LANES): the device's
// execution model on the CPU, for CI machines without a GPU. Each world runs on
// fs_lane_count() threads (the device's FS_WORLD_LANES unless set otherwise, at most
// FS_EMU_NLANE) that share its FS_FOR_LANE loops and meet at FS_SYNC() (a
// barrier) and FS_ANY() (a barrier and an OR), as a warp's lanes do. A missing
// FS_SYNC between a write and another lane's read is then a data race that
// ThreadSanitizer reports; a sync some lanes skip deadlocks the barrier. FS_ANY and
// fs_lane_sum are barriers here, and the device starts both with __syncwarp, so the
// two agree on what they order.
#ifndef FLYSIM_COMMON_EXEC_LANES_H
#define FLYSIM_COMMON_EXEC_LANES_H

#ifdef __cplusplus
extern "C" {
#endif

#define FS_EMU_NLANE 32

/// This thread's lane (0 outside fs_lanes_run).
int fs_lane_id(void);
/// Lanes per world: the environment's FLYSIM_EMU_LANES if set, else the device's
/// FS_WORLD_LANES (common/exec/real.h), until fs_lanes_set_count.
int fs_lane_count(void);
/// Run the following worlds on n lanes (a power of two from 1 to FS_EMU_NLANE); -1 if
/// n is not one. Call between runs.
int fs_lanes_set_count(int n);
/// Wait for every lane (__syncwarp).
void fs_lane_sync(void);
/// 1 if p is non-zero on any lane (__any_sync); every lane must call it.
int fs_lane_any(int p);
/// The sum of x over the lanes, added in the device's butterfly order (fs_lane_sum);
/// every lane must call it. The emulation builds use double reals.
double fs_lane_sum_emu(double x);
/// Run fn(arg) on fs_lane_count() lanes and wait for them (one world at a time).
void fs_lanes_run(void (*fn)(void*), void* arg);

// The lane-utilisation profile (builds with FS_LANES_PROFILE; bench/proxies/lanes_profile.c).
// Each lane's work between two syncs (a phase) is timed with the CPU's cycle counter,
// less the cost of an empty phase; a warp would spend the busiest lane's time on the
// phase (its span) with n = fs_lane_count() lane slots. Per label (FSI_MARK):
//   utilisation = the lanes' work / (n x the spans),
//   serial      = the spans of phases where the other n - 1 lanes together worked less
//                 than a quarter of the busiest one (one lane's work, the rest idle).
// A phase with a span over 1e6 cycles (the thread was descheduled, which the 32
// threads on a few cores make happen) is dropped and counted.
typedef struct fsLaneStat {
  double work, span, serial_span; // cycles
  long phases, serial_phases, dropped;
} fsLaneStat;

/// Set this lane's label (FSI_MARK).
void fs_lane_mark(int label);
/// Zero the statistics (e.g. after a warm-up).
void fs_lanes_profile_reset(void);
/// The statistics per label (nlabel of them) into out; the empty phase's cost (cycles).
double fs_lanes_profile_read(fsLaneStat* out, int nlabel);

#ifdef __cplusplus
}
#endif
#endif
