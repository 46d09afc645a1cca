/*
 * xgrow, the growable-array helper: capacity doubles from 16 to the first
 * power of two that holds what is asked, never shrinks, and the elements
 * already there survive each growth. cJSON allocates through xmalloc (the
 * hooks are in place before main): an allocation it cannot have ends the
 * process with xmalloc's message instead of returning NULL.
 */
#include <sys/wait.h>

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "lib/xmalloc.h"

static char *
printf_new(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

/*
 * In a child: ask cJSON for more memory than there is. Returns what the
 * child wrote on stderr (xmalloc's fatal message) and sets *sig to the
 * signal that ended it (fatal aborts), 0 when cJSON returned instead.
 */
static char *
cjson_oom(int *sig)
{
	static char out[512];
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe(fds) != 0 || (pid = fork()) < 0)
		return NULL;
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		_exit(cJSON_malloc(SIZE_MAX / 2) == NULL ? 0 : 3);
	}
	close(fds[1]);
	n = read(fds[0], out, sizeof out - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &st, 0);
	*sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return out;
}

int
main(void)
{
	size_t cap = 0, i, n;
	int *v = NULL;
	char *s;

	XGROW(v, cap, 1);
	CHECK(v != NULL && cap == 16);
	XGROW(v, cap, 16);
	CHECK(cap == 16);
	for (n = 0; n < 1000; n++) {
		XGROW(v, cap, n + 1);
		v[n] = (int)n * 3;
	}
	CHECK(cap == 1024);
	for (i = 0; i < n; i++)
		if (v[i] != (int)i * 3)
			break;
	CHECK(i == n);
	XGROW(v, cap, 10);
	CHECK(cap == 1024);
	XGROW(v, cap, 1025);
	CHECK(cap == 2048);
	free(v);
	s = xstrndup("volray", 3);
	CHECK_STR(s, "vol");
	free(s);
	s = xstrdup("");
	CHECK_STR(s, "");
	free(s);
	v = xcalloc(4, sizeof *v);
	CHECK(v[0] == 0 && v[3] == 0);
	free(v);
	s = printf_new("%s-%d", "pod", 7);
	CHECK_STR(s, "pod-7");
	free(s);
#if !defined(__SANITIZE_ADDRESS__)	/* ASan answers a huge malloc itself */
	{
		int sig;

		s = cjson_oom(&sig);
		CHECK(s != NULL && sig == SIGABRT);
		CHECK(s != NULL &&
		    strstr(s, "out of memory (malloc of") != NULL);
	}
#endif
	return check_result("test-xmalloc");
}
