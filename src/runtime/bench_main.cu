/*
 * bench_main.cu — the main program of the micro-benchmarks that measure a GPU's timing database
 * (`kasgen bench` writes it with the program; kept as src/runtime/bench_main.cu in kasgen's
 * sources).  It reads the device's limits, measures the copy bandwidth and the launch overhead,
 * times every benchmark kernel of bench_tables.h at every extra shared-memory size, and writes
 * the database XML (docs/timingdb.md) with plain stdio.  Depends on CUDA and libc.
 *
 *   kasbench [OUTDIR [single|double]]   writes OUTDIR/<gpu-slug>.xml (default: .), or with a
 *                                       precision only its routines, to <gpu-slug>.<precision>.xml
 *                                       (bench/benchdb.sh joins the two halves)
 */
#include "bench_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <time.h>
#include <unistd.h>

#include "bench_tables.h" /* tables[]: every function's kernels; KASGEN_VERSION */

#define CHECK(call) do { cudaError_t err_ = (call); if (err_ != cudaSuccess) { \
  fprintf(stderr, "kasbench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
          cudaGetErrorString(err_)); exit(1); } } while (0)

static const size_t N = (size_t)1 << 22;   /* elements: inputs far beyond the L2 */
static const int MAX_REALS = 81;           /* largest type */
static const int EXTRA[] = {0, 8192, 24576, 49152, 98304, 163840, 225280};
static const int REPS = 5;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y);
}

/* Fills the buffer as doubles, positive and never zero; read as floats, the same bytes are
 * normal numbers too (the halves of such doubles), so one buffer serves both precisions. */
__global__ void kb_fill(double *p, size_t count) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = 0.5 + (double)(i % 1021) * (1.0 / 1021.0);
}

__global__ void kb_empty(void) {}

/* Median milliseconds of one launch of e's kernel with `smem` dynamic shared bytes; a
 * component-major array has N elements per component row (ld = N). */
static float time_entry(const BenchEntry *e, int smem, const void *in, void *out,
                        cudaEvent_t t0, cudaEvent_t t1) {
  CHECK(cudaFuncSetAttribute(e->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  size_t n = N, ld = N; float seed = 0.75f;
  void *args[] = {(void *)&in, (void *)&out, (void *)&n, (void *)&ld, (void *)&seed};
  dim3 grid((unsigned)((N + e->e - 1) / e->e)), block(e->bx, e->by, e->bz);
  float ms[REPS + 1];
  for (int r = 0; r <= REPS; r++) {   /* r = 0 warms up */
    CHECK(cudaEventRecord(t0));
    CHECK(cudaLaunchKernel(e->kernel, grid, block, args, (size_t)smem, 0));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms[r], t0, t1));
  }
  qsort(ms + 1, REPS, sizeof *ms, cmp_float);
  return ms[1 + REPS / 2];
}

/* Read+write bytes per second of a large device-to-device copy, GB/s. */
static double copy_bandwidth(void *a, void *b, size_t bytes, cudaEvent_t t0, cudaEvent_t t1) {
  float best = 1e30f;
  for (int r = 0; r < 8; r++) {
    float ms;
    CHECK(cudaEventRecord(t0));
    CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (r > 0 && ms < best) best = ms;
  }
  return 2.0 * (double)bytes / (best * 1e6);
}

/* Nanoseconds per launch of back-to-back empty kernels. */
static double launch_overhead(cudaEvent_t t0, cudaEvent_t t1) {
  const int launches = 2000; float ms;
  kb_empty<<<1, 32>>>(); CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventRecord(t0));
  for (int i = 0; i < launches; i++) kb_empty<<<1, 32>>>();
  CHECK(cudaEventRecord(t1));
  CHECK(cudaEventSynchronize(t1));
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  return ms * 1e6 / launches;
}

static void xml_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '&') fputs("&amp;", f); else if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f); else if (*s == '"') fputs("&quot;", f);
    else if ((unsigned char)*s >= 32) fputc(*s, f);
  }
}

static void make_slug(const char *name, char *slug, size_t cap) {
  size_t k = 0; int dash = 0;
  for (const char *s = name; *s && k + 2 < cap; s++) {
    if (isalnum((unsigned char)*s)) { slug[k++] = (char)tolower((unsigned char)*s); dash = 0; }
    else if (!dash && k > 0) { slug[k++] = '-'; dash = 1; }
  }
  while (k > 0 && slug[k - 1] == '-') k--;
  slug[k] = '\0';
}

static int same_routine(const BenchEntry *a, const BenchEntry *b) {
  return !strcmp(a->impl, b->impl) && !strcmp(a->kind, b->kind) && a->index == b->index &&
         !strcmp(a->placement, b->placement) && !strcmp(a->precision, b->precision) &&
         !strcmp(a->layout, b->layout) && a->width == b->width;
}

/* Writes the points of the routine whose entries are [from, to) of the flat list, when it has
 * any (a routine of the other precision, or beyond the shared-memory limit, has none). */
