/*
** bench_space.c: how fast spaces are built and counted.
**
**   build/bench_space [--quick] [gemm_dataset.json.gz]      (make bench-space)
**
** (a) the CLBlast Xgemm space whose parameters a Kernel Tuner cache file
**     records (15 parameters, 82,944 combinations) under CLBlast's seven
**     divisibility constraints;
** (b) GEMM tiles and work per thread over 1..N: 2^30 combinations;
** (t) a chain of divisibility constraints over 1..128 that never falls
**     apart into parts, where the walk is most of the work and threads help;
** each with expression constraints (1 thread and every processor), with
** the same constraints as Lua functions through the ktlua module, and by
** filtering the Cartesian product with the same compiled expressions, the
** baseline that pruned generation is compared with. --quick filters a
** sixteenth of (b)'s product and scales the time up (marked as such).
** Times are medians of several runs of building the space from nothing:
** declaring the parameters and constraints, generating, counting.
*/
#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../core/space/space.h"

int luaopen_ktlua(lua_State *L);

typedef struct param_def {
  char name[32];
  kt_value values[128];
  size_t n;
} param_def;

typedef struct space_def {
  const char *name;
  param_def params[16];
  size_t nparams;
  const char *const *constraints;
  size_t ncons;
} space_def;

/* ---- the spaces ---- */

static const char *const xgemm_constraints[] = {
    "KWG % KWI == 0",
    "MWG % (MDIMC*VWM) == 0",
    "NWG % (NDIMC*VWN) == 0",
    "MWG % (MDIMA*VWM) == 0",
    "NWG % (NDIMB*VWN) == 0",
    "KWG % ((MDIMC*NDIMC)/MDIMA) == 0",
    "KWG % ((MDIMC*NDIMC)/NDIMB) == 0",
};

static const char *const tiles_constraints[] = {
    "MWG % (MDIMC*VWM) == 0",
    "NWG % (NDIMC*VWN) == 0",
    "MDIMC*NDIMC >= 16 && MDIMC*NDIMC <= 256",
    "KWG % MDIMC == 0",
    "KWG % NDIMC == 0",
};

static const char *const chain_constraints[] = {
    "A % B == 0",
    "(A + C) % D == 0",
    "B * D <= 96",
};

/* A parameter over lo..hi, stepping by one, or multiplying by mul > 1. */
typedef struct range {
  const char *name;
  int64_t lo, hi, mul;
} range;

static const range tiles_ranges[] = {
    {"MWG", 1, 64, 1},   {"NWG", 1, 64, 1},   {"KWG", 1, 64, 1}, {"MDIMC", 1, 16, 1},
    {"NDIMC", 1, 16, 1}, {"VWM", 1, 8, 2},    {"VWN", 1, 8, 2}};

/* One group that never falls apart, so that the walk is most of the work:
** where threads help. */
static const range chain_ranges[] = {
    {"A", 1, 128, 1}, {"B", 1, 128, 1}, {"C", 1, 128, 1}, {"D", 1, 128, 1}};

static void ranges_space(space_def *d, const char *name, const range *r, size_t n,
                         const char *const *constraints, size_t ncons) {
  memset(d, 0, sizeof *d);
  d->name = name;
  for (size_t i = 0; i < n; i++) {
    param_def *p = &d->params[d->nparams++];
    snprintf(p->name, sizeof p->name, "%s", r[i].name);
    for (int64_t v = r[i].lo; v <= r[i].hi; v = r[i].mul > 1 ? v * r[i].mul : v + 1)
      p->values[p->n++] = (kt_value){.type = KT_VINT, .u.i = v};
  }
  d->constraints = constraints;
  d->ncons = ncons;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* ---- the dataset: just the parameters of its tune_params ---- */

static char *read_gz(const char *path) {
  gzFile f = gzopen(path, "rb");
  if (!f) return NULL;
  size_t n = 0, cap = 1 << 20;
  char *buf = malloc(cap);
  int got;
  while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n - 1))) > 0) {
    n += (size_t)got;
    if (cap - n - 1 == 0) buf = realloc(buf, cap *= 2);
  }
  gzclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

/* After "key": in text, or NULL. */
static const char *after_key(const char *text, const char *key) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  for (const char *at = strstr(text, quoted); at; at = strstr(at + 1, quoted)) {
    const char *p = at + strlen(quoted);
    while (isspace((unsigned char)*p)) p++;
    if (*p == ':') return p + 1;
  }
  return NULL;
}

