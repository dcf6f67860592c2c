/*
** program_store.h: compiled programs kept on disk, so that a tuning in a
** new process loads what an earlier one compiled instead of compiling it
** again.
**
** An entry is one file, named by a hash of its key: everything that
** changes the binary (the device's and compiler's identity, the options,
** the kernel where a program serves one, the headers the compile reads,
** the final source). The file holds
** the key itself, the compiler's log and the backend's binary
** (backend.h, prog_binary; none for a source the compiler refused) under
** a checksum: a hash collision is a miss,
** a damaged entry (cut short, bytes changed) is removed and built again.
** Files are written beside their place and renamed into it, so several
** processes may share a folder and none reads half an entry. So may
** several nodes, through a shared file system (NFS, Lustre, ...): renames
** are atomic there too; the writer's file name holds its process id and
** a time, and is created exclusively, so two nodes whose writers have one
** id fail a write at worst (the cache is best effort); an entry that
** cannot be read whole (another node replaced it meanwhile) is a miss,
** never taken for damage; two nodes that remove the same entry, or one
** another just wrote, cost a compile. The folder
** is bounded: past its limit, the entries used least recently go (a hit
** renews an entry's time).
**
** The folder: KTLUA_CACHE names it ("off": none), else
** $XDG_CACHE_HOME/ktlua, else ~/.cache/ktlua. Its bound: KTLUA_CACHE_SIZE
** (bytes, or with K, M or G; at most 2^63 - 1 bytes), else 1 GiB.
*/
#ifndef KT_PROGRAM_STORE_H
#define KT_PROGRAM_STORE_H

#include "backend.h"
#include "device.h"

#define KT_PROGRAM_STORE_LIMIT ((uint64_t)1 << 30)
/* The largest bound: 2^63 - 1 bytes, a Lua integer (kt.program_cache). */
#define KT_PROGRAM_STORE_MOST ((uint64_t)INT64_MAX)

typedef struct kt_program_store kt_program_store;

typedef struct kt_program_key {
  const char *identity; /* kt_program_identity */
  const char *options;
  const char *name;     /* the kernel, where a program serves one; else NULL */
  const char *headers;  /* the files the compile reads beside the source (headers.h) */
  const char *source;
} kt_program_key;

/* What the environment says: the folder (malloc'd; NULL with *off when
** turned off, or where no KTLUA_CACHE, XDG_CACHE_HOME nor HOME names one)
** and the bound. -1 with err for a bound that is no size. */
int kt_program_store_settings(char **dir, bool *off, uint64_t *limit, kt_error *err);

/* A folder as a store (made when the first entry is). Thread-safe to use. */
kt_program_store *kt_program_store_open(const char *dir, uint64_t limit, kt_error *err);
/* The store the environment names; NULL with *off when turned off. */
kt_program_store *kt_program_store_default(bool *off, kt_error *err);
void kt_program_store_free(kt_program_store *s);
const char *kt_program_store_dir(const kt_program_store *s);
uint64_t kt_program_store_limit(const kt_program_store *s);

/* What, beside source, options and name, decides a device's binaries:
** backend, platform, device, driver and compiler with their versions
** (malloc'd). */
char *kt_program_identity(const kt_device_info *dev, kt_error *err);

/* 1 with the binary and the compile's log (both malloc'd; *log may be
** NULL) of the entry for key; 0 when there is none (a damaged one is
** removed). */
int kt_program_store_get(kt_program_store *s, const kt_program_key *key, unsigned char **bytes,
                         size_t *size, char **log);
/* Keeps a binary and its log under key, then bounds the folder. */
int kt_program_store_put(kt_program_store *s, const kt_program_key *key,
                         const unsigned char *bytes, size_t size, const char *log,
                         kt_error *err);
/* Removes the entry for key (its binary would not load). */
void kt_program_store_forget(kt_program_store *s, const kt_program_key *key);

typedef struct kt_program_store_usage {
  size_t entries;
  uint64_t bytes;
} kt_program_store_usage;

/* Entries and their bytes, now. */
int kt_program_store_usage_of(kt_program_store *s, kt_program_store_usage *u, kt_error *err);
/* Removes every entry; *removed: how many. */
int kt_program_store_clear(kt_program_store *s, size_t *removed, kt_error *err);

#endif
