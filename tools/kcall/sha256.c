/*
 * sha256.c — SHA-256 as FIPS 180-4 defines it (sections 4.1.2, 4.2.2,
 * 5.1.1, 5.3.3 and 6.2).
 */
#include "sha256.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t kRound[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu,
    0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u, 0xd807aa98u, 0x12835b01u,
    0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u,
    0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu,
    0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u,
    0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u,
    0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u,
    0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u, 0x1e376c08u,
    0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu,
    0x682e6ff3u, 0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u,
    0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static uint32_t rotr(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32u - n));
}

/* One 64-byte block into the state (6.2.2). */
static void compress(uint32_t state[8], const uint8_t block[64]) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) {
    w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
           (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
  }
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + sum1 + ch + kRound[t] + w[t];
    uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = sum0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void cli_sha256_init(cli_sha256* h) {
  /* The first 32 bits of the fractional parts of the square roots of the
   * first 8 primes (5.3.3). */
  static const uint32_t kInitial[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u,
                                       0xa54ff53au, 0x510e527fu, 0x9b05688cu,
                                       0x1f83d9abu, 0x5be0cd19u};
  memcpy(h->state, kInitial, sizeof kInitial);
  h->length = 0;
  h->used = 0;
}

void cli_sha256_update(cli_sha256* h, const void* data, size_t size) {
  const uint8_t* p = data;
  h->length += size;
  while (size > 0) {
    size_t take = 64 - h->used;
    if (take > size) take = size;
    memcpy(h->block + h->used, p, take);
    h->used += take;
    p += take;
    size -= take;
    if (h->used == 64) {
      compress(h->state, h->block);
      h->used = 0;
    }
  }
}

void cli_sha256_final(cli_sha256* h, uint8_t out_digest[CLI_SHA256_SIZE]) {
  /* Padding (5.1.1): a 1 bit, zeros, then the length in bits as a
   * big-endian 64-bit number, ending on a block boundary. */
  uint64_t bits = h->length * 8u;
  h->block[h->used++] = 0x80;
  if (h->used > 56) {
    memset(h->block + h->used, 0, 64 - h->used);
    compress(h->state, h->block);
    h->used = 0;
  }
  memset(h->block + h->used, 0, 56 - h->used);
  for (int i = 0; i < 8; ++i) {
    h->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  }
  compress(h->state, h->block);
  for (int i = 0; i < 8; ++i) {
    out_digest[4 * i] = (uint8_t)(h->state[i] >> 24);
    out_digest[4 * i + 1] = (uint8_t)(h->state[i] >> 16);
    out_digest[4 * i + 2] = (uint8_t)(h->state[i] >> 8);
    out_digest[4 * i + 3] = (uint8_t)h->state[i];
  }
}

void cli_sha256_hex(const uint8_t digest[CLI_SHA256_SIZE], char out_hex[65]) {
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < CLI_SHA256_SIZE; ++i) {
    out_hex[2 * i] = kHex[digest[i] >> 4];
    out_hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  out_hex[64] = '\0';
}
