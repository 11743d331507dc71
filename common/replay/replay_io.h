// A replay's HDF5 file: the recorder's series plus everything needed to read them
// (names, world offsets, provenance) and, when the run ends, each world's health.
//
// Layout (T steps recorded, N worlds, J joints, A actuated DoFs, P points; the
// series are those --record selects, common/replay/record.h):
//   /qpos_joint (T, N, J)  /target (T, N, A)  /actuator_force (T, N, A)
//   /site_pos (T, N, 3P)  /thorax_pos (T, N, 3)  float32;  /time (T) float64
//   /joint_names (J)  /actuator_names (A)  /point_names (P)  /target_joint_index (A)
//   /world_start (N)  /world_warnings (N, W) int32  /warning_names (W)
//   /world_first_warning_step (N)  /world_solver_limit_steps (N)
//   /world_solver_error_steps (N)  /world_peak_contacts (N)
//   attributes: units, timestep, model_file, targets_file, mujoco_version,
//   flysim_version, command_line, backend, precision, nworld, steps_planned,
//   steps_recorded, warmup_steps, recorded, created, complete, stop_reason
//   and, from the caller at the end (fs_replay_recorder_close_with): /mujoco_timing
//   (--mujoco-timing), /pose, /plots and /render (--save-data;
//   common/outputs/replay_outputs.h)
#ifndef FLYSIM_COMMON_REPLAY_REPLAY_IO_H
#define FLYSIM_COMMON_REPLAY_REPLAY_IO_H

#include "common/recorder/recorder.h"
#include "common/replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsReplayMeta {
  const char* backend;      // "cpu", "host" or "cuda"
  const char* precision;    // the stepper's real: "f64" (cpu: MuJoCo's), "f32" or "f64"
  const char* command_line; // as typed
  int nthread;              // CPU threads (0 if not applicable)
} fsReplayMeta;

/// Create path with the replay's series and metadata.
fsRecorder* fs_replay_recorder_open(const fsReplay* r, const char* path, int block,
                                    const fsReplayMeta* meta, fsError* err);

/// Write each world's health (status: N, or NULL when the worlds never ran: zeros) and
/// the stop reason, and close the file.
int fs_replay_recorder_close(fsRecorder* rec, const fsReplay* r, const fsWorldStatus* status,
                             const char* stop_reason, fsError* err);

/// Writes more groups into the open file at the end of a run (nstep: steps recorded),
/// e.g. /mujoco_timing, /pose, /plots. Non-zero with err on failure.
typedef int (*fsReplayExtraWriter)(void* arg, hid_t file, const char* path, long long nstep,
                                   fsError* err);

/// fs_replay_recorder_close, calling extra (if not NULL) before the file is closed; the
/// file is closed (and compressed) even if extra fails.
int fs_replay_recorder_close_with(fsRecorder* rec, const fsReplay* r, const fsWorldStatus* status,
                                  const char* stop_reason, fsReplayExtraWriter extra, void* arg,
                                  fsError* err);

#ifdef __cplusplus
}
#endif
#endif
