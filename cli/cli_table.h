/*
 * Tables of volray(1): rows of cells in kubectl's layout, from the
 * server's meta.k8s.io Tables, -o custom-columns, or names alone.
 */
#ifndef VOLRAY_CLI_TABLE_H
#define VOLRAY_CLI_TABLE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Rows of text laid out in columns, row 0 being the header; set ncol,
 * then add rows. */
struct cli_table {
	int	 ncol;
	size_t	 nrow;
	char	**cell;
	size_t	*w;	/* column widths, kept between flushes with keep */
	int	 keep;
	int	 headed;	/* the header was flushed (status columns found) */
	unsigned long long status_cols;	/* columns coloured by status */
};

/* How to print a Table. */
struct cli_table_opts {
	int		 with_ns;	/* a NAMESPACE column first (-A) */
	int		 wide;		/* columns of non-zero priority too */
	int		 show_labels;	/* a LABELS column last */
	const char	*prefix;	/* names as PREFIX/NAME (several kinds) */
};

/* Add a row of ncol malloc'd cells, which the table takes over. */
void cli_table_add(struct cli_table *, char **row);
/* Print the rows as kubectl does (left-aligned, three spaces apart) and
 * free them. */
void cli_table_flush(struct cli_table *);

/* Add a meta.k8s.io Table's rows, after its header if header is set;
 * sets t->ncol. */
void cli_table_add_kube(struct cli_table *t, const cJSON *table,
    const struct cli_table_opts *, int header);
/* Print a meta.k8s.io Table. */
void cli_table_print(const cJSON *table, const struct cli_table_opts *);
/* -o custom-columns=SPEC over an object or a list; -1 (reported) on a
 * malformed SPEC. */
int cli_table_custom(const cJSON *doc, const char *spec);
/* Labels or annotations as kubectl shows them, k=v joined by sep and
 * sorted by key, or <none> (free it). */
char *cli_table_labels(const cJSON *labels, const char *sep);
/* A Table of names alone made from an object or a list, which it frees:
 * for a server that does not make Tables. */
cJSON *cli_table_of_names(cJSON *doc);

#endif
