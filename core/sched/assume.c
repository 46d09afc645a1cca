/*
 * Assumed pods: a map from a pod's uid to the node its bind names, from
 * the moment the bind is queued until the cache holds a version of the
 * pod with a node (the watch's, after the server took it) or without the
 * pod, or the bind fails. The cache's versions stay the server's; a
 * session is told the node apart (assume_nodes, taken with the versions
 * it reads), as kube-scheduler's cache keeps assumed pods beside the
 * informer's.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/xmalloc.h"
#include "sched/assume.h"

struct assume {
	hmap *pods;			/* uid -> struct entry */
};

struct entry {
	const char *uid;		/* in buf */
	const char *node;		/* in buf */
	char buf[];
};

assume *
assume_new(void)
{
	assume *a = xcalloc(1, sizeof *a);

	a->pods = hmap_new();
	return a;
}

static int
free_entry(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 0;
}

void
assume_free(assume *a)
{
	if (a == NULL)
		return;
	hmap_each(a->pods, free_entry, NULL);
	hmap_free(a->pods);
	free(a);
}

void
assume_add(assume *a, const char *uid, const char *node)
{
	size_t lu = strlen(uid) + 1, ln = strlen(node) + 1;
	struct entry *e = xmalloc(sizeof *e + lu + ln);

	e->uid = memcpy(e->buf, uid, lu);
	e->node = memcpy(e->buf + lu, node, ln);
	free(hmap_put(a->pods, e->uid, e));
}

void
assume_forget(assume *a, const char *uid)
{
	free(hmap_del(a->pods, uid));
}

void
assume_event(assume *a, const store_event *ev)
{
	const store_obj *o = ev->obj;

	if (hmap_count(a->pods) == 0 || strcmp(o->res, "pods") != 0)
		return;
	if (ev->type == STORE_DELETED || *o->node_name != '\0')
		free(hmap_del(a->pods, o->uid));
}

size_t
assume_count(const assume *a)
{
	return hmap_count(a->pods);
}

const char **
assume_nodes(const assume *a, store_obj *const *objs, size_t n)
{
	const struct entry **found;
	const char **nodes;
	size_t i, len = 0, nfound = 0;
	char *p;

	if (hmap_count(a->pods) == 0 || n == 0)
		return NULL;
	found = xcalloc(n, sizeof *found);
	for (i = 0; i < n; i++) {
		if (*objs[i]->node_name != '\0' ||
		    (found[i] = hmap_get(a->pods, objs[i]->uid)) == NULL)
			continue;
		len += strlen(found[i]->node) + 1;
		nfound++;
	}
	if (nfound == 0) {
		free(found);
		return NULL;
	}
	/* The names are copied: an entry can go while the session runs. */
	nodes = xcalloc(1, n * sizeof *nodes + len);
	p = (char *)(nodes + n);
	for (i = 0; i < n; i++) {
		if (found[i] == NULL)
			continue;
		len = strlen(found[i]->node) + 1;
		nodes[i] = memcpy(p, found[i]->node, len);
		p += len;
	}
	free(found);
	return nodes;
}
