/* Opening a shared object named by its file, checked first. Compiled into
 * libkcall and into the kcall tool (its --xla-ffi libraries). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/common.h"
#include "plugin/dlopen_file.h"

/* The ELF types of this process's class. */
#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr kc__ehdr;
typedef Elf64_Phdr kc__phdr;
typedef Elf64_Shdr kc__shdr;
typedef Elf64_Sym kc__sym;
#define KC__ELF_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr kc__ehdr;
typedef Elf32_Phdr kc__phdr;
typedef Elf32_Shdr kc__shdr;
typedef Elf32_Sym kc__sym;
#define KC__ELF_CLASS ELFCLASS32
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KC__ELF_DATA ELFDATA2LSB
#else
#define KC__ELF_DATA ELFDATA2MSB
#endif

/* Refuses, before dlopen sees it, a file it would fault on: not ELF, of
 * another class or byte order, or truncated, with its program headers or
 * a loadable segment past the end of the file (dlopen maps such a file
 * and dies of SIGBUS touching the missing pages). `size` is the file's. */
static kc_status* kc__check_elf(int fd, long long size) {
  kc__ehdr eh;
  ssize_t got = pread(fd, &eh, sizeof eh, 0);
  if (got < 0) {
    return kc_status_create(KC_INVALID_ARGUMENT, "cannot read it: %s", strerror(errno));
  }
  if (got < SELFMAG || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "not a shared object: it does not start with ELF's magic "
                            "bytes (%lld bytes)",
                            size);
  }
  if (got < (ssize_t)sizeof eh) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "truncated: the ELF header needs %zu bytes, the file has %lld",
                            sizeof eh, size);
  }
  if (eh.e_ident[EI_CLASS] != KC__ELF_CLASS || eh.e_ident[EI_DATA] != KC__ELF_DATA) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "an ELF file of another class or byte order (class %d, data "
                            "%d) than this process's (%d, %d)",
                            eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], KC__ELF_CLASS,
                            KC__ELF_DATA);
  }
  if (eh.e_phnum && eh.e_phentsize != sizeof(kc__phdr)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "malformed ELF: program headers of %u bytes, expected %zu",
                            (unsigned)eh.e_phentsize, sizeof(kc__phdr));
  }
  unsigned long long table_end =
      (unsigned long long)eh.e_phoff + (unsigned long long)eh.e_phnum * sizeof(kc__phdr);
  if (table_end > (unsigned long long)size) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "truncated: its program headers end at byte %llu, the file "
                            "has %lld",
                            table_end, size);
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    kc__phdr ph;
    if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) {
      return kc_status_create(KC_INVALID_ARGUMENT, "cannot read program header %u", i);
    }
    unsigned long long end = (unsigned long long)ph.p_offset + ph.p_filesz;
    if (ph.p_type == PT_LOAD && (end < ph.p_offset || end > (unsigned long long)size)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "truncated: loadable segment %u (bytes %llu to %llu) ends "
                              "past the end of the file (%lld bytes)",
                              i, (unsigned long long)ph.p_offset, end, size);
    }
  }
  return NULL;
}

kc_status* kc__dlopen_file(const char* path, void** out_handle) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return kc_status_create(KC_NOT_FOUND, "no such file");
    return kc_status_create(err == EACCES ? KC_PERMISSION_DENIED : KC_INVALID_ARGUMENT,
                            "cannot open it: %s", strerror(err));
  }
  if (S_ISDIR(sb.st_mode)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "it is a directory, expected a shared object file");
  }
  if (!S_ISREG(sb.st_mode)) {
    /* A FIFO or a device: nothing dlopen can map. */
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "it is not a regular file, expected a shared object file");
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return kc_status_create(err == EACCES ? KC_PERMISSION_DENIED : KC_INVALID_ARGUMENT,
                            "cannot open it: %s", strerror(err));
  }
  kc_status* st = kc__check_elf(fd, (long long)sb.st_size);
  close(fd);
  if (st) return st;
  /* dlopen searches the library path for a name without a slash; a file
   * named on the command line means the file, so say so. */
  char* local = NULL;
  if (!strchr(path, '/')) {
    local = kc__malloc(strlen(path) + 3);
    if (!local) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(local, "./", 2);
    memcpy(local + 2, path, strlen(path) + 1);
  }
  void* handle = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
  kc__free(local);
  if (!handle) {
    const char* why = dlerror();
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "not a loadable shared object: %s",
                            why ? why : "dlopen failed");
  }
  *out_handle = handle;
  return NULL;
}

