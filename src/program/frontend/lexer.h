/* The tokenizer behind the HLO-text parser (parse.c and the parse_*.c
 * beside it, typed attribute dictionaries included), with the helpers they
 * all need: error messages that cite line and column, number and string
 * decoding, and a growable byte buffer. Never installed. */
#ifndef KCALL_PROGRAM_LEXER_H_
#define KCALL_PROGRAM_LEXER_H_

#include "internal/arena.h"
#include "internal/common.h"
#include "internal/grow.h"

typedef enum kc__tok_kind {
  KC__TOK_END = 0, /* end of input */
  KC__TOK_IDENT,   /* [A-Za-z_$][A-Za-z0-9_.$-]* */
  KC__TOK_NAME,    /* %name; `text` leaves the '%' out */
  KC__TOK_NUMBER,  /* as written: -12, 1.5e-05, 0x7F800000 */
  KC__TOK_STRING,  /* "..."; `text` leaves the quotes out, escapes raw */
  KC__TOK_PUNCT,   /* any other single byte: = , : ( ) { } [ ] < > - ... */
  KC__TOK_ERROR    /* a string or comment that does not end; see `error` */
} kc__tok_kind;

typedef struct kc__token {
  kc__tok_kind kind;
  kc_string_view text;
  int32_t line;   /* 1-based */
  int32_t column; /* 1-based, in bytes */
  const char* error; /* KC__TOK_ERROR only: what is wrong */
} kc__token;

typedef struct kc__lexer {
  const char* text;
  size_t size;
  size_t pos;
  int32_t line;
  /* Offset of the current line's first byte; negative when the text is a
   * piece of a larger one that starts mid-line (see kc__lexer_init). */
  int64_t line_start;
  /* Messages give only the column: the text is one line of its own. */
  bool column_only;
  kc__token tok;     /* the current token */
  int32_t prev_line; /* line of the token consumed last */
} kc__lexer;

/* Starts lexing `text`, whose first byte sits at (line, column) of the
 * document messages should cite, and reads the first token. */
void kc__lexer_init(kc__lexer* lx, kc_string_view text, int32_t line,
                    int32_t column);

/* Moves to the next token. */
void kc__lex_next(kc__lexer* lx);

/* The token after the current one, without moving. */
kc__token kc__lex_peek(const kc__lexer* lx);

static inline bool kc__tok_is_punct(const kc__token* t, char c) {
  return t->kind == KC__TOK_PUNCT && t->text.data[0] == c;
}
/* `word` is a literal, whose strlen the compiler folds. */
static inline bool kc__tok_is_word(const kc__token* t, const char* word) {
  size_t n = strlen(word);
  return t->kind == KC__TOK_IDENT && t->text.size == n &&
         memcmp(t->text.data, word, n) == 0;
}

/* INVALID_ARGUMENT "line L, column C: <message>" at `at`. */
kc_status* kc__lex_fail(const kc__lexer* lx, const kc__token* at,
                        const char* fmt, ...) KC_PRINTF(3, 4);

/* INVALID_ARGUMENT "line L, column C: expected <what>, got '<token>'";
 * a token that failed to lex reports its own problem instead. */
kc_status* kc__lex_expected(const kc__lexer* lx, const kc__token* at,
                            const char* what);

/* Consumes the punctuation `c`, or fails with "expected 'c'". */
kc_status* kc__lex_expect(kc__lexer* lx, char c);

/* Lists such as "(a, b)", "[1, 2]", "{x, y}", after their opener:
 *   for (bool more = kc__lex_list_begin(lx, ')'); more;) {
 *     ...parse one item...
 *     KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
 *   }
 * Both consume the closer when the list ends; a trailing comma is left
 * for the item parser to refuse. */
bool kc__lex_list_begin(kc__lexer* lx, char close);
kc_status* kc__lex_list_next(kc__lexer* lx, char close, bool* out_more);

/* The bytes between the current token and the next `close` on the same
 * line, for text the tokenizer would split wrongly (MLIR's "2x0xf32"
 * holds what reads as a hex number); then moves to the token after
 * `close`. False, consuming nothing, when the line has no `close`. */
bool kc__lex_raw_until(kc__lexer* lx, char close, kc_string_view* out);

/* The bytes from the current token's start that are all in `allowed`,
 * for values the tokenizer would split wrongly (a padding "0_1x2_3");
 * then moves to the token after them. */
kc_string_view kc__lex_raw_span(kc__lexer* lx, const char* allowed);

/* Skips the value of an attribute the parser does not interpret:
 * balanced (), {}, [] groups and any tokens up to a ',' or closing bracket
 * at the outer level or the end of the line the value starts on. */
kc_status* kc__lex_skip_value(kc__lexer* lx);

/* Skips the balanced group that the current token ('(', '{' or '[')
 * opens, up to and including its closing token, which it copies to
 * *out_close when that is not NULL. */
kc_status* kc__lex_skip_group(kc__lexer* lx, kc__token* out_close);

/* Decodes a NUMBER token holding an integer (decimal or 0x hex, with an
 * optional '-') into its sign and magnitude. False for anything else,
 * including magnitudes beyond 2^64 - 1. */
bool kc__number_to_int(kc_string_view text, bool* out_negative,
                       uint64_t* out_magnitude);

/* True when a NUMBER token is written as an integer (no '.', no exponent). */
bool kc__number_is_int(kc_string_view text);

/* Decodes a decimal NUMBER token as a double. False when malformed. */
bool kc__number_to_double(kc_string_view text, double* out);

/* The current token as a signed integer in [lo, hi], consumed; `what`
 * names it in the message otherwise. */
kc_status* kc__lex_int(kc__lexer* lx, const char* what, int64_t lo,
                       int64_t hi, int64_t* out);

/* How escapes in a string are written. */
typedef enum kc__escapes {
  KC__ESCAPES_HLO,  /* C escapes as absl::CEscape writes them: \n \t \r \"
                       \' \\ \? \a \b \f \v, octal \NNN, hex \xHH */
  KC__ESCAPES_MLIR  /* \\ \" \n \t and two hex digits \XX */
} kc__escapes;

/* Decodes the STRING token `t` into `arena` (NUL-terminated, so the view
 * can also serve as a C string). */
kc_status* kc__lex_string(const kc__lexer* lx, const kc__token* t,
                          kc__escapes escapes, kc__arena* arena,
                          kc_string_view* out);


/* RESOURCE_EXHAUSTED for the parsers. */
kc_status* kc__parse_oom(void);

/* Deepest nesting of tuples, braces and dictionaries the parsers follow;
 * deeper input is refused rather than overflowing the stack. */
#define KC__PARSE_MAX_DEPTH 64

#endif /* KCALL_PROGRAM_LEXER_H_ */
