/*
** lk_search.c: the `search` and `stop` options of tuner:tune and
** rec:tune. A searcher is a built-in one by name ("random", or
** {"annealing", seed = 7, alpha = 0.99, ...options}), or one written in
** Lua: a table with methods
**   init(self, space)       -- once, with the space view (lk_space.c),
**                              whose explored set follows the tuning
**   next(self, n)           -- up to n configuration indices (0-based), or
**                              configuration tables; nil or {} when done
**   report(self, index, result)  -- result: {index, status, time_ms, config}
**   prior(self, list)       -- optional, before any result, with the tuning's
**                              prior: {{config =, weight =}, ...} (a config
**                              may leave out parameters it does not say)
** (doc/searchers.md tells how to write one).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"
#include "../core/search/neighbors.h"

typedef struct lua_searcher {
  lk_ref *self;  /* the searcher table */
  lk_ref *space; /* the space view given to init ... */
  lk_space *view; /* ... which the reference keeps alive */
  const kt_space *kspace;
  uint64_t seed;
} lua_searcher;

static void ls_destroy(void *state) {
  lua_searcher *ls = state;
  lk_ref_free(ls->self);
  lk_ref_free(ls->space);
  free(ls);
}

/* Pushes self[method] and self on the callback thread; NULL (and nothing
** pushed) when the table has no such method. The methods run in protected
** bodies (lk_ref_protect): an error in a searcher or a metamethod of what
** it returns stops the tuning through its cleanup. */
static lua_State *push_method(lua_searcher *ls, const char *method) {
  lua_State *T = lk_ref_push(ls->self);
  lua_getfield(T, -1, method);
  if (!lua_isfunction(T, -1)) {
    lua_pop(T, 2);
    return NULL;
  }
  lua_insert(T, -2);
  return T;
}

static int init_body(lua_State *T) {
  lua_searcher *ls = lua_touserdata(T, 1);
  if (!push_method(ls, "init")) return 0; /* init is optional */
  lk_ref_push(ls->space);
  lua_call(T, 2, 0);
  return 0;
}

static int ls_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  lua_searcher *ls = s->state;
  ls->kspace = space;
  if (lk_space_view_reset(ls->view, ls->seed, err)) return -1;
  return lk_ref_protect(ls->self, init_body, ls, err);
}

/* The value indices of a proposed configuration table at the top of T;
** vi is scratch memory that the collector frees. */
static int proposal_table(lua_State *T, const kt_space *space, uint64_t *out, kt_error *err) {
  size_t np = kt_space_nparams(space);
  uint32_t *vi = lua_newuserdatauv(T, (np ? np : 1) * sizeof *vi, 0);
  int rc = 0;
  for (size_t p = 0; p < np && rc == 0; p++) {
    const kt_param *par = kt_space_param(space, p);
    kt_value v;
    lua_getfield(T, -2, par->name);
    bool ok = lk_to_value(T, -1, &v);
    size_t k = lk_has_nul(T, -1) ? par->nvalues : 0; /* values hold no NUL byte */
    while (ok && k < par->nvalues && !kt_value_equal(&par->values[k], &v)) k++;
    lua_pop(T, 1);
    if (!ok || k == par->nvalues)
      rc = kt_fail(err, "next() proposed a configuration with no valid value for %s", par->name);
    vi[p] = (uint32_t)k;
  }
  if (rc == 0 && kt_space_index(space, vi, out))
    rc = kt_fail(err, "next() proposed a configuration that breaks a constraint");
  lua_pop(T, 1);
  return rc;
}

static int proposal(lua_State *T, const kt_space *space, uint64_t *out, kt_error *err) {
  if (lua_isinteger(T, -1)) {
    lua_Integer i = lua_tointeger(T, -1);
    if (i < 0 || (uint64_t)i >= kt_space_count(space))
      return kt_fail(err, "next() proposed index %lld; the space has %llu configurations (0-based)",
                     (long long)i, (unsigned long long)kt_space_count(space));
    *out = (uint64_t)i;
    return 0;
  }
  if (lua_istable(T, -1)) return proposal_table(T, space, out, err);
  return kt_fail(err, "next() must return configuration indices or tables, got a %s",
                 luaL_typename(T, -1));
}

