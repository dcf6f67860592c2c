/*
** program_store.c: the program cache on disk (program_store.h).
**
** An entry's file: MAGIC, the lengths of key, log and binary (u64, little
** endian), a CRC-32 (zlib's) of the lengths and everything after it, then
** key, log and binary. The key is identity, options, name and headers, each
** ended by a NUL, then the source.
*/
#define _DEFAULT_SOURCE /* d_type */
#include "program_store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "ktlua-program-1\n"
#define MAGIC_LEN 16
#define HEADER (MAGIC_LEN + 3 * 8 + 4)
#define SUFFIX ".ktp"
#define TEMP_MARK ".ktp.tmp-"
/* A write unfinished for this long was its writer's last. */
#define STALE_TEMP_S (60 * 60)
/* The folder is measured again after this many writes of this process,
** as others may write to it too. */
#define RESCAN_PUTS 32

struct kt_program_store {
  char *dir;
  uint64_t limit;
  pthread_mutex_t lock; /* for what follows */
  uint64_t bytes;       /* the folder's, as last measured, plus this process's writes since */
  unsigned puts;        /* writes since it was measured; UINT_MAX: never measured */
};

/* ---- settings ---- */

/* Bytes, or a number with K, M or G; at most KT_PROGRAM_STORE_MOST, which
** every caller (Lua's integers above all) can hold. */
static int parse_size(const char *s, uint64_t *out, kt_error *err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  else if (*end == 'M' || *end == 'm') shift = 20;
  else if (*end == 'G' || *end == 'g') shift = 30;
  if (shift) end++;
  /* strtoull would take white space and a sign first: "-1" as 2^64 - 1 */
  if (!isdigit((unsigned char)s[0]) || *end)
    return kt_fail(err, "KTLUA_CACHE_SIZE: '%s' is not a size (bytes, or a number with K, M "
                        "or G)", s);
  if (errno == ERANGE || v > (KT_PROGRAM_STORE_MOST >> shift))
    return kt_fail(err, "KTLUA_CACHE_SIZE: '%s' is too large: the bound is at most %llu bytes "
                        "(8 EiB)", s, (unsigned long long)KT_PROGRAM_STORE_MOST);
  *out = (uint64_t)v << shift;
  return 0;
}

static char *joined(const char *a, const char *b, kt_error *err) {
  size_t n = strlen(a) + strlen(b) + 1;
  char *s = kt_alloc(n, err);
  if (s) snprintf(s, n, "%s%s", a, b);
  return s;
}

int kt_program_store_settings(char **dir, bool *off, uint64_t *limit, kt_error *err) {
  const char *size = getenv("KTLUA_CACHE_SIZE"), *place = getenv("KTLUA_CACHE");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  *dir = NULL;
  *limit = KT_PROGRAM_STORE_LIMIT;
  *off = place && strcmp(place, "off") == 0;
  if (size && size[0] && parse_size(size, limit, err)) return -1;
  if (*off) return 0;
  if (place && place[0]) *dir = kt_strdup(place, err);
  else if (xdg && xdg[0] == '/') *dir = joined(xdg, "/ktlua", err);
  else if (home && home[0]) *dir = joined(home, "/.cache/ktlua", err);
  else *off = true; /* nowhere to keep it (a daemon's bare environment): no cache */
  return *off || *dir ? 0 : -1;
}

/* ---- opening ---- */

/* mkdir -p. */
static int make_folder(const char *dir, kt_error *err) {
  char *path = kt_strdup(dir, err);
  if (!path) return -1;
  int rc = 0;
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = '\0';
    rc = mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
    int why = errno;
    if (rc) kt_fail(err, "cannot make the program cache folder %s: %s", path, strerror(why));
    *p = c;
    if (rc || !c) break;
  }
  free(path);
  return rc;
}