static int xgemm_space(space_def *d, const char *text) {
  memset(d, 0, sizeof *d);
  d->name = "(a) CLBlast Xgemm";
  d->constraints = xgemm_constraints;
  d->ncons = COUNT(xgemm_constraints);
  const char *keys = after_key(text, "tune_params_keys"), *values = after_key(text, "tune_params");
  if (!keys || !values) return -1;
  for (const char *p = strchr(keys, '"'); p && p < strchr(keys, ']'); p = strchr(p + 1, '"')) {
    param_def *par = &d->params[d->nparams++];
    const char *end = strchr(p + 1, '"');
    snprintf(par->name, sizeof par->name, "%.*s", (int)(end - p - 1), p + 1);
    const char *list = strchr(after_key(values, par->name), '[') + 1;
    for (char *next; *list != ']'; list = next + (*next == ',')) {
      par->values[par->n++] = (kt_value){.type = KT_VINT, .u.i = strtoll(list, &next, 10)};
      while (isspace((unsigned char)*next)) next++;
    }
    p = end;
  }
  return 0;
}

/* ---- building with expressions ---- */

static int build_exprs(const space_def *d, unsigned threads, uint64_t *count, size_t *bytes,
                       kt_error *err) {
  kt_space *s = kt_space_new(err);
  int rc = s ? 0 : -1;
  for (size_t i = 0; i < d->nparams && rc == 0; i++)
    rc = kt_space_add_param(s, d->params[i].name, d->params[i].values, d->params[i].n, err);
  for (size_t c = 0; c < d->ncons && rc == 0; c++)
    rc = kt_space_add_expr(s, d->constraints[c], NULL, 0, 0, err);
  if (rc == 0) kt_space_set_threads(s, threads);
  if (rc == 0) rc = kt_space_generate(s, err);
  if (rc == 0) *count = kt_space_count(s);
  if (rc == 0) *bytes = kt_space_bytes(s);
  kt_space_free(s);
  return rc;
}

/* ---- the baseline: every combination through every constraint ---- */

typedef struct compiled {
  kt_expr *e;
  size_t vars[16]; /* parameter of each name */
  bool ints;       /* runs on the machine for integers */
} compiled;

/* One constraint on one combination, on the machine for integers when it
** applies (every parameter here is an integer), as generation does. */
static int test(const space_def *d, const compiled *c, const uint32_t *vi, kt_error *err) {
  const kt_value *args[16];
  int64_t ints[16];
  for (size_t j = 0; j < kt_expr_nvars(c->e); j++) {
    args[j] = &d->params[c->vars[j]].values[vi[c->vars[j]]];
    ints[j] = args[j]->u.i;
  }
  return c->ints ? kt_expr_test_ints(c->e, ints, err) : kt_expr_test(c->e, args, err);
}

static uint64_t filter(const space_def *d, const compiled *cs, size_t first_values) {
  uint32_t vi[16] = {0};
  uint64_t valid = 0;
  kt_error err;
  for (;;) {
    int ok = 1;
    for (size_t c = 0; c < d->ncons && ok == 1; c++) ok = test(d, &cs[c], vi, &err);
    valid += ok == 1;
    size_t p = d->nparams;
    while (p-- > 0) {
      size_t n = p == 0 ? first_values : d->params[p].n;
      if (++vi[p] < n) break;
      vi[p] = 0;
    }
    if (p == SIZE_MAX) return valid;
  }
}

static int filter_product(const space_def *d, size_t first_values, uint64_t *count,
                          kt_error *err) {
  compiled cs[16];
  size_t n = 0;
  int rc = 0;
  for (; n < d->ncons && rc == 0; n++) {
    if (!(cs[n].e = kt_expr_parse(d->constraints[n], err))) {
      rc = -1;
      break;
    }
    cs[n].ints = kt_expr_integer(cs[n].e);
    for (size_t j = 0; j < kt_expr_nvars(cs[n].e); j++)
      for (size_t p = 0; p < d->nparams; p++)
        if (strcmp(d->params[p].name, kt_expr_var(cs[n].e, j)) == 0) cs[n].vars[j] = p;
  }
  if (rc == 0) *count = filter(d, cs, first_values);
  for (size_t c = 0; c < n; c++) kt_expr_free(cs[c].e);
  return rc;
}

/* ---- building with Lua functions, through the ktlua module ---- */

static const char *const lua_builder =
    "local kt = require 'ktlua'\n"
    "local tuner = kt.tuner()\n"
    "return function(params, constraints)\n"
    "  local k = tuner:kernel{ source = '__kernel void k(__global float *a) {}', name = 'k', global = 64 }\n"
    "  for _, p in ipairs(params) do k:param(p[1], p[2]) end\n"
    "  for _, c in ipairs(constraints) do\n"
    "    local args = table.concat(c[2], ', ')\n"
    "    local body = c[1]:gsub('&&', 'and'):gsub('||', 'or'):gsub('!=', '~=')\n"
    "    k:constraint(c[2], load('return function(' .. args .. ') return ' .. body .. ' end')())\n"
    "  end\n"
    "  return k:space():count()\n"
    "end\n";

