/*
** headers.c: the files a compile reads beside its source (headers.h).
**
** The text is read as the preprocessor reads it, only so far as to find
** its directives: line splices joined, comments and literals skipped, a
** directive being a line whose first token is #. Every file found in any
** folder searched counts, not only the first: which one a compiler takes
** is its own order (PoCL searches its working folder before the -I ones),
** and a header that appears before the one read must change the key too.
** Conditions are not evaluated: a header under #if 0 that changes costs a
** compile, never a wrong program.
*/
#include "headers.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc.h"
#include "regular_file.h"
#include "sha256.h"

/* Bounds on what is followed: headers in all, and nested ones (clang's
** and GCC's own bound). */
#define MOST_FILES 4096
#define MOST_DEPTH 200

/* A file followed: itself, and the folder its "name" includes search. */
typedef struct seen {
  dev_t dev, dir_dev;
  ino_t ino, dir_ino;
} seen;

typedef struct scan {
  kt_header_rules rules;
  char **dirs; /* searched for every directive, in order */
  size_t ndirs, cap_dirs;
  seen *seen;
  size_t nseen, cap_seen;
  char *key;
  size_t nkey, cap_key;
  char **probed; /* names __has_include looked for and found nowhere */
  size_t nprobed, cap_probed;
  char *why; /* the first reason the headers cannot be known */
  int depth;
  kt_error *err;
} scan;

/* The file a directive stands in: its name in messages (#line's, for the
** source), the folder of its "name" includes, its lines' offset. */
typedef struct file_ctx {
  const char *name;
  char line_name[256]; /* the name a #line gave, where name points then */
  const char *dir;
  long delta;
} file_ctx;

/* ---- what the scan finds ---- */

