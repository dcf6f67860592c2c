/*
** result_detect.c: telling a results file's format by its content, and
** reading it with that format's reader (result_formats.h). Above every
** reader, so that none calls back here.
*/
#include "result_formats.h"

#include <stdlib.h>
#include <string.h>

#include "json_read.h"

static kt_results *none(kt_error *err) {
  kt_fail(err, "neither ktlua's results (JSON, CSV or journal) nor T4 results, KTT results "
               "or a Kernel Tuner cache");
  return NULL;
}

static kt_results *from_doc(const kt_jvalue *root, const char **format, kt_error *err) {
  const kt_jvalue *fmt = kt_json_get_type(root, "format", KT_JSTRING);
  if (fmt && strcmp(fmt->u.str, "ktlua-results") == 0) {
    *format = "ktlua-results";
    return kt_results_from_json(root, err);
  }
  if (kt_t4_is(root)) {
    *format = "t4";
    return kt_results_from_t4(root, err);
  }
  if (kt_ktt_is(root)) {
    *format = "ktt";
    return kt_results_from_ktt(root, err);
  }
  if (kt_cache_is(root)) {
    *format = "kernel-tuner-cache";
    return kt_results_from_cache(root, err);
  }
  return none(err);
}

kt_results *kt_results_parse(const char *text, size_t len, const char **format,
                             kt_error *err) {
  kt_results *r = NULL;
  int rc = kt_journal_parse(text, len, &r, err);
  *format = "ktlua-journal";
  if (rc <= 0) return r;
  *format = "ktlua-csv";
  if (kt_results_csv_is(text, len)) {
    r = kt_results_from_csv(text, len, err);
    if (r && kt_results_check_indices(r, false, NULL, "result", err)) {
      kt_results_release(r);
      r = NULL;
    }
    return r;
  }
  size_t at = strspn(text, " \t\r\n");
  if (at == len || text[at] != '{') return none(err);
  kt_jdoc *doc = kt_json_parse_results(text, len, err);
  if (!doc) return NULL;
  r = from_doc(kt_json_root(doc), format, err);
  kt_json_free(doc);
  return r;
}

kt_results *kt_results_read(const char *path, size_t max, kt_error *err) {
  size_t len;
  char *text = kt_read_file(path, max, &len, err);
  if (!text) return NULL;
  const char *format;
  kt_results *r = kt_results_parse(text, len, &format, err);
  free(text);
  if (r && kt_results_note_repeats(r, "kt.load keeps each record", err)) {
    kt_results_release(r);
    r = NULL;
  }
  if (!r) kt_fail_prefix(err, "%s: ", path);
  return r;
}
