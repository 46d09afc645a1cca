/*
 * The fair queue (fairq.h): lines in a hash map by name, the lines with
 * items in a singly linked ring of turns. A pop takes the first item of
 * the line whose turn it is and puts that line last in the turns, or out
 * of them when it has nothing left; a line with items is always in the
 * turns exactly once.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/fairq.h"
#include "lib/hmap.h"
#include "lib/xmalloc.h"

struct fairq {
	hmap *lines;
	struct fairq_line *turn, *last;
	size_t len;
};

fairq *
fairq_new(void)
{
	fairq *q = xcalloc(1, sizeof *q);

	q->lines = hmap_new();
	return q;
}

static int
free_line(const char *name, void *value, void *arg)
{
	struct fairq_line *l = value;
	void (*free_data)(void *) = *(void (**)(void *))arg;

	(void)name;
	if (free_data != NULL)
		free_data(l->data);
	free(l);
	return 0;
}

void
fairq_free(fairq *q, void (*free_data)(void *))
{
	if (q == NULL)
		return;
	hmap_each(q->lines, free_line, &free_data);
	hmap_free(q->lines);
	free(q);
}

struct fairq_line *
fairq_line(fairq *q, const char *name)
{
	struct fairq_line *l = hmap_get(q->lines, name);
	size_t n;

	if (l != NULL)
		return l;
	n = strlen(name);
	l = xcalloc(1, sizeof *l + n + 1);
	memcpy(l->name, name, n + 1);
	hmap_put(q->lines, l->name, l);
	return l;
}

/* Put l last in the turns. */
static void
take_turn(fairq *q, struct fairq_line *l)
{
	l->next_turn = NULL;
	l->in_turns = 1;
	if (q->last != NULL)
		q->last->next_turn = l;
	else
		q->turn = l;
	q->last = l;
}

void
fairq_push(fairq *q, struct fairq_line *l, struct fairq_link *k)
{
	k->line = l;
	k->next = NULL;
	k->prev = l->tail;
	if (l->tail != NULL)
		l->tail->next = k;
	else
		l->head = k;
	l->tail = k;
	l->len++;
	q->len++;
	if (!l->in_turns)
		take_turn(q, l);
}

static void
unlink_item(fairq *q, struct fairq_link *k)
{
	struct fairq_line *l = k->line;

	if (k->prev != NULL)
		k->prev->next = k->next;
	else
		l->head = k->next;
	if (k->next != NULL)
		k->next->prev = k->prev;
	else
		l->tail = k->prev;
	k->prev = k->next = NULL;
	k->line = NULL;
	l->len--;
	q->len--;
}

struct fairq_link *
fairq_pop(fairq *q)
{
	struct fairq_line *l;
	struct fairq_link *k = NULL;

	/* Lines emptied by fairq_remove are still in the turns: they
	   leave them here. */
	while (k == NULL && (l = q->turn) != NULL) {
		q->turn = l->next_turn;
		if (q->turn == NULL)
			q->last = NULL;
		l->in_turns = 0;
		if ((k = l->head) == NULL)
			continue;
		unlink_item(q, k);
		l->served++;
		if (l->head != NULL)
			take_turn(q, l);
	}
	return k;
}

void
fairq_remove(fairq *q, struct fairq_link *k)
{
	if (k->line != NULL)
		unlink_item(q, k);
}

size_t
fairq_len(const fairq *q)
{
	return q->len;
}

struct each_line {
	void (*fn)(const struct fairq_line *, void *);
	void *arg;
};

static int
call_line(const char *name, void *value, void *arg)
{
	struct each_line *e = arg;

	(void)name;
	e->fn(value, e->arg);
	return 0;
}

void
fairq_each_line(const fairq *q, void (*fn)(const struct fairq_line *,
    void *), void *arg)
{
	struct each_line e = { fn, arg };

	hmap_each(q->lines, call_line, &e);
}
