/*
 * cli_search.c — the main job of kasgen (`kasgen SPEC`): load the library, the spec, its DAG and
 * the timing database; search for the best partitions into fused kernels; print a readable
 * ranking for the target GPU; emit the candidates.  Also `kasgen plan` (one line per candidate,
 * for scripts) and `--explain R` (why each buffer of candidate R sits where it does and why each
 * barrier stays).
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_OUT "generated"

void cli_close_session(Session *s) {
  if (s->res) search_result_free(s->res);
  timingdb_free(s->db);
  target_free(s->target);
  if (s->dag) dag_free(s->dag);
  if (s->spec) spec_free(s->spec);
  if (s->lib) library_free(s->lib);
}

static bool write_dot(const Dag *dag, const char *path) {
  FILE *f = output_open(path);
  if (!f) return false;
  dag_write_dot(dag, f);
  return output_close(f, path, "the DAG picture");
}

/* The folder the main job writes: DIR/<spec>/. */
static char *output_folder(const CliOptions *o, const Spec *spec) {
  return xasprintf("%s/%s", o->out_dir ? o->out_dir : DEFAULT_OUT, spec->name);
}

/* Whether the output folder can be written, looked at before the search so that a bad --out,
 * a file of the user's in the folder, or another spec's embed of the same C API beside it,
 * costs nothing. */
static bool output_possible(const CliOptions *o, const Spec *spec) {
  char *dir = output_folder(o, spec);
  bool ok = cli_check_output(dir) && emit_dir_acceptable(dir) &&
            emit_embed_prefix_free(o->out_dir ? o->out_dir : DEFAULT_OUT, spec->name);
  free(dir);
  return ok;
}

/* ---- what the search did and what limited it (stderr) ------------------------------------- */

static const char *plural(long n) { return n == 1 ? "" : "s"; }

/* The intervals mode's result is not the exhaustive top N (a fusion of calls that are not
 * consecutive, such as one call of each iteration of a loop, is never ranked): said plainly, with
 * what ranks every partition and what it costs (stvk_qp at --max-fusion 3: the intervals' #1
 * 25% slower than --exhaustive's, found in about 13 s of CPU against 0.4 s).  --exhaustive is
 * offered only where it would run: past KAS_MAX_FUSIONS it refuses the spec. */
static void report_not_exact(SrcLoc at, const SearchStats *st) {
  const char *lead = "the ranking is not exact: partitions into other fusions than intervals may "
                     "be faster";
  if (!st->too_many)
    diag_note(at, "%s; --exhaustive ranks them all, combining the %ld fusions (slower)", lead,
              st->fusions);
  else if (st->exhaustive_fusions > KAS_MAX_FUSIONS)
    diag_note(at, "%s; --exhaustive would refuse this spec (more than %d convex fusions of at "
              "most %d calls): with a smaller --max-fusion it ranks every partition into kernels "
              "of that many calls at most", lead, KAS_MAX_FUSIONS, st->max_fusion);
  else if (st->exhaustive_fusions > 0)
    diag_note(at, "%s; --exhaustive ranks them all, combining the %ld fusions (it may take very "
              "long)", lead, st->exhaustive_fusions);
  else /* the time ran out before they were counted */
    diag_note(at, "%s; --exhaustive ranks them all by combining every fusion (more than %ld "
              "here: it may take very long), but refuses a spec of more than %d", lead,
              st->exact_limit, KAS_MAX_FUSIONS);
}

static void report_mode(const CliOptions *o, const SearchStats *st) {
  SrcLoc at = {.file = o->spec};
  if (st->mode == SEARCH_INTERVALS && st->too_many) {
    diag_note(at, "search: more than %ld convex fusions (the exact search's limit): partitions "
              "restricted to intervals of the statement order; %ld kernels combined, %ld from "
              "isomorphic ones; %.2f s", st->exact_limit, st->combined, st->memo_hits,
              st->seconds);
    report_not_exact(at, st);
    return;
  }
  if (st->mode == SEARCH_INTERVALS) {
    diag_note(at, "search: %ld of %ld convex fusions could be in the top %d by their bounds "
              "(more than the exact search's %ld): partitions restricted to intervals of the "
              "statement order; %ld kernels combined, %ld from isomorphic ones; %.2f s",
              st->candidates, st->fusions, o->top, st->combine_limit, st->combined,
              st->memo_hits, st->seconds);
    report_not_exact(at, st);
    return;
  }
  diag_note(at, "search: %s over %ld convex fusion%s%s: %ld combined, %ld from isomorphic ones, "
            "%ld bounded out; %.2f s", st->mode == SEARCH_EXACT ? "exact" : "exhaustive",
            st->fusions, plural(st->fusions),
            st->count_cut ? " counted before the time ran out" : "", st->combined, st->memo_hits,
            st->skipped, st->seconds);
}

