/*
 * The scheduler's explain records on its own endpoint
 * (daemon/explain.c), for an API server in another process.
 */
#ifndef VOLRAY_DAEMON_EXPLAIN_H
#define VOLRAY_DAEMON_EXPLAIN_H

struct http_req;

/* The endpoint's /volray/explain/ requests: podgroups/NS/NAME or
   queues/NAME, answered from *(sched **)arg's kept sessions. */
void volrayd_explain_serve(void *arg, struct http_req *, const char *rest);

#endif
