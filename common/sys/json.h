// Writing JSON by hand where flysim writes it (speedscope profiles, bench.json): the
// string escape and non-finite numbers, the two things that are easy to get wrong.
#ifndef FLYSIM_COMMON_SYS_JSON_H
#define FLYSIM_COMMON_SYS_JSON_H

#include <stdio.h>

/// s as a JSON string (quotes, backslashes and control characters escaped).
void fs_json_string(FILE* f, const char* s);

/// x as a JSON number, or null when it is not finite (JSON has no NaN or Inf).
void fs_json_number(FILE* f, double x);

#endif