/* Which part of the work --time-limit cut, each in a note of its own: --exhaustive's count of
 * the fusions, their combining, the interval search or lp_solve's, the kernels of groups of
 * threads (the rank 1's block shapes: report_search, with the variants). */
static void report_time_limit(const SearchStats *st, SrcLoc at) {
  if (st->count_cut)
    diag_note(at, "--time-limit %g s reached while --exhaustive counted the convex fusions (%ld "
              "by then): only the single calls were combined; the ranking holds their partition",
              st->time_limit, st->fusions);
  else if (st->timed_out && st->unplanned > 0)
    diag_note(at, "--time-limit %g s reached: %ld fusion%s left uncombined; the ranking is the "
              "best of what was combined", st->time_limit, st->unplanned, plural(st->unplanned));
  else if (st->timed_out)
    diag_note(at, "--time-limit %g s reached: the search stopped early; the ranking is the best "
              "of the partitions found by then", st->time_limit);
  if (st->groups_cut)
    diag_note(at, "--time-limit %g s reached before the kernels that run a loop's iterations in "
              "groups of threads were planned: the ranking holds none", st->time_limit);
}

/* How far the #1 is from the least time the model in use gives the whole spec's compulsory
 * traffic (bounds.c).  Under a calibration that bound is the calibrated model's, which scales
 * the bytes' time down by as much as its constants can; the bytes at the plain copy bandwidth
 * are named beside it, not compared: the calibrated model may predict below them. */
static void note_bound_gap(SrcLoc at, const TimingDb *db, const SearchStats *st,
                           const Candidate *first) {
  double above = 100.0 * (first->predicted_ns_per_elem / st->bound_ns - 1);
  if (!db->calib.present) {
    diag_note(at, "predicted #1 is %.1f%% above the compulsory-traffic bound (%.4f ns/elem: "
              "%.0f bytes per element at %.0f GB/s, and one launch)",
              above, st->bound_ns, st->bound_bytes, db->dev.copy_gbs);
    return;
  }
  diag_note(at, "predicted #1 is %.1f%% above the calibrated model's compulsory-traffic bound "
            "(%.4f ns/elem: %.0f bytes per element at %.0f GB/s, at the least factors the "
            "calibration can put on them, its kernel-ns and one launch; at the plain copy "
            "bandwidth they take %.4f ns/elem, which the calibrated model may predict below)",
            above, st->bound_ns, st->bound_bytes, db->dev.copy_gbs, st->bound_plain_ns);
}

/* Every limit that may have kept a better candidate out, by the name of its option; and the
 * gap between the predicted best and what no partition can beat. */
static void report_search(const CliOptions *o, const Session *s) {
  const SearchStats *st = &s->res->stats;
  SrcLoc at = {.file = o->spec};
  report_mode(o, st);
  if (st->capped)
    diag_note(at, "--max-fusion %d: kernels of more than %d calls were not considered; a "
              "larger limit may find faster candidates", st->max_fusion, st->max_fusion);
  report_time_limit(st, at);
  if (st->beam_kernels > 0)
    diag_note(at, "the implementations inside %d kernel%s of the ranking were chosen by a beam "
              "of width %d (--beam-width); a wider beam may find faster plans", st->beam_kernels,
              plural(st->beam_kernels), st->beam_width);
  if (st->variants > 0) {
    StrBuf ranks;
    sb_init(&ranks);
    const Candidate *v = NULL;
    for (int r = 0; r < s->res->ncands; r++)
      if (s->res->cands[r].shape_of) {
        sb_printf(&ranks, "%s%d", ranks.len ? ", " : "", r + 1);
        v = &s->res->cands[r];
      }
    const Candidate *base = v ? candidate_shape_base(s->res, v) : NULL;
    if (v && base)
      diag_note(at, "--variants %d: rank%s %s %s rank %d with its kernel %d in other block "
                "shapes, for a GPU run to choose from (kasgen tune)%s", st->variants_asked,
                plural(st->variants), ranks.data, st->variants == 1 ? "is" : "are", base->rank,
                v->shape_of,
                st->partitions_out > 0 ? "; they took the places of the partitions ranked last"
                                       : "");
    sb_free(&ranks);
  }
  if (st->variants_cut)
    diag_note(at, "--time-limit %g s reached while rank 1's kernel was planned in other block "
              "shapes: --variants %d made none", st->time_limit, st->variants_asked);
  if (s->res->ncands > 0 && st->bound_ns > 0) note_bound_gap(at, s->db, st, &s->res->cands[0]);
}

