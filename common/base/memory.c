// The machine's available memory (common/base/memory.h).
#include "common/base/memory.h"

#include <stdio.h>
#include <unistd.h>

double fs_memory_available(void) {
  FILE* f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    unsigned long long kib;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        fclose(f);
        return (double)kib * 1024.0;
      }
    fclose(f);
  }
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}
