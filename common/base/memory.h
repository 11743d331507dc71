// What the machine has to give: the refusal a batch makes up front, before the kernel's
// out-of-memory killer would.
#ifndef FLYSIM_COMMON_BASE_MEMORY_H
#define FLYSIM_COMMON_BASE_MEMORY_H

#ifdef __cplusplus
extern "C" {
#endif

/// Bytes of memory available now (Linux's MemAvailable: free memory and what the page
/// cache can give back); else the physical memory; 0 where neither is known.
double fs_memory_available(void);

#ifdef __cplusplus
}
#endif
#endif