typedef struct next_call {
  lua_searcher *ls;
  uint64_t *out;
  size_t max, got;
  kt_error *err;
  int rc; /* a bad proposal, described in err */
} next_call;

/* next() answers a list (a table without a metatable) or one proposal. */
static int next_body(lua_State *T) {
  next_call *c = lua_touserdata(T, 1);
  if (!push_method(c->ls, "next")) {
    c->rc = kt_fail(c->err, "the searcher table has no method 'next'");
    return 0;
  }
  lua_pushinteger(T, (lua_Integer)c->max);
  lua_call(T, 2, 1);
  int answer = lua_gettop(T);
  bool list = lua_istable(T, answer) && !lua_getmetatable(T, answer);
  lua_settop(T, answer);
  if (!list) {
    if (!lua_isnil(T, answer)) c->rc = proposal(T, c->ls->kspace, &c->out[0], c->err);
    c->got = !lua_isnil(T, answer) && c->rc == 0;
    return 0;
  }
  size_t n = lua_rawlen(T, answer);
  for (size_t i = 0; i < n && i < c->max && c->rc == 0; i++) {
    lua_rawgeti(T, answer, (lua_Integer)i + 1);
    c->rc = proposal(T, c->ls->kspace, &c->out[i], c->err);
    lua_pop(T, 1);
    if (c->rc == 0) c->got = i + 1;
  }
  return 0;
}

static int ls_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  lua_searcher *ls = s->state;
  next_call c = {ls, out, max, 0, err, 0};
  int rc = lk_ref_protect(ls->self, next_body, &c, err);
  *got = c.got;
  return rc ? rc : c.rc;
}

typedef struct report_call {
  lua_searcher *ls;
  uint64_t index;
  const kt_result *r;
} report_call;

static int report_body(lua_State *T) {
  report_call *c = lua_touserdata(T, 1);
  if (!push_method(c->ls, "report")) return 0; /* report is optional */
  lua_pushinteger(T, (lua_Integer)c->index);
  lua_createtable(T, 0, 4);
  lua_pushinteger(T, (lua_Integer)c->index);
  lua_setfield(T, -2, "index");
  lua_pushstring(T, kt_status_name(c->r->status));
  lua_setfield(T, -2, "status");
  if (c->r->status == KT_OK) {
    lua_pushnumber(T, c->r->time_ns / 1e6);
    lua_setfield(T, -2, "time_ms");
  }
  double cost = kt_result_cost(c->r); /* the time, unless an objective says otherwise */
  if (isfinite(cost)) {
    lua_pushnumber(T, cost / 1e6);
    lua_setfield(T, -2, "cost");
  }
  lk_push_config(T, c->ls->kspace, c->r->vi);
  lua_setfield(T, -2, "config");
  lua_call(T, 3, 0);
  return 0;
}

static int ls_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  lua_searcher *ls = s->state;
  if (lk_space_view_record(ls->view, index, r, err)) return -1;
  report_call c = {ls, index, r};
  return lk_ref_protect(ls->self, report_body, &c, err);
}

typedef struct prior_call {
  lua_searcher *ls;
  const kt_prior *p;
} prior_call;

/* searcher:prior(list): each {config =, weight =}, before any result. */
static int prior_body(lua_State *T) {
  prior_call *c = lua_touserdata(T, 1);
  if (!push_method(c->ls, "prior")) return 0; /* prior is optional */
  size_t np = kt_space_nparams(c->ls->kspace);
  lua_createtable(T, (int)c->p->n, 0);
  for (size_t i = 0; i < c->p->n; i++) {
    lua_createtable(T, 0, 2);
    lua_createtable(T, 0, (int)np); /* the values it says (not KT_PRIOR_ANY) */
    for (size_t p = 0; p < np; p++) {
      const kt_param *par = kt_space_param(c->ls->kspace, p);
      uint32_t v = c->p->vi[i * np + p];
      if (v >= par->nvalues) continue;
      lk_push_value(T, &par->values[v]);
      lua_setfield(T, -2, par->name);
    }
    lua_setfield(T, -2, "config");
    lua_pushnumber(T, c->p->weight[i]);
    lua_setfield(T, -2, "weight");
    lua_rawseti(T, -2, (lua_Integer)i + 1);
  }
  lua_call(T, 2, 0);
  return 0;
}

