/*
** log_append.c: a log that stops growing (log_append.h).
*/
#include "log_append.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void kt_log_append(char **log, const char *text) {
  static const char cut[] = "\n[more left out]\n";
  size_t have = *log ? strlen(*log) : 0, add = text ? strlen(text) : 0;
  if (!add || (have >= KT_RESULT_LOG_MAX && *log && strstr(*log, cut))) return;
  bool fits = have + add <= KT_RESULT_LOG_MAX;
  size_t take = fits ? add : (have < KT_RESULT_LOG_MAX ? KT_RESULT_LOG_MAX - have : 0);
  char *s = realloc(*log, have + take + sizeof cut);
  if (!s) return;
  memcpy(s + have, text, take);
  s[have + take] = '\0';
  if (!fits) strcat(s, cut);
  *log = s;
}
