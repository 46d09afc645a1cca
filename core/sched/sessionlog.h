/*
 * volrayd --record-sessions: each session's input kept as a `volray
 * session record` file (sessionlog.c).
 */
#ifndef VOLRAY_SESSIONLOG_H
#define VOLRAY_SESSIONLOG_H

#include <stddef.h>
#include <stdint.h>

struct store_obj;
typedef struct sessionlog sessionlog;

/* Files in dir (made if missing), the newest keep of them kept. NULL with
   *cause when dir cannot be made or read. */
sessionlog *sessionlog_new(const char *dir, int keep, char **cause);
void sessionlog_free(sessionlog *);
/*
 * One session's record: the objects objs[k][0..n[k]) for k < nkinds, the
 * policy's files (a JSON object's text), the session's number and time.
 * nodes[k], when nodes and it are not NULL, holds for each object of kind
 * k the node the scheduler assumed it on (a pod whose bind was on its
 * way), or NULL: that object is written with it as spec.nodeName, as the
 * session read it. Written only when they differ from the last written:
 * 1 written, 0 the same, -1 failed (logged). Any one thread at a time.
 */
int sessionlog_write(sessionlog *, struct store_obj *const *const *objs,
    const size_t *n, const char *const *const *nodes, int nkinds,
    const char *policy_files, uint64_t session_no, const char *now);
/* Records written so far. */
uint64_t sessionlog_written(const sessionlog *);

#endif