static int ls_prior(kt_searcher *s, const kt_prior *p, kt_error *err) {
  lua_searcher *ls = s->state;
  prior_call c = {ls, p};
  return lk_ref_protect(ls->self, prior_body, &c, err);
}

static const kt_searcher_ops lua_ops = {"lua", ls_start, ls_next, ls_report, ls_destroy, NULL,
                                        ls_prior};

static kt_searcher *lua_searcher_new(lua_State *L, int idx, int owner_idx, uint64_t seed) {
  lua_searcher *ls = calloc(1, sizeof *ls);
  if (!ls) luaL_error(L, "out of memory");
  kt_error err;
  kt_searcher *s = kt_searcher_wrap(&lua_ops, ls, &err);
  if (!s) lk_error(L, &err);
  ls->self = lk_ref_new(L, idx);
  ls->seed = seed;
  ls->view = lk_push_space_view(L, owner_idx, seed, true);
  ls->space = lk_ref_new(L, -1);
  lua_pop(L, 1);
  return s;
}

/* Joins the names in the list at idx with commas; pushes the text. */
static void join_names(lua_State *L, int idx, const char *name, lua_Integer i) {
  lua_pushliteral(L, "");
  for (lua_Integer j = 1; j <= luaL_len(L, idx); j++) {
    if (lua_rawgeti(L, idx, j) != LUA_TSTRING)
      luaL_error(L, "search.%s[%d][%d]: expected a parameter name", name, (int)i, (int)j);
    if (j > 1) {
      lua_pushliteral(L, ",");
      lua_insert(L, -2);
    }
    lua_concat(L, j > 1 ? 3 : 2);
  }
}

/* A text option from a string, or from a list of names or of lists of
** names: {{"A", "B"}, {"C"}} -> "A,B;C" (how "staged" takes its stages).
** The value is at the top; the text is kept alive in the table at holder. */
static const char *option_text(lua_State *L, int holder, const char *name) {
  int v = lua_gettop(L);
  if (lua_type(L, v) == LUA_TTABLE) {
    lua_pushliteral(L, "");
    for (lua_Integer i = 1; i <= luaL_len(L, v); i++) {
      int t = lua_rawgeti(L, v, i);
      if (t == LUA_TTABLE) {
        join_names(L, v + 2, name, i);
        lua_replace(L, v + 2);
      } else if (t != LUA_TSTRING) {
        luaL_error(L, "search.%s[%d]: expected a parameter name or a list of them", name, (int)i);
      }
      if (i > 1) {
        lua_pushliteral(L, ";");
        lua_insert(L, -2);
      }
      lua_concat(L, i > 1 ? 3 : 2);
    }
    lua_replace(L, v);
  }
  lua_pushvalue(L, v);
  luaL_ref(L, holder);
  return lua_tostring(L, v);
}

static void option_list(lua_State *L, int idx, kt_option *opts, size_t *n, size_t max) {
  int holder = lua_gettop(L) + 1;
  lua_newtable(L);
  *n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int kt = lua_type(L, -2), vt = lua_type(L, -1);
    if (kt == LUA_TSTRING && strcmp(lua_tostring(L, -2), "seed") != 0) {
      const char *name = lua_tostring(L, -2); /* the key stays in the table */
      if (*n == max) luaL_error(L, "search: too many options");
      if (vt != LUA_TNUMBER && vt != LUA_TBOOLEAN && vt != LUA_TSTRING && vt != LUA_TTABLE)
        luaL_error(L, "search.%s: expected a number, a boolean, a string or a list", name);
      bool number = vt == LUA_TNUMBER || vt == LUA_TBOOLEAN; /* true and false: 1 and 0 */
      opts[*n].name = name;
      opts[*n].value = !number                ? NAN
                       : vt == LUA_TBOOLEAN ? lua_toboolean(L, -1)
                                            : lua_tonumber(L, -1);
      opts[*n].text = number ? NULL : option_text(L, holder, name);
      (*n)++;
    } else if (kt != LUA_TSTRING && !(lua_isinteger(L, -2) && lua_tointeger(L, -2) == 1)) {
      luaL_error(L, "search: unexpected entry %s", luaL_tolstring(L, -2, NULL));
    }
    lua_pop(L, 1);
  }
}

