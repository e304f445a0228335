/*
 * sha256.h — SHA-256 (FIPS 180-4), for the keys of `kcall build`'s cache.
 *
 * Incremental: init, update with any number of byte runs, final. Not
 * constant-time and not meant for secrets: it names files by content.
 */
#ifndef KCALL_TOOLS_SHA256_H_
#define KCALL_TOOLS_SHA256_H_

#include <stddef.h>
#include <stdint.h>

#define CLI_SHA256_SIZE 32

typedef struct cli_sha256 {
  uint32_t state[8];
  uint64_t length;      /* bytes hashed so far */
  uint8_t block[64];    /* the partial block */
  size_t used;          /* bytes of it in use */
} cli_sha256;

void cli_sha256_init(cli_sha256* h);
void cli_sha256_update(cli_sha256* h, const void* data, size_t size);
/* Writes the digest; `h` must be initialised again before reuse. */
void cli_sha256_final(cli_sha256* h, uint8_t out_digest[CLI_SHA256_SIZE]);
/* The digest as 64 lowercase hex digits and a NUL. */
void cli_sha256_hex(const uint8_t digest[CLI_SHA256_SIZE], char out_hex[65]);

#endif /* KCALL_TOOLS_SHA256_H_ */