/* Loads and searches; false after the failing stage has reported.  emits: the session will
 * write the output folder (checked, with what the emitters cannot write, before searching). */
/* What --time-limit, when given (on the command line, or in the generation.ini of the folder
 * tune repeats, as the generation was given it), leaves to ptxas after the search (NAN: not
 * given, or 0 for none; ptxas.c then bounds nvcc by itself). */
static double ptxas_time_left(const CliOptions *o, const SearchResult *res) {
  if (!((o->given | o->recorded) & OPT_TIME_LIMIT) || o->time_limit <= 0) return NAN;
  return o->time_limit - res->stats.seconds;
}

bool cli_open_session(const CliOptions *o, Session *s, bool emits) {
  *s = (Session){0};
  if (!cli_load_library_and_spec(o, &s->lib, &s->spec)) return false;
  if (emits && !output_possible(o, s->spec)) return false;
  if (!(s->dag = dag_build(s->spec))) return false;
  if (emits && !emit_supports_dag(s->dag)) return false;
  SrcLoc layouts_at = o->layouts_at.file ? o->layouts_at : (SrcLoc){.file = "--layout"};
  if (!(s->target = target_new_at(s->dag, o->precision, o->layouts, layouts_at))) {
    /* a name the spec lacks, given on the command line (not in generation.ini or a results
     * file, which layouts_at would locate): bad usage, though only the spec could show it */
    if (!o->layouts_at.file) diag_blame_command_line();
    return false;
  }
  if (o->dot_path && !write_dot(s->dag, o->dot_path)) return false;
  if (!(s->db = cli_load_timingdb(o))) return false;
  SearchOptions so = {.top = o->top, .max_fusion = o->max_fusion,
                      .progress = isatty(STDERR_FILENO), .exhaustive = o->exhaustive,
                      .time_limit = o->time_limit, .beam_width = o->beam_width,
                      .target = s->target, .loops = o->loops,
                      .variants = o->variants < 0 ? SEARCH_VARIANTS : o->variants,
                      .n = o->n};
  s->res = search_run(s->dag, s->db, &so);
  if (!s->res) return false;
  /* Opt-in: a cold nvcc run costs seconds, and the default must stay interactive (docs/search.md);
   * `plan` keeps the model's own ranking: the same on every machine (the goldens). */
  if (o->ptxas && strcmp(o->command, "plan"))
    ptxas_rerank(s->dag, s->lib, s->db, s->target, s->res, ptxas_time_left(o, s->res));
  report_search(o, s);
  if (s->res->ncands == 0) {
    diag_error((SrcLoc){.file = o->spec}, "no launchable partition into kernels was found");
    diag_note((SrcLoc){.file = s->db->path}, "on the device this database describes (%s: at most "
              "%d threads and %d bytes of shared memory per block)", s->db->dev.name,
              s->db->dev.max_threads_per_block, s->db->dev.smem_per_block_optin);
    return false;
  }
  return true;
}

/* ---- ranking ---------------------------------------------------------------------------- */

/* "double precision; F component-major" (element-major arrays are not named). */
static void print_arrays(const Session *s) {
  const Target *t = s->target;
  printf("%s precision; arrays ", target_precision_name(t->precision));
  if (!target_has_component(t)) {
    printf("element-major\n");
    return;
  }
  const Dag *dag = s->dag;
  for (int k = 0, first = 1; k < dag->nin_args + dag->nout_args; k++) {
    if (target_arg_layout(t, dag, k) != LAYOUT_COMPONENT) continue;
    printf("%s%s", first ? "" : ", ", dag_arg_name(dag, dag_api_arg(dag, k)));
    first = 0;
  }
  printf(" component-major, the others element-major\n");
}

