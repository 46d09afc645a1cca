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

#endif
