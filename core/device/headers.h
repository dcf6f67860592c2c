/*
** headers.h: the files a compile reads beside its source (the headers it
** includes, and theirs), found as its compiler finds them, for the key of
** the program cache on disk (program_disk.h): a program built from a
** header that has changed since must never be loaded, as ccache keys an
** object by every file its compile read.
**
** Every folder the compiler may search is looked in for each directive
** that names a file (#include, #import, -include, __has_include): the
** includer's folder (for "name"), the working folder (PoCL's and NVRTC's
** folder of the source itself), the -I, --include-path, -isystem, -iquote
** and -idirafter folders of the options, and CPATH's, C_INCLUDE_PATH's and
** CPLUS_INCLUDE_PATH's. Every file found counts, not only the one the
** compiler takes; so do the headers of those files, whatever #if they
** stand under. A header that __has_include probes may be absent, and so
** may an #include of a name probed absent (the guard of an optional
** header). Where that cannot be known for certain (a file named by a
** macro, #include_next, an option that moves the search elsewhere, a
** header in none of those folders that an OpenCL compiler may find in one
** of its own), there is no key: the program is compiled, and not kept.
*/
#ifndef KT_HEADERS_H
#define KT_HEADERS_H

#include "kt.h"

/* Whose search: an OpenCL compiler's, or NVRTC's (whose own headers, built
** in or in the toolkit's include folder beside it, come with its version). */
typedef enum kt_header_rules { KT_HEADERS_OPENCL, KT_HEADERS_CUDA } kt_header_rules;

typedef struct kt_headers {
  /* A line per file found: its path, a tab and the SHA-256 of its bytes;
  ** one per header of the compiler's own that NVRTC gives ("name", a tab,
  ** what gives it). "" when the source includes nothing; NULL when what
  ** it reads cannot be known, and then ... */
  char *key;
  char *why; /* ... why not, naming the file and line ("k.cl:3: ...") */
} kt_headers;

/* The headers a compile of source with options reads, in this process's
** working folder. -1 with err only where memory ran out. */
int kt_headers_find(const char *source, const char *options, kt_header_rules rules,
                    kt_headers *h, kt_error *err);
void kt_headers_clear(kt_headers *h);

#endif