/* A calibration moves every prediction (docs/model.md, "Calibration"): the ranking says whose
 * constants it applies, so that figures differing from the plain model's are explained. */
static void print_calibration(const TimingDb *db) {
  if (!db->calib.present) return;
  char *store = calibration_store_path(db->path);
  printf("calibrated: the constants of %s are applied (fitted on %d specs, %d candidates; "
         "--uncalibrated: the plain model)\n", store, db->calib.nspecs, db->calib.ncandidates);
  free(store);
}

static void print_target(const TimingDb *db) {
  if (db->analytic)
    printf("predicting with the analytic model (no timing database): %s, %d SMs, %.0f GB/s "
           "copy\n",
           db->dev.name, db->dev.sm_count, db->dev.copy_gbs);
  else
    printf("predicting for %s%s from %s (measured %s, nvcc %s): %d SMs, %.0f GB/s copy\n",
           db->dev.name, db->for_local_gpu ? ", this machine's GPU," : "", db->path,
           db->date ? db->date : "?",
           db->nvcc_version ? db->nvcc_version : "?", db->dev.sm_count, db->dev.copy_gbs);
  print_calibration(db);
}

/* "{mvmul33#0 svmul3#1}": the kernel's calls (sb_kernel_calls); in the ranking, shortened past
 * BRIEF_WIDTH (--explain shows them all). */
static void print_calls(const Dag *dag, const KernelPlan *p, bool brief, FILE *out) {
  StrBuf sb;
  sb_init(&sb);
  sb_kernel_calls(&sb, dag, p);
  char *shown = brief ? brief_list(sb.data ? sb.data : "", " ", BRIEF_WIDTH) : sb_take(&sb);
  fputs(shown, out);
  free(shown);
  sb_free(&sb);
}

/* "mvmul33_1 svmul3_1": the kernel's implementations, shortened past BRIEF_WIDTH. */
static void print_impls(const KernelPlan *p, FILE *out) {
  StrBuf sb;
  sb_init(&sb);
  for (int c = 0; c < p->ncalls; c++) sb_printf(&sb, "%s%s", c ? " " : "", p->impl[c]->name);
  char *brief = brief_list(sb.data ? sb.data : "", " ", BRIEF_WIDTH);
  fputs(brief, out);
  free(brief);
  sb_free(&sb);
}

static int register_buffers(const KernelPlan *p) {
  int n = 0;
  for (int b = 0; b < p->nbuffers; b++) n += p->buffers[b].place == PLACE_REGISTER;
  return n;
}

static void print_kernel(const Dag *dag, const Target *t, const KernelPlan *p, int k) {
  printf("        kernel %d: ", k + 1);
  print_calls(dag, p, true, stdout);
  printf("\n          impls ");
  print_impls(p, stdout);
  /* the kernel as launched, as index.txt and its comment say: the block's threads, all its
   * groups' (threads.c; p->threads is one group's), the shared memory with the staged copies
   * (staging.c) and the groups', the barriers it makes */
  printf("  E=%d  threads=%d  shared=%d B  registers: %d/%d buffers  %d of %d barriers  "
         "%.4f ns/elem\n",
         p->e, threads_in_block(dag, p), staging_kernel_smem(dag, t, p), register_buffers(p),
         p->nbuffers, staging_kernel_barriers(dag, t, p), p->barriers_possible,
         p->predicted_ns_per_elem);
  printf("          %d registers per thread (%s)", p->regs_estimate,
         p->regs_from_ptxas ? "ptxas" : "estimated");
  /* ptxas's two figures, as it gives them: their sum is the traffic the model charges, not a
   * size (docs/model.md, "Barriers and spills") */
  if (p->spill_stores + p->spill_loads > 0)
    printf("  spills: %d bytes stored, %d loaded per thread (penalized)", p->spill_stores,
           p->spill_loads);
  putchar('\n');
  char *loops = roll_summary(dag, t, p);
  if (loops) printf("          %s\n", loops);
  free(loops);
}

/* Whether variant c's kernel k runs other implementations than base's: a shape of other threads
 * per element takes the implementations written for them (docs/search.md, "Other block shapes"),
 * and its barriers and buffers then differ too. */