/* The headers cannot be known: the first reason stays. 0, or -1 with err. */
static int unknown(scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int unknown(scan *s, const char *fmt, ...) {
  if (s->why) return 0;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !(s->why = kt_alloc((size_t)n + 1, s->err))) return -1;
  va_start(ap, fmt);
  vsnprintf(s->why, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return 0;
}

static int add_key(scan *s, const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  if (kt_grow(&s->key, &s->cap_key, s->nkey + n + 1, 1, s->err)) return -1;
  s->nkey += (size_t)snprintf(s->key + s->nkey, n + 1, "%s\t%s\n", a, b);
  return 0;
}

static int add_dir(scan *s, const char *dir, const char *cwd) {
  if (!dir[0]) return 0;
  size_t n = strlen(cwd) + strlen(dir) + 2;
  char *path = kt_alloc(n, s->err);
  if (!path) return -1;
  if (dir[0] == '/') snprintf(path, n, "%s", dir);
  else snprintf(path, n, "%s/%s", cwd, dir); /* as the compiler, in this folder, takes it */
  if (kt_grow(&s->dirs, &s->cap_dirs, s->ndirs + 1, sizeof *s->dirs, s->err)) {
    free(path);
    return -1;
  }
  s->dirs[s->ndirs++] = path;
  return 0;
}

/* ---- reading text as the preprocessor does ---- */

typedef struct reader {
  const char *p;
  long line;
} reader;

/* Backslash-newlines join lines before anything else is read. */
static void skip_splices(reader *r) {
  while (r->p[0] == '\\' && (r->p[1] == '\n' || (r->p[1] == '\r' && r->p[2] == '\n'))) {
    r->p += r->p[1] == '\n' ? 2 : 3;
    r->line++;
  }
}

static char cur(reader *r) {
  skip_splices(r);
  return *r->p;
}

static void advance(reader *r) {
  if (!cur(r)) return;
  if (*r->p == '\n') r->line++;
  r->p++;
}

/* The character after the current one. */
static char ahead(reader *r) {
  if (!cur(r)) return '\0';
  reader next = {r->p + 1, r->line};
  return cur(&next);
}

static void skip_comment(reader *r) {
  bool block = ahead(r) == '*';
  advance(r);
  advance(r);
  while (cur(r) && (block ? !(cur(r) == '*' && ahead(r) == '/') : cur(r) != '\n')) advance(r);
  if (block && cur(r)) {
    advance(r);
    advance(r);
  }
}

/* A string or character literal, copied to out (when not NULL); a newline
** ends one left open. */
static void literal(reader *r, char **out) {
  char quote = cur(r);
  if (out) *(*out)++ = quote;
  advance(r);
  while (cur(r) && cur(r) != quote && cur(r) != '\n') {
    if (cur(r) == '\\') {
      if (out) *(*out)++ = '\\';
      advance(r);
      if (!cur(r) || cur(r) == '\n') break;
    }
    if (out) *(*out)++ = cur(r);
    advance(r);
  }
  if (cur(r) == quote) {
    if (out) *(*out)++ = quote;
    advance(r);
  }
}

/* The rest of a directive's line into out (as long as the text left),
** comments made spaces; r is left at its newline. */
static void directive_text(reader *r, char *out) {
  while (cur(r) && cur(r) != '\n') {
    if (cur(r) == '/' && (ahead(r) == '*' || ahead(r) == '/')) {
      skip_comment(r);
      *out++ = ' ';
    } else if (cur(r) == '"') {
      literal(r, &out);
    } else {
      *out++ = cur(r);
      advance(r);
    }
  }
  *out = '\0';
}

/* ---- following a directive ---- */

static int walk(scan *s, const char *text, file_ctx *f);

static const char *skip_blank(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') p++;
  return p;
}

/* The SHA-256 of a header's bytes, and the headers it includes. */
static int follow(scan *s, const char *path, const char *dir) {
  size_t len;
  kt_file_fault fault;
  kt_error why;
  char *text = kt_read_regular(path, KT_SOURCE_MAX, &len, &fault, &why);
  if (!text) return unknown(s, "cannot read %s: %s", path, why.msg);
  kt_sha256 h;
  char hex[KT_SHA256_HEX];
  kt_sha256_init(&h);
  kt_sha256_add(&h, text, len);
  kt_sha256_hex(&h, hex);
  file_ctx inner = {.name = path, .dir = dir};
  s->depth++;
  int rc = add_key(s, path, hex) || walk(s, text, &inner);
  s->depth--;
  free(text);
  return rc;
}

static bool seen_before(const scan *s, const struct stat *st, const struct stat *ds) {
  for (size_t i = 0; i < s->nseen; i++)
    if (s->seen[i].dev == st->st_dev && s->seen[i].ino == st->st_ino &&
        s->seen[i].dir_dev == ds->st_dev && s->seen[i].dir_ino == ds->st_ino)
      return true;
  return false;
}

/* A header found: followed once per file and folder (the folder decides
** what its "name" includes find). */
static int visit(scan *s, const char *path, const struct stat *st) {
  size_t n = (size_t)(strrchr(path, '/') - path); /* every path here is absolute */
  char *dir = kt_alloc(n + 2, s->err);
  struct stat ds;
  if (!dir) return -1;
  snprintf(dir, n + 2, "%.*s", (int)(n ? n : 1), path);
  int rc = 0;
  if (stat(dir, &ds) != 0) rc = unknown(s, "the folder of %s cannot be read", path);
  else if (seen_before(s, st, &ds)) rc = 0;
  else if (s->nseen == MOST_FILES) rc = unknown(s, "more than %d headers", MOST_FILES);
  else if (s->depth == MOST_DEPTH)
    rc = unknown(s, "%s: more than %d nested includes", path, MOST_DEPTH);
  else if (strpbrk(path, "\t\n")) rc = unknown(s, "the path %s holds a tab or a newline", path);
  else if (!(rc = kt_grow(&s->seen, &s->cap_seen, s->nseen + 1, sizeof *s->seen, s->err))) {
    s->seen[s->nseen++] = (seen){st->st_dev, ds.st_dev, st->st_ino, ds.st_ino};
    rc = follow(s, path, dir);
  }
  free(dir);
  return rc;
}

/* dir/name, when it is a file: *found, then followed. A folder of that name
** is passed over, as compilers do; a named pipe or a device is no header
** to read. */
static int candidate(scan *s, const char *dir, const char *name, bool *found) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = kt_alloc(n, s->err);
  struct stat st;
  if (!path) return -1;
  snprintf(path, n, "%s%s%s", dir, dir[0] ? "/" : "", name);
  int rc = 0;
  if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
    *found = true;
    rc = S_ISREG(st.st_mode) ? visit(s, path, &st)
                             : unknown(s, "%s is not a regular file", path);
  }
  free(path);
  return rc;
}

