/*
** search_portfolio.c: a portfolio of searchers sharing one budget.
**
** No searcher here is the best on every kernel and GPU: best-first search
** leads on the recorded spaces it was chosen on, greedy descent on some of
** their subspaces, simulated annealing on convolution spaces of other GPUs
** (bench/RESULTS.md, issue 30). The portfolio runs several, each with its own
** state and seed, and lets each proposal come from a member drawn at random
** with weights that follow which members have found the best so far: a
** member whose result becomes the best earns a unit of credit, credit fades
** by `fade` with every result, and each member keeps at least the share
** `floor`, so that none is starved on the word of a few lucky results.
**
** It and search.c call each other, the one loop of this layer: members are
** made through the registry (kt_searcher_new), and the portfolio is in it.
**
** Every result goes to the member that proposed it, and with `share` on to
** every other member too (best-first search takes a configuration it did not
** propose as one met, a descent moves to it if it is faster, a walk may
** accept it): what any member finds, the others build on. With `share` off
** only the first member hears the others' results. A member with nothing
** to propose until its results come back is passed over meanwhile; one with
** nothing left at all leaves the portfolio. Up to `ahead` proposals that the
** tuning will evaluate are in flight together (so that a device tuning
** compiles them together); a member's repeat of a configuration evaluated
** before is answered at once and does not count.
**
** With `bandit` on, the member of each proposal is chosen instead by
** Thompson sampling (a multi-armed bandit): each member's proposals are
** trials, those whose result became the best so far successes, both counts
** fading by `fade` per result; a draw from each member's Beta(1 +
** successes, 1 + failures) picks the highest. A member that keeps
** improving on this space gets most of the budget, one that does not is
** still tried now and then, and no floor is needed.
**
** A member may carry options, numbers only: "greedy:sample=1:model=0".
**
** Measured against bestfirst on the recorded spaces and their proxies it
** ties (bench/RESULTS.md, "Search that generalises"), so it is not the
** default; with bandit on, see bench/RESULTS.md, issue 40.
**
** A prior (search.h) goes to every member that takes one (bestfirst).
**
** Options: members ("bestfirst,greedy,annealing", or with + for commas:
** built-in searchers, each with its defaults or name:option=value:...),
** floor (0.1), fade (0.99), ahead (8), share (1), bandit (0).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "neighbors.h"
#include "result.h"
#include "rng.h"
#include "search.h"

#define MAX_MEMBERS 8
/* In an owner mask: the proposal counts among those in flight (it was
** neither evaluated nor awaited when proposed). */
#define COUNTED (1ull << 63)

typedef struct member {
  kt_searcher *s;
  double credit;
  double tries, wins;  /* bandit: its proposals' results, and those that became the best */
  unsigned inflight;
  bool waiting; /* proposed nothing: asked again once one of its results is in */
  bool done;    /* nothing left to propose */
} member;

typedef struct portfolio {
  member m[MAX_MEMBERS];
  size_t n;
  uint64_t seed;
  double floor, fade;
  bool share;    /* every member hears every result, not only the first */
  bool bandit;   /* members drawn by Thompson sampling */
  unsigned ahead, inflight;
  kt_rng rng;
  kt_indexmap owners; /* index -> bit mask of the members awaiting its result, and COUNTED */
  kt_indexmap heard;  /* indices the first member has heard of */
  double best;
  bool proposed; /* any member has proposed: later foreign results are repeats */
} portfolio;

