/*
 * The scheduler framework without a daemon, for `volray policy check`
 * and `volray policy test` (see policytest.c for the spec format).
 */
#ifndef VOLRAY_POLICYTEST_H
#define VOLRAY_POLICYTEST_H

#include <stdio.h>

/* Load DIR's policy over share's built-in one; 0, or -1 with *cause. */
int policytest_check(const char *share, const char *dir, FILE *out,
    char **cause);
/* Run DIR's (or the built-in) *.spec.yaml; the number of failed cases,
   or -1 with *cause. */
int policytest_run(const char *share, const char *dir, FILE *out,
    char **cause);

struct session;
struct cJSON;
/* policytest_expect.c: a case's expect.podgroups, pods, events and
   queues against the session that ran; 1 (and the misses printed under
   the case's FAIL line, printed here unless failed says it was) or 0. */
int policytest_expect(struct session *, const struct cJSON *expect,
    FILE *out, const char *file, const char *name, int failed);

#endif