/* NVRTC's own headers: those ktlua gives it (nvrtc.c's <math.h>), keyed by
** their text, and those it has built in or finds in the toolkit's include
** folder (which cuda_lib.c finds beside libnvrtc itself), keyed by the
** compiler's version in the program's identity (program_store.h), as
** NVRTC's own code is. */
static int compilers_own(scan *s, const char *name, bool found) {
  const char *text = kt_nvrtc_builtin_header(name);
  if (text) {
    kt_sha256 h;
    char what[KT_SHA256_HEX + 8];
    kt_sha256_init(&h);
    kt_sha256_add(&h, text, strlen(text));
    memcpy(what, "ktlua ", 6);
    kt_sha256_hex(&h, what + 6);
    return add_key(s, name, what);
  }
  return found ? 0 : add_key(s, name, "the compiler's own");
}

static bool was_probed(const scan *s, const char *name) {
  for (size_t i = 0; i < s->nprobed; i++)
    if (strcmp(s->probed[i], name) == 0) return true;
  return false;
}

/* A name __has_include looked for and found in no folder searched. */
static int probed_absent(scan *s, const char *name) {
  if (was_probed(s, name)) return 0;
  char *copy = kt_strdup(name, s->err);
  if (!copy || kt_grow(&s->probed, &s->cap_probed, s->nprobed + 1, sizeof *s->probed, s->err)) {
    free(copy);
    return -1;
  }
  s->probed[s->nprobed++] = copy;
  return 0;
}

/* name in every folder searched (quoted: the includer's first). where and
** what say which directive, for messages. What __has_include probes may
** be absent: a file that appears in one of those folders changes the key;
** so may an #include of a name it probed and found absent (the source
** asked first: "#if __has_include(x)" guards "#include x"). An OpenCL
** compiler with folders of its own beside these (PoCL has none) could find
** such a header there: one of its own, as NVRTC's are. */
static int resolve(scan *s, const char *name, bool quoted, const char *dir, bool probe,
                   const char *where, const char *what) {
  bool found = false;
  int rc = 0;
  if (!name[0]) return unknown(s, "%s: %s names no file", where, what);
  if (name[0] == '/') rc = candidate(s, "", name, &found);
  if (name[0] != '/' && quoted) rc = candidate(s, dir, name, &found);
  for (size_t i = 0; name[0] != '/' && rc == 0 && i < s->ndirs; i++)
    rc = candidate(s, s->dirs[i], name, &found);
  if (rc || s->why) return rc;
  if (!found && probe && probed_absent(s, name)) return -1;
  if (s->rules == KT_HEADERS_CUDA) return compilers_own(s, name, found || probe);
  if (found || probe || was_probed(s, name)) return 0;
  return unknown(s, "%s: %s is in none of the folders ktlua searches (the includer's, the working "
                    "folder, the -I folders); the compiler may find it in one of its own", where,
                 what);
}

/* The operand of an #include or __has_include at p: a "name" or <name>
** is followed; a macro is known only once compiled. */
static int operand(scan *s, const char *p, const char *directive, bool probe, const file_ctx *f,
                   long line) {
  char where[240], what[300];
  snprintf(where, sizeof where, "%.200s:%ld", f->name, line + f->delta);
  p = skip_blank(p);
  char close = *p == '"' ? '"' : *p == '<' ? '>' : '\0';
  const char *end = close ? strchr(p + 1, close) : NULL;
  if (!end) {
    size_t n = strcspn(p, probe ? ")" : "");
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r')) n--;
    return unknown(s, "%s: %s%s%.*s%s names its file by a macro, which is known only once "
                      "compiled", where, directive, probe ? "(" : " ", (int)(n < 100 ? n : 100), p,
                   probe ? ")" : "");
  }
  size_t n = (size_t)(end - p - 1);
  char *name = kt_alloc(n + 1, s->err);
  if (!name) return -1;
  snprintf(name, n + 1, "%.*s", (int)n, p + 1);
  snprintf(what, sizeof what, "%s %c%.280s%c", directive, *p, name, close);
  int rc = resolve(s, name, close == '"', f->dir, probe, where, what);
  free(name);
  return rc;
}

