/*
 * The remote client's URLs (remote_int.h): a resource's collection and
 * an object's path on a Kubernetes API server, and a query's escaping.
 */
#include <stdlib.h>
#include <string.h>

#include "client/remote_int.h"
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

/*
 * The parts of a path joined by '/' after a leading one (NULL parts
 * left out), in one allocation: a path is made for every write, a bind
 * among thousands a second.
 */
static char *
join(const char *const *part, size_t n)
{
	size_t len = 0, i, l;
	char *out, *p;

	for (i = 0; i < n; i++)
		if (part[i] != NULL)
			len += 1 + strlen(part[i]);
	p = out = xmalloc(len + 1);
	for (i = 0; i < n; i++) {
		if (part[i] == NULL)
			continue;
		*p++ = '/';
		l = strlen(part[i]);
		memcpy(p, part[i], l);
		p += l;
	}
	*p = '\0';
	return out;
}

/* "/api/v1" or "/apis/GROUP/VERSION", then the namespace if any, then
   the plural, then the object's name and its subresource if given. */
static char *
path_of(const resource *r, const char *ns, const char *name,
    const char *sub)
{
	const char *part[8];
	size_t n = 0;

	if (*r->group != '\0') {
		part[n++] = "apis";
		part[n++] = r->group;
	} else
		part[n++] = "api";
	part[n++] = r->version;
	if (r->namespaced && ns != NULL && *ns != '\0') {
		part[n++] = "namespaces";
		part[n++] = ns;
	}
	part[n++] = r->plural;
	part[n++] = name;
	part[n++] = name != NULL ? sub : NULL;
	return join(part, n);
}

char *
remote_collection_path(const resource *r, const char *ns)
{
	return path_of(r, ns, NULL, NULL);
}

char *
remote_object_path(const resource *r, const char *ns, const char *name,
    const char *sub)
{
	return path_of(r, ns, name, sub);
}
