/*
 * A process's start time from /proc/PID/stat (proc.h). The command name
 * in field 2 may hold spaces and parentheses: the fields are counted from
 * the last ')'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proc.h"

unsigned long long
proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) != NULL && (p = strrchr(buf, ')')) !=
	    NULL) {
		for (i = 0; i < 20 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p != NULL)
			t = strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return t;
}
