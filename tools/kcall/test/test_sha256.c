/*
 * test_sha256.c — the tool's SHA-256 against the FIPS 180-2 / NIST CAVS
 * examples, fed whole and in pieces that straddle the 64-byte blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sha256.h"

static int g_failures;

static void digest_of(const void* data, size_t size, size_t piece,
                      char out_hex[65]) {
  cli_sha256 h;
  uint8_t d[CLI_SHA256_SIZE];
  cli_sha256_init(&h);
  const unsigned char* p = data;
  for (size_t done = 0; done < size;) {
    size_t take = piece && size - done > piece ? piece : size - done;
    cli_sha256_update(&h, p + done, take);
    done += take;
  }
  cli_sha256_final(&h, d);
  cli_sha256_hex(d, out_hex);
}

static void expect(const char* what, const void* data, size_t size,
                   const char* want) {
  /* Whole, byte by byte, and in pieces of 7, 63, 64 and 65 bytes. */
  static const size_t kPieces[] = {0, 1, 7, 63, 64, 65};
  for (size_t i = 0; i < sizeof kPieces / sizeof kPieces[0]; ++i) {
    char got[65];
    digest_of(data, size, kPieces[i], got);
    if (strcmp(got, want) != 0) {
      fprintf(stderr, "%s (pieces of %zu): got %s, want %s\n", what,
              kPieces[i], got, want);
      ++g_failures;
    }
  }
}

int main(void) {
  expect("empty", "", 0,
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect("abc", "abc", 3,
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char* m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  expect("448 bits", m448, strlen(m448),
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char* m896 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
      "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  expect("896 bits", m896, strlen(m896),
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  /* Lengths where the padding needs a block of its own (56..63 bytes). */
  char a55[56], a56[57], a64[65];
  memset(a55, 'a', 55);
  memset(a56, 'a', 56);
  memset(a64, 'a', 64);
  expect("55 x 'a'", a55, 55,
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  expect("56 x 'a'", a56, 56,
         "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  expect("64 x 'a'", a64, 64,
         "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  size_t million = 1000000;
  char* ma = malloc(million);
  if (!ma) return 2;
  memset(ma, 'a', million);
  expect("a million 'a'", ma, million,
         "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(ma);
  if (g_failures) fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
