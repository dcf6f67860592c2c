/*
** json.h: the small JSON writer shared by result files and the journal.
*/
#ifndef KT_JSON_H
#define KT_JSON_H

#include <stdio.h>

#include "kt.h"

void kt_json_string(FILE *f, const char *s);   /* NULL writes null */
/* len bytes, NUL bytes included (written \u0000), in quotes. Every JSON
** text ktlua writes is UTF-8: a byte that is part of no UTF-8 character
** (names and texts are data: "k\xff") is written \udcXX, XX its value, as
** Python's surrogateescape holds it; the reader (json_read.c) reads such
** an escape back as the byte. */
void kt_json_lstring(FILE *f, const char *s, size_t len);
/* kt_json_lstring without the quotes: a piece of a string. */
void kt_json_chars(FILE *f, const char *s, size_t len);
void kt_json_number(FILE *f, double x);        /* NaN and infinities write null */
/* The text kt_json_number writes of a finite x, which reads back as x
** (size at least 32): CSV's numbers too. */
void kt_number_text(double x, char *buf, size_t size);
/* x, and where it is no finite number Infinity, -Infinity or NaN, as
** Python's json writes them (RFC 8259 has none; kt_json_parse_results
** reads them): for values that may be those (metrics). */
void kt_json_any_number(FILE *f, double x);
void kt_json_value(FILE *f, const kt_value *v);

#endif
