/*
 * A fair queue: one FIFO line per name (a namespace), the lines that hold
 * items served in turns (round robin), so that thousands of items in one
 * line hold up another line's item for at most one item of each busy
 * line. With one line it is a plain FIFO.
 *
 * Intrusive: the caller embeds a struct fairq_link in its item and gets
 * the item back with FAIRQ_ITEM. Lines live as long as the queue (their
 * counters with them); an empty line leaves the turns until its next
 * item. One thread; no locks.
 */
#ifndef VOLRAY_FAIRQ_H
#define VOLRAY_FAIRQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct fairq fairq;
struct fairq_line;

struct fairq_link {
	struct fairq_link *prev, *next;
	struct fairq_line *line;	/* NULL when not queued */
};

struct fairq_line {
	size_t len;			/* items waiting */
	uint64_t served;		/* items popped, ever */
	void *data;			/* the caller's */
	/* The queue's own. */
	struct fairq_link *head, *tail;
	struct fairq_line *next_turn;
	int in_turns;
	char name[];
};

#define FAIRQ_ITEM(link, type, member) \
	((type *)(void *)((char *)(link) - offsetof(type, member)))

fairq *fairq_new(void);
/* Free the lines (and their data with free_data, unless NULL); the items
   are the caller's. */
void fairq_free(fairq *, void (*free_data)(void *));
/* The line of name, made if new. */
struct fairq_line *fairq_line(fairq *, const char *name);
/* Queue link last in line. */
void fairq_push(fairq *, struct fairq_line *, struct fairq_link *);
/* The next item in turn (the first of the line whose turn it is), taken
   off the queue; NULL when none waits. */
struct fairq_link *fairq_pop(fairq *);
/* Take a queued link off wherever it waits. */
void fairq_remove(fairq *, struct fairq_link *);
/* Items waiting in all lines. */
size_t fairq_len(const fairq *);
/* Call fn for every line, in no order. */
void fairq_each_line(const fairq *, void (*fn)(const struct fairq_line *,
    void *arg), void *arg);

#endif