/* The folder is made when the first entry is written. */
kt_program_store *kt_program_store_open(const char *dir, uint64_t limit, kt_error *err) {
  kt_program_store *s = kt_calloc(1, sizeof *s, err);
  if (!s) return NULL;
  if (!(s->dir = kt_strdup(dir, err))) {
    free(s);
    return NULL;
  }
  s->limit = limit;
  s->puts = UINT32_MAX;
  pthread_mutex_init(&s->lock, NULL);
  return s;
}

kt_program_store *kt_program_store_default(bool *off, kt_error *err) {
  char *dir;
  uint64_t limit;
  if (kt_program_store_settings(&dir, off, &limit, err) || *off) return NULL;
  kt_program_store *s = kt_program_store_open(dir, limit, err);
  free(dir);
  return s;
}

void kt_program_store_free(kt_program_store *s) {
  if (!s) return;
  pthread_mutex_destroy(&s->lock);
  free(s->dir);
  free(s);
}

const char *kt_program_store_dir(const kt_program_store *s) { return s->dir; }
uint64_t kt_program_store_limit(const kt_program_store *s) { return s->limit; }

char *kt_program_identity(const kt_device_info *dev, kt_error *err) {
  static const char *const keys[] = {"backend", "platform", "name", "vendor", "version",
                                     "driver_version", "c_version", "compute_capability",
                                     "arch"};
  size_t size = 64;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const char *v = kt_device_string(dev, keys[i]);
    size += strlen(keys[i]) + (v ? strlen(v) : 0) + 2;
  }
  char *s = kt_alloc(size, err);
  if (!s) return NULL;
  size_t used = 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const char *v = kt_device_string(dev, keys[i]);
    used += (size_t)snprintf(s + used, size - used, "%s=%s\n", keys[i], v ? v : "");
  }
  return s;
}

/* ---- entries ---- */

static size_t key_size(const kt_program_key *k) {
  return strlen(k->identity) + strlen(k->options) + (k->name ? strlen(k->name) : 0) +
         strlen(k->headers) + strlen(k->source) + 4;
}

static void key_write(const kt_program_key *k, unsigned char *p) {
  const char *parts[] = {k->identity, k->options, k->name ? k->name : "", k->headers, k->source};
  for (int i = 0; i < 5; i++) {
    size_t n = strlen(parts[i]) + (i < 4); /* the NUL ends all but the source */
    memcpy(p, parts[i], n);
    p += n;
  }
}

/* The entry's path: the folder, then FNV-1a of the key in hex. */
static char *entry_path(const kt_program_store *s, const unsigned char *key, size_t n,
                        kt_error *err) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ key[i]) * 0x100000001b3ull;
  size_t size = strlen(s->dir) + 32;
  char *path = kt_alloc(size, err);
  if (path) snprintf(path, size, "%s/%016llx" SUFFIX, s->dir, (unsigned long long)h);
  return path;
}

/* The key's bytes and the entry's path. */
static unsigned char *key_bytes(const kt_program_store *s, const kt_program_key *k, size_t *n,
                                char **path, kt_error *err) {
  *n = key_size(k);
  unsigned char *key = kt_alloc(*n, err);
  if (!key) return NULL;
  key_write(k, key);
  if ((*path = entry_path(s, key, *n, err))) return key;
  free(key);
  return NULL;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The checksum of an entry of `total` bytes: of its lengths, then all past the checksum. */
static uint32_t checksum(const unsigned char *e, size_t total) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, e + MAGIC_LEN, 24);
  return (uint32_t)crc32_z(c, e + HEADER, total - HEADER);
}

