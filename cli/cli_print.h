/*
 * Output of the client, volray(1), in kubectl's formats: meta.k8s.io Tables
 * and plain columns, and objects as json, yaml, name or jsonpath=TEMPLATE.
 */
#ifndef VOLRAY_CLI_PRINT_H
#define VOLRAY_CLI_PRINT_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Rows of text laid out in columns, row 0 being the header; set ncol,
 * then add rows. */
struct cli_print_cols {
	int	 ncol;
	size_t	 nrow;
	char	**cell;
	size_t	*w;	/* column widths, kept between flushes with keep */
	int	 keep;
};

/* How to print a Table. */
struct cli_print_topts {
	int		 with_ns;	/* a NAMESPACE column first (-A) */
	int		 wide;		/* columns of non-zero priority too */
	int		 show_labels;	/* a LABELS column last */
	const char	*prefix;	/* names as PREFIX/NAME (several kinds) */
};

/* Add a row of ncol malloc'd cells, which the table takes over. */
void cli_print_cols_add(struct cli_print_cols *, char **row);
/* Print the rows as kubectl does (left-aligned, three spaces apart) and
 * free them. */
void cli_print_cols_flush(struct cli_print_cols *);

/* Add a meta.k8s.io Table's rows, after its header if header is set;
 * sets t->ncol. */
void cli_print_table_add(struct cli_print_cols *t, const cJSON *table,
    const struct cli_print_topts *, int header);
/* Print a meta.k8s.io Table. */
void cli_print_table(const cJSON *table, const struct cli_print_topts *);
/* -o custom-columns=SPEC over an object or a list; -1 (reported) on a
 * malformed SPEC. */
int cli_print_custom(const cJSON *doc, const char *spec);
/* Labels or annotations as kubectl shows them, k=v joined by sep and
 * sorted by key, or <none> (free it). */
char *cli_print_labels(const cJSON *labels, const char *sep);
/* A Table of names alone made from an object or a list, which it frees:
 * for a server that does not make Tables. */
cJSON *cli_print_name_table(cJSON *doc);

/* Is output an -o format known here (NULL: the default table)? */
int cli_print_known(const char *output);
/*
 * Print an object or a list on stdout in the -o format output (json, yaml,
 * name or jsonpath=TEMPLATE); -o name calls each object type/NAME. json and
 * yaml sort members and drop metadata.managedFields unless managed is set.
 * Returns 0, or -1 after a template error.
 */
int cli_print_objects(cJSON *doc, const char *output, const char *type,
    int managed);

#endif