/* The searcher for tune options at opts_idx (nil: kt_search_default for the
** tuning's stop conditions). seed is the options' seed, overridden by the
** search table's own. */
kt_searcher *lk_check_searcher(lua_State *L, int opts_idx, int owner_idx, lua_Integer seed,
                               const kt_stop *stop) {
  int t = lk_get_field(L, opts_idx, "search");
  int idx = lua_gettop(L);
  kt_search_opts so = {(uint64_t)seed, NULL, 0};
  kt_option options[32];
  const char *name = kt_search_default(stop);
  if (t == LUA_TSTRING) {
    name = lua_tostring(L, idx);
  } else if (t == LUA_TTABLE) {
    lua_getfield(L, idx, "next");
    bool is_lua = lua_isfunction(L, -1);
    lua_pop(L, 1);
    if (is_lua) {
      kt_searcher *s = lua_searcher_new(L, idx, owner_idx, (uint64_t)seed);
      lua_settop(L, idx - 1);
      return s;
    }
    lua_rawgeti(L, idx, 1);
    name = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (!name) luaL_error(L, "search: a table names the searcher first, e.g. {\"random\", seed = 1}, "
                             "or is a Lua searcher with init/next/report");
    so.seed = (uint64_t)lk_opt_integer(L, idx, "search", "seed", seed);
    option_list(L, idx, options, &so.noptions, 32);
    so.options = options;
  } else if (t != LUA_TNIL) {
    luaL_error(L, "tune options.search: expected a searcher name, a table or a Lua searcher, got %s",
               luaL_typename(L, idx));
  }
  kt_error err;
  kt_searcher *s = kt_searcher_new(name, &so, &err);
  lua_settop(L, idx - 1);
  if (!s) lk_error(L, &err);
  return s;
}

/* ---- stop conditions ---- */

void lk_check_stop(lua_State *L, int opts, kt_stop *stop) {
  static const char *const keys[] = {"count", "fraction", "seconds", "target_ms", "no_improvement",
                                     "min_improvement_pct", "window", "failures", NULL};
  memset(stop, 0, sizeof *stop);
  int t = lk_get_field(L, opts, "stop");
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) luaL_error(L, "tune options.stop: expected a table");
  int idx = lua_gettop(L);
  lk_check_keys(L, idx, "tune options.stop", keys);
  /* Absent is 0 (unset); given, each must be positive. */
  for (int k = 0; keys[k]; k++) {
    int type = lk_get_field(L, idx, keys[k]);
    bool bad = type != LUA_TNIL && !(type == LUA_TNUMBER && lua_tonumber(L, -1) > 0);
    lua_pop(L, 1);
    if (bad) luaL_error(L, "tune options.stop.%s must be a positive number", keys[k]);
  }
  lua_Integer count = lk_opt_integer(L, idx, "stop", "count", 0);
  lua_Integer stall = lk_opt_integer(L, idx, "stop", "no_improvement", 0);
  lua_Integer window = lk_opt_integer(L, idx, "stop", "window", 0);
  lua_Integer failures = lk_opt_integer(L, idx, "stop", "failures", 0);
  double pct = lk_opt_number(L, idx, "stop", "min_improvement_pct", 0);
  stop->fraction = lk_opt_number(L, idx, "stop", "fraction", 0);
  stop->seconds = lk_opt_number(L, idx, "stop", "seconds", 0);
  stop->target_ns = lk_opt_number(L, idx, "stop", "target_ms", 0) * 1e6;
  if (stop->fraction > 1) luaL_error(L, "tune options.stop.fraction must be in (0, 1]");
  if ((pct > 0) != (window > 0))
    luaL_error(L, "tune options.stop: min_improvement_pct and window go together (stop when "
                  "the best improved by less than that percentage over the last window "
                  "evaluations)");
  stop->count = (uint64_t)count;
  stop->no_improvement = (uint64_t)stall;
  stop->min_improvement = pct / 100;
  stop->window = (uint64_t)window;
  stop->failures = (uint64_t)failures;
  lua_pop(L, 1);
}