/* __has_include(...) in a condition, a probe of a file's presence. */
static int probes(scan *s, const char *d, const file_ctx *f, long line) {
  int rc = 0;
  for (const char *p = strstr(d, "__has_"); p && rc == 0 && !s->why; p = strstr(p + 1, "__has_")) {
    if (strncmp(p, "__has_include_next", 18) == 0 || strncmp(p, "__has_embed", 11) == 0)
      rc = unknown(s, "%s:%ld: %.*s depends on where the compiler found its includer", f->name,
                   line + f->delta, strncmp(p, "__has_embed", 11) == 0 ? 11 : 18, p);
    else if (strncmp(p, "__has_include", 13) == 0 && *skip_blank(p + 13) == '(')
      rc = operand(s, skip_blank(p + 13) + 1, "__has_include", true, f, line);
  }
  return rc;
}

/* #line N "name": messages name the user's file and line, as the
** compiler's do. */
static void set_line(file_ctx *f, const char *p, long next_line) {
  char *end;
  long n = strtol(p, &end, 10);
  if (end == p) return;
  f->delta = n - next_line;
  const char *q = skip_blank(end), *close = *q == '"' ? strchr(q + 1, '"') : NULL;
  if (!close) return;
  snprintf(f->line_name, sizeof f->line_name, "%.*s", (int)(close - q - 1), q + 1);
  f->name = f->line_name;
}

static bool word_is(const char *p, size_t n, const char *word) {
  return n == strlen(word) && strncmp(p, word, n) == 0;
}