/* A file of the folder opened for reading, or -1 unless it is a regular
** file (*st: its status): opened without blocking, as a named pipe would
** wait for a writer for ever, and not through a link, which the cache
** never writes. dir: the folder's descriptor, or AT_FDCWD. */
static int open_regular(int dir, const char *path, struct stat *st) {
  int fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
  if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* The whole file (st: its status), or NULL (*n: its size). */
static unsigned char *read_all(int fd, const struct stat *st, size_t *n) {
  *n = (size_t)st->st_size;
  if (st->st_size < HEADER) return NULL;
  unsigned char *p = malloc(*n);
  size_t got = 0;
  while (p && got < *n) {
    ssize_t r = read(fd, p + got, *n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (p && got == *n) return p;
  free(p);
  return NULL;
}

typedef enum { SOUND, FOREIGN, DAMAGED } verdict;

/* Whether e (n bytes) is a sound entry for key, and where its parts are. */
static verdict check(const unsigned char *e, size_t n, const unsigned char *key, size_t nkey,
                     size_t *nlog, size_t *nbin) {
  if (!e || memcmp(e, MAGIC, MAGIC_LEN) != 0) return DAMAGED;
  uint64_t k = get_u64(e + MAGIC_LEN), l = get_u64(e + MAGIC_LEN + 8);
  uint64_t b = get_u64(e + MAGIC_LEN + 16);
  uint32_t sum = (uint32_t)e[HEADER - 4] | (uint32_t)e[HEADER - 3] << 8 |
                 (uint32_t)e[HEADER - 2] << 16 | (uint32_t)e[HEADER - 1] << 24;
  if (k > n || l > n || b > n || HEADER + k + l + b != n || checksum(e, n) != sum)
    return DAMAGED;
  if (k != nkey || memcmp(e + HEADER, key, nkey) != 0) return FOREIGN;
  *nlog = (size_t)l;
  *nbin = (size_t)b;
  return SOUND;
}

static int found(const unsigned char *e, size_t nkey, size_t nlog, size_t nbin,
                 unsigned char **bytes, size_t *size, char **log) {
  *bytes = malloc(nbin ? nbin : 1);
  *log = nlog ? malloc(nlog + 1) : NULL;
  if (!*bytes || (nlog && !*log)) {
    free(*bytes);
    free(*log);
    *bytes = NULL;
    *log = NULL;
    return 0;
  }
  if (nlog) {
    memcpy(*log, e + HEADER + nkey, nlog);
    (*log)[nlog] = '\0';
  }
  memcpy(*bytes, e + HEADER + nkey + nlog, nbin);
  *size = nbin;
  return 1;
}

int kt_program_store_get(kt_program_store *s, const kt_program_key *k, unsigned char **bytes,
                         size_t *size, char **log) {
  *bytes = NULL;
  *size = 0;
  *log = NULL;
  size_t nkey, n, nlog = 0, nbin = 0;
  char *path;
  kt_error err;
  unsigned char *key = key_bytes(s, k, &nkey, &path, &err);
  if (!key) return 0;
  struct stat st;
  int fd = open_regular(AT_FDCWD, path, &st), rc = 0;
  if (fd >= 0) {
    unsigned char *e = read_all(fd, &st, &n);
    /* A file that could not be read whole (out of memory, or on a shared
    ** file system an entry another node replaced meanwhile: ESTALE) is a
    ** miss, not damage: only what was read and is wrong is removed. */
    verdict v = !e && st.st_size >= HEADER ? FOREIGN : check(e, n, key, nkey, &nlog, &nbin);
    if (v == SOUND && (rc = found(e, nkey, nlog, nbin, bytes, size, log)))
      (void)futimens(fd, NULL); /* used now: the last to go */
    else if (v == DAMAGED)
      unlink(path);
    free(e);
    close(fd);
  }
  free(key);
  free(path);
  return rc;
}

void kt_program_store_forget(kt_program_store *s, const kt_program_key *k) {
  size_t nkey;
  char *path;
  kt_error err;
  unsigned char *key = key_bytes(s, k, &nkey, &path, &err);
  if (key) unlink(path);
  free(key);
  free(path);
}

/* ---- writing ---- */

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Writes e beside path (in dir, made if needed) and renames it there. */
static int place(const char *dir, const char *path, const unsigned char *e, size_t n,
                 kt_error *err) {
  size_t size = strlen(path) + 64;
  char *temp = kt_alloc(size, err);
  if (!temp) return -1;
  snprintf(temp, size, "%s.tmp-%ld-%llx", path, (long)getpid(),
           (unsigned long long)kt_now_ns());
  int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), rc = -1;
  if (fd < 0 && errno == ENOENT && make_folder(dir, err) == 0)
    fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    kt_fail(err, "cannot write %s: %s", temp, strerror(errno));
  } else {
    bool ok = write_all(fd, e, n) == 0;
    if (close(fd) != 0) ok = false;
    if (!ok) kt_fail(err, "cannot write %s: %s", temp, strerror(errno));
    else if (rename(temp, path) != 0) kt_fail(err, "cannot rename %s: %s", temp, strerror(errno));
    else rc = 0;
    if (rc) unlink(temp);
  }
  free(temp);
  return rc;
}

static void bound(kt_program_store *s, uint64_t added);

int kt_program_store_put(kt_program_store *s, const kt_program_key *k,
                         const unsigned char *bytes, size_t size, const char *log,
                         kt_error *err) {
  size_t nkey = key_size(k), nlog = log ? strlen(log) : 0;
  size_t n = HEADER + nkey + nlog + size;
  unsigned char *e = kt_alloc(n, err);
  if (!e) return -1;
  memcpy(e, MAGIC, MAGIC_LEN);
  put_u64(e + MAGIC_LEN, nkey);
  put_u64(e + MAGIC_LEN + 8, nlog);
  put_u64(e + MAGIC_LEN + 16, size);
  key_write(k, e + HEADER);
  if (nlog) memcpy(e + HEADER + nkey, log, nlog);
  if (size) memcpy(e + HEADER + nkey + nlog, bytes, size);
  uint32_t sum = checksum(e, n);
  for (int i = 0; i < 4; i++) e[HEADER - 4 + i] = (unsigned char)(sum >> (8 * i));
  char *path = entry_path(s, e + HEADER, nkey, err);
  int rc = path ? place(s->dir, path, e, n, err) : -1;
  free(path);
  free(e);
  if (rc == 0) bound(s, n);
  return rc;
}

/* ---- the folder ---- */

typedef struct file {
  char *name;
  uint64_t bytes;
  struct timespec used;
} file;

typedef struct listing {
  file *files;
  size_t n, cap;
  uint64_t bytes;
} listing;

/* n lower-case hexadecimal digits at s. */
static bool hex_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) return false;
  return n > 0;
}

