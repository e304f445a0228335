/* Locale-independent number reading; see cnum.h. */
#include "internal/cnum.h"

#include <locale.h>
#include <pthread.h>
#include <stdlib.h>

/* The "C" locale object, made on first use and kept for the life of the
 * process (it is never written after). */
static pthread_once_t kc__c_locale_once = PTHREAD_ONCE_INIT;
static locale_t kc__c_locale;

static void kc__c_locale_make(void) {
  kc__c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

double kc__strtod_c(const char* text, char** end) {
  pthread_once(&kc__c_locale_once, kc__c_locale_make);
  /* The C library makes the "C" locale without allocating; should it ever
   * fail, the thread's locale is the best left. */
  return kc__c_locale ? strtod_l(text, end, kc__c_locale) : strtod(text, end);
}
