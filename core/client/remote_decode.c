/*
 * The remote client's decoder (remote_decode.h): a worker thread between
 * two FIFOs. The loop stages the jobs of one turn of the loop and hands
 * them over at its end (a uv_check_t), under one lock, waking the thread
 * only if it waits; the thread takes every job waiting, parses each line
 * of each (cJSON, whose allocations go through xmalloc, is thread safe
 * once its hooks are set before main) or each page of a list, checks the
 * objects as the informer would, builds the mirror's versions
 * (store_mirror_version touches no store), appends the jobs to the
 * second FIFO and wakes the loop with uv_async_send. The loop takes the
 * whole second FIFO at once and calls back with each job in order. One
 * thread keeps one order: every informer's jobs come back as they went,
 * and the mirror sees the informers' changes in the order their bytes
 * arrived, as it did when the loop parsed them.
 *
 * Nothing here logs or touches the loop's state: what was wrong with a
 * line goes back with the job, and the loop logs it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/remote_decode.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"

#define TEXT_BYTES	201	/* of bad input kept for the log: LOG_BYTES
				   and one more, so it says "..." */

struct fifo {
	struct remote_job *head, **tail;
};

struct remote_decoder {
	uv_async_t async;
	uv_check_t check;		/* hands the staged jobs over */
	struct fifo staged;		/* the loop's, this turn's jobs */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct fifo in;			/* the thread's to decode */
	struct fifo out;		/* the loop's to take */
	int stop;
	int idle;			/* the thread waits on cond */
	int closing;			/* handles closing: the last frees */
	remote_decode_fn cb;
	void *arg;
	/* The loop's counters: jobs and bytes pushed and not yet handed
	   back, and their peaks. */
	uint64_t pending_jobs, pending_bytes;
	uint64_t pending_jobs_peak, pending_bytes_peak;
	/* The thread's, under mu: its time decoding, the jobs and lines
	   it decoded. */
	uint64_t decode_ns;
	uint64_t jobs, lines;
};