/* An entry's name, as entry_path makes it: 16 hexadecimal digits, SUFFIX. */
static bool entry_name(const char *name) {
  return strlen(name) == 16 + strlen(SUFFIX) && hex_digits(name, 16) &&
         strcmp(name + 16, SUFFIX) == 0;
}

/* An unfinished write's, as place makes it: the entry's name, ".tmp-",
** the writer's process id, "-" and a time in hexadecimal. */
static bool temp_name(const char *name) {
  if (strlen(name) <= 16 + strlen(TEMP_MARK) || !hex_digits(name, 16) ||
      strncmp(name + 16, TEMP_MARK, strlen(TEMP_MARK)) != 0)
    return false;
  const char *p = name + 16 + strlen(TEMP_MARK);
  size_t pid = strspn(p, "0123456789");
  return pid > 0 && p[pid] == '-' && hex_digits(p + pid + 1, strlen(p + pid + 1));
}

/* Whether a regular file of the folder is the cache's: it starts with
** MAGIC (an unfinished write: with as much of it as it holds). A file the
** cache did not write is never counted nor removed, whatever its name. */
static bool ours(int dir, const char *name, bool unfinished) {
  struct stat st;
  int fd = open_regular(dir, name, &st);
  if (fd < 0) return false;
  unsigned char head[MAGIC_LEN];
  ssize_t got;
  do got = read(fd, head, sizeof head);
  while (got < 0 && errno == EINTR);
  close(fd);
  return got == MAGIC_LEN ? memcmp(head, MAGIC, MAGIC_LEN) == 0
                          : unfinished && got >= 0 && memcmp(head, MAGIC, (size_t)got) == 0;
}

