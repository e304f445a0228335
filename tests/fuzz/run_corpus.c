/*
 * run_corpus.c — libFuzzer's place, when the harnesses are built without
 * it: runs LLVMFuzzerTestOneInput once on every file named on the command
 * line, or found directly in a directory named there (in name order, so a
 * failure is reproducible), each in a buffer of exactly its size.
 *
 *   kcall_fuzz_hlo tests/fuzz/corpus/hlo [FILE]...
 *
 * Fails (status 1) when a file cannot be read or when no file was run at
 * all, so an empty or misplaced corpus is never a silent pass; a harness
 * that finds a bug aborts.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "run_corpus: cannot open '%s': %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096;
  size_t size = 0;
  uint8_t* data = malloc(cap);
  for (;;) {
    if (!data) break;
    size += fread(data + size, 1, cap - size, f);
    if (size < cap) break;
    uint8_t* more = realloc(data, cap * 2);
    if (!more) free(data);
    data = more;
    cap *= 2;
  }
  bool failed = !data || ferror(f);
  fclose(f);
  if (failed) {
    fprintf(stderr, "run_corpus: cannot read '%s'\n", path);
    free(data);
    return -1;
  }
  /* Exactly `size` bytes, so that a sanitizer sees any read past them. */
  uint8_t* exact = malloc(size ? size : 1);
  if (!exact) {
    free(data);
    return -1;
  }
  if (size) memcpy(exact, data, size);
  free(data);
  fprintf(stderr, "run_corpus: %s (%zu bytes)\n", path, size);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  return 1;
}

static int by_name(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Runs every regular file directly in `dir`; returns how many, or -1. */
static int run_dir(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) {
    fprintf(stderr, "run_corpus: cannot open '%s': %s\n", dir, strerror(errno));
    return -1;
  }
  char** names = NULL;
  size_t count = 0;
  size_t cap = 0;
  int status = 0;
  struct dirent* e;
  while (status == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue; /* ., .. and hidden files */
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      char** more = realloc(names, cap * sizeof *names);
      if (!more) {
        status = -1;
        break;
      }
      names = more;
    }
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    names[count] = malloc(n);
    if (!names[count]) {
      status = -1;
      break;
    }
    snprintf(names[count++], n, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (count) qsort(names, count, sizeof *names, by_name);
  int ran = 0;
  for (size_t i = 0; i < count; ++i) {
    struct stat st;
    if (status == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      int r = run_file(names[i]);
      if (r < 0) status = -1;
      ran += r > 0;
    }
    free(names[i]);
  }
  free(names);
  return status < 0 ? -1 : ran;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  int total = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "run_corpus: cannot find '%s': %s\n", argv[i], strerror(errno));
      return 1;
    }
    int ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]);
    if (ran < 0) return 1;
    total += ran;
  }
  if (total == 0) {
    fprintf(stderr, "run_corpus: no input files found\n");
    return 1;
  }
  printf("run_corpus: %d input(s), no failure\n", total);
  return 0;
}
