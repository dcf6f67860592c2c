/*
** journal_id.c: a task's identity, for its journal's header.
*/
#include "journal_id.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_read.h"

static const char *const names[KT_ID_FIELDS] = {"task",  "source", "options",
                                                "sizes", "device", "backend"};

const char *kt_journal_id_name(int field) { return names[field]; }

/* 64-bit FNV-1a: a changed source changes it; no secret to keep. */
static uint64_t fnv1a(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s;; p++) {
    h = (h ^ *p) * 0x100000001b3ULL;
    if (!*p) return h; /* the NUL too: "ab"+"c" is not "a"+"bc" */
  }
}

static void put_sizes(FILE *f, const size_t *v, int dims) {
  for (int d = 0; d < dims; d++) fprintf(f, "%s%zu", d ? "x" : "", v[d]);
}

char *kt_journal_id_text(const kt_task *task, int field) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < task->nkernels; k++) {
    const kt_kernel *kn = task->kernels[k];
    if (field == KT_ID_SOURCE) {
      h = fnv1a(fnv1a(h, kn->name), kn->source);
      continue;
    }
    fputs(k ? "; " : "", f);
    if (field == KT_ID_OPTIONS) {
      fputs(kn->options ? kn->options : "", f);
      continue;
    }
    fputs("global ", f);
    put_sizes(f, kn->global, kn->dims);
    fputs(", group ", f);
    if (kn->local[0]) put_sizes(f, kn->local, kn->dims);
    else fputs("auto", f);
  }
  if (field == KT_ID_SOURCE) fprintf(f, "fnv1a-%016llx", (unsigned long long)h);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

int kt_journal_id_init(kt_journal_id *id, const kt_task *task, const kt_device_info *dev,
                       kt_error *err) {
  memset(id, 0, sizeof *id);
  id->values[KT_ID_TASK] = strdup(task->name);
  for (int f = KT_ID_SOURCE; f <= KT_ID_SIZES; f++) id->values[f] = kt_journal_id_text(task, f);
  id->values[KT_ID_DEVICE] = strdup(kt_device_string(dev, "name"));
  id->values[KT_ID_BACKEND] = strdup(dev->backend ? dev->backend->name : "");
  for (int f = 0; f < KT_ID_FIELDS; f++)
    if (!id->values[f]) {
      kt_journal_id_clear(id);
      return kt_fail(err, "out of memory describing task %s", task->name);
    }
  return 0;
}

void kt_journal_id_clear(kt_journal_id *id) {
  for (int f = 0; f < KT_ID_FIELDS; f++) free(id->values[f]);
  memset(id, 0, sizeof *id);
}

void kt_journal_id_write(FILE *f, const kt_journal_id *id) {
  fputs("\"identity\":{", f);
  for (int i = 0; i < KT_ID_FIELDS; i++) {
    fprintf(f, "%s\"%s\":", i ? "," : "", names[i]);
    kt_json_string(f, id->values[i]);
  }
  fputc('}', f);
}

int kt_journal_id_compare(const kt_journal_id *id, const kt_jvalue *header, char *why,
                          size_t size) {
  const kt_jvalue *known = kt_json_get_type(header, "identity", KT_JOBJECT);
  why[0] = '\0';
  if (!known) {
    snprintf(why, size, "its header records no identity (an older ktlua wrote it)");
    return KT_ID_FIELDS;
  }
  int differ = 0;
  size_t used = 0;
  for (int i = 0; i < KT_ID_FIELDS; i++) {
    const kt_jvalue *v = kt_json_get_type(known, names[i], KT_JSTRING);
    const char *was = v ? v->u.str : "";
    if (strcmp(was, id->values[i]) == 0) continue;
    if (used < size)
      used += (size_t)snprintf(why + used, size - used, "%s%s \"%.80s\" (now \"%.80s\")",
                               differ ? ", " : "", names[i], was, id->values[i]);
    differ++;
  }
  return differ;
}
