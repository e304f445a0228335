/* Whether an address handed over as a function is code (code.c). */
#ifndef KCALL_INTERNAL_CODE_H_
#define KCALL_INTERNAL_CODE_H_

#include <stdint.h>

#include "kcall/base.h"

/* INVALID_ARGUMENT when `addr`, given as the function `what` (e.g. "the
 * execute handler"), is data: a symbol whose ELF type is not a function's
 * (STT_OBJECT, STT_TLS, STT_COMMON), or an address in a loaded object's
 * segment that is not executable. The message names the object's file and
 * the symbol. An address in no loaded object (code made at run time) is
 * not judged. NULL otherwise. Thread-safe; costs a dladdr and a walk of
 * the loaded objects, so it is for registration, not calls. */
kc_status* kc__code_address_check(uintptr_t addr, const char* what);

#endif /* KCALL_INTERNAL_CODE_H_ */