static bool other_implementations(const Candidate *c, const Candidate *base, int k) {
  const KernelPlan *a = c->kernels[k], *b = base->kernels[k];
  for (int i = 0; i < a->ncalls; i++) /* by call: the two orders may differ */
    for (int j = 0; j < b->ncalls; j++)
      if (a->order[i] == b->order[j] && a->impl[i] != b->impl[j]) return true;
  return false;
}

/* "in 4 groups of 64 threads, one iteration each: N = 0..3" for a kernel of groups (threads.c:
 * a candidate of one kernel, whose plan is one group's). */
static void print_groups(const Dag *dag, const KernelPlan *p, const char *indent) {
  char *loops = candidate_group_loops(dag);
  printf("%sin %d groups of %d threads, one iteration each: %s\n", indent, dag->groups,
         p->threads, loops);
  free(loops);
}

/* base: the candidate whose block shape c is (--variants), or NULL. */
static void print_candidate(const Dag *dag, const Target *t, const Candidate *c,
                            const Candidate *base, const char *label) {
  double ns = c->predicted_ns_per_elem;
  printf("%6s  %9.4f  %9.1f  %d kernel%s\n", label, ns, ns > 0 ? 1000.0 / ns : 0.0, c->nkernels,
         c->nkernels == 1 ? "" : "s");
  if (base) {
    bool others = other_implementations(c, base, c->shape_of - 1);
    printf("        rank %d with its kernel %d in another block shape%s (--variants)\n",
           base->rank, c->shape_of, others ? " and the implementations for it" : "");
  }
  for (int k = 0; k < c->nkernels; k++) print_kernel(dag, t, c->kernels[k], k);
  if (c->dag) print_groups(c->dag, c->kernels[0], "          ");
}

/* What the figures assume: the element count the model predicts for (--n: each kernel's launch
 * is shared among them, and a grid of fewer blocks than the GPU holds fills it only in part;
 * docs/model.md), and its register counts, unless --ptxas asked the compiler, are estimates that
 * may hide spills.  Each on a line of its own, within 80 columns. */
static void print_assumptions(const Session *s, const CliOptions *o) {
  printf("ns/elem at n = %ld elements, each kernel's launch shared among them\n", s->res->n);
  if (!o->ptxas) printf("registers are estimated and may hide spills (--ptxas)\n");
}

/* The unfused form is listed kernel by kernel up to this many calls, or under --explain: past
 * it the listing swamped the ranking (a 65-call spec at --top 5: 199 of 233 lines). */
#define UNFUSED_LISTED_CALLS 10

/* One kernel per call, for comparison: its figures, and its kernels where they are few. */
static void print_unfused(const CliOptions *o, const Session *s) {
  const Candidate *u = s->res->unfused;
  printf("\nfor comparison, one kernel per call (KAS's fallback):\n");
  if (u->nkernels <= UNFUSED_LISTED_CALLS || o->explain) {
    print_candidate(s->dag, s->target, u, NULL, "unfus");
    return;
  }
  double ns = u->predicted_ns_per_elem;
  printf("%6s  %9.4f  %9.1f  %d kernels\n", "unfus", ns, ns > 0 ? 1000.0 / ns : 0.0,
         u->nkernels);
  printf("        (its kernels are listed for at most %d calls, or with --explain R; its code: "
         "unfused/)\n", UNFUSED_LISTED_CALLS);
}

static void print_ranking(const CliOptions *o, const Session *s) {
  print_target(s->db);
  print_arrays(s);
  print_assumptions(s, o);
  printf("%s: %d calls; %d candidate%s (best first)\n\n", s->spec->path, s->dag->nnodes,
         s->res->ncands, s->res->ncands == 1 ? "" : "s");
  printf("%6s  %9s  %9s  %s\n", "rank", "ns/elem", "MElem/s", "kernels");
  for (int r = 0; r < s->res->ncands; r++) {
    char label[16];
    snprintf(label, sizeof label, "%d", s->res->cands[r].rank ? s->res->cands[r].rank : r + 1);
    const Candidate *c = &s->res->cands[r];
    print_candidate(candidate_dag(s->dag, c), s->target, c,
                    c->shape_of ? candidate_shape_base(s->res, c) : NULL, label);
  }
  if (s->res->unfused) print_unfused(o, s);
}

