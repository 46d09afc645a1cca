/*
 * Kubernetes protobuf request bodies, decoded into JSON.
 *
 * kubectl's typed clients ("kubectl create namespace", configmap, secret,
 * serviceaccount, deployment, job, cronjob, service, priorityclass, quota,
 * role, rolebinding, pdb, ingress, token, and "kubectl auth can-i"),
 * schedulers' client-go (a pod's Binding and status, Events) and client-go's
 * typed clients (controller-runtime's for built-in kinds: KubeRay's operator: a
 * DELETE's DeleteOptions) send objects in the Kubernetes protobuf encoding: the
 * magic "k8s\0", then a runtime.Unknown message whose typeMeta names the
 * apiVersion and kind and whose raw field holds the object encoded as the
 * k8s.io/api generated.proto message for that kind. The rest of volray speaks
 * JSON, so this file turns such a body into the object the same command sends
 * when asked for JSON, and nothing past the HTTP layer ever sees protobuf.
 *
 * The decoder is a plain wire-format reader driven by the static descriptor
 * tables of registry/kinds/protobuf_msgs.c, a kind's message named by its
 * descriptor: a message is a list of fields (number, JSON name, value
 * kind, flags). Some kinds are not proto scalars: metav1.Time,
 * resource.Quantity and intstr.IntOrString are small messages that JSON
 * shows as a string or a number; a map<string, V> is a repeated key/value
 * entry message; a Go struct embedded with `json:",inline"` (Volume's
 * VolumeSource) is a nested message whose fields JSON puts in the parent.
 *
 * k8s.io/api is proto2, so non-pointer scalars are encoded even when zero (an
 * empty generateName, paused false). JSON drops those through omitempty, so a
 * zero scalar is left out unless its field is marked PB_KEEP: pointer fields
 * (replicas, backoffLimit, immutable), whose presence on the wire means they
 * were set, and the few without omitempty (PriorityClass value, Service port).
 * A nested message is kept even when empty, as encoding/json keeps struct
 * fields ("resources": {}); a zero metav1.Time is an empty message and means
 * null, so it is left out. Fields missing from the tables are skipped, as any
 * protobuf reader does.
 *
 * The input comes from the network: every length is checked against what is
 * left of its enclosing message, varints are at most ten bytes, nesting is
 * bounded, and the first error ends the decode with a cause.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/protobuf.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/resource.h"
#include "lib/xmalloc.h"

#define MAX_DEPTH	32
#define MAX_FIELD	536870911	/* 2^29 - 1 */

enum wire {
	WT_VARINT = 0,
	WT_FIXED64 = 1,
	WT_BYTES = 2,
	WT_FIXED32 = 5
};

struct reader {
	const uint8_t	*p;
	const uint8_t	*end;
};

static int	decode_message(const struct pb_msg *, const uint8_t *, size_t,
		    cJSON *, int, char **);

/* Record the first error of a decode; later ones are consequences of it. */
static int
fail(char **cause, const char *fmt, ...)
{
	va_list	ap;
	char	buf[256];

	if (*cause == NULL) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		*cause = xstrdup(buf);
	}
	return -1;
}

/* Read a base-128 varint of at most ten bytes. */
static int
get_varint(struct reader *r, uint64_t *v)
{
	uint64_t	x = 0;
	unsigned	shift;
	uint8_t		b;

	for (shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -1;
		b = *r->p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Read a length-delimited payload, checking it fits in what is left. */
static int
get_bytes(struct reader *r, const uint8_t **p, size_t *n)
{
	uint64_t	len;

	if (get_varint(r, &len) != 0 || len > (uint64_t)(r->end - r->p))
		return -1;
	*p = r->p;
	*n = (size_t)len;
	r->p += len;
	return 0;
}

/* Step over a field we have no use for. Groups are not used by Kubernetes. */
static int
skip_field(struct reader *r, int wt)
{
	const uint8_t	*p;
	uint64_t	 v;
	size_t		 n;

	switch (wt) {
	case WT_VARINT:
		return get_varint(r, &v);
	case WT_BYTES:
		return get_bytes(r, &p, &n);
	case WT_FIXED64:
	case WT_FIXED32:
		n = wt == WT_FIXED64 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n)
			return -1;
		r->p += n;
		return 0;
	}
	return -1;
}

/* Read a field key into its number and wire type. */
static int
get_key(struct reader *r, uint32_t *num, int *wt, const char *where,
    char **cause)
{
	uint64_t	key;

	if (get_varint(r, &key) != 0)
		return fail(cause, "malformed protobuf: truncated field key in "
		    "%s", where);
	if ((key >> 3) == 0 || (key >> 3) > MAX_FIELD)
		return fail(cause, "malformed protobuf: invalid field number in "
		    "%s", where);
	*num = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	return 0;
}

/*
 * The length of the well-formed UTF-8 sequence at p, or 0 if it is not one
 * (the same rules as Go's unicode/utf8: no overlongs, no surrogates).
 */
static size_t
rune_len(const uint8_t *p, size_t n)
{
	uint8_t	lo = 0x80, hi = 0xbf;
	size_t	need, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < need || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < need; i++) {
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	}
	return need;
}