static void
fifo_init(struct fifo *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static void
fifo_put(struct fifo *q, struct remote_job *j)
{
	j->next = NULL;
	*q->tail = j;
	q->tail = &j->next;
}

static struct remote_job *
fifo_take(struct fifo *q)
{
	struct remote_job *j = q->head;

	if (j != NULL && (q->head = j->next) == NULL)
		q->tail = &q->head;
	return j;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
remote_usable(const resource *r, cJSON *obj)
{
	if (!cJSON_IsObject(obj) || json_str(obj, "metadata.name") == NULL ||
	    (r->namespaced && json_str(obj, "metadata.namespace") == NULL))
		return 0;
	if (json_str(obj, "kind") == NULL) {
		json_set_str(obj, "apiVersion", r->gv);
		json_set_str(obj, "kind", r->kind);
	}
	return 1;
}

/* d says bad input: why, and the first bytes of what came. */
static void
bad(struct remote_decoded *d, const char *what, const char *p, size_t len)
{
	size_t keep = len < TEXT_BYTES ? len : TEXT_BYTES;

	d->kind = RD_BAD;
	d->what = what;
	d->text = xmalloc(keep + 1);
	memcpy(d->text, p, keep);
	d->text[keep] = '\0';
	d->len = len;
}

uint64_t
remote_rv_of(const cJSON *obj)
{
	const char *s = json_str(obj, "metadata.resourceVersion");

	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* One line of r's watch: an event, into d. */
static void
decode_line(const resource *r, const char *line, size_t len,
    struct remote_decoded *d)
{
	cJSON *ev = cJSON_ParseWithLength(line, len), *obj;
	const char *type;
	char *s;

	memset(d, 0, sizeof *d);
	if (ev == NULL) {
		bad(d, "an event that is not JSON, skipped", line, len);
		return;
	}
	type = json_str(ev, "type");
	obj = cJSON_GetObjectItem(ev, "object");
	d->rv = remote_rv_of(obj);
	if (type == NULL || !cJSON_IsObject(obj))
		bad(d, "an event without type or object, skipped", line, len);
	else if (strcmp(type, "ERROR") == 0) {
		const cJSON *code = json_at(obj, "code");

		d->kind = RD_ERROR;
		d->code = cJSON_IsNumber(code) ? (int)code->valuedouble : 0;
		d->text = xstrdup(json_str(obj, "message") ?
		    json_str(obj, "message") : "");
	} else if (strcmp(type, "BOOKMARK") == 0)
		d->kind = RD_BOOKMARK;
	else if (strcmp(type, "DELETED") == 0 || strcmp(type, "ADDED") == 0 ||
	    strcmp(type, "MODIFIED") == 0) {
		if (!remote_usable(r, obj)) {
			s = cJSON_PrintUnformatted(obj);
			bad(d, "an object without a name or namespace, "
			    "skipped", s != NULL ? s : "", s != NULL ?
			    strlen(s) : 0);
			free(s);
		} else {
			/* A DELETED event's object is the final state: the
			   DELETED event's version, as the embedded store's
			   is. */
			d->kind = *type == 'D' ? RD_DELETE : RD_PUT;
			d->o = store_mirror_version(r->store_key,
			    json_str(obj, "metadata.namespace"),
			    json_str(obj, "metadata.name"), obj, d->rv);
		}
	} else
		bad(d, "an event of no known type, skipped", line, len);
	cJSON_Delete(ev);
}

/* A list's page: its items, each checked as a watch's object is. */
static void
decode_page(struct remote_job *j)
{
	cJSON *t = cJSON_ParseWithLength(j->buf, j->len), *items, *item;
	size_t cap = 0, dcap = 0;
	const char *cont;
	char *s;

	if (t == NULL || !cJSON_IsArray(items = cJSON_GetObjectItem(t,
	    "items"))) {
		XGROW(j->d, dcap, 1);
		memset(&j->d[0], 0, sizeof j->d[0]);
		bad(&j->d[j->nd++], "not a list", j->buf, j->len);
		j->not_list = 1;
		cJSON_Delete(t);
		free(j->buf);
		j->buf = NULL;
		return;
	}
	while ((item = cJSON_DetachItemFromArray(items, 0)) != NULL) {
		/* A list's items carry no kind; the mirror's objects do. */
		if (!remote_usable(j->r, item)) {
			s = cJSON_PrintUnformatted(item);
			XGROW(j->d, dcap, j->nd + 1);
			memset(&j->d[j->nd], 0, sizeof j->d[0]);
			bad(&j->d[j->nd++], "an object without a name or "
			    "namespace, skipped", s != NULL ? s : "",
			    s != NULL ? strlen(s) : 0);
			free(s);
			cJSON_Delete(item);
			continue;
		}
		XGROW(j->items, cap, j->nitems + 1);
		j->items[j->nitems++] = item;
	}
	cont = json_str(t, "metadata.continue");
	if (cont != NULL && *cont != '\0')
		j->cont = xstrdup(cont);
	j->list_rv = remote_rv_of(t);
	cJSON_Delete(t);
	free(j->buf);
	j->buf = NULL;
}

/* Every line of j (empty ones skipped). */
static void
decode_job(struct remote_job *j)
{
	size_t cap = 0, start = 0, i;
	const char *nl;

	while (start < j->len) {
		nl = memchr(j->buf + start, '\n', j->len - start);
		i = nl != NULL ? (size_t)(nl - j->buf) : j->len;
		if (i > start) {
			XGROW(j->d, cap, j->nd + 1);
			decode_line(j->r, j->buf + start, i - start,
			    &j->d[j->nd++]);
		}
		start = i + 1;
	}
	/* The bytes are no longer needed; the loop frees less. */
	free(j->buf);
	j->buf = NULL;
}

/*
 * The thread: takes every job waiting at once, decodes them, hands them
 * all back at once; one wake-up each way per batch, not per job (a
 * watch's event often comes alone in its read).
 */
static void *
run(void *arg)
{
	remote_decoder *dec = arg;
	struct remote_job *batch, *j, **last;
	uint64_t t0, jobs, lines;

	pthread_mutex_lock(&dec->mu);
	for (;;) {
		while (!dec->stop && dec->in.head == NULL) {
			dec->idle = 1;
			pthread_cond_wait(&dec->cond, &dec->mu);
			dec->idle = 0;
		}
		if (dec->stop)
			break;
		batch = dec->in.head;
		fifo_init(&dec->in);
		pthread_mutex_unlock(&dec->mu);
		t0 = now_ns();
		jobs = lines = 0;
		for (j = batch, last = &batch; j != NULL; j = j->next) {
			if (j->page)
				decode_page(j);
			else if (!j->mark)
				decode_job(j);
			jobs++;
			lines += j->page ? 0 : j->nd;
			last = &j->next;
		}
		t0 = now_ns() - t0;
		pthread_mutex_lock(&dec->mu);
		dec->decode_ns += t0;
		dec->jobs += jobs;
		dec->lines += lines;
		*dec->out.tail = batch;
		dec->out.tail = last;
		uv_async_send(&dec->async);
	}
	pthread_mutex_unlock(&dec->mu);
	return NULL;
}

/* On the loop: every job decoded so far, in order. */
static void
on_async(uv_async_t *a)
{
	remote_decoder *dec = a->data;
	struct remote_job *j, *next;
	uint64_t jobs = 0, bytes = 0;

	pthread_mutex_lock(&dec->mu);
	j = dec->out.head;
	fifo_init(&dec->out);
	pthread_mutex_unlock(&dec->mu);
	for (; j != NULL; j = next) {
		next = j->next;
		jobs++;
		bytes += j->len;
		dec->cb(dec->arg, j);
	}
	dec->pending_jobs -= jobs;
	dec->pending_bytes -= bytes;
}

/*
 * After the loop's I/O of a turn: the jobs it staged go to the thread in
 * one hand-over, and the thread is woken only if it waits.
 */
static void
on_check(uv_check_t *c)
{
	remote_decoder *dec = c->data;
	struct remote_job **last = dec->staged.tail;

	uv_check_stop(c);
	if (dec->staged.head == NULL)
		return;
	pthread_mutex_lock(&dec->mu);
	*dec->in.tail = dec->staged.head;
	dec->in.tail = last;
	if (dec->idle)
		pthread_cond_signal(&dec->cond);
	pthread_mutex_unlock(&dec->mu);
	fifo_init(&dec->staged);
}

remote_decoder *
remote_decode_new(uv_loop_t *loop, remote_decode_fn cb, void *arg)
{
	remote_decoder *dec = xcalloc(1, sizeof *dec);

	fifo_init(&dec->in);
	fifo_init(&dec->out);
	fifo_init(&dec->staged);
	dec->cb = cb;
	dec->arg = arg;
	pthread_mutex_init(&dec->mu, NULL);
	pthread_cond_init(&dec->cond, NULL);
	uv_async_init(loop, &dec->async, on_async);
	dec->async.data = dec;
	/* The informers' timers keep the loop alive, not this. */
	uv_unref((uv_handle_t *)&dec->async);
	uv_check_init(loop, &dec->check);
	dec->check.data = dec;
	if (pthread_create(&dec->thread, NULL, run, dec) != 0)
		fatal("remote: cannot start the decoding thread");
	return dec;
}

void
remote_decode_push(remote_decoder *dec, struct remote_job *j)
{
	fifo_put(&dec->staged, j);
	uv_check_start(&dec->check, on_check);
	dec->pending_jobs++;
	dec->pending_bytes += j->len;
	if (dec->pending_bytes > dec->pending_bytes_peak)
		dec->pending_bytes_peak = dec->pending_bytes;
	if (dec->pending_jobs > dec->pending_jobs_peak)
		dec->pending_jobs_peak = dec->pending_jobs;
}

void
remote_job_free(struct remote_job *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->nd; i++) {
		store_obj_unref(j->d[i].o);
		free(j->d[i].text);
	}
	free(j->d);
	for (i = 0; i < j->nitems; i++)
		cJSON_Delete(j->items[i]);
	free(j->items);
	free(j->cont);
	free(j->buf);
	free(j->body);
	free(j->err);
	free(j);
}

static void
free_fifo(struct fifo *q)
{
	struct remote_job *j;

	while ((j = fifo_take(q)) != NULL)
		remote_job_free(j);
}

static void
on_closed(uv_handle_t *h)
{
	remote_decoder *dec = h->data;

	if (--dec->closing == 0)
		free(dec);
}

void
remote_decode_free(remote_decoder *dec)
{
	if (dec == NULL)
		return;
	pthread_mutex_lock(&dec->mu);
	dec->stop = 1;
	pthread_cond_signal(&dec->cond);
	pthread_mutex_unlock(&dec->mu);
	pthread_join(dec->thread, NULL);
	free_fifo(&dec->staged);
	free_fifo(&dec->in);
	free_fifo(&dec->out);
	pthread_mutex_destroy(&dec->mu);
	pthread_cond_destroy(&dec->cond);
	dec->closing = 2;
	uv_close((uv_handle_t *)&dec->async, on_closed);
	uv_close((uv_handle_t *)&dec->check, on_closed);
}

void
remote_decode_print_metrics(FILE *f, const remote_decoder *cdec)
{
	remote_decoder *dec = (remote_decoder *)cdec;
	uint64_t ns, jobs, lines, bpeak, jpeak;

	pthread_mutex_lock(&dec->mu);
	ns = dec->decode_ns;
	jobs = dec->jobs;
	lines = dec->lines;
	pthread_mutex_unlock(&dec->mu);
	bpeak = dec->pending_bytes_peak;
	jpeak = dec->pending_jobs_peak;
	fprintf(f, "# HELP volray_remote_decode_seconds_total Time the "
	    "decoding thread spent parsing watch events into mirror "
	    "versions.\n# TYPE volray_remote_decode_seconds_total counter\n"
	    "volray_remote_decode_seconds_total %.6f\n", (double)ns / 1e9);
	fprintf(f, "# HELP volray_remote_decode_events_total Watch events "
	    "the decoding thread parsed.\n"
	    "# TYPE volray_remote_decode_events_total counter\n"
	    "volray_remote_decode_events_total %llu\n",
	    (unsigned long long)lines);
	fprintf(f, "# HELP volray_remote_decode_batches_total Batches of "
	    "watch bytes (one per read of a stream) through the decoding "
	    "thread.\n# TYPE volray_remote_decode_batches_total counter\n"
	    "volray_remote_decode_batches_total %llu\n",
	    (unsigned long long)jobs);
	fprintf(f, "# HELP volray_remote_decode_queue_peak_bytes The most "
	    "watch bytes waiting for, or in, the decoding thread or its "
	    "answer at once.\n"
	    "# TYPE volray_remote_decode_queue_peak_bytes gauge\n"
	    "volray_remote_decode_queue_peak_bytes %llu\n",
	    (unsigned long long)bpeak);
	fprintf(f, "# HELP volray_remote_decode_queue_peak_batches The most "
	    "batches waiting at once (as above).\n"
	    "# TYPE volray_remote_decode_queue_peak_batches gauge\n"
	    "volray_remote_decode_queue_peak_batches %llu\n",
	    (unsigned long long)jpeak);
}
