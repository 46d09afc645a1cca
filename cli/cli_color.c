/*
 * Colour for volray(1). A stream gets colour when it is a terminal, TERM
 * is not "dumb", NO_COLOR is unset or empty and --no-color was not given;
 * the answer is worked out once per stream. What is coloured: the cells
 * of status columns (STATUS, PHASE, STATE) by the word in them, green
 * for what is well, yellow for what is on its way, red for what failed;
 * and the prefix of error lines. Widths are measured without the escape
 * sequences, so columns line up either way.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_color.h"

#define GREEN	"\033[32m"
#define YELLOW	"\033[33m"
#define RED	"\033[31m"

int cli_color_disabled;

static const char *const good[] = {
	"Running", "Completed", "Succeeded", "Complete", "Ready", "Active",
	"Open", "Bound", "True", "RUNNING", "SUCCEEDED", "Healthy", NULL
};
static const char *const waiting[] = {
	"Pending", "ContainerCreating", "PodInitializing", "Terminating",
	"Initializing", "Inqueue", "Closing", "Waiting", "Suspended",
	"PENDING", "Restarting", "Unknown", NULL
};
static const char *const bad[] = {
	"Failed", "Error", "CrashLoopBackOff", "ImagePullBackOff",
	"ErrImagePull", "OOMKilled", "NotReady", "Evicted", "FAILED",
	"Closed", "False", "DeadlineExceeded", "STOPPED", "Unschedulable",
	NULL
};

int
cli_color_on(FILE *f)
{
	static int known[2], on[2];
	const char *e = getenv("NO_COLOR"), *term = getenv("TERM");
	int i = f == stderr;

	if (!known[i]) {
		known[i] = 1;
		on[i] = !cli_color_disabled && (e == NULL || *e == '\0') &&
		    (term == NULL || strcmp(term, "dumb") != 0) &&
		    isatty(fileno(f));
	}
	return on[i];
}

static int
listed(const char *const *list, const char *w)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, w) == 0)
			return 1;
	return 0;
}

const char *
cli_color_status(const char *w)
{
	if (listed(good, w))
		return GREEN;
	if (listed(waiting, w))
		return YELLOW;
	if (listed(bad, w) || strncmp(w, "Init:Err", 8) == 0 ||
	    strncmp(w, "Init:Crash", 10) == 0)
		return RED;
	return NULL;
}

void
cli_color_prefix(FILE *f, const char *prefix)
{
	if (cli_color_on(f))
		fprintf(f, RED "%s" CLI_COLOR_RESET, prefix);
	else
		fputs(prefix, f);
}

void
cli_color_error(void)
{
	cli_color_prefix(stderr, "error");
	fputs(": ", stderr);
}

void
cli_color_errorf(const char *fmt, ...)
{
	va_list ap;

	cli_color_error();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