/* ---- --explain -------------------------------------------------------------------------- */

static const char *routine_word(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

static void explain_buffer(const Dag *dag, const Buffer *b) {
  printf("      %-22s ", dag->values[b->value].label);
  if (b->place == PLACE_REGISTER)
    printf("registers (%d float%s per thread)", b->reg_floats, plural(b->reg_floats));
  else
    printf("shared at byte %d (%d B)", b->offset, b->bytes);
  printf("%s%s\n        why: %s\n", b->load ? ", loaded" : "", b->save ? ", saved" : "",
         b->why ? b->why : "(no reason recorded)");
}

static void explain_step(const Dag *dag, const KernelPlan *p, int s) {
  const Step *st = &p->steps[s];
  if (st->barrier_before)
    printf("      -- __syncthreads(): %s\n", st->barrier_why ? st->barrier_why : "(no reason)");
  const Impl *im = p->impl[st->call];
  printf("      %2d. %-7s %s#%d (%s)", s + 1, routine_word(st->kind), im->fn->name,
         p->order[st->call], im->name);
  if (st->kind != ROUTINE_COMPUTE)
    printf(" %s_%d %s", routine_word(st->kind), st->io->index,
           dag_value_label(dag, p->buffers[st->buf[0]].value));
  printf("%s\n", st->recompute_coords ? "  [coordinates recomputed]" : "");
}

static void explain_candidate(const Session *s, const Candidate *c) {
  const Dag *dag = candidate_dag(s->dag, c);
  printf("\nwhy candidate %d is laid out as it is:\n", c->rank);
  /* the reasons name the library's access patterns, which only its format defines (said here,
   * not in the reasons: they are also the generated kernels' comments, which the code digests
   * that tune matches runs by cover) */
  printf("  (a call's INPATTERN k and OUTPATTERN: how its compute routine reads argument k and "
         "writes its result;\n   LSPATTERN: how its load_j or save_j routine moves the buffer; "
         "noreg: the pattern forbids\n   registers; \"runs N threads, ... M\": registers need "
         "the same threads; docs/library-format.md)\n");
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    printf("  kernel %d ", k + 1);
    print_calls(dag, p, false, stdout);
    int made = staging_kernel_barriers(dag, s->target, p); /* the ranking's figures */
    printf(": E=%d, %d threads, %d B shared, %d of %d possible barriers kept\n", p->e,
           threads_in_block(dag, p), staging_kernel_smem(dag, s->target, p), made,
           p->barriers_possible);
    if (dag_groups(dag) > 1) print_groups(dag, p, "    ");
    if (made < p->barriers)
      printf("    (the block's copies fill every shared buffer before the first step: the "
             "plan's barriers below guard nothing and are not made)\n");
    printf("    buffers:\n");
    for (int b = 0; b < p->nbuffers; b++) explain_buffer(dag, &p->buffers[b]);
    printf("    steps:\n");
    for (int st = 0; st < p->nsteps; st++) explain_step(dag, p, st);
  }
}

static bool explain(const CliOptions *o, const Session *s) {
  if (!o->explain) return true;
  if (o->explain > s->res->ncands) {
    fprintf(stderr, "kasgen: error: --explain %d: there %s only %d candidate%s\n", o->explain,
            s->res->ncands == 1 ? "is" : "are", s->res->ncands, s->res->ncands == 1 ? "" : "s");
    return false;
  }
  explain_candidate(s, &s->res->cands[o->explain - 1]);
  return true;
}

/* ---- the harness's memory ---------------------------------------------------------------- */

/* Bytes per element of the largest workspace of the candidates the harness runs (the ranked ones
 * and the unfused form): the intermediates one kernel saves for a later one (emit_cuda.c). */
static double workspace_bytes_per_element(const Session *s) {
  int rb = target_real_bytes(s->target->precision);
  double most = 0;
  for (int r = 0; r <= s->res->ncands; r++) {
    const Candidate *c = r < s->res->ncands ? &s->res->cands[r] : s->res->unfused;
    if (!c) continue;
    const Dag *dag = candidate_dag(s->dag, c);
    bool *saved = xcalloc((size_t)dag->nvalues + 1, sizeof *saved);
    double bytes = 0;
    for (int k = 0; k < c->nkernels; k++)
      for (int b = 0; b < c->kernels[k]->nbuffers; b++) {
        const Buffer *buf = &c->kernels[k]->buffers[b];
        int v = buf->value;
        if (!buf->save || saved[v] || emit_input_slot(dag, v) >= 0 ||
            emit_output_slot(dag, v) >= 0)
          continue;
        saved[v] = true;
        bytes += (double)rb * dag_value_floats(dag, v);
      }
    free(saved);
    if (bytes > most) most = bytes;
  }
  return most;
}

