/*
 * The event recorder (recorder.h). Its only state is the similar-event
 * table: for each (object, type, reason), when its window began and the
 * distinct messages seen in it (their hashes), so that the eleventh
 * different message goes to the combined Event. The same message again
 * needs no state: its Event's name says where it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/recorder.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

struct similar {
	char *key;
	time_t since;
	int n;
	uint32_t seen[RECORDER_SIMILAR];
};

struct recorder {
	client *c;
	char *component;
	hmap *similar;       /* object|type|reason -> struct similar */
	time_t swept;
};

recorder *
recorder_new(client *c, const char *component)
{
	recorder *r = xcalloc(1, sizeof *r);

	r->component = xstrdup(component);
	r->c = c;
	r->similar = hmap_new();
	r->swept = time(NULL);
	return r;
}

static int
free_similar(const char *key, void *v, void *arg)
{
	struct similar *s = v;

	(void)key;
	(void)arg;
	free(s->key);
	free(s);
	return 0;
}

void
recorder_free(recorder *r)
{
	if (r == NULL)
		return;
	hmap_each(r->similar, free_similar, NULL);
	hmap_free(r->similar);
	free(r->component);
	free(r);
}

void
recorder_obj_of(const cJSON *obj, struct recorder_obj *o)
{
	o->api_version = json_str(obj, "apiVersion");
	o->kind = json_str(obj, "kind");
	o->ns = json_str(obj, "metadata.namespace");
	o->name = json_str(obj, "metadata.name");
	o->uid = json_str(obj, "metadata.uid");
	o->rv = json_str(obj, "metadata.resourceVersion");
}

static uint32_t
fnv(const char *s, uint32_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The windows that ended, gathered by hmap_each and then removed. */
struct old {
	time_t now;
	struct similar **v;
	size_t n, cap;
};

static int
collect_old(const char *key, void *v, void *arg)
{
	struct similar *s = v;
	struct old *o = arg;

	(void)key;
	if (o->now - s->since <= RECORDER_SIMILAR_WINDOW)
		return 0;
	XGROW(o->v, o->cap, o->n + 1);
	o->v[o->n++] = s;
	return 0;
}

static void
sweep(recorder *r, time_t now)
{
	struct old o = { now, NULL, 0, 0 };
	size_t i;

	if (now - r->swept < RECORDER_SIMILAR_WINDOW)
		return;
	r->swept = now;
	hmap_each(r->similar, collect_old, &o);
	for (i = 0; i < o.n; i++) {
		hmap_del(r->similar, o.v[i]->key);
		free_similar(NULL, o.v[i], NULL);
	}
	free(o.v);
}

/*
 * Whether this message is one too many of its kind: the object's
 * (type, reason) has had RECORDER_SIMILAR other messages in its window.
 */
static int
too_similar(recorder *r, const struct recorder_obj *o, const char *type,
    const char *reason, const char *message)
{
	time_t now = time(NULL);
	struct similar *s;
	uint32_t h = fnv(message, 2166136261u);
	char *key;
	int i;

	sweep(r, now);
	key = util_printf("%s|%s|%s|%s|%s", o->uid ? o->uid : "",
	    o->ns ? o->ns : "", o->name, type, reason);
	s = hmap_get(r->similar, key);
	if (s != NULL && now - s->since > RECORDER_SIMILAR_WINDOW) {
		s->since = now;
		s->n = 0;
	}
	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->key = key;
		s->since = now;
		hmap_put(r->similar, s->key, s);
	} else
		free(key);
	for (i = 0; i < s->n; i++)
		if (s->seen[i] == h)
			return 0;
	if (s->n < RECORDER_SIMILAR) {
		s->seen[s->n++] = h;
		return 0;
	}
	return 1;
}

