/* Telling code from data before calling it: a library's data symbol given
 * where a function is expected would be called and crash the process. */
#include "internal/code.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>

/* The loaded segment that holds an address, as dl_iterate_phdr finds it. */
typedef struct kc__segment_query {
  uintptr_t addr;
  bool found;
  bool executable;
} kc__segment_query;

static int kc__segment_of(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  kc__segment_query* q = data;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    if (q->addr >= lo && q->addr - lo < (uintptr_t)ph->p_memsz) {
      q->found = true;
      q->executable = (ph->p_flags & PF_X) != 0;
      return 1;
    }
  }
  return 0;
}

static const char* kc__symbol_kind(unsigned type) {
  switch (type) {
    case STT_OBJECT: return "a data object";
    case STT_TLS: return "a thread-local variable";
    case STT_COMMON: return "a common block";
    default: return "not a function";
  }
}

kc_status* kc__code_address_check(uintptr_t addr, const char* what) {
  if (!addr) return NULL;
  void* p = (void*)addr;
  Dl_info info = {0};
  const ElfW(Sym)* sym = NULL;
  bool named = dladdr1(p, &info, (void**)&sym, RTLD_DL_SYMENT) && info.dli_fname;
  const char* file = named ? info.dli_fname : "?";
  /* The symbol dladdr found is the one at the address only if the
   * address lies inside it (or is its start). */
  bool at_symbol = named && sym && info.dli_sname && info.dli_saddr &&
                   addr >= (uintptr_t)info.dli_saddr &&
                   (addr == (uintptr_t)info.dli_saddr ||
                    addr - (uintptr_t)info.dli_saddr < (uintptr_t)sym->st_size);
  if (at_symbol) {
    unsigned type = ELF64_ST_TYPE(sym->st_info); /* ELF32_ST_TYPE is the same */
    if (type == STT_OBJECT || type == STT_TLS || type == STT_COMMON) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "%s is the symbol '%s' of %s, which is %s, not a "
                              "function",
                              what, info.dli_sname, file, kc__symbol_kind(type));
    }
  }
  kc__segment_query q = {.addr = addr, .found = false, .executable = false};
  dl_iterate_phdr(kc__segment_of, &q);
  if (q.found && !q.executable) {
    if (at_symbol) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "%s is the symbol '%s' of %s, which lies in data (a "
                              "segment that is not executable), not a function",
                              what, info.dli_sname, file);
    }
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s (%p, in %s) lies in data (a segment that is not "
                            "executable), not in a function",
                            what, p, file);
  }
  return NULL;
}
