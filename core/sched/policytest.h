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
struct sched_source;
struct luahost;

/* A scripted cluster as a session's source (the objects, an array). */
struct policytest_cluster {
	struct cJSON *objs;
};
void policytest_source(struct policytest_cluster *, struct cJSON *objs,
    struct sched_source *);
/* Fill in what a cluster would have set (uids, creation times, the
   default namespace, Ready nodes, Pending pods); -1 with *cause. */
int policytest_complete(struct cJSON *objs, char **cause);
/* A Lua host over share's lua/ and policies/, then dir and extra (each
   may be NULL). */
struct luahost *policytest_host(const char *share, const char *dir,
    const char *extra);
/* replay.c: one session on a recorded cluster with dir's policy over the
   built-in one and over's (a user's directory, read in place so that
   errors name its files; may be NULL) over both: its decisions (binds,
   pipelined, evicted, waiting, pluginFailures; see replay.c), or NULL
   with *cause. */
struct cJSON *replay_run(const char *share, const char *dir,
    const char *over, const struct cJSON *cluster, double now,
    char **cause);
struct cJSON *replay_decisions(struct session *);
/* policytest_expect.c: a case's expect.podgroups, pods, events and
   queues against the session that ran; 1 (and the misses printed under
   the case's FAIL line, printed here unless failed says it was) or 0. */
int policytest_expect(struct session *, const struct cJSON *expect,
    FILE *out, const char *file, const char *name, int failed);
/* NULL when every key of the mapping o is in known (NULL-terminated);
   else why not, naming the first other key and the known ones (to
   free): a spec's misspelt key must not pass as if it were not there. */
char *policytest_expect_keys(const struct cJSON *o,
    const char *const *known);

#endif