static cJSON *
new_event(recorder *r, const struct recorder_obj *o, const char *ns,
    const char *evname, const char *type, const char *reason,
    const char *message, const char *now, int n)
{
	cJSON *ev = cJSON_CreateObject(), *io;

	cJSON_AddStringToObject(ev, "apiVersion", "v1");
	cJSON_AddStringToObject(ev, "kind", "Event");
	json_set_str(json_obj(ev, "metadata"), "name", evname);
	json_set_str(json_obj(ev, "metadata"), "namespace", ns);
	io = json_obj(ev, "involvedObject");
	if (o->api_version != NULL)
		json_set_str(io, "apiVersion", o->api_version);
	if (o->kind != NULL)
		json_set_str(io, "kind", o->kind);
	json_set_str(io, "name", o->name);
	if (o->ns != NULL && *o->ns != '\0')
		json_set_str(io, "namespace", o->ns);
	if (o->uid != NULL)
		json_set_str(io, "uid", o->uid);
	if (o->rv != NULL)
		json_set_str(io, "resourceVersion", o->rv);
	json_set_str(ev, "type", type);
	json_set_str(ev, "reason", reason);
	json_set_str(ev, "message", message);
	json_set_str(json_obj(ev, "source"), "component", r->component);
	json_set_str(ev, "reportingComponent", r->component);
	json_set_str(ev, "firstTimestamp", now);
	json_set_str(ev, "lastTimestamp", now);
	json_set_num(ev, "count", n);
	return ev;
}

int
recorder_event(recorder *r, const struct recorder_obj *o, const char *type,
    const char *reason, const char *message, const struct reg_opts *opts)
{
	return recorder_event_n(r, o, type, reason, message, 1, opts);
}

/* An Event's write on its way: its answer is logged when it fails. */
struct ev_write {
	char *what;		/* "component: event ns/name", for the log */
	int state;		/* 0 waiting, 1 answered, -1 nobody waits */
	int code;
};

static void
ev_written(void *arg, struct reg_result *res)
{
	struct ev_write *w = arg;

	/* A 409: another write of the same Event won; it is counted. */
	if (res->code >= 300 && res->code != 409)
		log_warn("%s: code %d", w->what, res->code);
	cJSON_Delete(res->body);
	w->code = res->code;
	if (w->state == -1) {
		free(w->what);
		free(w);
		return;
	}
	w->state = 1;
}

int
recorder_event_n(recorder *r, const struct recorder_obj *o, const char *type,
    const char *reason, const char *message, int times,
    const struct reg_opts *opts)
{
	const resource *er = resource_find("", "v1", "events");
	const char *ns = o->ns != NULL && *o->ns != '\0' ? o->ns : "default";
	char evname[320], now[32], *combined = NULL;
	struct ev_write *w;
	uint32_t h = 2166136261u;
	cJSON *ev;
	int code;

	if (o->name == NULL)
		return 0;
	if (too_similar(r, o, type, reason, message)) {
		/* One Event for the rest, named without the message. */
		combined = util_printf("(combined from similar events): %s",
		    message);
		message = combined;
		h = fnv("(combined from similar events)", h);
	} else
		h = fnv(message, h);
	h = fnv(o->uid ? o->uid : o->name, h);
	h = fnv(type, h);
	h = fnv(reason, h);
	snprintf(evname, sizeof evname, "%.240s.%08x", o->name, h);
	util_now(now);
	w = xcalloc(1, sizeof *w);
	w->what = util_printf("%s: event %s/%s", r->component, ns, evname);
	ev = client_get_tree(r->c, er, ns, evname);
	if (ev != NULL) {
		/* A repeat is the same Event counted again, as client-go's. */
		double n = cJSON_GetNumberValue(json_at(ev, "count"));

		json_set_num(ev, "count", (n > 0 ? n : 1) + (times > 0 ? times :
		    1));
		json_set_str(ev, "lastTimestamp", now);
		if (combined != NULL)
			json_set_str(ev, "message", message);
		client_update_async(r->c, er, ns, evname, ev, opts,
		    ev_written, w);
	} else {
		ev = new_event(r, o, ns, evname, type, reason, message, now,
		    times > 0 ? times : 1);
		client_create_async(r->c, er, ns, ev, opts, ev_written, w);
	}
	free(combined);
	if (w->state == 1) {
		code = w->code;
		free(w->what);
		free(w);
		return code;
	}
	/* The answer comes later (a remote API): the loop does not wait. */
	w->state = -1;
	return 202;
}