static void push_def(lua_State *L, const space_def *d) {
  lua_createtable(L, (int)d->nparams, 0);
  for (size_t i = 0; i < d->nparams; i++) {
    lua_createtable(L, 2, 0);
    lua_pushstring(L, d->params[i].name);
    lua_rawseti(L, -2, 1);
    lua_createtable(L, (int)d->params[i].n, 0);
    for (size_t v = 0; v < d->params[i].n; v++) {
      lua_pushinteger(L, d->params[i].values[v].u.i);
      lua_rawseti(L, -2, (lua_Integer)v + 1);
    }
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_createtable(L, (int)d->ncons, 0);
  for (size_t c = 0; c < d->ncons; c++) {
    kt_error err;
    kt_expr *e = kt_expr_parse(d->constraints[c], &err);
    lua_createtable(L, 2, 0);
    lua_pushstring(L, d->constraints[c]);
    lua_rawseti(L, -2, 1);
    lua_createtable(L, 4, 0);
    for (size_t j = 0; e && j < kt_expr_nvars(e); j++) {
      lua_pushstring(L, kt_expr_var(e, j));
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    kt_expr_free(e);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, (lua_Integer)c + 1);
  }
}

static int build_lua(lua_State *L, const space_def *d, uint64_t *count, kt_error *err) {
  lua_pushvalue(L, 1); /* the builder */
  push_def(L, d);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    kt_fail(err, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  *count = (uint64_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return 0;
}

/* ---- measuring ---- */

typedef enum how { BY_EXPRS, BY_PRODUCT, BY_LUA } how;

typedef struct run {
  const space_def *d;
  how how;
  unsigned threads;
  size_t first_values; /* BY_PRODUCT: values of the first parameter filtered */
  lua_State *L;
  size_t bytes;        /* BY_EXPRS: what the valid configurations take */
} run;

static int once(run *r, uint64_t *count, kt_error *err) {
  switch (r->how) {
    case BY_EXPRS: return build_exprs(r->d, r->threads, count, &r->bytes, err);
    case BY_PRODUCT: return filter_product(r->d, r->first_values, count, err);
    default: return build_lua(r->L, r->d, count, err);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median time of `repeats` runs, in nanoseconds. */
static double measure(run *r, int repeats, uint64_t *count) {
  double t[16];
  for (int i = 0; i < repeats; i++) {
    kt_error err;
    int64_t t0 = kt_now_ns();
    if (once(r, count, &err)) {
      fprintf(stderr, "bench_space: %s: %s\n", r->d->name, err.msg);
      exit(1);
    }
    t[i] = (double)(kt_now_ns() - t0);
  }
  qsort(t, (size_t)repeats, sizeof *t, cmp_double);
  return t[repeats / 2];
}

static double product(const space_def *d) {
  double n = 1;
  for (size_t i = 0; i < d->nparams; i++) n *= (double)d->params[i].n;
  return n;
}

static void report(const run *r, const char *how, double ns, uint64_t valid, double scale,
                   double baseline_ns) {
  char speedup[32] = "";
  if (baseline_ns > 0) snprintf(speedup, sizeof speedup, "%10.0fx", baseline_ns / ns);
  printf("%-22s %-24s %7u %14.0f %10llu %12.3f %10.1f %s%s\n", r->d->name, how, r->threads,
         product(r->d), (unsigned long long)valid, ns / 1e6, valid ? ns / (double)valid : 0,
         speedup, scale > 1 ? "  (scaled from a sixteenth)" : "");
}

static void bench(const space_def *d, lua_State *L, unsigned cpus, bool quick, int repeats) {
  uint64_t valid, filtered;
  run exprs1 = {d, BY_EXPRS, 1, 0, NULL, 0}, exprsn = {d, BY_EXPRS, cpus, 0, NULL, 0};
  run lua = {d, BY_LUA, 1, 0, L, 0};
  size_t first = d->params[0].n, part = quick && product(d) > 1e8 ? first / 16 : first;
  run prod = {d, BY_PRODUCT, 1, part, NULL, 0};
  double scale = (double)first / (double)part;
  double base = measure(&prod, product(d) < 1e7 ? repeats : 1, &filtered) * scale;
  double one = measure(&exprs1, repeats, &valid);
  report(&exprs1, "expressions", one, valid, 1, base);
  if (cpus > 1) report(&exprsn, "expressions", measure(&exprsn, repeats, &valid), valid, 1, base);
  report(&lua, "Lua functions", measure(&lua, repeats > 3 ? 3 : repeats, &valid), valid, 1, base);
  report(&prod, "product filter (expr.)", base, part == first ? filtered : valid, scale, 0);
  printf("%-22s the valid configurations take %zu bytes, %.2f per configuration\n", d->name,
         exprs1.bytes, (double)exprs1.bytes / (double)(valid ? valid : 1));
  if (part == first && filtered != valid) {
    fprintf(stderr, "bench_space: the product filter found %llu, generation %llu\n",
            (unsigned long long)filtered, (unsigned long long)valid);
    exit(1);
  }
}

/* ---- one check ---- */

#define CHECKS 10000000

/* Nanoseconds per check of "MWG % (MDIMC*VWM) == 0" on changing values:
** the expression machine for integers, the one for any value, and a Lua
** function called as the binding calls constraint functions. */
static void per_check(lua_State *L) {
  static const char *const text = "MWG % (MDIMC*VWM) == 0";
  kt_error err;
  kt_expr *e = kt_expr_parse(text, &err);
  kt_value v[3];
  const kt_value *args[3] = {&v[0], &v[1], &v[2]};
  int64_t x[3];
  uint64_t kept[3] = {0, 0, 0};
  double ns[3];
  int64_t t0 = kt_now_ns();
  for (int64_t i = 0; i < CHECKS; i++) {
    x[0] = 1 + (i & 127), x[1] = 1 + (i >> 7 & 15), x[2] = 1 << (i >> 11 & 3);
    kept[0] += kt_expr_test_ints(e, x, &err) == 1;
  }
  ns[0] = (double)(kt_now_ns() - t0) / CHECKS;
  t0 = kt_now_ns();
  for (int64_t i = 0; i < CHECKS; i++) {
    v[0] = (kt_value){.type = KT_VINT, .u.i = 1 + (i & 127)};
    v[1] = (kt_value){.type = KT_VINT, .u.i = 1 + (i >> 7 & 15)};
    v[2] = (kt_value){.type = KT_VINT, .u.i = 1 << (i >> 11 & 3)};
    kept[1] += kt_expr_test(e, args, &err) == 1;
  }
  ns[1] = (double)(kt_now_ns() - t0) / CHECKS;
  luaL_loadstring(L, "return function(mwg, mdimc, vwm) return mwg % (mdimc * vwm) == 0 end");
  lua_call(L, 0, 1);
  int fn = luaL_ref(L, LUA_REGISTRYINDEX);
  t0 = kt_now_ns();
  for (int64_t i = 0; i < CHECKS; i++) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, fn);
    lua_pushinteger(L, 1 + (i & 127));
    lua_pushinteger(L, 1 + (i >> 7 & 15));
    lua_pushinteger(L, 1 << (i >> 11 & 3));
    if (lua_pcall(L, 3, 1, 0) == LUA_OK) kept[2] += lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  ns[2] = (double)(kt_now_ns() - t0) / CHECKS;
  luaL_unref(L, LUA_REGISTRYINDEX, fn);
  kt_expr_free(e);
  printf("one check of \"%s\" (ns): integer machine %.1f, value machine %.1f, Lua function "
         "%.1f%s\n", text, ns[0], ns[1], ns[2],
         kept[0] == kept[1] && kept[1] == kept[2] ? "" : " (THEY DISAGREE)");
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const char *dataset = argc > 1 + quick ? argv[1 + quick] : "../shared/datasets/gemm_RTX_3090.json.gz";
  char *text = read_gz(dataset);
  space_def xgemm, tiles, chain;
  if (!text || xgemm_space(&xgemm, text)) {
    fprintf(stderr, "bench_space: cannot read the parameters of %s\n", dataset);
    return 1;
  }
  free(text);
  ranges_space(&tiles, "(b) GEMM tiles 1..64", tiles_ranges, COUNT(tiles_ranges),
               tiles_constraints, COUNT(tiles_constraints));
  ranges_space(&chain, "(t) divisor chain", chain_ranges, COUNT(chain_ranges),
               chain_constraints, COUNT(chain_constraints));
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "ktlua", luaopen_ktlua, 0);
  lua_pop(L, 1);
  if (luaL_loadstring(L, lua_builder) || lua_pcall(L, 0, 1, 0)) {
    fprintf(stderr, "bench_space: %s\n", lua_tostring(L, -1));
    return 1;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf("%-22s %-24s %7s %14s %10s %12s %10s %11s\n", "space", "constraints", "threads",
         "combinations", "valid", "time_ms", "ns/valid", "vs product");
  bench(&xgemm, L, cpus > 1 ? (unsigned)cpus : 1, quick, 15);
  bench(&tiles, L, cpus > 1 ? (unsigned)cpus : 1, quick, 5);
  bench(&chain, L, cpus > 1 ? (unsigned)cpus : 1, quick, 5);
  per_check(L);
  lua_close(L);
  return 0;
}
