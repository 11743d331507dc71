// An NVTX injection library for the tests: loaded by nvtx3 from NVTX_INJECTION64_PATH
// at the first NVTX call, it records every range push and pop, with its domain, to
// the file named by FLYSIM_NVTX_LOG (one event a line, appended, flushed):
//
//   init                      InitializeInjectionNvtx2 was called
//   domain NAME               nvtxDomainCreateA(NAME)
//   push DOMAIN NAME          a push; DOMAIN is "-" for NVTX's default domain
//   pop DOMAIN
//
// The protocol (nvtx3/nvtxDetail/nvtxInit.h, nvtxTypes.h): nvtx3 dlopens the library,
// calls InitializeInjectionNvtx2(getExportTable); the tool asks the export table for
// the callbacks table (NVTX_ETID_CALLBACKS) and, through GetModuleFunctionTable, for
// each module's table of function-pointer slots, writes its functions into the slots
// it implements, and returns 1. nvtx3 then sets every slot left alone to a no-op.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

static FILE* g_log;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

// A domain handle is a pointer to one of these (nvtxDomainHandle_t is opaque).
typedef struct Domain {
  char name[128];
} Domain;

static void record(const char* what, const char* domain, const char* name) {
  pthread_mutex_lock(&g_lock);
  if (g_log) {
    fprintf(g_log, "%s", what);
    if (domain) fprintf(g_log, " %s", domain);
    if (name) fprintf(g_log, " %s", name);
    fputc('\n', g_log);
    fflush(g_log);
  }
  pthread_mutex_unlock(&g_lock);
}

static const char* domain_name(nvtxDomainHandle_t d) {
  return d ? ((const Domain*)(const void*)d)->name : "-";
}

static const char* attrib_message(const nvtxEventAttributes_t* a) {
  if (!a) return "(null-attributes)";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_UNKNOWN) return "(no-message)";
  return "(non-ascii-message)";
}

static int NVTX_API push_a(const char* message) {
  record("push", "-", message);
  return 0;
}

static int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  record("push", "-", attrib_message(a));
  return 0;
}

static int NVTX_API pop(void) {
  record("pop", "-", NULL);
  return 0;
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  Domain* d = calloc(1, sizeof *d); // lives as long as the process
  if (!d) return NULL;
  snprintf(d->name, sizeof d->name, "%s", name ? name : "(null)");
  record("domain", d->name, NULL);
  return (nvtxDomainHandle_t)(void*)d;
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  record("push", domain_name(d), attrib_message(a));
  return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d) {
  record("pop", domain_name(d), NULL);
  return 0;
}

// Write fn into slot `id` of module `module`'s table; 0 if the table lacks it.
static int attach(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module, unsigned id,
                  NvtxFunctionPointer fn) {
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || !table || id >= size || !table[id])
    return 0;
  *table[id] = fn;
  return 1;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const char* path = getenv("FLYSIM_NVTX_LOG");
  if (!path || !path[0]) {
    fprintf(stderr, "nvtx_inject: FLYSIM_NVTX_LOG is not set; fix: set it to the log file\n");
    return 0;
  }
  if (!g_log) g_log = fopen(path, "a"); // once, even if several nvtx3 copies attach
  if (!g_log) {
    fprintf(stderr, "nvtx_inject: %s: cannot open the log for appending\n", path);
    return 0;
  }
  const NvtxExportTableCallbacks* cb =
      (const NvtxExportTableCallbacks*)get_export_table(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb) return 0;
  int ok =
      attach(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a) &&
      attach(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex) &&
      attach(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop) &&
      attach(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA,
             (NvtxFunctionPointer)domain_create_a) &&
      attach(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx,
             (NvtxFunctionPointer)domain_push_ex) &&
      attach(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop,
             (NvtxFunctionPointer)domain_pop);
  if (!ok) {
    fprintf(stderr, "nvtx_inject: this nvtx3 lacks a range slot; the test cannot record\n");
    return 0;
  }
  record("init", NULL, NULL);
  return 1;
}
