/*
 * "Did you mean": the registered names nearest to a missing one.
 *
 * A lookup that misses returns at once with a status whose message is
 * written only when someone reads it (kc__status_create_deferred). The
 * search that message runs is bounded:
 *   - one pass over the names (lock-free, in a read section), in batches
 *     whose entries are prefetched, in which each name costs a few
 *     compares: a lower bound of its edit distance from the wanted name
 *     (the length difference; the L1 distance of the counts of its bytes,
 *     which an edit changes by two at most, and of its pairs of adjacent
 *     bytes, by four at most, each hashed into 16 four-bit counts kept in
 *     the entry) and, when that is within the
 *     limit, an upper bound (edit what lies between the common prefix and
 *     the common suffix, compared eight bytes at a time). Two cheap
 *     special cases: the wanted name is the start of a longer one
 *     ("mylib.ad" -> "mylib.add_f32"), and the same last component in
 *     another namespace ("add" -> "mylib.add", "numpy.solve" ->
 *     "linalg.solve");
 *   - the KC__CANDIDATES names of lowest upper bound are kept (a name
 *     costs one compare once the set is full), then a banded edit distance
 *     (cells |i - j| <= k only, stopped as soon as a row exceeds k, with k
 *     the limit or the third best so far) is computed for each.
 * The limit is 2 edits, or a quarter of the name's length if that is more.
 * A typo's neighbour is missed only when more than KC__CANDIDATES names
 * have a smaller upper bound, that is, share more of its start and end.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal/nearest.h"
#include "internal/registry.h"

#define KC__NEAREST_COUNT 3
/* Most names whose edit distance is computed per search. */
#define KC__CANDIDATES 32

/* Work done by every search so far, for kc_registry_query_stats. */
static int64_t kc__searches, kc__scanned, kc__distances, kc__cells;

void kc__nearest_counts_get(kc__nearest_counts* out) {
  out->searches = __atomic_load_n(&kc__searches, __ATOMIC_RELAXED);
  out->names_scanned = __atomic_load_n(&kc__scanned, __ATOMIC_RELAXED);
  out->distances = __atomic_load_n(&kc__distances, __ATOMIC_RELAXED);
  out->cells = __atomic_load_n(&kc__cells, __ATOMIC_RELAXED);
}

/* Edit distance (insert, delete, substitute) of a and b if it is at most
 * k, else k + 1; only the band |i - j| <= k is computed. Adds the cells
 * computed to *cells. Both are at most KC__NAME_MAX bytes. */
static size_t kc__bounded_distance(kc_string_view a, kc_string_view b,
                                   size_t k, int64_t* cells) {
  const size_t big = k + 1;
  size_t n = a.size, m = b.size;
  if ((n > m ? n - m : m - n) > k) return big;
  size_t rows[2][KC__NAME_MAX + 2];
  size_t* prev = rows[0];
  size_t* cur = rows[1];
  for (size_t j = 0; j <= m; ++j) prev[j] = j <= k ? j : big;
  for (size_t i = 1; i <= n; ++i) {
    size_t lo = i > k ? i - k : 1;
    size_t hi = i + k < m ? i + k : m;
    cur[lo - 1] = lo == 1 ? (i <= k ? i : big) : big;
    size_t row_min = cur[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      size_t best = prev[j - 1] + (a.data[i - 1] != b.data[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (best > big) best = big;
      cur[j] = best;
      if (best < row_min) row_min = best;
    }
    *cells += (int64_t)(hi - lo + 1);
    if (hi < m) cur[hi + 1] = big; /* read as "up" by the next row */
    if (row_min > k) return big;
    size_t* t = prev;
    prev = cur;
    cur = t;
  }
  return prev[m] <= k ? prev[m] : big;
}

/* Bytes a and b have in common at their start (at most n), eight at a
 * time. */
static size_t kc__common_prefix(const char* a, const char* b, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      return i + (size_t)__builtin_ctzll(x ^ y) / 8;
#else
      return i + (size_t)__builtin_clzll(x ^ y) / 8;
#endif
    }
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

/* Bytes a (of size na) and b (nb) have in common at their end, at most n. */
static size_t kc__common_suffix(const char* a, size_t na, const char* b,
                                size_t nb, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + na - i - 8, 8);
    memcpy(&y, b + nb - i - 8, 8);
    if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      return i + (size_t)__builtin_clzll(x ^ y) / 8;
#else
      return i + (size_t)__builtin_ctzll(x ^ y) / 8;
#endif
    }
  }
  while (i < n && a[na - 1 - i] == b[nb - 1 - i]) ++i;
  return i;
}

