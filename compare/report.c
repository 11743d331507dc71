// flysim compare's report on the terminal (compare/report.h).
#include "compare/report.h"

#include <math.h>
#include <stdio.h>

#include "common/replay/replay_io.h"

static const char* floor_words(const fsCompareSpec* s) {
  int f32 = s->a.bits == 32;
  switch (s->floor_mode) {
  case FS_FLOOR_F32:
    return f32 ? "its state moved one float32 ulp at the start of the warm-up (--floor f32)"
               : "its state rounded to float32 at the start of the warm-up (--floor f32)";
  case FS_FLOOR_F32_STEP:
    return f32 ? "its state moved one float32 ulp before every step (--floor f32-step)"
               : "in float32 storage: its model and clip rounded to float32, its state before "
                 "every step (--floor f32-step)";
  default:
    return f32 ? "its state moved one float32 ulp at the start of the warm-up (--floor ulp)"
               : "its state moved one float64 ulp at the start of the warm-up (--floor ulp)";
  }
}

void fs_compare_print_header(FILE* f, const fsCompareSpec* s, const fsCompareInputs* in) {
  const fsReplay* p = s->a.plan;
  fprintf(f, "flysim %s, MuJoCo %s\n", fs_version_string(), mj_versionString());
  if (in->no_gpu_note)
    fprintf(f, "note    no GPU here (or flysim built without CUDA): comparing cpu,host -- "
               "flysim's GPU stage code on CPU threads\n");
  const fsCompareSide* side[2] = {&s->a, &s->b};
  for (int k = 0; k < 2; k++)
    fprintf(f, "%s       %s: %s (%s)\n", k ? "B" : "A", side[k]->label, in->what[k], in->desc[k]);
  fprintf(f, "floor   %s again, %s", s->a.label, floor_words(s));
  if (s->floor_runs > 1)
    fprintf(f,
            ";\n        %d runs of every world, the others perturbed at random (%s), the "
            "largest |dq| of the %d (--floor-runs)",
            s->floor_runs,
            fs_floor_moves_ulps(s) ? "ulps in their own directions" : "float32 rounding stochastic",
            s->floor_runs);
  fprintf(f, "\n");
  fprintf(f, "model   %s%s%s\n", in->model, in->model_b[0] ? "; B: " : "", in->model_b);
  fprintf(f, "targets %s%s%s\n", in->targets, in->targets_b[0] ? "; B: " : "", in->targets_b);
  fprintf(f,
          "compare %d world%s x %d steps (%.4g s simulated, %d warm-up steps), %d joint angles "
          "per world\n",
          p->nworld, p->nworld == 1 ? "" : "s", p->nstep, p->nstep * p->m->opt.timestep, p->nwarmup,
          p->bind->njoint);
  fflush(f);
}

static void print_first(FILE* f, const char* what, const int first[FS_CMP_NPAIR]) {
  char v[2][32];
  for (int p = 0; p < 2; p++) {
    if (first[p] < 0)
      snprintf(v[p], sizeof v[p], "never");
    else
      snprintf(v[p], sizeof v[p], "%d", first[p]);
  }
  fprintf(f, "  %-34s %14s %14s\n", what, v[0], v[1]);
}

void fs_compare_print_table(FILE* f, const fsCompareSpec* s, const fsCompareResult* r) {
  int n = r->ndone;
  fprintf(f, "\n%d steps compared%s\n", n, r->interrupted ? " (interrupted)" : "");
  fprintf(f, "  %-34s %14s %14s\n", "", "B vs A", "floor vs A");
  fprintf(f, "  %-34s %14.3e %14.3e\n", "max |dq| over the run (rad)", r->max_dq[0], r->max_dq[1]);
  fprintf(f, "  %-34s %14.3g\n", "  B's over the floor's", r->max_ratio);
  if (n > 0)
    fprintf(f, "  %-34s %14.3e %14.3e\n", "RMS dq at the last step (rad)", r->dq_rms[0][n - 1],
            r->dq_rms[1][n - 1]);
  if (fs_compare_root_qposadr(s->a.plan->m) >= 0)
    fprintf(f, "  %-34s %14.3e %14.3e\n", "max thorax difference (length)", r->max_thorax[0],
            r->max_thorax[1]);
  else
    fprintf(f, "  %-34s %14s %14s\n", "max thorax difference (length)", "no free joint", "(held)");
  char what[3][64];
  snprintf(what[0], sizeof what[0], "first step max |dq| > %g rad", s->threshold[FS_CMP_ANGLE]);
  snprintf(what[1], sizeof what[1], "first step thorax > %g", s->threshold[FS_CMP_THORAX]);
  snprintf(what[2], sizeof what[2], "first step contact counts differ");
  for (int k = 0; k < FS_CMP_NTHRESH; k++) {
    int first[2] = {r->first_over[0][k], r->first_over[1][k]};
    print_first(f, what[k], first);
  }
  int ncon_steps[2] = {0, 0};
  for (int t = 0; t < n; t++)
    for (int p = 0; p < 2; p++) ncon_steps[p] += r->ncon[p][t] > 0;
  fprintf(f, "  %-34s %14d %14d\n", "steps with contact counts differing", ncon_steps[0],
          ncon_steps[1]);

  fprintf(f, "\nper world (tracking: RMS |joint angle - target| over the run, degrees)\n");
  fprintf(f, "  %5s %9s %12s %12s %12s %10s %10s  %s\n", "world", "clip row", "final |dq| B",
          "floor", "max |dq| B", "track A", "track B", "problems");
  int shown = 0;
  for (int w = 0; w < r->nworld; w++) {
    const fsCompareWorld* cw = &r->worlds[w];
    if (shown >= 20 && !cw->problem[0] && !cw->problem[1]) continue;
    shown++;
    char prob[64];
    snprintf(prob, sizeof prob, "%s%s%s", cw->problem[0] ? "A" : "",
             cw->problem[0] && cw->problem[1] ? "," : "", cw->problem[1] ? "B" : "");
    fprintf(f, "  %5d %9ld %12.3e %12.3e %12.3e %10.3f %10.3f  %s\n", w, s->a.plan->world_start[w],
            cw->final_dq[0], cw->final_dq[1], cw->max_dq[0], cw->track_rms[0] * 180 / M_PI,
            cw->track_rms[1] * 180 / M_PI, prob[0] ? prob : "-");
  }
  if (shown < r->nworld) fprintf(f, "  (%d more worlds without problems)\n", r->nworld - shown);
}

