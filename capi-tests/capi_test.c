/* Tests of the tileiras C API: full lifecycle, every status code, callback
 * delivery, config growth, and several threads compiling at once.
 * Usage: capi_test <tests/data dir> <example kernel .tileir> <failing ptxas>
 *                  <kernel the lowering does not support yet> */
#include "tileiras.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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

static unsigned char *empty_module;
static size_t empty_size;

struct seen {
  int count;
  int errors;
  char last_rendered[1024];
  char last_file[256];
  unsigned last_line;
};

static void on_diag(void *user, uint32_t severity, const char *message, const char *file,
                    uint32_t line, uint32_t column, const char *rendered) {
  struct seen *s = (struct seen *)user;
  (void)column;
  s->count++;
  if (severity == TILEIRAS_SEVERITY_ERROR) s->errors++;
  if (message == NULL || rendered == NULL || strstr(rendered, message) == NULL) s->errors += 1000;
  snprintf(s->last_rendered, sizeof s->last_rendered, "%s", rendered);
  snprintf(s->last_file, sizeof s->last_file, "%s", file ? file : "");
  s->last_line = line;
}

static tileirasConfig config_for(const char *gpu) {
  tileirasConfig c;
  CHECK(tileirasConfigInit(&c) == TILEIRAS_SUCCESS);
  c.gpu_name = gpu;
  return c;
}

static tileirasResult compile_bytes(tileirasConfig *c, const void *data, size_t size, char **log) {
  tileirasProgram p = NULL;
  tileirasResult r = tileirasProgramCreate(&p, c, data, size);
  if (r != TILEIRAS_SUCCESS) {
    CHECK(p == NULL);
    return r;
  }
  r = tileirasProgramCompile(p);
  if (log) {
    size_t n = 0;
    CHECK(tileirasProgramGetLogSize(p, &n) == TILEIRAS_SUCCESS && n >= 1);
    *log = malloc(n);
    CHECK(tileirasProgramGetLog(p, *log) == TILEIRAS_SUCCESS);
    CHECK((*log)[n - 1] == '\0');
  }
  CHECK(tileirasProgramDestroy(&p) == TILEIRAS_SUCCESS && p == NULL);
  return r;
}

static void test_lifecycle(void) {
  tileirasConfig c = config_for("sm_90");
  struct seen seen = {0};
  c.diagnostic_callback = on_diag;
  c.diagnostic_user_data = &seen;
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(&p, &c, empty_module, empty_size) == TILEIRAS_SUCCESS && p != NULL);
  size_t size = 0;
  /* Out of order: no output before a successful compile. */
  CHECK(tileirasProgramGetOutputSize(p, &size) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  tileirasResult r = tileirasProgramCompile(p);
  CHECK(r == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramGetOutputSize(p, &size) == TILEIRAS_SUCCESS && size > 64);
  if (r != TILEIRAS_SUCCESS || size <= 64) {
    tileirasProgramDestroy(&p);
    return;
  }
  unsigned char *copy = malloc(size);
  CHECK(tileirasProgramGetOutput(p, copy) == TILEIRAS_SUCCESS);
  /* A cubin: ELF, 64-bit, machine EM_CUDA (190). */
  CHECK(memcmp(copy, "\x7f" "ELF", 4) == 0);
  CHECK(copy[4] == 2);
  CHECK((copy[18] | (copy[19] << 8)) == 190);
  const void *borrowed = NULL;
  size_t borrowed_size = 0;
  CHECK(tileirasProgramGetOutputPointer(p, &borrowed, &borrowed_size) == TILEIRAS_SUCCESS);
  CHECK(borrowed_size == size && memcmp(borrowed, copy, size) == 0);
  free(copy);
  /* Compiling again works and gives the same size. */
  CHECK(tileirasProgramCompile(p) == TILEIRAS_SUCCESS);
  size_t again = 0;
  CHECK(tileirasProgramGetOutputSize(p, &again) == TILEIRAS_SUCCESS && again == size);
  CHECK(seen.errors == 0);
  CHECK(tileirasProgramDestroy(&p) == TILEIRAS_SUCCESS && p == NULL);
  /* Destroy accepts NULL and a NULL handle. */
  CHECK(tileirasProgramDestroy(NULL) == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramDestroy(&p) == TILEIRAS_SUCCESS);
}

