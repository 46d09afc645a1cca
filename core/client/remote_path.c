/*
 * The remote client's URLs (remote_int.h): a resource's collection and
 * an object's path on a Kubernetes API server, and a query's escaping.
 */
#include <stdlib.h>
#include <string.h>

#include "client/remote_int.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* s percent-encoded for a URL's query: RFC 3986's unreserved bytes kept
   (a continue token may hold '+', '/' and '=', which a server decodes). */
char *
remote_query_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(strlen(s) * 3 + 1), *o = out;
	unsigned char ch;

	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '~')
			*o++ = (char)ch;
		else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	*o = '\0';
	return out;
}

/* "/api/v1" or "/apis/GROUP/VERSION", then the namespace if any. */
char *
remote_collection_path(const resource *r, const char *ns)
{
	char *base = *r->group != '\0' ?
	    util_printf("/apis/%s/%s", r->group, r->version) :
	    util_printf("/api/%s", r->version), *p;

	if (r->namespaced && ns != NULL && *ns != '\0')
		p = util_printf("%s/namespaces/%s/%s", base, ns, r->plural);
	else
		p = util_printf("%s/%s", base, r->plural);
	free(base);
	return p;
}

char *
remote_object_path(const resource *r, const char *ns, const char *name,
    const char *sub)
{
	char *c = remote_collection_path(r, ns), *p;

	p = sub != NULL ? util_printf("%s/%s/%s", c, name, sub) :
	    util_printf("%s/%s", c, name);
	free(c);
	return p;
}
