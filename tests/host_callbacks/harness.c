/* Runs a host-callbacks object the way the CUDA driver does: links against
 * it, calls __CUDA_TILEIR_ON_PRE_LOAD with n = 0, 1 and 2 and checks what it
 * returns, then for each record on stdin (u32 kernel index, u32 length,
 * that many bytes of parameter buffer) calls the kernel's argument-change
 * callback on the buffer and writes (i32 status, the buffer) to stdout.
 * First it writes each kernel's name, one a line, after a line with the
 * count. Exit status 10+ says which check of ON_PRE_LOAD failed. Built
 * with -DMS_ABI it calls (and is called back) by the Microsoft x64
 * convention, as a Windows driver would. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MS_ABI
#define ABI __attribute__((ms_abi))
#else
#define ABI
#endif

extern ABI int __CUDA_TILEIR_ON_PRE_LOAD(void **table, void *context, int n, uint64_t **out);

static int calls;
static uint64_t seen[3];

static ABI void slot6(void *context, uint64_t size, void *p) {
  calls++;
  seen[0] = (uint64_t)(uintptr_t)context;
  seen[1] = size;
  seen[2] = (uint64_t)(uintptr_t)p;
}

typedef ABI int (*callback)(void *, void *, void *, void *);

int main(void) {
  void *table[16] = {0};
  table[6] = (void *)slot6;
  void *context = (void *)(uintptr_t)0x1234;
  uint64_t *cb = 0;
  if (__CUDA_TILEIR_ON_PRE_LOAD(table, context, 0, &cb) != 1 || cb || calls) return 10;
  if (__CUDA_TILEIR_ON_PRE_LOAD(table, context, 1, &cb) != 0 || !cb) return 11;
  if (calls != 1 || seen[0] != 0x1234 || seen[1] != 16 || !seen[2]) return 12;
  cb = 0;
  if (__CUDA_TILEIR_ON_PRE_LOAD(table, context, 2, &cb) != 0 || !cb || calls != 1) return 13;
  if (cb[0] != 2 || cb[1] || cb[2] || cb[3] || cb[4] != 64 || cb[7] != 2) return 14;
  if (cb[8] != (uint64_t)(uintptr_t)__CUDA_TILEIR_ON_PRE_LOAD) return 15;
  uint64_t n = cb[6];
  const uint64_t *entries = (const uint64_t *)(uintptr_t)cb[5];
  printf("%llu\n", (unsigned long long)n);
  for (uint64_t k = 0; k < n; k++) {
    const uint64_t *e = entries + 8 * k;
    if (e[1] || e[2] || e[3] || e[4] || e[6] || e[7]) return 16;
    printf("%s\n", (const char *)(uintptr_t)e[0]);
  }
  fflush(stdout);
  uint32_t head[2];
  while (fread(head, 4, 2, stdin) == 2) {
    if (head[0] >= n) return 17;
    unsigned char *buf = malloc(head[1] ? head[1] : 1);
    if (!buf || fread(buf, 1, head[1], stdin) != head[1]) return 18;
    callback f = (callback)(uintptr_t)entries[8 * head[0] + 5];
    int32_t status = f(0, 0, 0, buf);
    fwrite(&status, 4, 1, stdout);
    fwrite(buf, 1, head[1], stdout);
    free(buf);
  }
  return 0;
}