/* Reads `size` bytes at `offset` of the file into a new block with a NUL
 * after them; NULL when they are not all inside the file (of `file_size`
 * bytes) or cannot be read, or (*oom set) when out of memory. */
static char* kc__read_block(int fd, unsigned long long offset,
                            unsigned long long size, long long file_size, bool* oom) {
  if (offset > (unsigned long long)file_size ||
      size > (unsigned long long)file_size - offset) {
    return NULL;
  }
  char* block = kc__malloc((size_t)size + 1);
  if (!block) {
    *oom = true;
    return NULL;
  }
  if (pread(fd, block, (size_t)size, (off_t)offset) != (ssize_t)size) {
    kc__free(block);
    return NULL;
  }
  block[size] = '\0';
  return block;
}

char* kc__elf_symbol_names(const char* path, const char* prefix, bool defined, bool* oom) {
  *oom = false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat sb;
  kc__ehdr eh;
  char* sections = NULL;
  char* syms = NULL;
  char* strings = NULL;
  char* names = NULL;
  size_t names_size = 0;
  if (fstat(fd, &sb) != 0 || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != KC__ELF_CLASS ||
      eh.e_shentsize != sizeof(kc__shdr) || eh.e_shnum == 0) {
    goto done;
  }
  sections = kc__read_block(fd, eh.e_shoff, (unsigned long long)eh.e_shnum * sizeof(kc__shdr),
                            (long long)sb.st_size, oom);
  if (!sections) goto done;
  const kc__shdr* sh = (const kc__shdr*)(void*)sections;
  unsigned dynsym = 0;
  while (dynsym < eh.e_shnum && sh[dynsym].sh_type != SHT_DYNSYM) ++dynsym;
  if (dynsym == eh.e_shnum || sh[dynsym].sh_link >= eh.e_shnum ||
      sh[dynsym].sh_entsize != sizeof(kc__sym)) {
    goto done;
  }
  const kc__shdr* strtab = &sh[sh[dynsym].sh_link];
  syms = kc__read_block(fd, sh[dynsym].sh_offset, sh[dynsym].sh_size, (long long)sb.st_size,
                        oom);
  strings = kc__read_block(fd, strtab->sh_offset, strtab->sh_size, (long long)sb.st_size, oom);
  if (!syms || !strings) goto done;
  size_t count = (size_t)(sh[dynsym].sh_size / sizeof(kc__sym));
  for (size_t i = 0; i < count; ++i) {
    kc__sym sym;
    memcpy(&sym, syms + i * sizeof sym, sizeof sym);
    /* ELF64_ST_BIND and ELF32_ST_BIND are the same shift. */
    if ((sym.st_shndx == SHN_UNDEF) == defined ||
        ELF64_ST_BIND(sym.st_info) != STB_GLOBAL || sym.st_name >= strtab->sh_size ||
        (defined && ELF64_ST_TYPE(sym.st_info) != STT_FUNC)) {
      continue;
    }
    const char* name = strings + sym.st_name;
    if (strncmp(name, prefix, strlen(prefix)) != 0) continue;
    size_t len = strlen(name) + 1;
    char* grown = kc__realloc(names, names_size + len + 1);
    if (!grown) {
      kc__free(names);
      names = NULL;
      *oom = true;
      goto done;
    }
    names = grown;
    memcpy(names + names_size, name, len);
    names_size += len;
    names[names_size] = '\0';
  }
done:
  kc__free(sections);
  kc__free(syms);
  kc__free(strings);
  close(fd);
  return names;
}

char* kc__elf_undefined_kc_names(const char* path, bool* oom) {
  return kc__elf_symbol_names(path, "kc_", false, oom);
}
