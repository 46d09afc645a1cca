/*
 * What the last sessions said about each waiting job and queue
 * (explain.c), for `volray explain` and `volray queue pending`.
 */
#ifndef VOLRAY_EXPLAIN_H
#define VOLRAY_EXPLAIN_H

#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct explain explain;
struct session;

/* A ring of the last nsessions sessions' records; NULL when 0 (off). */
explain *explain_new(int nsessions);
void explain_free(explain *);
/* On the session's thread, once its outcome is decided. */
void explain_record(explain *, struct session *, uint64_t session_no);
/* Whether a job of the session waits (and gets a record): a pending or
   pipelined pod, or a PodGroup not running yet that lacks pods (a Volcano
   Job's, Pending or Inqueue before its controller creates them). */
struct s_job;
int explain_waits(const struct s_job *);
/* The newest record of a job ("ns/name") or queue, with its "session":
   a new tree, or NULL when no kept session has one. Any thread. */
cJSON *explain_job(explain *, const char *key);
cJSON *explain_queue(explain *, const char *name);
/* Sessions kept so far, and the time spent recording (microseconds). */
int explain_sessions(explain *);
uint64_t explain_record_us(explain *);

#endif
