/*
 * The --controllers list (ctrlsel.h): its items kept in order, so that
 * the first one naming a controller decides, as kube-controller-manager's
 * IsControllerEnabled does.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl/ctrlsel.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

struct ctrlsel {
	char **items;		/* "*", "NAME" or "-NAME" */
	int nitems;
	int star;
};

static int
ctrlsel_name_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

ctrlsel *
ctrlsel_parse(const char *list, char **cause)
{
	ctrlsel *sel = xcalloc(1, sizeof *sel);
	const char *p = list, *e;

	*cause = NULL;
	for (;;) {
		char *item;

		e = strchr(p, ',');
		item = e != NULL ? xstrndup(p, e - p) : xstrdup(p);
		if (strcmp(item, "*") == 0)
			sel->star = 1;
		else if (!ctrlsel_name_ok(item[0] == '-' ? item + 1 : item)) {
			*cause = util_printf("%s: want a comma-separated list "
			    "of *, NAME and -NAME", *item == '\0' ?
			    "an empty item" : item);
			free(item);
			ctrlsel_free(sel);
			return NULL;
		}
		sel->items = xrealloc(sel->items, (sel->nitems + 1) *
		    sizeof *sel->items);
		sel->items[sel->nitems++] = item;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return sel;
}

void
ctrlsel_free(ctrlsel *sel)
{
	int i;

	if (sel == NULL)
		return;
	for (i = 0; i < sel->nitems; i++)
		free(sel->items[i]);
	free(sel->items);
	free(sel);
}

int
ctrlsel_enabled(const ctrlsel *sel, const char *name)
{
	int i;

	if (sel == NULL)
		return 1;
	for (i = 0; i < sel->nitems; i++) {
		const char *it = sel->items[i];

		if (strcmp(it, name) == 0)
			return 1;
		if (it[0] == '-' && strcmp(it + 1, name) == 0)
			return 0;
	}
	return sel->star;
}

int
ctrlsel_check(const ctrlsel *sel, char *const *known, int nknown,
    char **cause)
{
	int i, j;

	*cause = NULL;
	if (sel == NULL)
		return 0;
	for (i = 0; i < sel->nitems; i++) {
		const char *it = sel->items[i];
		char *list = NULL, *next;

		if (strcmp(it, "*") == 0)
			continue;
		if (it[0] == '-')
			it++;
		for (j = 0; j < nknown; j++)
			if (strcmp(known[j], it) == 0)
				break;
		if (j < nknown)
			continue;
		for (j = 0; j < nknown; j++) {
			next = util_printf("%s%s%s", list != NULL ? list : "",
			    list != NULL ? ", " : "", known[j]);
			free(list);
			list = next;
		}
		*cause = util_printf("--controllers: %s is not a controller "
		    "(known: %s)", it, list != NULL ? list : "none");
		free(list);
		return -1;
	}
	return 0;
}
