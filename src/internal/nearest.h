/* The "did you mean" search behind NOT_FOUND messages (nearest.c). */
#ifndef KCALL_INTERNAL_NEAREST_H_
#define KCALL_INTERNAL_NEAREST_H_

#include <stdint.h>

/* Work done by every search so far, for kc_registry_query_stats. */
typedef struct kc__nearest_counts {
  int64_t searches;      /* messages whose nearest names were looked for */
  int64_t names_scanned; /* names the cheap filters looked at */
  int64_t distances;     /* edit distances computed */
  int64_t cells;         /* cells of those distances' tables */
} kc__nearest_counts;

void kc__nearest_counts_get(kc__nearest_counts* out);

#endif /* KCALL_INTERNAL_NEAREST_H_ */