/*
 * Make a JSON string from a proto string. Go keeps invalid UTF-8 and its JSON
 * encoder shows each bad byte as U+FFFD, so do the same; a NUL cannot live in
 * a C string and is refused.
 */
static cJSON *
make_string(const uint8_t *p, size_t n, const char *where, char **cause)
{
	cJSON	*item;
	char	*s;
	size_t	 i, k, o = 0;

	if (memchr(p, '\0', n) != NULL) {
		fail(cause, "protobuf string in %s contains a NUL byte", where);
		return NULL;
	}
	s = xreallocarray(NULL, n + 1, 3);	/* a U+FFFD per byte at most */
	for (i = 0; i < n; i += k) {
		if ((k = rune_len(p + i, n - i)) == 0) {
			memcpy(s + o, "\xef\xbf\xbd", 3);
			o += 3;
			k = 1;
		} else {
			memcpy(s + o, p + i, k);
			o += k;
		}
	}
	s[o] = '\0';
	item = cJSON_CreateString(s);
	free(s);
	return item;
}

/* Make the base64 string (standard alphabet, padded) that JSON uses for bytes. */
static cJSON *
make_base64(const uint8_t *p, size_t n, char **cause)
{
	static const char	 abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "abcdefghijklmnopqrstuvwxyz0123456789+/";
	cJSON			*item;
	char			*s;
	size_t			 i, o = 0;
	uint32_t		 v;

	s = xreallocarray(NULL, n / 3 + 2, 4);	/* 4 for 3, padding, NUL */
	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		s[o++] = abc[v >> 18];
		s[o++] = abc[(v >> 12) & 63];
		s[o++] = abc[(v >> 6) & 63];
		s[o++] = abc[v & 63];
	}
	if (i < n) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		s[o++] = abc[v >> 18];
		s[o++] = abc[(v >> 12) & 63];
		s[o++] = i + 1 < n ? abc[(v >> 6) & 63] : '=';
		s[o++] = '=';
	}
	s[o] = '\0';
	item = cJSON_CreateString(s);
	free(s);
	return item;
}

/*
 * Format seconds since the epoch as metav1.Time does in JSON (RFC 3339, UTC,
 * whole seconds), using the days-to-civil algorithm so that years before
 * 1970 work without a 64-bit time_t. Years outside 1..9999 are refused, as
 * Go's time.MarshalJSON refuses them.
 */
static int
format_time(int64_t secs, char *buf, size_t len)
{
	int64_t	days, rem, z, era, doe, yoe, y, doy, mp, d, m;

	if (secs < -62135596800LL || secs > 253402300799LL)
		return -1;
	days = secs / 86400;
	rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	if (m <= 2)
		y++;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, (int)m,
	    (int)d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
	return 0;
}

/*
 * Decode a metav1.Time message {1 seconds, 2 nanos}. An empty message is the
 * zero time, which JSON shows as null: *out stays NULL and the field is left
 * out. Go normalises nanos outside [0, 1e9) into the seconds, so do we. A
 * metav1.MicroTime (micro) is the same message, shown with six digits of
 * its fraction (an Event's eventTime).
 */
