/*
 * One TCP connection to a port of this machine, for port-forward: dial
 * 127.0.0.1:PORT, hand over what it sends, write what the tunnel brings,
 * half-close when the tunnel's side ends, and say once how it ended.
 */
#ifndef VOLRAY_TCPFWD_H
#define VOLRAY_TCPFWD_H

#include <stddef.h>
#include <uv.h>

typedef struct tcpfwd tcpfwd;

struct tcpfwd_cb {
	/* Connected (error NULL), or the dial failed (error says why). */
	void (*connected)(void *arg, const char *error);
	/* Bytes from the port. */
	void (*data)(void *arg, const char *data, size_t len);
	/* The port's side is done (EOF or an error); nothing follows. */
	void (*ended)(void *arg);
};

/* NULL when the dial cannot even start (a port out of range). */
tcpfwd *tcpfwd_dial(uv_loop_t *, int port, const struct tcpfwd_cb *,
    void *arg);
/* Write (copied); -1 once the connection is gone. */
int tcpfwd_write(tcpfwd *, const char *data, size_t len);
/* Bytes written but not yet taken by the kernel. */
size_t tcpfwd_pending(const tcpfwd *);
/* The tunnel's side is done: shut down writing after what is queued. */
void tcpfwd_shutdown(tcpfwd *);
/* Stop (1) or resume (0) reading: backpressure. */
void tcpfwd_pause(tcpfwd *, int paused);
/* Close and release; no callback afterwards. */
void tcpfwd_free(tcpfwd *);

#endif
