/*
** prune_kind.c: the names of the kinds of device pruning (prune_kind.h).
*/
#include "prune_kind.h"

#include <string.h>

static const char *const kind_names[KT_PRUNE_END] = {
    NULL, "group_dims", "group_size", "local_memory", "divisible"};

const char *kt_prune_name(kt_prune_kind k) { return kind_names[k]; }

int kt_prune_from_name(const char *name) {
  for (int k = 1; k < KT_PRUNE_END; k++)
    if (strcmp(name, kind_names[k]) == 0) return k;
  return -1;
}