static int
decode_time(const uint8_t *p, size_t n, int micro, cJSON **out, char **cause)
{
	struct reader	 r = { p, p + n };
	uint64_t	 v;
	uint32_t	 num;
	int64_t		 secs = 0, nanos = 0;
	int		 wt;
	char		 buf[48];

	*out = NULL;
	if (n == 0)
		return 0;
	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, "Time", cause) != 0)
			return -1;
		if ((num == 1 || num == 2) && wt == WT_VARINT) {
			if (get_varint(&r, &v) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated Time");
			if (num == 1)
				secs = (int64_t)v;
			else
				nanos = (int32_t)(uint32_t)v;
		} else if (skip_field(&r, wt) != 0)
			return fail(cause, "malformed protobuf: truncated Time");
	}
	if (secs > INT64_MAX / 2 || secs < INT64_MIN / 2)
		return fail(cause, "protobuf Time out of range");
	secs += nanos / 1000000000;
	nanos %= 1000000000;
	if (nanos < 0) {
		secs--;
		nanos += 1000000000;
	}
	if (secs == -62135596800LL && nanos == 0)
		return 0;
	if (format_time(secs, buf, sizeof buf) != 0)
		return fail(cause, "protobuf Time out of range");
	if (micro)	/* "...:05Z" -> "...:05.000123Z" */
		snprintf(buf + strlen(buf) - 1, sizeof buf - strlen(buf) + 1,
		    ".%06dZ", (int)(nanos / 1000));
	*out = cJSON_CreateString(buf);
	return 0;
}

/*
 * The bytes of field 1 of a message that has only that one (a Quantity's
 * string, a RawExtension's raw), the last one given; none: *len 0.
 */
static int
field1_bytes(const uint8_t *p, size_t n, const char *what, const uint8_t **s,
    size_t *len, char **cause)
{
	struct reader	 r = { p, p + n };
	uint32_t	 num;
	int		 wt;

	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, what, cause) != 0)
			return -1;
		if (num == 1 && wt == WT_BYTES) {
			if (get_bytes(&r, s, len) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated %s", what);
		} else if (skip_field(&r, wt) != 0)
			return fail(cause, "malformed protobuf: truncated %s",
			    what);
	}
	return 0;
}

/*
 * Decode a resource.Quantity message {1 string}. The string is passed on as
 * it is; whoever reads the object parses it like a quantity sent as JSON.
 */
static int
decode_quantity(const uint8_t *p, size_t n, cJSON **out, char **cause)
{
	const uint8_t	*s = NULL;
	size_t		 slen = 0;

	if (field1_bytes(p, n, "Quantity", &s, &slen, cause) != 0)
		return -1;
	if (slen == 0)
		*out = cJSON_CreateString("0");
	else if ((*out = make_string(s, slen, "Quantity", cause)) == NULL)
		return -1;
	return 0;
}

/*
 * Decode a runtime.RawExtension {1 raw}: the raw bytes are the JSON the
 * client holds (a DRA driver's opaque parameters), parsed into the tree;
 * bytes that are not JSON fail the decode. An empty one is null, left out.
 */
static int
decode_raw(const uint8_t *p, size_t n, cJSON **out, char **cause)
{
	const uint8_t	*s = NULL;
	size_t		 slen = 0;

	*out = NULL;
	if (field1_bytes(p, n, "RawExtension", &s, &slen, cause) != 0)
		return -1;
	if (slen == 0)
		return 0;
	if ((*out = cJSON_ParseWithLength((const char *)s, slen)) == NULL)
		return fail(cause, "protobuf RawExtension is not JSON");
	return 0;
}

/* Decode an intstr.IntOrString {1 type, 2 intVal, 3 strVal}. */
static int
decode_intstr(const uint8_t *p, size_t n, cJSON **out, char **cause)
{
	struct reader	 r = { p, p + n };
	const uint8_t	*s = p;
	size_t		 slen = 0;
	uint64_t	 v, type = 0;
	int32_t		 ival = 0;
	uint32_t	 num;
	int		 wt;

	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, "IntOrString", cause) != 0)
			return -1;
		if ((num == 1 || num == 2) && wt == WT_VARINT) {
			if (get_varint(&r, &v) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated IntOrString");
			if (num == 1)
				type = v;
			else
				ival = (int32_t)(uint32_t)v;
		} else if (num == 3 && wt == WT_BYTES) {
			if (get_bytes(&r, &s, &slen) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated IntOrString");
		} else if (skip_field(&r, wt) != 0)
			return fail(cause, "malformed protobuf: truncated "
			    "IntOrString");
	}
	if (type == 0)
		*out = cJSON_CreateNumber(ival);
	else if (type == 1)
		return (*out = make_string(s, slen, "IntOrString",
		    cause)) == NULL ? -1 : 0;
	else
		return fail(cause, "protobuf IntOrString has invalid type %llu",
		    (unsigned long long)type);
	return 0;
}

