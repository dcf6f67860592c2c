/*
** recording.h: reading recorded tuning results (see replay.h for the
** formats and how their fields are read).
*/
#ifndef KT_RECORDING_H
#define KT_RECORDING_H

#include "result.h"

typedef struct kt_recording {
  kt_space *space;      /* the recorded parameters and configurations, generated */
  kt_results *records;  /* items[i] is configuration i */
  const char *format;   /* as kt_results_parse names it */
} kt_recording;

/* A configuration recorded twice keeps its last record, and records->notice
** says so. */
int kt_recording_read(const char *path, kt_recording *out, kt_error *err);
void kt_recording_clear(kt_recording *rec);

#endif
