/* Uses the shared library through dlopen/dlsym only.
 * Usage: dlopen_test <libtileiras.so> <tests/data dir> */
#include "tileiras.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tileirasResult (*config_init_fn)(tileirasConfig *);
typedef tileirasResult (*create_fn)(tileirasProgram *, const tileirasConfig *, const void *, size_t);
typedef tileirasResult (*compile_fn)(tileirasProgram);
typedef tileirasResult (*size_fn)(tileirasProgram, size_t *);
typedef tileirasResult (*destroy_fn)(tileirasProgram *);
typedef const char *(*error_string_fn)(int);

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  config_init_fn config_init = (config_init_fn)dlsym(lib, "tileirasConfigInit");
  create_fn create = (create_fn)dlsym(lib, "tileirasProgramCreate");
  compile_fn compile = (compile_fn)dlsym(lib, "tileirasProgramCompile");
  size_fn output_size = (size_fn)dlsym(lib, "tileirasProgramGetOutputSize");
  destroy_fn destroy = (destroy_fn)dlsym(lib, "tileirasProgramDestroy");
  error_string_fn error_string = (error_string_fn)dlsym(lib, "tileirasGetErrorString");
  if (!config_init || !create || !compile || !output_size || !destroy || !error_string) {
    fprintf(stderr, "dlsym failed\n");
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/empty_module.v13_1.tileir", argv[2]);
  FILE *f = fopen(path, "rb");
  if (!f) return 2;
  unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);

  tileirasConfig c;
  int ok = config_init(&c) == TILEIRAS_SUCCESS;
  c.gpu_name = "sm_89";
  tileirasProgram p = NULL;
  ok = ok && create(&p, &c, buf, n) == TILEIRAS_SUCCESS;
  tileirasResult r = compile(p);
  if (r != TILEIRAS_SUCCESS) fprintf(stderr, "compile: %s\n", error_string(r));
  size_t size = 0;
  ok = ok && r == TILEIRAS_SUCCESS && output_size(p, &size) == TILEIRAS_SUCCESS && size > 0;
  ok = ok && destroy(&p) == TILEIRAS_SUCCESS && p == NULL;
  ok = ok && strcmp(error_string(TILEIRAS_ERROR_INVALID_BYTECODE), "TILEIRAS_ERROR_INVALID_BYTECODE") == 0;
  dlclose(lib);
  if (!ok) return 1;
  printf("dlopen_test: all checks passed\n");
  return 0;
}