/*
 * Store a decoded value under f in obj: appended for a repeated field, and
 * otherwise replacing an earlier occurrence (the last one wins on the wire)
 * or, for a zero value JSON would omit, only removing it.
 */
static int
put(cJSON *obj, const struct pb_field *f, cJSON *item, int zero, char **cause)
{
	cJSON	*arr;

	if (f->flags & PB_REPEATED) {
		arr = cJSON_GetObjectItemCaseSensitive(obj, f->name);
		if (arr == NULL)
			arr = cJSON_AddArrayToObject(obj, f->name);
		if (!cJSON_IsArray(arr) || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			return fail(cause, "protobuf: no value to add to %s",
			    f->name);
		}
		return 0;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, f->name);
	if (item == NULL)
		return 0;
	if (zero && (f->flags & PB_KEEP) == 0) {
		cJSON_Delete(item);
		return 0;
	}
	cJSON_AddItemToObject(obj, f->name, item);
	return 0;
}

/* Make the JSON value of a varint-encoded scalar. */
static cJSON *
make_scalar(const struct pb_field *f, uint64_t v, int *zero)
{
	switch (f->kind) {
	case PB_INT32:
		*zero = (int32_t)(uint32_t)v == 0;
		return cJSON_CreateNumber((int32_t)(uint32_t)v);
	case PB_INT64:
		*zero = v == 0;
		return cJSON_CreateNumber((double)(int64_t)v);
	default:
		*zero = v == 0;
		return cJSON_CreateBool(v != 0);
	}
}

/* Decode one occurrence of a varint-encoded scalar field f. */
static int
decode_scalar(const struct pb_msg *m, const struct pb_field *f,
    struct reader *r, int wt, cJSON *obj, char **cause)
{
	cJSON		*item;
	uint64_t	 v;
	int		 zero;

	if (wt != WT_VARINT)
		return fail(cause, "malformed protobuf: wrong wire type %d for "
		    "%s.%s", wt, m->name, f->name);
	if (get_varint(r, &v) != 0)
		return fail(cause, "malformed protobuf: truncated %s.%s",
		    m->name, f->name);
	item = make_scalar(f, v, &zero);
	return put(obj, f, item, zero, cause);
}

/* Decode one map<string, V> entry {1 key, 2 value} into the map object. */
static int
decode_map_entry(const struct pb_msg *m, const struct pb_field *f,
    const uint8_t *p, size_t n, cJSON *obj, char **cause)
{
	struct reader	 r = { p, p + n };
	const uint8_t	*kp = p, *vp = p;
	size_t		 kn = 0, vn = 0;
	cJSON		*map, *key, *val;
	uint32_t	 num;
	int		 wt;

	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, m->name, cause) != 0)
			return -1;
		if (num == 1 && wt == WT_BYTES) {
			if (get_bytes(&r, &kp, &kn) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated %s.%s", m->name, f->name);
		} else if (num == 2 && wt == WT_BYTES) {
			if (get_bytes(&r, &vp, &vn) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated %s.%s", m->name, f->name);
		} else if (skip_field(&r, wt) != 0)
			return fail(cause, "malformed protobuf: truncated %s.%s",
			    m->name, f->name);
	}

	if (f->kind == PB_BYTES)
		val = make_base64(vp, vn, cause);
	else if (f->kind == PB_QUANTITY) {
		if (decode_quantity(vp, vn, &val, cause) != 0)
			return -1;
	} else
		val = make_string(vp, vn, f->name, cause);
	if (val == NULL)
		return -1;
	if ((key = make_string(kp, kn, f->name, cause)) == NULL) {
		cJSON_Delete(val);
		return -1;
	}

	/* Appended even if the key is there already: see drop_repeated_keys. */
	map = cJSON_GetObjectItemCaseSensitive(obj, f->name);
	if (map == NULL)
		map = cJSON_AddObjectToObject(obj, f->name);
	if (!cJSON_IsObject(map)) {
		cJSON_Delete(key);
		cJSON_Delete(val);
		return fail(cause, "protobuf: %s is not a map", f->name);
	}
	cJSON_AddItemToObject(map, key->valuestring, val);
	cJSON_Delete(key);
	return 0;
}

