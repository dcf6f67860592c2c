/*
** prune_kind.h: the kinds of device pruning (prune.h) and their names,
** which results count and files name (result.h): a header of the kinds
** only, below both.
*/
#ifndef KT_PRUNE_KIND_H
#define KT_PRUNE_KIND_H

/* The kinds double as the space's constraint tags: counts are taken in
** this order, each being what its kind removed of what the kinds before it
** left, so that they add up. */
typedef enum kt_prune_kind {
  KT_PRUNE_GROUP_DIMS = 1, /* work-group size per dimension (max_group_dims) */
  KT_PRUNE_GROUP_SIZE,     /* work-items per group (max_group_size) */
  KT_PRUNE_LOCAL_MEMORY,   /* the local-memory expression (local_memory) */
  KT_PRUNE_DIVISIBLE,      /* global size a multiple of the group size: OpenCL
                              notation without round_global */
  KT_PRUNE_END
} kt_prune_kind;

/* "group_dims", "group_size", "local_memory", "divisible". */
const char *kt_prune_name(kt_prune_kind k);
int kt_prune_from_name(const char *name); /* -1 if unknown */

#endif
