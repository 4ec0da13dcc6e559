/* Tests of the kernel launch queries of the tileiras C API on corpus
 * kernels and the empty module.
 * Usage: kernel_info_test <tests/data dir> <corpus dir> */
#include "tileiras.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)n);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) exit(2);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static tileirasProgram compiled(const unsigned char *data, size_t size, const char *gpu,
                                uint32_t kind) {
  tileirasConfig c;
  CHECK(tileirasConfigInit(&c) == TILEIRAS_SUCCESS);
  c.gpu_name = gpu;
  c.output_kind = kind;
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(&p, &c, data, size) == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramCompile(p) == TILEIRAS_SUCCESS);
  return p;
}

static void test_empty_module(const unsigned char *data, size_t size) {
  tileirasConfig c;
  CHECK(tileirasConfigInit(&c) == TILEIRAS_SUCCESS);
  c.gpu_name = "sm_90";
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(&p, &c, data, size) == TILEIRAS_SUCCESS);
  size_t n = 99;
  /* Before a successful compile: out of order. */
  CHECK(tileirasProgramGetNumKernels(p, &n) == TILEIRAS_ERROR_INVALID_ARGUMENT && n == 99);
  tileirasKernelInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramCompile(p) == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramGetNumKernels(p, &n) == TILEIRAS_SUCCESS && n == 0);
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(info.name == NULL);
  CHECK(tileirasProgramGetNumKernels(p, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramGetNumKernels(NULL, &n) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  tileirasProgramDestroy(&p);
}

static void check_vadd_params(tileirasProgram p) {
  for (uint32_t i = 0; i < 9; i++) {
    tileirasKernelParam q;
    memset(&q, 0, sizeof q);
    q.struct_size = sizeof q;
    CHECK(tileirasProgramGetKernelParam(p, 0, i, &q) == TILEIRAS_SUCCESS);
    char want[64];
    snprintf(want, sizeof want, "vadd_f32_contig_param_%u", i);
    CHECK(q.name != NULL && strcmp(q.name, want) == 0);
    /* (pointer, i32 size, i32 stride) per array: offsets 0, 8, 12, 16, ... */
    uint32_t base = (i / 3) * 16;
    if (i % 3 == 0) {
      CHECK(q.kind == TILEIRAS_PARAM_GLOBAL_POINTER);
      CHECK(strcmp(q.ptx_type, "u64") == 0);
      CHECK(q.offset == base && q.size == 8 && q.align == 8);
    } else {
      CHECK(q.kind == TILEIRAS_PARAM_SCALAR);
      CHECK(strcmp(q.ptx_type, "u32") == 0);
      CHECK(q.offset == base + 4 + 4 * (i % 3) && q.size == 4 && q.align == 4);
    }
  }
  tileirasKernelParam q;
  memset(&q, 0, sizeof q);
  q.struct_size = sizeof q;
  CHECK(tileirasProgramGetKernelParam(p, 0, 9, &q) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramGetKernelParam(p, 1, 0, &q) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramGetKernelParam(p, 0, 0, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(q.name == NULL);
  q.struct_size = sizeof q - 1;
  CHECK(tileirasProgramGetKernelParam(p, 0, 0, &q) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(q.name == NULL);
}

static void test_vadd(const unsigned char *data, size_t size) {
  const char *gpus[] = {"sm_80", "sm_90", "sm_100"};
  for (int g = 0; g < 3; g++) {
    tileirasProgram p = compiled(data, size, gpus[g], TILEIRAS_OUTPUT_CUBIN);
    size_t n = 0;
    CHECK(tileirasProgramGetNumKernels(p, &n) == TILEIRAS_SUCCESS && n == 1);
    tileirasKernelInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS);
    CHECK(info.struct_size == sizeof info);
    CHECK(info.name != NULL && strcmp(info.name, "vadd_f32_contig") == 0);
    CHECK(info.block_dim[0] == 128 && info.block_dim[1] == 1 && info.block_dim[2] == 1);
    CHECK(info.block_is_exact == 1);
    CHECK(info.cluster_dim[0] == 1 && info.cluster_dim[1] == 1 && info.cluster_dim[2] == 1);
    CHECK(info.blocks_are_clusters == 0);
    CHECK(info.min_ctas_per_sm == 1);
    CHECK(info.max_registers == 0);
    CHECK(info.registers >= 8 && info.registers <= 255);
    CHECK(info.static_smem_bytes == 0 && info.dynamic_smem_bytes == 0);
    CHECK(info.param_bytes == 48 && info.num_params == 9);
    check_vadd_params(p);
    /* The name stays valid while the program lives. */
    const char *name = info.name;
    CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS && info.name == name);
    /* Out of range, NULL and short structs leave *info untouched. */
    tileirasKernelInfo other;
    memset(&other, 0x5a, sizeof other);
    other.struct_size = sizeof other;
    CHECK(tileirasProgramGetKernelInfo(p, 1, &other) == TILEIRAS_ERROR_INVALID_ARGUMENT);
    CHECK(tileirasProgramGetKernelInfo(NULL, 0, &other) == TILEIRAS_ERROR_INVALID_ARGUMENT);
    CHECK(tileirasProgramGetKernelInfo(p, 0, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
    other.struct_size = sizeof(size_t);
    CHECK(tileirasProgramGetKernelInfo(p, 0, &other) == TILEIRAS_ERROR_INVALID_ARGUMENT);
    CHECK(other.block_dim[0] == 0x5a5a5a5au);
    /* A caller built against a newer, longer struct: the tail is untouched. */
    unsigned char big[sizeof(tileirasKernelInfo) + 32];
    memset(big, 0xa5, sizeof big);
    size_t big_size = sizeof big;
    memcpy(big, &big_size, sizeof big_size);
    CHECK(tileirasProgramGetKernelInfo(p, 0, (tileirasKernelInfo *)(void *)big) == TILEIRAS_SUCCESS);
    CHECK(big[sizeof(tileirasKernelInfo)] == 0xa5 && big[sizeof big - 1] == 0xa5);
    tileirasProgramDestroy(&p);
  }
  /* PTX output: the same launch facts, but no cubin, so no register count. */
  tileirasProgram p = compiled(data, size, "sm_90", TILEIRAS_OUTPUT_PTX);
  tileirasKernelInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS);
  CHECK(info.block_dim[0] == 128 && info.param_bytes == 48 && info.num_params == 9);
  CHECK(info.registers == 0 && info.cubin_smem_bytes == 0);
  check_vadd_params(p);
  tileirasProgramDestroy(&p);
}

static void test_row_sum(const unsigned char *data, size_t size) {
  /* A reduction across warps declares static shared memory. */
  tileirasProgram p = compiled(data, size, "sm_90", TILEIRAS_OUTPUT_CUBIN);
  tileirasKernelInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS);
  CHECK(info.name != NULL && strcmp(info.name, "row_sum_f32") == 0);
  CHECK(info.registers > 0);
  CHECK(info.cubin_smem_bytes >= info.static_smem_bytes);
  CHECK(info.num_params > 0);
  tileirasProgramDestroy(&p);
}

static void test_cluster(const unsigned char *data, size_t size) {
  /* num_cta_in_cga = 2: no clusters before sm_90, so one CTA per tile block. */
  tileirasProgram p = compiled(data, size, "sm_80", TILEIRAS_OUTPUT_CUBIN);
  tileirasKernelInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS);
  CHECK(info.name != NULL && strcmp(info.name, "matmul_f16_cluster2") == 0);
  CHECK(info.block_is_exact == 1 && info.block_dim[0] >= 32);
  CHECK(info.cluster_dim[0] == 1 && info.cluster_dim[1] == 1 && info.cluster_dim[2] == 1);
  CHECK(info.blocks_are_clusters == 0);
  CHECK(info.min_ctas_per_sm == 1);
  CHECK(info.registers > 0 && info.static_smem_bytes > 0);
  tileirasProgramDestroy(&p);
  /* From sm_90 the tile block is a cluster of two CTAs. */
  p = compiled(data, size, "sm_90", TILEIRAS_OUTPUT_CUBIN);
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(tileirasProgramGetKernelInfo(p, 0, &info) == TILEIRAS_SUCCESS);
  CHECK(info.cluster_dim[0] == 2 && info.cluster_dim[1] == 1 && info.cluster_dim[2] == 1);
  CHECK(info.blocks_are_clusters == 1);
  tileirasProgramDestroy(&p);
}

static void test_unsupported(const unsigned char *data, size_t size) {
  /* A NaN-padded load of f4E2M1FN (which has no NaN): status 4, and no
     kernel info. */
  tileirasConfig c;
  tileirasProgram p = NULL;
  CHECK(tileirasConfigInit(&c) == TILEIRAS_SUCCESS);
  c.gpu_name = "sm_90";
  CHECK(tileirasProgramCreate(&p, &c, data, size) == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramCompile(p) == TILEIRAS_ERROR_UNSUPPORTED);
  size_t n = 99;
  CHECK(tileirasProgramGetNumKernels(p, &n) == TILEIRAS_ERROR_INVALID_ARGUMENT && n == 99);
  tileirasProgramDestroy(&p);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <tests/data dir> <corpus dir>\n", argv[0]);
    return 2;
  }
  char path[4096];
  size_t size = 0;
  snprintf(path, sizeof path, "%s/empty_module.v13_3.tileir", argv[1]);
  unsigned char *empty = read_file(path, &size);
  test_empty_module(empty, size);
  free(empty);
  snprintf(path, sizeof path, "%s/vadd_f32_contig/vadd_f32_contig.v13_3.tileir", argv[2]);
  unsigned char *vadd = read_file(path, &size);
  test_vadd(vadd, size);
  free(vadd);
  snprintf(path, sizeof path, "%s/row_sum_f32/row_sum_f32.v13_3.tileir", argv[2]);
  unsigned char *row_sum = read_file(path, &size);
  test_row_sum(row_sum, size);
  free(row_sum);
  snprintf(path, sizeof path, "%s/matmul_f16_cluster2/matmul_f16_cluster2.v13_3.tileir", argv[2]);
  unsigned char *cluster = read_file(path, &size);
  test_cluster(cluster, size);
  free(cluster);
  snprintf(path, sizeof path, "%s/lower/kernels/f4_nan_padding.tileir", argv[1]);
  unsigned char *f4_nan_padding = read_file(path, &size);
  test_unsupported(f4_nan_padding, size);
  free(f4_nan_padding);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("kernel_info_test: all checks passed\n");
  return 0;
}