/* Decode a nested message field: inline, appended, or merged into its object. */
static int
decode_nested(const struct pb_field *f, const uint8_t *p, size_t n, cJSON *obj,
    int depth, char **cause)
{
	cJSON	*child;

	if (f->flags & PB_INLINE)
		return decode_message(f->msg, p, n, obj, depth + 1, cause);
	if (f->flags & PB_REPEATED) {
		child = cJSON_CreateObject();
		if (decode_message(f->msg, p, n, child, depth + 1, cause) != 0) {
			cJSON_Delete(child);
			return -1;
		}
		return put(obj, f, child, 0, cause);
	}
	child = cJSON_GetObjectItemCaseSensitive(obj, f->name);
	if (!cJSON_IsObject(child)) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, f->name);
		child = cJSON_AddObjectToObject(obj, f->name);
	}
	return decode_message(f->msg, p, n, child, depth + 1, cause);
}

/* Decode one occurrence of field f of message m from the reader into obj. */
static int
decode_field(const struct pb_msg *m, const struct pb_field *f, struct reader *r,
    int wt, cJSON *obj, int depth, char **cause)
{
	const uint8_t	*p;
	cJSON		*item = NULL;
	size_t		 n;

	if (f->kind == PB_INT32 || f->kind == PB_INT64 || f->kind == PB_BOOL)
		return decode_scalar(m, f, r, wt, obj, cause);
	if (wt != WT_BYTES)
		return fail(cause, "malformed protobuf: wrong wire type %d for "
		    "%s.%s", wt, m->name, f->name);
	if (get_bytes(r, &p, &n) != 0)
		return fail(cause, "malformed protobuf: truncated %s.%s",
		    m->name, f->name);
	if (f->flags & PB_MAP)
		return decode_map_entry(m, f, p, n, obj, cause);

	switch (f->kind) {
	case PB_MESSAGE:
		return decode_nested(f, p, n, obj, depth, cause);
	case PB_STRING:
		item = make_string(p, n, f->name, cause);
		break;
	case PB_BYTES:
		item = make_base64(p, n, cause);
		break;
	case PB_TIME:
	case PB_MICROTIME:
		if (decode_time(p, n, f->kind == PB_MICROTIME, &item,
		    cause) != 0)
			return -1;
		return put(obj, f, item, 0, cause);
	case PB_QUANTITY:
		if (decode_quantity(p, n, &item, cause) != 0)
			return -1;
		return put(obj, f, item, 0, cause);
	case PB_INTSTR:
		if (decode_intstr(p, n, &item, cause) != 0)
			return -1;
		return put(obj, f, item, 0, cause);
	case PB_RAW:
		if (decode_raw(p, n, &item, cause) != 0)
			return -1;
		return put(obj, f, item, 0, cause);
	default:
		break;
	}
	if (item == NULL)
		return -1;
	return put(obj, f, item, n == 0, cause);
}

struct keyed {
	const char	*key;
	size_t		 idx;
	cJSON		*item;
};

