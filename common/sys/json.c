#include "common/sys/json.h"

#include <math.h>

void fs_json_string(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

void fs_json_number(FILE* f, double x) {
  if (isfinite(x))
    fprintf(f, "%.10g", x);
  else
    fputs("null", f);
}
