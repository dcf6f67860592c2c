/*
** journal_id.h: what identifies a tuning's task, recorded in its
** journal's header, so that a resumed tuning takes only results measured
** for the same task: its name, its kernels' source (a hash of their names
** and sources, preludes included), compiler options and sizes, and the
** device (its name and backend).
*/
#ifndef KT_JOURNAL_ID_H
#define KT_JOURNAL_ID_H

#include <stdio.h>

#include "device.h"
#include "task.h" /* up a layer, types only: the task names itself (scripts/layers.lua) */

enum { KT_ID_TASK, KT_ID_SOURCE, KT_ID_OPTIONS, KT_ID_SIZES, KT_ID_DEVICE, KT_ID_BACKEND,
       KT_ID_FIELDS };

typedef struct kt_journal_id {
  char *values[KT_ID_FIELDS]; /* by KT_ID_*; kt_journal_id_name names them */
} kt_journal_id;

int kt_journal_id_init(kt_journal_id *id, const kt_task *task, const kt_device_info *dev,
                       kt_error *err);
void kt_journal_id_clear(kt_journal_id *id);
/* One of the task's own fields (KT_ID_SOURCE, _OPTIONS or _SIZES): per
** kernel, joined by "; " (the source: one hash of every kernel's name and
** source); malloc'd, NULL when out of memory. */
char *kt_journal_id_text(const kt_task *task, int field);
const char *kt_journal_id_name(int field);

/* Writes `"identity":{...}` (a member of the header object). */
void kt_journal_id_write(FILE *f, const kt_journal_id *id);
struct kt_jvalue;
/* Describes into why (one clause per field) how the identity of a journal
** header differs from id; returns the number of fields that differ. A
** header without an identity differs in every field. */
int kt_journal_id_compare(const kt_journal_id *id, const struct kt_jvalue *header, char *why,
                          size_t size);

#endif