/* Order map members by key, then by arrival. */
static int
keyed_cmp(const void *a, const void *b)
{
	const struct keyed	*x = a, *y = b;
	int			 c;

	if ((c = strcmp(x->key, y->key)) != 0)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * A map key sent twice keeps its last value, as in Go. Map entries are
 * appended as they arrive and the repeats are removed here, once the whole
 * tree is built: one sort per object, rather than a search per key, so that a
 * body full of keys costs n log n. Go sends map keys sorted, which is checked
 * first and needs no sort at all.
 */
static int
drop_repeated_keys(cJSON *node, char **cause)
{
	struct keyed	*v;
	cJSON		*c;
	size_t		 n = 0, i;
	int		 sorted = 1;

	for (c = node->child; c != NULL; c = c->next) {
		if ((cJSON_IsObject(c) || cJSON_IsArray(c)) &&
		    drop_repeated_keys(c, cause) != 0)
			return -1;
		if (n > 0 && cJSON_IsObject(node) &&
		    strcmp(c->prev->string, c->string) >= 0)
			sorted = 0;
		n++;
	}
	if (!cJSON_IsObject(node) || sorted)
		return 0;
	v = xcalloc(n, sizeof *v);
	for (c = node->child, i = 0; c != NULL; c = c->next, i++) {
		v[i].key = c->string;
		v[i].idx = i;
		v[i].item = c;
	}
	qsort(v, n, sizeof *v, keyed_cmp);
	for (i = 0; i + 1 < n; i++) {
		if (strcmp(v[i].key, v[i + 1].key) == 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(node, v[i].item));
	}
	free(v);
	return 0;
}

/* Find the descriptor of field number num in m, or NULL to skip it. */
static const struct pb_field *
find_field(const struct pb_msg *m, uint32_t num)
{
	size_t	i;

	for (i = 0; i < m->nfields; i++) {
		if (m->fields[i].num == num)
			return &m->fields[i];
	}
	return NULL;
}

/* Decode the message m encoded in p[0..n) into the JSON object obj. */
static int
decode_message(const struct pb_msg *m, const uint8_t *p, size_t n, cJSON *obj,
    int depth, char **cause)
{
	struct reader		 r = { p, p + n };
	const struct pb_field	*f;
	uint32_t		 num;
	int			 wt;

	if (depth > MAX_DEPTH)
		return fail(cause, "malformed protobuf: nested too deeply");
	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, m->name, cause) != 0)
			return -1;
		if ((f = find_field(m, num)) == NULL) {
			if (skip_field(&r, wt) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated field %u in %s", num, m->name);
			continue;
		}
		if (decode_field(m, f, &r, wt, obj, depth, cause) != 0)
			return -1;
	}
	return 0;
}

/*
 * Copy an envelope string (apiVersion, kind, contentEncoding) into buf. These
 * only ever hold printable ASCII, so anything else marks a broken body.
 */
static int
envelope_string(const uint8_t *p, size_t n, char *buf, size_t len)
{
	size_t	i;

	if (n >= len)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] <= 0x20 || p[i] >= 0x7f)
			return -1;
	}
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

/* Read the runtime.Unknown envelope: TypeMeta, raw object, content encoding. */
static int
decode_envelope(const uint8_t *p, size_t n, char *api_version, char *kind,
    size_t len, const uint8_t **raw, size_t *rawlen, char **cause)
{
	struct reader	 r = { p, p + n }, tm;
	const uint8_t	*s;
	size_t		 sn;
	uint32_t	 num;
	int		 wt;
	char		 encoding[64];

	*api_version = *kind = '\0';
	*raw = p;
	*rawlen = 0;
	while (r.p < r.end) {
		if (get_key(&r, &num, &wt, "Unknown", cause) != 0)
			return -1;
		if (wt != WT_BYTES || num > 4) {
			if (skip_field(&r, wt) != 0)
				return fail(cause, "malformed protobuf: "
				    "truncated envelope");
			continue;
		}
		if (get_bytes(&r, &s, &sn) != 0)
			return fail(cause, "malformed protobuf: truncated "
			    "envelope");
		switch (num) {
		case 1:
			tm.p = s;
			tm.end = s + sn;
			while (tm.p < tm.end) {
				if (get_key(&tm, &num, &wt, "TypeMeta",
				    cause) != 0)
					return -1;
				if ((num == 1 || num == 2) && wt == WT_BYTES) {
					if (get_bytes(&tm, &s, &sn) != 0)
						return fail(cause, "malformed "
						    "protobuf: truncated "
						    "TypeMeta");
					if (envelope_string(s, sn, num == 1 ?
					    api_version : kind, len) != 0)
						return fail(cause, "malformed "
						    "protobuf: invalid "
						    "apiVersion or kind");
				} else if (skip_field(&tm, wt) != 0)
					return fail(cause, "malformed protobuf: "
					    "truncated TypeMeta");
			}
			break;
		case 2:
			*raw = s;
			*rawlen = sn;
			break;
		case 3:
			if (sn == 0)
				break;
			if (envelope_string(s, sn, encoding,
			    sizeof encoding) != 0)
				return fail(cause, "malformed protobuf: "
				    "invalid content encoding");
			return fail(cause, "protobuf content encoding %s is not "
			    "supported; send JSON", encoding);
		}
	}
	if (*kind == '\0')
		return fail(cause, "protobuf body has no kind; send JSON");
	return 0;
}

