/*
 * The gRPC probe's client (grpcprobe.c): one unary call of the gRPC
 * health checking protocol, grpc.health.v1.Health/Check, as the kubelet
 * makes it for a container's `grpc` probe.
 */
#ifndef VOLRAY_GRPCPROBE_H
#define VOLRAY_GRPCPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct grpcprobe grpcprobe;

/*
 * How a check went: ok 1 when the service answered SERVING, 0 otherwise
 * with the kubelet's words in message ("service unhealthy (responded
 * with \"NOT_SERVING\")", "timeout: failed to connect service ..."); ok
 * -1 (message NULL) when the client is freed with the check under way.
 */
typedef void (*grpcprobe_fn)(void *arg, int ok, const char *message);

/* A client whose checks report on loop. */
grpcprobe *grpcprobe_new(uv_loop_t *loop);
/*
 * Ask host:port (plaintext) whether service ("" for the server as a
 * whole) is serving, within timeout_ms; fn follows once, on the loop.
 */
void grpcprobe_check(grpcprobe *, const char *host, int port,
    const char *service, uint64_t timeout_ms, grpcprobe_fn fn, void *arg);
/* The same on fd, a connection to host:port made by the caller (taken). */
void grpcprobe_check_fd(grpcprobe *, int fd, const char *host, int port,
    const char *service, uint64_t timeout_ms, grpcprobe_fn fn, void *arg);
/* The kubelet's words for a service it could not connect to in time. */
void grpcprobe_unreachable(const char *host, int port, uint64_t timeout_ms,
    char *msg, size_t size);
/* Cancel what is under way (each fn follows with ok -1) and free it. */
void grpcprobe_free(grpcprobe *);

/* The status a HealthCheckResponse holds (0, UNKNOWN, when none); -1
   when the bytes are no such message. For the unit test. */
int grpcprobe_response_status(const unsigned char *p, size_t len);

#endif
