/*
 * Where the shared files are (crds/, lua/, policies/): the source tree
 * when the running binary is in the build tree it was built in, else
 * beside the binary, else the installed PKGDATADIR. volrayd and
 * `volray policy test|check` look the same way.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sharedir.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/volray"
#endif

int
share_dir_has_crds(const char *dir)
{
	char path[PATH_MAX];
	struct stat sb;

	return snprintf(path, sizeof path, "%s/crds", dir) < (int)sizeof path &&
	    stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * Where crds/, lua/ and policies/ are when --share-dir is not given: the
 * source tree when this binary runs from the build tree it was built in
 * (in-tree or out-of-tree), else beside the binary, else the installed
 * PKGDATADIR. NULL with *cause naming every place looked in.
 */
char *
share_dir_find(char **cause)
{
	const char *look[3];
	char exe[PATH_MAX], *slash, *places;
	ssize_t n;
	int nlook = 0, i;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
#if defined(VOLRAY_SRCDIR) && defined(VOLRAY_BUILDDIR)
		{
			char built[PATH_MAX];

			if (realpath(VOLRAY_BUILDDIR, built) != NULL &&
			    strcmp(built, exe) == 0)
				look[nlook++] = VOLRAY_SRCDIR;
		}
#endif
		look[nlook++] = exe;
	}
	look[nlook++] = PKGDATADIR;
	for (i = 0; i < nlook; i++) {
		char real[PATH_MAX];

		if (share_dir_has_crds(look[i]))
			return xstrdup(realpath(look[i], real) ? real : look[i]);
	}
	places = xstrdup("");
	for (i = 0; i < nlook; i++) {
		char *p = util_printf("%s%s%s/crds", places, i ? ", " : "",
		    look[i]);

		free(places);
		places = p;
	}
	*cause = util_printf("no CRD directory found (looked in %s); give "
	    "--share-dir DIR", places);
	free(places);
	return NULL;
}
