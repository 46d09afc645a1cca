/*
 * Tests for ctrlsel.c, volrayd --controllers: kube-controller-manager's
 * rules (the first item naming a controller decides, `*` for the rest),
 * the syntax errors and the unknown-name check with the known names.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctrl/ctrlsel.h"

static int
on(const char *list, const char *name)
{
	char *cause = NULL;
	ctrlsel *sel = ctrlsel_parse(list, &cause);
	int r;

	if (sel == NULL) {
		fprintf(stderr, "%s: %s\n", list, cause);
		free(cause);
		return -1;
	}
	r = ctrlsel_enabled(sel, name);
	ctrlsel_free(sel);
	return r;
}

/* ctrlsel_parse's error for list, or "" when it parses. */
static char errbuf[256];
static const char *
err(const char *list)
{
	char *cause = NULL;
	ctrlsel *sel = ctrlsel_parse(list, &cause);

	if (sel != NULL) {
		ctrlsel_free(sel);
		return "";
	}
	snprintf(errbuf, sizeof errbuf, "%s", cause);
	free(cause);
	return errbuf;
}

int
main(void)
{
	char *known[] = { "deployment", "raycluster", "rayjob" };
	char *cause = NULL;
	ctrlsel *sel;

	CHECK(ctrlsel_enabled(NULL, "rayjob") == 1);
	CHECK(on("*", "rayjob") == 1);
	CHECK(on("*,-rayjob", "rayjob") == 0);
	CHECK(on("*,-rayjob", "raycluster") == 1);
	CHECK(on("-rayjob,*", "rayjob") == 0);
	/* Without *, only what is named runs. */
	CHECK(on("rayjob", "rayjob") == 1);
	CHECK(on("rayjob", "deployment") == 0);
	CHECK(on("-rayjob", "deployment") == 0);
	/* The first item naming a controller decides. */
	CHECK(on("rayjob,-rayjob", "rayjob") == 1);
	CHECK(on("-rayjob,rayjob,*", "rayjob") == 0);

	CHECK_STR(err("*,-raycluster,-rayjob"), "");
	CHECK_STR(err(""), "an empty item: want a comma-separated list of *, "
	    "NAME and -NAME");
	CHECK(strstr(err("a,,b"), "an empty item") != NULL);
	CHECK(strstr(err("*,"), "an empty item") != NULL);
	CHECK(strstr(err("-"), "-: want") != NULL);
	CHECK(strstr(err("-*"), "-*: want") != NULL);
	CHECK(strstr(err("ray job"), "ray job: want") != NULL);

	sel = ctrlsel_parse("*,-rayjob,deployment", &cause);
	CHECK(sel != NULL);
	CHECK(ctrlsel_check(sel, known, 3, &cause) == 0 && cause == NULL);
	ctrlsel_free(sel);
	sel = ctrlsel_parse("*,-nosuch", &cause);
	CHECK(ctrlsel_check(sel, known, 3, &cause) == -1);
	CHECK_STR(cause, "--controllers: nosuch is not a controller (known: "
	    "deployment, raycluster, rayjob)");
	free(cause);
	CHECK(ctrlsel_check(sel, known, 0, &cause) == -1);
	CHECK_STR(cause, "--controllers: nosuch is not a controller (known: "
	    "none)");
	free(cause);
	ctrlsel_free(sel);
	CHECK(ctrlsel_check(NULL, known, 3, &cause) == 0);
	return check_result("test-ctrlsel");
}
