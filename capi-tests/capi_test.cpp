// The C API used from C++: RAII ownership of a program, and the header in
// two translation units of one program.
#include "tileiras.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

int second_unit_status();

namespace {

struct ProgramDeleter {
  void operator()(tileirasProgram_st *p) const { tileirasProgramDestroy(&p); }
};
using Program = std::unique_ptr<tileirasProgram_st, ProgramDeleter>;

int failures = 0;
void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "check failed: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  std::ifstream in(std::string(argv[1]) + "/empty_module.v13_4.tileir", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check(!bytes.empty(), "read the empty module");

  tileirasConfig config;
  check(tileirasConfigInit(&config) == TILEIRAS_SUCCESS, "config init");
  config.gpu_name = "sm_120";
  config.output_kind = TILEIRAS_OUTPUT_CUBIN;
  tileirasProgram raw = nullptr;
  check(tileirasProgramCreate(&raw, &config, bytes.data(), bytes.size()) == TILEIRAS_SUCCESS, "create");
  Program program(raw);
  check(tileirasProgramCompile(program.get()) == TILEIRAS_SUCCESS, "compile");
  const void *data = nullptr;
  size_t size = 0;
  check(tileirasProgramGetOutputPointer(program.get(), &data, &size) == TILEIRAS_SUCCESS, "output");
  check(size > 4 && std::string(static_cast<const char *>(data), 4) == "\x7f" "ELF", "cubin magic");
  check(second_unit_status() == TILEIRAS_ERROR_INVALID_ARGUMENT, "second unit");
  if (failures) return 1;
  std::printf("capi_test_cxx: all checks passed\n");
  return 0;
}
