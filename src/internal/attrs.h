/* Deep copies of typed attributes (kc_attr) into an arena. Never
 * installed. */
#ifndef KCALL_INTERNAL_ATTRS_H_
#define KCALL_INTERNAL_ATTRS_H_

#include <stdbool.h>

#include "internal/arena.h"
#include "kcall/abi.h"

/* Bytes of one element of a KC_ATTR_ARRAY of `elem_type`; 0 when the
 * type is not a number type. */
size_t kc__attr_elem_size(int32_t elem_type);

/* Copies `src` (its name, string, array and nested dictionary too) into
 * `dst`, allocating from `a`. False when out of memory or malformed (an
 * unknown type, NULL data behind a count). */
bool kc__attr_copy(kc__arena* a, const kc_attr* src, kc_attr* dst);

/* The same for a dictionary; an empty or NULL `src` gives an empty one. */
bool kc__attr_dict_copy(kc__arena* a, const kc_attr_dict* src, kc_attr_dict* dst);

/* Whether kc__attr_dict_copy of `d` can fail only for want of memory: no
 * unknown type, no NULL data behind a count, at any depth. */
bool kc__attr_dict_well_formed(const kc_attr_dict* d);

#endif /* KCALL_INTERNAL_ATTRS_H_ */