/* Whether api_version is the one of sub, a subresource of r. */
static int
sub_in_version(const resource *r, const struct kind_sub *sub,
    const char *api_version)
{
	char gv[128];

	if (sub->group == NULL)
		return strcmp(r->gv, api_version) == 0;
	snprintf(gv, sizeof gv, "%s/%s", sub->group, sub->version);
	return strcmp(gv, api_version) == 0;
}

/*
 * The message of kind in api_version, as a descriptor names it: a
 * built-in kind's or its subresource's (a Pod's Binding); else one of the
 * bodies that are no kind's. NULL when none: *kind_known says whether the
 * kind has a message in some other apiVersion.
 */
static const struct pb_msg *
message_of(const char *api_version, const char *kind, int *kind_known)
{
	const struct kind_sub	*s;
	const resource		*r;
	int			 i;

	*kind_known = 0;
	/* metav1 registers it in every group version: any apiVersion. */
	if (strcmp(kind, "DeleteOptions") == 0)
		return &pb_delete_options;
	if (strcmp(kind, "TokenRequest") == 0 &&
	    strcmp(api_version, "authentication.k8s.io/v1") == 0)
		return &pb_token_request;
	r = resource_by_gvk(api_version, kind);
	if (r != NULL && r->desc != NULL && r->desc->protobuf != NULL)
		return r->desc->protobuf;
	for (i = 0; i < resource_count(); i++) {
		r = resource_at(i);
		if (r->desc == NULL)
			continue;
		if (r->desc->protobuf != NULL && strcmp(r->kind, kind) == 0)
			*kind_known = 1;
		for (s = r->desc->subs; s != NULL && s->name != NULL; s++) {
			if (s->protobuf == NULL || s->kind == NULL ||
			    strcmp(s->kind, kind) != 0)
				continue;
			if (sub_in_version(r, s, api_version))
				return s->protobuf;
			*kind_known = 1;
		}
	}
	return NULL;
}

cJSON *
protobuf_decode(const void *buf, size_t len, char **cause)
{
	static const uint8_t	 magic[4] = { 0x6b, 0x38, 0x73, 0x00 };
	const struct pb_msg	*m = NULL;
	const uint8_t		*raw;
	cJSON			*obj;
	size_t			 rawlen;
	char			*err = NULL, api_version[128], kind[128];
	int			 kind_known = 0;

	if (buf == NULL || len < sizeof magic ||
	    memcmp(buf, magic, sizeof magic) != 0) {
		fail(&err, "not a Kubernetes protobuf body (no \"k8s\\0\" "
		    "prefix)");
		goto fail;
	}
	if (decode_envelope((const uint8_t *)buf + sizeof magic,
	    len - sizeof magic, api_version, kind, sizeof kind, &raw, &rawlen,
	    &err) != 0)
		goto fail;

	m = message_of(api_version, kind, &kind_known);
	if (m == NULL) {
		if (kind_known)
			fail(&err, "protobuf decoding of kind %s in %s is not "
			    "supported; send JSON", kind, api_version);
		else
			fail(&err, "protobuf decoding of kind %s is not "
			    "supported; send JSON", kind);
		goto fail;
	}

	obj = cJSON_CreateObject();
	cJSON_AddStringToObject(obj, "apiVersion", api_version);
	cJSON_AddStringToObject(obj, "kind", kind);
	if (decode_message(m, raw, rawlen, obj, 0, &err) != 0 ||
	    drop_repeated_keys(obj, &err) != 0) {
		cJSON_Delete(obj);
		goto fail;
	}
	return obj;

fail:
	if (cause != NULL)
		*cause = err;
	else
		free(err);
	return NULL;
}
