// Comparison of the constraint rows (common/engine/stage_constraint.h) with MuJoCo's
// mjData.efc_* (tests/engine/test_constraint.c).
#ifndef FLYSIM_COMMON_PARITY_EFC_H
#define FLYSIM_COMMON_PARITY_EFC_H

#include <mujoco/mujoco.h>

#include "common/model/worlds.h"
#include "common/parity/harness.h"

#define fsh_compare_efc         FS_PREC(fsh_compare_efc)
#define fsh_contact_sets_differ FS_PREC(fsh_contact_sets_differ)

/// Compare the constraint-row fields (kind FS_KIND_EFC) that `stage` writes (those in
/// tol->only if given), in every world (but those tol->skip leaves out), with MuJoCo's: nefc,
/// efc_type, efc_id and efc_J_rownnz exactly; reals row by row (efc_J through the rows' pair
/// chains: MuJoCo's sparse rows must have the same columns, its dense rows no non-zero elsewhere)
/// with error = |ours - MuJoCo| / max(|MuJoCo|, floor x the field's largest |MuJoCo| in the world;
/// efc_pos: the world's largest contact coordinate), within tol->rel -- in float32, R, D and diagA
/// also within what float32 inputs explain (their sensitivity to imp near 0 or 1 and to the
/// position in the impedance's transition; see efc.c), and efc_state may differ on a row whose
/// MuJoCo force is within tol->rel of the world's largest of 0 (at its boundary). A world
/// whose nefc differs fails every field
/// (its rows cannot be paired). Prints per field the element nearest its bound; returns the number
/// of failed fields. worst: the largest error (accumulated) of the real fields, [1] of R, D and
/// diagA, [0] of the others.
int fsh_compare_efc(const char* label, const fsModel* m, const fsWorlds* b, const mjModel* mj,
                    mjData* const* ref, const fshTol* tol, int stage, double worst[2]);

/// Worlds whose contacts differ from MuJoCo's in what decides the rows (count, geoms,
/// dim, exclude) into skip (nworld; 1: differs); returns how many.
int fsh_contact_sets_differ(const fsModel* m, const fsWorlds* b, mjData* const* ref, char* skip);

#endif