static void test_ptx_output(void) {
  tileirasConfig c = config_for("sm_80");
  c.output_kind = TILEIRAS_OUTPUT_PTX;
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(&p, &c, empty_module, empty_size) == TILEIRAS_SUCCESS);
  CHECK(tileirasProgramCompile(p) == TILEIRAS_SUCCESS);
  const void *text = NULL;
  size_t n = 0;
  CHECK(tileirasProgramGetOutputPointer(p, &text, &n) == TILEIRAS_SUCCESS);
  CHECK(text != NULL && n > 0 && ((const char *)text)[n - 1] == '\0');
  CHECK(text != NULL && strstr((const char *)text, ".target sm_80") != NULL);
  tileirasProgramDestroy(&p);
}

static void test_invalid_arguments(void) {
  tileirasConfig c = config_for("sm_90");
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(NULL, &c, empty_module, empty_size) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramCreate(&p, NULL, empty_module, empty_size) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramCreate(&p, &c, NULL, 10) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(p == NULL);
  CHECK(tileirasConfigInit(NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramCompile(NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(tileirasProgramGetOutputSize(NULL, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);

  struct seen seen = {0};
  tileirasConfig bad = config_for("sm_75");
  bad.diagnostic_callback = on_diag;
  bad.diagnostic_user_data = &seen;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(seen.count == 1 && strstr(seen.last_rendered, "sm_75") != NULL);
  bad = config_for(NULL);
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  bad = config_for("sm_90");
  bad.opt_level = 4;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  bad = config_for("sm_90");
  bad.device_debug = 1;
  bad.diagnostic_callback = on_diag;
  bad.diagnostic_user_data = &seen;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(seen.last_rendered, "optimized debugging is currently not supported") != NULL);
  bad.opt_level = 0;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_SUCCESS);
  bad = config_for("sm_90");
  bad.output_kind = 77;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
  bad = config_for("sm_90");
  bad.struct_size = 4;
  CHECK(compile_bytes(&bad, empty_module, empty_size, NULL) == TILEIRAS_ERROR_INVALID_ARGUMENT);
}

/* A caller built against an older, shorter config: fields past its size take
 * their defaults, even if the memory after it holds garbage. */
static void test_short_config(void) {
  struct {
    tileirasConfig c;
    unsigned char junk[8];
  } s;
  memset(&s, 0xAB, sizeof s);
  s.c.struct_size = offsetof(tileirasConfig, opt_level) + sizeof(uint32_t);
  s.c.gpu_name = "sm_90";
  s.c.opt_level = 2;
  CHECK(compile_bytes(&s.c, empty_module, empty_size, NULL) == TILEIRAS_SUCCESS);
}

static void test_bad_bytecode(void) {
  tileirasConfig c = config_for("sm_90");
  struct seen seen = {0};
  c.diagnostic_callback = on_diag;
  c.diagnostic_user_data = &seen;
  char *log = NULL;
  const char garbage[] = "this is not bytecode";
  CHECK(compile_bytes(&c, garbage, sizeof garbage, &log) == TILEIRAS_ERROR_INVALID_BYTECODE);
  CHECK(log && strstr(log, "error: input does not correspond to Tile IR bytecode") != NULL);
  free(log);
  const unsigned char mlir[] = {'M', 'L', 0xef, 'R', 0, 1, 2, 3};
  CHECK(compile_bytes(&c, mlir, sizeof mlir, &log) == TILEIRAS_ERROR_INVALID_BYTECODE);
  CHECK(log && strstr(log, "(it looks like MLIR bytecode instead)") != NULL);
  free(log);
  /* Truncated: the message names a byte offset. */
  CHECK(compile_bytes(&c, empty_module, empty_size - 7, &log) == TILEIRAS_ERROR_INVALID_BYTECODE);
  CHECK(log && strstr(log, "offset") != NULL);
  free(log);
  CHECK(compile_bytes(&c, empty_module, 0, NULL) == TILEIRAS_ERROR_INVALID_BYTECODE);
  CHECK(seen.errors >= 4);
}

static void test_sub_byte_pointer(const char *data_dir) {
  /* An entry taking a pointer to i4, which NVIDIA's reader refuses: status
     3, the located message of the type's rule. */
  char path[4096];
  size_t size = 0;
  snprintf(path, sizeof path, "%s/verify/ptr_i4_param.tileirbc", data_dir);
  unsigned char *kernel = read_file(path, &size);
  tileirasConfig c = config_for("sm_90");
  char *log = NULL;
  CHECK(compile_bytes(&c, kernel, size, &log) == TILEIRAS_ERROR_INVALID_BYTECODE);
  CHECK(log && strstr(log, "error at offset 2: failed to verify 'pointeeType'") != NULL);
  free(log);
  free(kernel);
}

static void test_example(const char *example) {
  size_t size = 0;
  unsigned char *kernel = read_file(example, &size);
  tileirasConfig c = config_for("sm_90");
  char *log = NULL;
  CHECK(compile_bytes(&c, kernel, size, &log) == TILEIRAS_SUCCESS);
  free(log);
  free(kernel);
}

static void test_unsupported(const char *unsupported) {
  size_t size = 0;
  unsigned char *kernel = read_file(unsupported, &size);
  tileirasConfig c = config_for("sm_90");
  struct seen seen = {0};
  c.diagnostic_callback = on_diag;
  c.diagnostic_user_data = &seen;
  char *log = NULL;
  CHECK(compile_bytes(&c, kernel, size, &log) == TILEIRAS_ERROR_UNSUPPORTED);
  /* The diagnostic names the op and points at the kernel's source. */
  CHECK(log && strstr(log, "'cuda_tile.") != NULL);
  CHECK(strstr(seen.last_rendered, "loc(\"kernels.py\":") == seen.last_rendered);
  CHECK(strcmp(seen.last_file, "kernels.py") == 0 && seen.last_line > 0);
  free(log);
  free(kernel);
}

static void test_tool_failure(const char *fake) {
  tileirasConfig c = config_for("sm_90");
  c.ptxas_path = fake;
  char *log = NULL;
  CHECK(compile_bytes(&c, empty_module, empty_size, &log) == TILEIRAS_ERROR_COMPILATION_FAILED);
  CHECK(log && strstr(log, "fake ptxas failure") != NULL);
  free(log);
}

/* Status 1: the system refuses resources (no file descriptors for pipes). */
static void test_out_of_resources(void) {
  struct rlimit old;
  getrlimit(RLIMIT_NOFILE, &old);
  tileirasConfig c = config_for("sm_90");
  tileirasProgram p = NULL;
  CHECK(tileirasProgramCreate(&p, &c, empty_module, empty_size) == TILEIRAS_SUCCESS);
  struct rlimit tight = old;
  tight.rlim_cur = 3;
  setrlimit(RLIMIT_NOFILE, &tight);
  tileirasResult r = tileirasProgramCompile(p);
  setrlimit(RLIMIT_NOFILE, &old);
  CHECK(r == TILEIRAS_ERROR_OUT_OF_RESOURCES);
  tileirasProgramDestroy(&p);
}

static void *thread_main(void *arg) {
  long *ok = (long *)arg;
  tileirasConfig c = config_for((*ok % 2) ? "sm_100" : "sm_90");
  for (int i = 0; i < 3; i++) {
    if (compile_bytes(&c, empty_module, empty_size, NULL) != TILEIRAS_SUCCESS) return NULL;
  }
  *ok = 1000;
  return NULL;
}

static void test_threads(void) {
  pthread_t threads[8];
  long results[8];
  for (long i = 0; i < 8; i++) {
    results[i] = i;
    pthread_create(&threads[i], NULL, thread_main, &results[i]);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(threads[i], NULL);
    CHECK(results[i] == 1000);
  }
}

static void test_queries(void) {
  CHECK(strcmp(tileirasGetErrorString(TILEIRAS_ERROR_UNSUPPORTED), "TILEIRAS_ERROR_UNSUPPORTED") == 0);
  CHECK(strcmp(tileirasGetErrorString(42), "unknown status") == 0);
  uint32_t major = 99, minor = 99, patch = 99;
  CHECK(tileirasGetVersion(&major, &minor, &patch) == TILEIRAS_SUCCESS);
  CHECK(major == TILEIRAS_VERSION_MAJOR && minor == TILEIRAS_VERSION_MINOR && patch == TILEIRAS_VERSION_PATCH);
  size_t n = 0;
  CHECK(tileirasGetNumSupportedBytecodeVersions(&n) == TILEIRAS_SUCCESS && n == 5);
  tileirasBytecodeVersion v[5];
  CHECK(tileirasGetSupportedBytecodeVersions(v) == TILEIRAS_SUCCESS);
  CHECK(v[0].major == 13 && v[0].minor == 1 && v[4].major == 13 && v[4].minor == 5);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s <tests/data dir> <example.tileir> <failing ptxas> <unsupported.tileir>\n",
            argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/empty_module.v13_3.tileir", argv[1]);
  empty_module = read_file(path, &empty_size);
  test_queries();
  test_lifecycle();
  test_ptx_output();
  test_invalid_arguments();
  test_short_config();
  test_bad_bytecode();
  test_sub_byte_pointer(argv[1]);
  test_example(argv[2]);
  test_unsupported(argv[4]);
  test_tool_failure(argv[3]);
  test_out_of_resources();
  test_threads();
  free(empty_module);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("capi_test: all checks passed\n");
  return 0;
}