/* A name worth an edit distance: `upper` bounds its distance from above
 * (edit the part between the common prefix and suffix), `lower` from
 * below. `exact`: upper is its score, no distance needed. */
typedef struct kc__candidate {
  const kc__reg_entry* e;
  size_t upper, lower;
  bool exact;
} kc__candidate;

typedef struct kc__search {
  kc_string_view wanted;
  size_t limit;
  uint64_t bytes, pairs; /* counts, as kc__reg_entry's */
  uint32_t tail_hash;
  kc_string_view tail;
  kc__candidate cand[KC__CANDIDATES];
  size_t num_cand;
  size_t worst; /* index of the candidate a better one replaces */
  struct {
    size_t distance;
    char copy[KC__NAME_MAX + 1];
  } best[KC__NEAREST_COUNT];
  size_t found;
  int64_t scanned, distances, cells;
} kc__search;

static size_t kc__tail_start(kc_string_view s) {
  size_t tail = 0;
  for (size_t i = 0; i < s.size; ++i) {
    if (s.data[i] == '.' || s.data[i] == ':') tail = i + 1;
  }
  return tail;
}

/* a ranks before b: a smaller upper bound, then a smaller lower one. */
static bool kc__before(const kc__candidate* a, const kc__candidate* b) {
  return a->upper < b->upper || (a->upper == b->upper && a->lower < b->lower);
}

/* Keeps the KC__CANDIDATES best-ranked names, unsorted: a name costs one
 * compare with the worst kept once the set is full. */