/* The database records no device memory, so kasgen cannot tell whether the harness's arrays fit
 * the GPU at --n; past HARNESS_NOTE_BYTES it says what they take (inputs, outputs and the
 * largest workspace; the harness's extra copies of the inputs matter only for small n). */
#define HARNESS_NOTE_BYTES (8.0 * 1024 * 1024 * 1024)

static void note_harness_memory(const CliOptions *o, const Session *s) {
  NodeSet all = nodeset_range(0, s->dag->nnodes);
  double per_element = bound_bytes(s->dag, &all, target_real_bytes(s->target->precision)) +
                       workspace_bytes_per_element(s);
  double bytes = per_element * (double)s->res->n;
  if (bytes > HARNESS_NOTE_BYTES)
    diag_note((SrcLoc){.file = o->spec}, "the harness at n = %ld needs about %.0f bytes (%.1f "
              "GiB) of device memory: %.0f bytes per element of inputs, outputs and workspace; "
              "the database does not record the GPU's memory, so whether it fits is not "
              "checked (--n)", s->res->n, bytes, bytes / (1024.0 * 1024 * 1024), per_element);
}

/* A results.xml in the folder is a run of an earlier generation, which emitting keeps (it is
 * the user's measurement) but which the new code may not match: said, so that a report of it
 * does not pass for one of the code just written. */
static void note_kept_results(const char *folder) {
  char *path = xasprintf("%s/results.xml", folder);
  struct stat st;
  if (lstat(path, &st) == 0)
    diag_note((SrcLoc){.file = path}, "kept from a run before this generation (your "
              "measurement, never deleted): `make run` measures the code written now; until "
              "then kasgen report warns where its rows are not of this code");
  free(path);
}

/* ---- commands --------------------------------------------------------------------------- */

int cmd_generate(const CliOptions *o) {
  Session s;
  int rc = EXIT_BAD_INPUT;
  if (cli_open_session(o, &s, true)) {
    note_harness_memory(o, &s);
    print_ranking(o, &s);
    if (!explain(o, &s)) {
      rc = EXIT_USAGE;
    } else {
      char *generation = generation_ini_text(o, &s);
      EmitOptions eo = {.out_dir = o->out_dir ? o->out_dir : DEFAULT_OUT, .default_n = o->n,
                        .target = s.target, .generation_ini = generation};
      fflush(stdout);
      bool written = emit_all(s.dag, s.lib, s.db, s.res, &eo);
      free(generation);
      if (written) {
        printf("\nwrote %s/%s/ (make -C %s/%s run, on a GPU)\n", eo.out_dir, s.spec->name,
               eo.out_dir, s.spec->name);
        char *folder = output_folder(o, s.spec);
        note_kept_results(folder);
        free(folder);
        rc = EXIT_OK;
      }
    }
  }
  cli_close_session(&s);
  return rc;
}

int cmd_plan(const CliOptions *o) {
  Session s;
  int rc = EXIT_BAD_INPUT;
  if (cli_open_session(o, &s, false)) {
    for (int r = 0; r < s.res->ncands; r++) {
      const Candidate *c = &s.res->cands[r];
      char *calls = candidate_calls(s.dag, c);
      printf("%d %.6g %s", r + 1, c->predicted_ns_per_elem, calls);
      const Candidate *base = c->shape_of ? candidate_shape_base(s.res, c) : NULL;
      if (base) { /* the same calls as base: say what differs */
        const KernelPlan *k = c->kernels[c->shape_of - 1];
        printf("  (rank %d with kernel %d in block shape E=%d, %d threads)", base->rank,
               c->shape_of, k->e, threads_in_block(candidate_dag(s.dag, c), k));
      }
      putchar('\n');
      free(calls);
    }
    rc = explain(o, &s) ? EXIT_OK : EXIT_USAGE;
  }
  cli_close_session(&s);
  return rc;
}
