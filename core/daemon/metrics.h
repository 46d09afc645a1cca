/*
 * The daemon's probes and metrics apart from the API (--metrics-listen),
 * served by daemon/metrics.c.
 */
#ifndef VOLRAY_DAEMON_METRICS_H
#define VOLRAY_DAEMON_METRICS_H

struct uv_loop_s;

/*
 * Serve /healthz, /livez, /readyz (200 once *ready) and /metrics in plain
 * HTTP on host:port. 0, or -1 with *cause.
 */
int volrayd_metrics_listen(struct uv_loop_s *, const char *host, int port,
    const int *ready, char **cause);

#endif