static void kc__add_candidate(kc__search* s, const kc__candidate* c) {
  if (s->num_cand < KC__CANDIDATES) {
    s->cand[s->num_cand++] = *c;
    if (s->num_cand == KC__CANDIDATES) {
      s->worst = 0;
      for (size_t i = 1; i < KC__CANDIDATES; ++i) {
        if (kc__before(&s->cand[s->worst], &s->cand[i])) s->worst = i;
      }
    }
    return;
  }
  if (!kc__before(c, &s->cand[s->worst])) return;
  s->cand[s->worst] = *c;
  for (size_t i = 0; i < KC__CANDIDATES; ++i) {
    if (kc__before(&s->cand[s->worst], &s->cand[i])) s->worst = i;
  }
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The L1 distance of two vectors of 16 4-bit counts: the nibbles spread
 * into 16 bytes, then one sum of absolute differences (psadbw). */
static unsigned kc__count_l1(uint64_t a, uint64_t b) {
  const __m128i lo = _mm_set1_epi8(0x0f);
  __m128i x = _mm_and_si128(_mm_set_epi64x((long long)(a >> 4), (long long)a), lo);
  __m128i y = _mm_and_si128(_mm_set_epi64x((long long)(b >> 4), (long long)b), lo);
  __m128i sad = _mm_sad_epu8(x, y);
  return (unsigned)(_mm_cvtsi128_si32(sad) + _mm_extract_epi16(sad, 4));
}
#else
/* Sum over 8 bytes of |x_i - y_i|, for bytes of at most 15. Each byte of
 * (x | 0x80) - y is 128 + x_i - y_i, with no borrow: its top bit says
 * which is larger, its low 7 bits give the difference or 128 minus it. */
static unsigned kc__byte_l1(uint64_t x, uint64_t y) {
  const uint64_t h = UINT64_C(0x8080808080808080);
  uint64_t d = (x | h) - y;
  uint64_t ge = ((d & h) >> 7) * 0xff; /* 0xff where x_i >= y_i */
  uint64_t t = d & ~h;
  uint64_t abs = (t & ge) | ((h - t) & ~ge);
  return (unsigned)((abs * UINT64_C(0x0101010101010101)) >> 56);
}

/* The L1 distance of two vectors of 16 4-bit counts. */
static unsigned kc__count_l1(uint64_t a, uint64_t b) {
  const uint64_t lo = UINT64_C(0x0f0f0f0f0f0f0f0f);
  return kc__byte_l1(a & lo, b & lo) + kc__byte_l1((a >> 4) & lo, (b >> 4) & lo);
}
#endif

/* True when the n-byte name starts with the wanted one (n > its size). */
static bool kc__starts_with_wanted(const kc__search* s, const char* name) {
  size_t w = s->wanted.size;
  if (w >= 8) {
    uint64_t x, y;
    memcpy(&x, name, 8);
    memcpy(&y, s->wanted.data, 8);
    if (x != y) return false; /* most names: one compare */
  }
  return w > 0 && memcmp(name, s->wanted.data, w) == 0;
}

static void kc__scan(kc__search* s, const kc__reg_entry* e) {
  s->scanned++;
  kc_string_view w = s->wanted;
  size_t n = e->name_size;
  if (n > w.size && kc__starts_with_wanted(s, e->name)) {
    kc__candidate c = {e, 1, 1, true};
    kc__add_candidate(s, &c);
    return;
  }
  /* The lower bound first: it needs no byte of the name. */
  size_t lower = n > w.size ? n - w.size : w.size - n;
  if (lower <= s->limit) {
    /* An edit changes byte counts by 2 at most, pair counts by 4; merging
     * buckets and capping counts only lowers the distances. */
    size_t bytes_bound = (kc__count_l1(e->byte_counts, s->bytes) + 1) / 2;
    if (bytes_bound > lower) lower = bytes_bound;
  }
  if (lower <= s->limit) {
    size_t pairs_bound = (kc__count_l1(e->pair_counts, s->pairs) + 3) / 4;
    if (pairs_bound > lower) lower = pairs_bound;
  }
  if (lower <= s->limit) {
    /* Once the set is full, a name whose lower bound is not below the
     * worst kept one's upper bound cannot enter it. */
    if (s->num_cand == KC__CANDIDATES && lower >= s->cand[s->worst].upper) {
      return;
    }
    size_t shorter = n < w.size ? n : w.size;
    size_t prefix = kc__common_prefix(e->name, w.data, shorter);
    size_t suffix =
        kc__common_suffix(e->name, n, w.data, w.size, shorter - prefix);
    kc__candidate c = {e, (n > w.size ? n : w.size) - prefix - suffix, lower,
                       false};
    kc__add_candidate(s, &c);
    return;
  }
  /* The same last component in another namespace, after every typo. */
  if (e->tail_hash == s->tail_hash && s->tail.size > 0 && n >= s->tail.size &&
      kc__tail_start((kc_string_view){e->name, n}) == n - s->tail.size &&
      memcmp(e->name + n - s->tail.size, s->tail.data, s->tail.size) == 0) {
    kc__candidate c = {e, s->limit + 1, s->limit + 1, true};
    kc__add_candidate(s, &c);
  }
}

/* Records a name at `distance` among the best (ties by name). */
static void kc__keep(kc__search* s, const kc__reg_entry* e, size_t distance) {
  size_t pos = s->found < KC__NEAREST_COUNT ? s->found : KC__NEAREST_COUNT;
  while (pos > 0 && (s->best[pos - 1].distance > distance ||
                     (s->best[pos - 1].distance == distance &&
                      strcmp(s->best[pos - 1].copy, e->name) > 0))) {
    if (pos < KC__NEAREST_COUNT) s->best[pos] = s->best[pos - 1];
    --pos;
  }
  if (pos >= KC__NEAREST_COUNT) return;
  s->best[pos].distance = distance;
  memcpy(s->best[pos].copy, e->name, (size_t)e->name_size + 1);
  if (s->found < KC__NEAREST_COUNT) s->found++;
}

/* Scores the kept candidates: an exact distance for each, within the
 * limit and within what could still beat the third best. */
static void kc__score(kc__search* s) {
  for (size_t i = 0; i < s->num_cand; ++i) {
    const kc__candidate* c = &s->cand[i];
    if (c->exact) kc__keep(s, c->e, c->upper);
  }
  for (size_t i = 0; i < s->num_cand; ++i) {
    const kc__candidate* c = &s->cand[i];
    if (c->exact) continue;
    size_t worst = s->found == KC__NEAREST_COUNT
                       ? s->best[KC__NEAREST_COUNT - 1].distance
                       : SIZE_MAX;
    size_t k = worst < s->limit ? worst : s->limit;
    if (c->lower > k) continue;
    kc_string_view name = {c->e->name, c->e->name_size};
    s->distances++;
    size_t d = kc__bounded_distance(s->wanted, name, k, &s->cells);
    if (d <= k) kc__keep(s, c->e, d);
  }
}

/* The search over the registry's current table, in a read section: the
 * best names are copied out before it closes. The slots are read in
 * batches, prefetching each batch's entries before scanning them, so that
 * a registry that is not in cache costs one memory latency per batch
 * rather than per name. */
static void kc__search_registry(const kc__registry* reg, kc__search* s) {
  enum { kc__batch = 16 };
  kc__section r = kc__read_lock();
  kc__reg_table* t = __atomic_load_n(&((kc__registry*)(uintptr_t)reg)->table,
                                     __ATOMIC_SEQ_CST);
  size_t cap = t ? t->mask + 1 : 0;
  for (size_t i = 0; i < cap;) {
    const kc__reg_entry* batch[kc__batch];
    size_t n = 0;
    for (; i < cap && n < kc__batch; ++i) {
      kc__reg_entry* e = __atomic_load_n(&t->slots[i], __ATOMIC_SEQ_CST);
      if ((uintptr_t)e & 1 || !e) continue; /* free, removed or hidden */
      __builtin_prefetch(e);
      batch[n++] = e;
    }
    for (size_t j = 0; j < n; ++j) kc__scan(s, batch[j]);
  }
  kc__score(s);
  kc__read_unlock(r);
  __atomic_add_fetch(&kc__searches, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&kc__scanned, s->scanned, __ATOMIC_RELAXED);
  __atomic_add_fetch(&kc__distances, s->distances, __ATOMIC_RELAXED);
  __atomic_add_fetch(&kc__cells, s->cells, __ATOMIC_RELAXED);
}

/* What a NOT_FOUND status keeps until its message is read. */
typedef struct kc__missing {
  const kc__registry* reg; /* static storage */
  char quoted[KC_QUOTED_CAP]; /* a name too long to keep, quoted; else empty */
  size_t size;
  char name[KC__NAME_MAX + 1]; /* what is searched for: at most a name's length */
} kc__missing;

static char* kc__missing_message(const void* ctx) {
  const kc__missing* m = ctx;
  kc__search* s = kc__calloc(1, sizeof *s);
  if (!s) return NULL;
  s->wanted.data = m->name;
  s->wanted.size = m->size;
  s->limit = m->size / 4 > 2 ? m->size / 4 : 2;
  kc__name_counts(s->wanted, &s->bytes, &s->pairs);
  size_t tail = kc__tail_start(s->wanted);
  s->tail.data = m->name + tail;
  s->tail.size = m->size - tail;
  s->tail_hash = (uint32_t)kc__hash_name(s->tail);
  kc__search_registry(m->reg, s);
  char hint[KC__NEAREST_COUNT * (KC__NAME_MAX + 8) + 32] = "";
  size_t len = 0;
  for (size_t i = 0; i < s->found; ++i) {
    kc__appendf(hint, sizeof hint, &len, "%s%s", i ? ", " : "; did you mean ",
                KC__QS(s->best[i].copy));
  }
  if (s->found == 0 && s->scanned == 0) {
    snprintf(hint, sizeof hint, "; none is registered");
  }
  char quoted[KC_QUOTED_CAP];
  if (m->quoted[0]) {
    memcpy(quoted, m->quoted, sizeof quoted);
  } else {
    kc_sv_format_quoted((kc_string_view){m->name, m->size}, quoted, sizeof quoted);
  }
  const char* kind = m->reg->kind;
  size_t cap = strlen(kind) + strlen(quoted) + strlen(hint) + 64;
  char* text = kc__malloc(cap);
  if (text) {
    snprintf(text, cap, "no %s named %s is registered%s", kind, quoted, hint);
  }
  kc__free(s);
  return text;
}

kc_status* kc__registry_not_found(const kc__registry* reg,
                                  kc_string_view name) {
  kc__missing m;
  m.reg = reg;
  /* Quoting is left to the message, but for a name too long to be kept
   * whole here (it can never be registered, and is rare). */
  m.quoted[0] = '\0';
  if (name.data && name.size > KC__NAME_MAX) kc_sv_format_quoted(name, m.quoted, sizeof m.quoted);
  m.size = name.data ? (name.size > KC__NAME_MAX ? KC__NAME_MAX : name.size) : 0;
  if (m.size) memcpy(m.name, name.data, m.size);
  m.name[m.size] = '\0';
  return kc__status_create_deferred(KC_NOT_FOUND, kc__missing_message, &m,
                                    offsetof(kc__missing, name) + m.size + 1);
}