void fs_compare_print_stages(FILE* f, const fsStageReport* st) {
  fprintf(f, "\nstages (%s, %d worlds from MuJoCo's states): worst error per stage\n", st->runner,
          st->nworld);
  fprintf(f,
          "  (error: |ours - MuJoCo| / max(|MuJoCo|, floor x the field's largest in the world);\n"
          "  step 1 starts world 1 with a NaN control and world 2 with a NaN velocity, as "
          "MuJoCo resets them)\n");
  fprintf(f, "  %-20s %-20s %10s %10s %6s %7s  %s\n", "stage", "field", "error", "bound", "world",
          "element", "ours vs MuJoCo");
  for (int i = 0; i < st->nrow; i++) {
    const fsStageRow* r = &st->rows[i];
    fprintf(f, "  %-20s %-20s %10.2e %10.2e %6d %7d  %.10g vs %.10g%s\n", r->stage, r->field,
            r->err, r->bound, r->world, r->index, r->ours, r->ref, r->pass ? "" : "  <-- FAIL");
  }
}

const char* fs_compare_verdict(const fsCompareResult* r, const fsStageReport* stages) {
  if (r->interrupted) return "incomplete";
  return r->pass && (!stages || stages->pass) ? "pass" : "fail";
}

void fs_compare_print_verdict(FILE* f, const fsCompareSpec* s, const fsCompareResult* r,
                              const fsStageReport* stages) {
  const char* a = s->a.label;
  const char* b = s->b.label;
  const char* size =
      s->floor_mode == FS_FLOOR_ULP && s->a.bits == 64 ? "float64-ulp" : "float32-sized";
  fprintf(f, "\n");
  if (r->ndone == 0) {
    fprintf(f, "verdict: nothing compared\n");
    return;
  }
  fprintf(f,
          "%s: %s differs from %s by %.3gx what %s's own %s perturbation causes (bound %g;\n"
          "        geometric mean over worlds and steps of |dq|, B's over the floor's%s)",
          r->ratio <= s->max_ratio ? "within" : "OUTSIDE", b, a, r->ratio, a, size, s->max_ratio,
          s->floor_runs > 1 ? ", the largest of its runs" : "");
  fprintf(f, "%s\n", r->interrupted ? ", over the steps compared before the interrupt" : "");
  if (r->new_problem_worlds)
    fprintf(f, "OUTSIDE: %d world(s) with problems on %s that %s does not have (see above)\n",
            r->new_problem_worlds, b, a);
  if (stages && !stages->pass) fprintf(f, "OUTSIDE: stages beyond their bounds (see above)\n");
  fprintf(f, "verdict: %s\n", fs_compare_verdict(r, stages));
}

void fs_compare_print_summary(FILE* f, const fsCompareSpec* s, const fsCompareResult* r,
                              const fsStageReport* stages) {
  fprintf(f,
          "summary backend_a=%s backend_b=%s worlds=%d steps=%d floor=%s floor_runs=%d "
          "max_dq_b=%.6g max_dq_floor=%.6g ratio=%.6g max_dq_ratio=%.6g max_ratio=%g "
          "new_problem_worlds=%d stages=%s verdict=%s interrupted=%d\n",
          s->a.label, s->b.label, r->nworld, r->ndone, fs_floor_name(s->floor_mode), s->floor_runs,
          r->max_dq[0], r->max_dq[1], r->ratio, r->max_ratio, s->max_ratio, r->new_problem_worlds,
          !stages ? "not-run" : (stages->pass ? "pass" : "fail"), fs_compare_verdict(r, stages),
          r->interrupted ? 1 : 0);
  fflush(f);
}