static void listing_clear(listing *l) {
  for (size_t i = 0; i < l->n; i++) free(l->files[i].name);
  free(l->files);
  *l = (listing){NULL, 0, 0, 0};
}

/* The entries (files the cache wrote, by their names and headers);
** unfinished writes older than STALE_TEMP_S are removed. */
static int list(const kt_program_store *s, listing *l, kt_error *err) {
  *l = (listing){NULL, 0, 0, 0};
  DIR *d = opendir(s->dir);
  if (!d && errno == ENOENT) return 0; /* nothing stored yet */
  if (!d) return kt_fail(err, "cannot read the program cache %s: %s", s->dir, strerror(errno));
  int fd = dirfd(d), rc = 0;
  time_t now = time(NULL);
  struct dirent *de;
  while (rc == 0 && (de = readdir(d))) {
    struct stat st;
    bool temp = temp_name(de->d_name);
    if ((!temp && !entry_name(de->d_name)) ||
        fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        !ours(fd, de->d_name, temp))
      continue; /* not ours, or gone meanwhile */
    if (temp) {
      if (now - st.st_mtime > STALE_TEMP_S) unlinkat(fd, de->d_name, 0);
      continue;
    }
    if ((rc = kt_grow(&l->files, &l->cap, l->n + 1, sizeof *l->files, err))) break;
    file *f = &l->files[l->n];
    if (!(f->name = kt_strdup(de->d_name, err))) rc = -1;
    else l->n++;
    f->bytes = (uint64_t)st.st_size;
    f->used = st.st_mtim;
    l->bytes += f->bytes;
  }
  closedir(d);
  if (rc) listing_clear(l);
  return rc;
}

static int older(const void *a, const void *b) {
  const file *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  if (x->used.tv_nsec != y->used.tv_nsec) return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Removes a file of the folder; one already gone counts as removed. */
static bool remove_file(const kt_program_store *s, const char *name) {
  size_t size = strlen(s->dir) + strlen(name) + 2;
  char *path = malloc(size);
  if (!path) return false;
  snprintf(path, size, "%s/%s", s->dir, name);
  bool gone = unlink(path) == 0 || errno == ENOENT;
  free(path);
  return gone;
}

/* Removes the least recently used entries until the folder is within its
** limit; returns its bytes then. Another process may remove them first. */
static uint64_t evict(kt_program_store *s, listing *l) {
  qsort(l->files, l->n, sizeof *l->files, older);
  for (size_t i = 0; i < l->n && l->bytes > s->limit; i++)
    if (remove_file(s, l->files[i].name)) l->bytes -= l->files[i].bytes;
  return l->bytes;
}

/* After a write of `added` bytes: the folder measured again when it may be
** past its limit, or when other processes may have written much. */
static void bound(kt_program_store *s, uint64_t added) {
  pthread_mutex_lock(&s->lock);
  s->bytes += added;
  bool measure = s->puts == UINT32_MAX || s->bytes > s->limit || ++s->puts >= RESCAN_PUTS;
  if (measure) {
    listing l;
    kt_error err;
    if (list(s, &l, &err) == 0) {
      s->bytes = evict(s, &l);
      s->puts = 0;
      listing_clear(&l);
    }
  }
  pthread_mutex_unlock(&s->lock);
}

int kt_program_store_usage_of(kt_program_store *s, kt_program_store_usage *u, kt_error *err) {
  listing l;
  if (list(s, &l, err)) return -1;
  *u = (kt_program_store_usage){l.n, l.bytes};
  listing_clear(&l);
  return 0;
}

int kt_program_store_clear(kt_program_store *s, size_t *removed, kt_error *err) {
  listing l;
  *removed = 0;
  if (list(s, &l, err)) return -1;
  for (size_t i = 0; i < l.n; i++)
    if (remove_file(s, l.files[i].name)) (*removed)++;
  listing_clear(&l);
  return 0;
}
