// NVTX wrappers (compiled only with FLYSIM_NVTX=1; see common/base/nvtx.h).
#include "common/base/nvtx.h"

#include <pthread.h>

#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t g_domain;
static pthread_once_t g_domain_once = PTHREAD_ONCE_INIT;

// The first NVTX call loads the tool named by NVTX_INJECTION64_PATH (nsys sets it).
static void create_domain(void) {
  g_domain = nvtxDomainCreateA(FS_NVTX_DOMAIN);
}

void fs_nvtx_push(const char* name) {
  pthread_once(&g_domain_once, create_domain);
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(g_domain, &a);
}

void fs_nvtx_pop(void) {
  pthread_once(&g_domain_once, create_domain);
  nvtxDomainRangePop(g_domain);
}