static void write_routine(FILE *f, const BenchEntry *const *flat, const float *ns, int from,
                          int to, int nextra) {
  int points = 0;
  for (int k = from * nextra; k < to * nextra; k++) points += ns[k] >= 0;
  if (!points) return;
  const BenchEntry *e = flat[from];
  fprintf(f, "  <routine impl=\"%s\" kind=\"%s\" index=\"%d\" placement=\"%s\"\n"
             "           precision=\"%s\" layout=\"%s\" width=\"%d\">\n",
          e->impl, e->kind, e->index, e->placement, e->precision, e->layout, e->width);
  for (int i = from; i < to; i++)
    for (int x = 0; x < nextra; x++) {
      float v = ns[(size_t)i * nextra + x];
      if (v >= 0) fprintf(f, "    <point e=\"%d\" extra-smem=\"%d\" ns=\"%.6g\"/>\n",
                         flat[i]->e, EXTRA[x], v);
    }
  fprintf(f, "  </routine>\n");
}

int main(int argc, char **argv) {
  const char *outdir = argc > 1 ? argv[1] : ".";
  const char *only = argc > 2 ? argv[2] : NULL; /* one precision, or NULL for both */
  if (only && strcmp(only, "single") && strcmp(only, "double")) {
    fprintf(stderr, "usage: kasbench [OUTDIR [single|double]]\n");
    return 2;
  }
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  char slug[256];
  make_slug(p.name, slug, sizeof slug);
  size_t doubles = N * MAX_REALS + 64; /* room for the largest type in double precision */
  double *in, *out;
  CHECK(cudaMalloc(&in, doubles * sizeof(double)));
  CHECK(cudaMalloc(&out, doubles * sizeof(double)));
  kb_fill<<<4096, 256>>>(in, doubles);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  double gbs = copy_bandwidth(in, out, doubles * sizeof(double) / 4, t0, t1);
  double launch_ns = launch_overhead(t0, t1);
  fprintf(stderr, "kasbench: %s: %d SMs, copy %.0f GB/s, launch %.0f ns\n", p.name,
          p.multiProcessorCount, gbs, launch_ns);
  int total = 0, timed = 0;
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) total += tables[t].count;
  const BenchEntry **flat = (const BenchEntry **)calloc((size_t)total, sizeof *flat);
  for (size_t t = 0, k = 0; t < sizeof tables / sizeof *tables; t++)
    for (int i = 0; i < tables[t].count; i++) flat[k++] = &tables[t].entries[i];
  const int nextra = (int)(sizeof EXTRA / sizeof *EXTRA);
  float *ns = (float *)calloc((size_t)total * nextra, sizeof(float));
  for (int done = 0; done < total; done++) {
    const BenchEntry *e = flat[done];
    for (int x = 0; x < nextra; x++) ns[(size_t)done * nextra + x] = -1.0f;
    if (only && strcmp(e->precision, only)) continue;
    for (int x = 0; x < nextra; x++) {
      int smem = e->own_smem + EXTRA[x];
      if (smem > (int)p.sharedMemPerBlockOptin) continue;
      ns[(size_t)done * nextra + x] = time_entry(e, smem, in, out, t0, t1) * 1e6f / (float)N;
    }
    timed++;
    fprintf(stderr, "\rkasbench: %d/%d %s %s %d %s %s %s W=%d e=%d     ", done + 1, total,
            e->impl, e->kind, e->index, e->placement, e->precision, e->layout, e->width, e->e);
  }
  fprintf(stderr, "\n");
  char path[4096];
  snprintf(path, sizeof path, only ? "%s/%s.%s.xml" : "%s/%s.xml", outdir, slug, only);
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); return 1; }
  char date[64]; time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<kasgen-timings version=\"2\">\n");
  fprintf(f, "  <device name=\""); xml_escaped(f, p.name);
  fprintf(f, "\" slug=\"%s\"\n          sm-count=\"%d\" smem-per-sm=\"%zu\" "
             "smem-per-block-optin=\"%zu\"\n          regs-per-sm=\"%d\" "
             "regs-per-block=\"%d\" max-threads-per-sm=\"%d\"\n          "
             "max-blocks-per-sm=\"%d\" max-threads-per-block=\"%d\" warp-size=\"%d\"\n"
             "          l2-bytes=\"%d\" copy-gbs=\"%.1f\" launch-overhead-ns=\"%.0f\"/>\n",
          slug, p.multiProcessorCount, (size_t)p.sharedMemPerMultiprocessor,
          (size_t)p.sharedMemPerBlockOptin, p.regsPerMultiprocessor, p.regsPerBlock,
          p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.maxThreadsPerBlock,
          p.warpSize, p.l2CacheSize, gbs, launch_ns);
  fprintf(f, "  <generated date=\"%s\" nvcc=\"%d.%d\" kasgen=\"%s\" "
             "elements=\"%zu\"/>\n",
          date, __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, KASGEN_VERSION, N);
  for (int from = 0, to; from < total; from = to) {
    for (to = from + 1; to < total && same_routine(flat[from], flat[to]); to++) {}
    write_routine(f, flat, ns, from, to, nextra);
  }
  fprintf(f, "</kasgen-timings>\n");
  if (fclose(f) != 0) { perror(path); return 1; }
  printf("wrote %s (%d of %d routine kernels)\n", path, timed, total);
  free(ns);
  free(flat);
  return 0;
}
