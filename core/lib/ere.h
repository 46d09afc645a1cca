/*
 * OpenAPI patterns are ECMA-262 (the API server runs them through Go's RE2);
 * volray checks them with POSIX regcomp. This translates the first dialect
 * into the second where POSIX extended regular expressions can say the same.
 */
#ifndef VOLRAY_ERE_H
#define VOLRAY_ERE_H

/*
 * Translate an ECMA/RE2 pattern into POSIX ERE: \d \w \s and their negations,
 * character escapes, \xHH, \uXXXX, and (?: groups. Returns a string to free,
 * or NULL if the pattern uses something ERE cannot say, such as lookaround
 * or \p classes, or what RE2 refuses and regcomp cannot afford: a
 * repetition of a repetition (a++), a count over 1000, or nested counts
 * whose product passes 1000.
 */
char *ere_translate(const char *pattern);

#endif
