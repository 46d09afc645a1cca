/*
 * Colour in volray(1)'s output (cli_color.c): only on a terminal, never
 * with NO_COLOR set (no-color.org) or --no-color, nor for TERM=dumb.
 */
#ifndef VOLRAY_CLI_COLOR_H
#define VOLRAY_CLI_COLOR_H

#include <stdio.h>

/* Set by --no-color (the option table points at it): no colour at all. */
extern int cli_color_disabled;
/* Does f (stdout or stderr) get colour? */
int cli_color_on(FILE *f);
/* The SGR sequence a status cell (Running, Failed, Pending, ...) is shown
 * in, or NULL for none. */
const char *cli_color_status(const char *word);
/* The SGR sequence that ends a coloured run. */
#define CLI_COLOR_RESET "\033[0m"
/* Write "error: " to stderr, in red when stderr gets colour. */
void cli_color_error(void);
/* An error line: "error: " (as cli_color_error) and the message. */
void cli_color_errorf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Write prefix (such as "Error from server") to f, red when f gets
 * colour. */
void cli_color_prefix(FILE *f, const char *prefix);

#endif
