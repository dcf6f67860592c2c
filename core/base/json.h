/*
** json.h: the small JSON writer shared by result files and the journal.
*/
#ifndef KT_JSON_H
#define KT_JSON_H

#include <stdio.h>

#include "kt.h"

void kt_json_string(FILE *f, const char *s);   /* NULL writes null */
/* len bytes, NUL bytes included (written \u0000). */
void kt_json_lstring(FILE *f, const char *s, size_t len);
void kt_json_number(FILE *f, double x);        /* NaN and infinities write null */
void kt_json_value(FILE *f, const kt_value *v);

#endif
