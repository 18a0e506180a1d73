/* A minimal NVTX 3 tool for tests: loaded through NVTX_INJECTION64_PATH, it fills the core function table
   (InitializeInjectionNvtx2 protocol, nvtxDetail/nvtxInit.h) with functions that append one line per call
   to the file named by NVTX_TEST_LOG. Built by tests/null/test_nvtx.py (and tests/cuda/test_nvtx_cuda.py) with the system C compiler. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*fnptr)(void);
typedef struct {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, fnptr ***out_table, unsigned int *out_size);
} Callbacks;

enum { ETID_CALLBACKS = 1, MODULE_CORE = 1, MARK_A = 2, RANGE_START_A = 5, RANGE_END = 7, RANGE_PUSH_A = 9,
       RANGE_POP = 11 };

static FILE *out;
static int depth;
static uint64_t next_id;

static void mark_a(const char *m) { fprintf(out, "mark %s\n", m); fflush(out); }
static uint64_t range_start_a(const char *m) { ++next_id; fprintf(out, "start %s\n", m); fflush(out); return next_id; }
static void range_end(uint64_t id) { fprintf(out, "end %llu\n", (unsigned long long)id); fflush(out); }
static int range_push_a(const char *m) { fprintf(out, "push %s\n", m); fflush(out); return depth++; }
static int range_pop(void) { fprintf(out, "pop\n"); fflush(out); return --depth; }

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) {
    const char *path = getenv("NVTX_TEST_LOG");
    const Callbacks *cb = (const Callbacks *)get_export_table(ETID_CALLBACKS);
    fnptr **table;
    unsigned int size;
    if (!path || !cb || !cb->GetModuleFunctionTable(MODULE_CORE, &table, &size) || size <= RANGE_POP) return 0;
    out = fopen(path, "w");
    if (!out) return 0;
    *table[MARK_A] = (fnptr)mark_a;
    *table[RANGE_START_A] = (fnptr)range_start_a;
    *table[RANGE_END] = (fnptr)range_end;
    *table[RANGE_PUSH_A] = (fnptr)range_push_a;
    *table[RANGE_POP] = (fnptr)range_pop;
    return 1;
}