/* A draw from Gamma(a, 1), a >= 1 (Marsaglia and Tsang). */
static double gamma_draw(kt_rng *rng, double a) {
  double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
  for (;;) {
    double x, v;
    do { /* a standard normal by Box and Muller */
      double u1 = kt_rng_double(rng), u2 = kt_rng_double(rng);
      x = sqrt(-2 * log(u1 > 0 ? u1 : 0x1p-60)) * cos(6.283185307179586 * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    double u = kt_rng_double(rng);
    if (log(u > 0 ? u : 0x1p-60) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
  }
}

/* Thompson sampling: the able member of the highest draw from its Beta. */
static int draw_bandit(portfolio *p) {
  int best = -1;
  double top = -1;
  for (size_t i = 0; i < p->n; i++) {
    member *m = &p->m[i];
    if (m->done || m->waiting) continue;
    double a = gamma_draw(&p->rng, 1 + m->wins), b = gamma_draw(&p->rng, 1 + m->tries - m->wins);
    double theta = a / (a + b);
    if (theta > top) top = theta, best = (int)i;
  }
  return best;
}

/* A member able to propose now, drawn by its share; -1 when none is. */
static int draw_member(portfolio *p) {
  if (p->bandit) return draw_bandit(p);
  double total = 0, share[MAX_MEMBERS] = {0};
  size_t able = 0;
  for (size_t i = 0; i < p->n; i++)
    if (!p->m[i].done && !p->m[i].waiting) able++, total += p->m[i].credit;
  if (!able) return -1;
  double rest = 1 - p->floor * (double)able, sum = 0;
  if (rest < 0) rest = 0;
  for (size_t i = 0; i < p->n; i++)
    if (!p->m[i].done && !p->m[i].waiting)
      sum += share[i] = p->floor + rest * (total > 0 ? p->m[i].credit / total : 1.0 / (double)able);
  double x = kt_rng_double(&p->rng) * sum;
  int last = -1;
  for (size_t i = 0; i < p->n; i++) {
    if (share[i] <= 0) continue;
    last = (int)i;
    if ((x -= share[i]) < 0) break;
  }
  return last;
}

static int pf_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  portfolio *p = s->state;
  kt_rng_seed(&p->rng, p->seed);
  kt_indexmap_clear(&p->owners);
  kt_indexmap_clear(&p->heard);
  p->inflight = 0;
  p->best = INFINITY;
  p->proposed = false;
  for (size_t i = 0; i < p->n; i++) {
    member *m = &p->m[i];
    m->credit = m->tries = m->wins = 0;
    m->inflight = 0;
    m->waiting = m->done = false;
    if (m->s->ops->start(m->s, space, err)) return kt_fail_prefix(err, "%s: ", m->s->ops->name);
  }
  return 0;
}

/* One proposal of member i into *out; *any false when it has none now. */
static int ask(portfolio *p, size_t i, uint64_t *out, bool *any, kt_error *err) {
  member *m = &p->m[i];
  size_t got = 0;
  if (m->s->ops->next(m->s, out, 1, &got, err)) return kt_fail_prefix(err, "%s: ", m->s->ops->name);
  *any = got > 0;
  if (!got) {
    if (m->inflight) m->waiting = true;
    else m->done = true;
    return 0;
  }
  uint64_t mask = 0, unused;
  kt_indexmap_get(&p->owners, *out, &mask);
  p->proposed = true;
  if (mask & (1u << i)) return 0; /* its own again: one result answers both */
  /* Only what the tuning will evaluate counts against `ahead`: a repeat is
  ** answered at once, and one awaited already is counted already. */
  bool fresh = !(mask & ~COUNTED) && !kt_indexmap_get(&p->heard, *out, &unused);
  if (kt_indexmap_put(&p->owners, *out, mask | (1u << i) | (fresh ? COUNTED : 0), err)) return -1;
  m->inflight++;
  p->inflight += fresh;
  return 0;
}

static int pf_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  portfolio *p = s->state;
  *got = 0;
  while (*got < max && p->inflight < p->ahead) {
    int i = draw_member(p);
    if (i < 0) break;
    bool any;
    if (ask(p, (size_t)i, &out[*got], &any, err)) return -1;
    if (any) (*got)++;
  }
  return 0;
}

static int tell(member *m, uint64_t index, const kt_result *r, kt_error *err) {
  return m->s->ops->report(m->s, index, r, err) ? kt_fail_prefix(err, "%s: ", m->s->ops->name) : 0;
}

/* The first member hears every result once; before any proposal (the
** tuning's seeds), every member does. */
static int tell_others(portfolio *p, uint64_t index, const kt_result *r, uint64_t mask,
                       kt_error *err) {
  uint64_t unused;
  if (!p->proposed) {
    for (size_t i = 0; i < p->n; i++)
      if (tell(&p->m[i], index, r, err)) return -1;
    return kt_indexmap_put(&p->heard, index, 1, err);
  }
  if (kt_indexmap_get(&p->heard, index, &unused)) return 0;
  for (size_t i = 0; i < (p->share ? p->n : 1); i++)
    if (!(mask & (1u << i)) && tell(&p->m[i], index, r, err)) return -1;
  return kt_indexmap_put(&p->heard, index, 1, err);
}

static int pf_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  portfolio *p = s->state;
  uint64_t mask = 0;
  kt_indexmap_get(&p->owners, index, &mask);
  double cost = kt_result_cost(r);
  bool better = cost < p->best;
  if (better) p->best = cost;
  for (size_t i = 0; i < p->n; i++) {
    p->m[i].credit *= p->fade;
    p->m[i].tries *= p->fade;
    p->m[i].wins *= p->fade;
  }
  if (tell_others(p, index, r, mask, err)) return -1;
  if (mask && kt_indexmap_put(&p->owners, index, 0, err)) return -1;
  if (mask & COUNTED) p->inflight--;
  for (size_t i = 0; i < p->n; i++) {
    if (!(mask & (1u << i))) continue;
    member *m = &p->m[i];
    m->inflight--;
    m->waiting = false;
    if (better) m->credit += 1;
    m->tries += 1;
    m->wins += better;
    if (tell(m, index, r, err)) return -1;
  }
  return 0;
}

