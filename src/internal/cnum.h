/* Numbers in text that kcall reads (HLO text, op specs) always write '.'
 * for the decimal point, whatever locale the host program has set with
 * setlocale: these read them in the "C" locale. Never installed. */
#ifndef KCALL_INTERNAL_CNUM_H_
#define KCALL_INTERNAL_CNUM_H_

/* strtod, in the "C" locale. Thread-safe. */
double kc__strtod_c(const char* text, char** end);

#endif /* KCALL_INTERNAL_CNUM_H_ */