/* A directive's text (after the #) at line; next_line: the line after it. */
static int directive(scan *s, const char *d, file_ctx *f, long line, long next_line) {
  const char *p = skip_blank(d);
  size_t n = 0;
  while (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z')) n++;
  if (word_is(p, n, "include") || word_is(p, n, "import"))
    return operand(s, p + n, word_is(p, n, "include") ? "#include" : "#import", false, f, line);
  if (word_is(p, n, "include_next") || word_is(p, n, "embed"))
    return unknown(s, "%s:%ld: #%.*s depends on where the compiler found its includer", f->name,
                   line + f->delta, (int)n, p);
  if (word_is(p, n, "line")) set_line(f, p + n, next_line);
  return probes(s, p + n, f, line);
}

static bool word_char(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Every directive of text, in order. */
static int walk(scan *s, const char *text, file_ctx *f) {
  char *d = kt_alloc(strlen(text) + 1, s->err);
  if (!d) return -1;
  reader r = {text, 1};
  bool first = true; /* nothing but blanks and comments yet on this line */
  char prev = '\0';
  int rc = 0;
  while (rc == 0 && !s->why && cur(&r)) {
    char c = cur(&r);
    if (c == '/' && (ahead(&r) == '*' || ahead(&r) == '/')) {
      skip_comment(&r);
    } else if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      first = first || c == '\n';
      advance(&r);
    } else if (c == '#' && first) {
      long line = r.line;
      advance(&r);
      directive_text(&r, d);
      rc = directive(s, d, f, line, r.line + 1);
    } else if (c == '"' || (c == '\'' && !word_char(prev))) {
      literal(&r, NULL); /* a quote after a digit or letter: C++'s digit separator, a prefix */
      first = false;
    } else {
      advance(&r);
      first = false;
    }
    prev = c;
  }
  free(d);
  return rc;
}

/* ---- where the compiler looks ---- */

/* Options that name folders to search, or files included before the
** source. */
static const struct {
  const char *name;
  bool dir;
} flags[] = {{"--include-path", true}, {"-isystem", true},      {"-iquote", true},
             {"-idirafter", true},     {"-I", true},            {"--pre-include", false},
             {"-include", false},      {"-imacros", false}};
#define NFLAGS (sizeof flags / sizeof *flags)

/* Which of flags opt is (NFLAGS: none), and its value: joined ("-Idir",
** "--include-path=dir") or the option after it ("-I dir": *took). */
static size_t flag_of(const char *opt, const char *next, const char **value, bool *took) {
  *took = false;
  for (size_t i = 0; i < NFLAGS; i++) {
    size_t n = strlen(flags[i].name);
    if (strncmp(opt, flags[i].name, n) != 0 || (opt[n] && opt[n] != '=' && flags[i].name[1] == '-'))
      continue;
    *value = opt[n] == '=' ? opt + n + 1 : opt[n] ? opt + n : next ? next : "";
    *took = !opt[n] && next;
    return i;
  }
  return NFLAGS;
}

/* Other options of the search (-isysroot, -iprefix, -Xclang, --sysroot,
** precompiled headers, @files) are not followed: the headers are then not
** known. */
static int unfollowed(scan *s, const char *opt) {
  bool macro = strncmp(opt, "-D", 2) == 0 || strncmp(opt, "-U", 2) == 0 ||
               strncmp(opt, "--define-macro", 14) == 0 || strncmp(opt, "--undefine-macro", 16) == 0;
  if ((!macro && strstr(opt, "pch")) || opt[0] == '@' || strncmp(opt, "-Xclang", 7) == 0 ||
      strncmp(opt, "--sysroot", 9) == 0 || strncmp(opt, "-i", 2) == 0 ||
      strncmp(opt, "--i", 3) == 0)
    return unknown(s, "the option %s changes what the compiler reads, which ktlua does not "
                      "follow", opt);
  return 0;
}

/* The options split at white space, as compilers take them: the folders
** they name first (files = false), then the files they include. */
static int options_of(scan *s, const char *options, const char *cwd, bool files) {
  char *text = kt_strdup(options, s->err);
  if (!text) return -1;
  char *save = NULL, *opt = strtok_r(text, " \t\r\n", &save);
  int rc = 0;
  while (opt && rc == 0 && !s->why) {
    char *next = strtok_r(NULL, " \t\r\n", &save);
    const char *value;
    bool took;
    size_t f = flag_of(opt, next, &value, &took);
    if (f == NFLAGS && !files) rc = unfollowed(s, opt);
    else if (f < NFLAGS && !files && flags[f].dir) rc = add_dir(s, value, cwd);
    else if (f < NFLAGS && files && !flags[f].dir) {
      char what[600];
      snprintf(what, sizeof what, "the option %s %s", flags[f].name, value);
      rc = resolve(s, value, true, cwd, false, "the options", what);
    }
    opt = took ? strtok_r(NULL, " \t\r\n", &save) : next;
  }
  free(text);
  return rc;
}

/* The folders compilers take from the environment (clang's; NVRTC's need
** not: more folders than the compiler's only cost a look). */
static int env_dirs(scan *s, const char *cwd) {
  static const char *const vars[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    while (v && *v) {
      size_t n = strcspn(v, ":");
      char dir[PATH_MAX];
      snprintf(dir, sizeof dir, "%.*s", (int)n, v);
      if (add_dir(s, dir, cwd)) return -1;
      v += n + (v[n] == ':');
    }
  }
  return 0;
}

static void scan_clear(scan *s) {
  for (size_t i = 0; i < s->nprobed; i++) free(s->probed[i]);
  free(s->probed);
  for (size_t i = 0; i < s->ndirs; i++) free(s->dirs[i]);
  free(s->dirs);
  free(s->seen);
  free(s->key);
  free(s->why);
}

/* The working folder is the compiler's too: device processes and compiler
** processes are started in it, and a tuning does not leave it. */
int kt_headers_find(const char *source, const char *options, kt_header_rules rules,
                    kt_headers *h, kt_error *err) {
  *h = (kt_headers){NULL, NULL};
  scan s = {.rules = rules, .err = err};
  char cwd[PATH_MAX];
  file_ctx main = {.name = "the source", .dir = cwd};
  int rc = 0;
  if (!getcwd(cwd, sizeof cwd))
    rc = unknown(&s, "the working folder cannot be known: %s", strerror(errno));
  else if (add_dir(&s, cwd, cwd) || options_of(&s, options, cwd, false) || env_dirs(&s, cwd) ||
           options_of(&s, options, cwd, true) || walk(&s, source, &main))
    rc = -1;
  if (rc == 0 && !s.why && !s.key && !(s.key = kt_strdup("", err))) rc = -1;
  if (rc == 0 && s.why) {
    h->why = s.why;
    s.why = NULL;
  } else if (rc == 0) {
    h->key = s.key;
    s.key = NULL;
  }
  scan_clear(&s);
  return rc;
}

void kt_headers_clear(kt_headers *h) {
  free(h->key);
  free(h->why);
  *h = (kt_headers){NULL, NULL};
}
