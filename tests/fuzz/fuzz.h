/*
 * Helpers shared by the fuzz targets in tests/fuzz/: quiet logging, a
 * private temporary directory per process, splitting one input into two
 * parts at the first NUL byte, and the round-trip check every decoder
 * target makes (what was decoded prints and parses back to the same tree).
 * Each target defines LLVMFuzzerTestOneInput (and, when it needs set-up,
 * LLVMFuzzerInitialize); libFuzzer drives it in the fuzz build, replay.c
 * feeds it the regression inputs and seeds in the normal build.
 */
#ifndef VOLRAY_FUZZ_H
#define VOLRAY_FUZZ_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "lib/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int LLVMFuzzerInitialize(int *, char ***);

/* Report a broken property the way a sanitizer would: loudly, then abort. */
#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* Only errors that would hide a bug matter while fuzzing. */
static inline void
fuzz_quiet(void)
{
	log_set_level((enum log_level)(LOG_ERROR + 1));
}

/* A NUL-terminated copy of the input (the parsers take C strings too). */
static inline char *
fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Split the input at its first NUL into two NUL-terminated copies; without
 * a NUL, the second part is empty. Free both.
 */
static inline void
fuzz_split(const uint8_t *data, size_t size, char **a, size_t *alen,
    char **b, size_t *blen)
{
	const uint8_t *z = memchr(data, 0, size);
	size_t n = z != NULL ? (size_t)(z - data) : size;

	*a = fuzz_strndup(data, n);
	*alen = n;
	if (z != NULL) {
		*b = fuzz_strndup(z + 1, size - n - 1);
		*blen = size - n - 1;
	} else {
		*b = fuzz_strndup(data, 0);
		*blen = 0;
	}
}

/* Does the tree hold a number JSON cannot print (inf from "1e999")? */
static inline int
fuzz_has_nonfinite(const cJSON *j)
{
	const cJSON *c;

	if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
		return 1;
	for (c = j != NULL ? j->child : NULL; c != NULL; c = c->next)
		if (fuzz_has_nonfinite(c))
			return 1;
	return 0;
}

/*
 * Does an object in the tree repeat a key? json_equal (like the registry)
 * reads the first of them, so such a tree is not even equal to itself.
 */
static inline int
fuzz_has_dupkeys(const cJSON *j)
{
	const cJSON *c, *d;

	for (c = j != NULL ? j->child : NULL; c != NULL; c = c->next) {
		if (cJSON_IsObject(j) && c->string != NULL)
			for (d = c->next; d != NULL; d = d->next)
				if (d->string != NULL &&
				    strcmp(c->string, d->string) == 0)
					return 1;
		if (fuzz_has_dupkeys(c))
			return 1;
	}
	return 0;
}

/*
 * A decoded tree must print, and what it prints must parse back to an equal
 * tree: the store keeps the printed bytes, so anything else would change an
 * object between the request and the stored version.
 */
static inline void
fuzz_roundtrip(const cJSON *tree)
{
	char *s, *ref;
	cJSON *back;

	if (tree == NULL)
		return;
	/* The store's printer writes cJSON's bytes. */
	s = json_print(tree);
	ref = json_print_reference(tree);
	FUZZ_ASSERT(s != NULL && ref != NULL);
	if (strcmp(s, ref) != 0)
		fprintf(stderr, "json_print: %s\ncJSON:      %s\n", s, ref);
	FUZZ_ASSERT(strcmp(s, ref) == 0);
	free(ref);
	if (fuzz_has_nonfinite(tree) || fuzz_has_dupkeys(tree)) {
		free(s);
		return;
	}
	back = cJSON_Parse(s);
	FUZZ_ASSERT(back != NULL);
	if (!json_equal(tree, back)) {
		char *again = json_print(back);

		fprintf(stderr, "round trip: printed %s\nparsed back %s\n",
		    s, again);
		free(again);
	}
	FUZZ_ASSERT(json_equal(tree, back));
	cJSON_Delete(back);
	free(s);
}

#endif