static void pf_destroy(void *state) {
  portfolio *p = state;
  for (size_t i = 0; i < p->n; i++) kt_searcher_free(p->m[i].s);
  kt_indexmap_clear(&p->owners);
  kt_indexmap_clear(&p->heard);
  free(p);
}

/* A prior goes to every member that takes one. */
static int pf_prior(kt_searcher *s, const kt_prior *prior, kt_error *err) {
  portfolio *p = s->state;
  for (size_t i = 0; i < p->n; i++) {
    kt_searcher *m = p->m[i].s;
    if (m->ops->prior && m->ops->prior(m, prior, err)) return -1;
  }
  return 0;
}

static const kt_searcher_ops portfolio_ops = {"portfolio", pf_start, pf_next, pf_report,
                                              pf_destroy, NULL, pf_prior};

#define MAX_MEMBER_OPTIONS 16

/* A member's text, name:option=value:... (at most 255 characters), into
** name and its options (numbers); its option names point into buf. */
static int member_options(char *buf, kt_option *opts, size_t *n, kt_error *err) {
  *n = 0;
  char *at = strchr(buf, ':');
  if (at) *at++ = 0;
  while (at && *at) {
    char *next = strchr(at, ':'), *eq = strchr(at, '='), *end;
    if (next) *next++ = 0;
    if (!eq || eq == at || *n == MAX_MEMBER_OPTIONS)
      return kt_fail(err, "searcher 'portfolio': option members: '%s' in '%s' is not option=number%s",
                     at, buf, *n == MAX_MEMBER_OPTIONS ? " (at most 16 options)" : "");
    *eq = 0;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end)
      return kt_fail(err, "searcher 'portfolio': option members: %s of '%s' must be a number",
                     at, buf);
    opts[(*n)++] = (kt_option){at, v, NULL};
    at = next;
  }
  return 0;
}

/* The members named in list ("a,b:option=1,c"), each seeded apart from the others. */
static int add_members(portfolio *p, const char *list, kt_error *err) {
  const char *at = list;
  while (*at) {
    size_t len = strcspn(at, ",+ ");
    if (len) {
      char name[256];
      size_t base = strcspn(at, ":,+ ");
      if (len >= sizeof name || p->n == MAX_MEMBERS || (base == 9 && !strncmp(at, "portfolio", 9)))
        return kt_fail(err, "searcher 'portfolio': option members: '%.*s' %s", (int)len, at,
                       p->n == MAX_MEMBERS ? "is one too many (at most 8)" : "is no member it can have");
      memcpy(name, at, len);
      name[len] = 0;
      kt_option opts[MAX_MEMBER_OPTIONS];
      size_t nopts;
      if (member_options(name, opts, &nopts, err)) return -1;
      kt_search_opts o = {p->seed + 0x9E3779B97F4A7C15ull * (p->n + 1), opts, nopts};
      if (!(p->m[p->n].s = kt_searcher_new(name, &o, err)))
        return kt_fail_prefix(err, "searcher 'portfolio': option members: ");
      p->n++;
    }
    at += len;
    at += strspn(at, ",+ ");
  }
  return p->n ? 0 : kt_fail(err, "searcher 'portfolio': option members names no searcher");
}

int kt_search_portfolio_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"members", "floor", "fade", "ahead", "share", "bandit",
                                        NULL};
  const char *members;
  double floor_, fade, ahead, share, bandit;
  if (kt_search_opts_check(o, "portfolio", allowed, err) ||
      kt_search_opt_text(o, "portfolio", "members", "bestfirst,greedy,annealing", &members, err) ||
      kt_search_opt_number(o, "portfolio", "floor", 0.1, 0, 1, &floor_, err) ||
      kt_search_opt_number(o, "portfolio", "fade", 0.99, 0, 1, &fade, err) ||
      kt_search_opt_whole(o, "portfolio", "ahead", 8, 1, 1024, false, &ahead, err) ||
      kt_search_opt_whole(o, "portfolio", "share", 1, 0, 1, false, &share, err) ||
      kt_search_opt_whole(o, "portfolio", "bandit", 0, 0, 1, false, &bandit, err))
    return -1;
  portfolio *p = kt_calloc(1, sizeof *p, err);
  if (!p) return -1;
  p->seed = o->seed;
  p->floor = floor_;
  p->fade = fade;
  p->ahead = (unsigned)ahead;
  p->share = share != 0;
  p->bandit = bandit != 0;
  kt_indexmap_init(&p->owners);
  kt_indexmap_init(&p->heard);
  if (add_members(p, members, err)) {
    pf_destroy(p);
    return -1;
  }
  s->ops = &portfolio_ops;
  s->state = p;
  return 0;
}
