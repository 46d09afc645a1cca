/*
 * A main() for the fuzz targets without libFuzzer, so the normal build can
 * run them as unit tests: every file named on the command line (a folder
 * stands for the files in it) goes once through LLVMFuzzerTestOneInput.
 * Without arguments it replays tests/fuzz/regress/NAME (when there is one)
 * and tests/fuzz/corpus/NAME under $top_srcdir, NAME being the target this
 * program was built for. A crash or a failed property aborts the program,
 * which fails the test; so do a missing corpus folder, a path named on the
 * command line that is not there, and no input at all (a replay of nothing
 * would pass whatever the parser does).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_NAME
#error "FUZZ_NAME names the target"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int LLVMFuzzerInitialize(int *, char ***) __attribute__((weak));

static int nrun;

static void
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			if ((buf = realloc(buf, cap)) == NULL)
				exit(1);
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	nrun++;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every regular file in a folder (in name order). */
static void
run_path(const char *path, int must_exist)
{
	struct stat st;
	struct dirent *de;
	char **names = NULL, full[4096];
	size_t n = 0, i;
	DIR *d;

	if (stat(path, &st) != 0) {
		if (must_exist) {
			perror(path);
			exit(1);
		}
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	if ((d = opendir(path)) == NULL) {
		perror(path);
		exit(1);
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(full, sizeof full, "%s/%s", path, names[i]);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
			run_file(full);
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	int i;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			run_path(argv[i], 1);
	} else {
		if (top == NULL)
			top = ".";
		snprintf(path, sizeof path, "%s/tests/fuzz/regress/%s", top,
		    FUZZ_NAME);
		run_path(path, 0);
		snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s", top,
		    FUZZ_NAME);
		run_path(path, 1);
	}
	if (nrun == 0) {
		fprintf(stderr, "replay-%s: no input to replay\n", FUZZ_NAME);
		return 1;
	}
	fprintf(stderr, "replay-%s: %d inputs, no crash\n", FUZZ_NAME, nrun);
	return 0;
}
