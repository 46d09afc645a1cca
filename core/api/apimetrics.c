/*
 * Metrics in the Prometheus text format. Request series are kept in a small
 * table keyed by (verb, resource, code), each with a latency histogram;
 * everything else is read from the subsystems when /metrics is scraped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apimetrics.h"
#include "lib/metrics.h"
#include "lib/xmalloc.h"
#include "store/wal.h"

static const double buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

struct series {
	char verb[24];
	char res[96];
	int code;
	uint64_t count;
	double sum;
	uint64_t le[NBUCKETS];
};

static struct series *series;
static size_t nseries, capseries;

void
apimetrics_request(const char *verb, const char *res, int code, uint64_t usec)
{
	struct series *s = NULL;
	double secs = usec / 1e6;
	size_t i;

	for (i = 0; i < nseries; i++) {
		if (series[i].code == code && strcmp(series[i].verb, verb) ==
		    0 && strcmp(series[i].res, res) == 0) {
			s = &series[i];
			break;
		}
	}
	if (s == NULL) {
		XGROW(series, capseries, nseries + 1);
		s = &series[nseries++];
		memset(s, 0, sizeof *s);
		snprintf(s->verb, sizeof s->verb, "%s", verb);
		snprintf(s->res, sizeof s->res, "%s", res);
		s->code = code;
	}
	s->count++;
	s->sum += secs;
	for (i = 0; i < NBUCKETS; i++)
		if (secs <= buckets[i])
			s->le[i]++;
}

static void
objects(const char *res, size_t n, void *arg)
{
	fprintf(arg, "volray_objects{resource=\"%s\"} %zu\n", res, n);
}

char *
apimetrics_render(store *st, watch_hub *hub, int connections)
{
	static const char *batch_le[] = { "1", "4", "16", "64", "256", "1024",
	    "4096", "+Inf" };
	static const char *lat_le[] = { "0.0005", "0.001", "0.002", "0.005",
	    "0.01", "0.025", "0.05", "+Inf" };
	struct store_stats ss;
	struct wal_stats ws;
	struct watch_stats ht;
	char *buf = NULL;
	size_t len = 0, i, j;
	uint64_t cum;
	FILE *f = open_memstream(&buf, &len);

	fprintf(f, "# HELP apiserver_request_total Requests by verb, "
	    "resource and code.\n# TYPE apiserver_request_total counter\n");
	for (i = 0; i < nseries; i++)
		fprintf(f, "apiserver_request_total{verb=\"%s\",resource=\"%s\","
		    "code=\"%d\"} %llu\n", series[i].verb, series[i].res,
		    series[i].code, (unsigned long long)series[i].count);
	fprintf(f, "# HELP apiserver_request_duration_seconds Request "
	    "latency.\n# TYPE apiserver_request_duration_seconds histogram\n");
	for (i = 0; i < nseries; i++) {
		struct series *s = &series[i];

		for (j = 0; j < NBUCKETS; j++)
			fprintf(f, "apiserver_request_duration_seconds_bucket{"
			    "verb=\"%s\",resource=\"%s\",code=\"%d\",le=\"%g\"}"
			    " %llu\n", s->verb, s->res, s->code, buckets[j],
			    (unsigned long long)s->le[j]);
		fprintf(f, "apiserver_request_duration_seconds_bucket{verb="
		    "\"%s\",resource=\"%s\",code=\"%d\",le=\"+Inf\"} %llu\n",
		    s->verb, s->res, s->code, (unsigned long long)s->count);
		fprintf(f, "apiserver_request_duration_seconds_sum{verb=\"%s\","
		    "resource=\"%s\",code=\"%d\"} %g\n", s->verb, s->res,
		    s->code, s->sum);
		fprintf(f, "apiserver_request_duration_seconds_count{verb="
		    "\"%s\",resource=\"%s\",code=\"%d\"} %llu\n", s->verb,
		    s->res, s->code, (unsigned long long)s->count);
	}
	store_get_stats(st, &ss);
	wal_get_stats(store_wal(st), &ws);
	fprintf(f, "# TYPE volray_store_writes_total counter\n"
	    "volray_store_writes_total{op=\"put\"} %llu\n"
	    "volray_store_writes_total{op=\"delete\"} %llu\n",
	    (unsigned long long)ss.puts, (unsigned long long)ss.deletes);
	fprintf(f, "# TYPE volray_store_revision gauge\n"
	    "volray_store_revision %llu\n", (unsigned long long)store_rev(st));
	fprintf(f, "# TYPE volray_wal_fsyncs_total counter\n"
	    "volray_wal_fsyncs_total %llu\n", (unsigned long long)ws.syncs);
	fprintf(f, "# TYPE volray_wal_bytes_total counter\n"
	    "volray_wal_bytes_total %llu\n", (unsigned long long)ws.bytes);
	fprintf(f, "# TYPE volray_wal_snapshots_total counter\n"
	    "volray_wal_snapshots_total %llu\n",
	    (unsigned long long)ws.snapshots);
	fprintf(f, "# HELP volray_wal_fsync_batch_records Records made durable "
	    "per fsync.\n# TYPE volray_wal_fsync_batch_records histogram\n");
	for (cum = 0, i = 0; i < 8; i++) {
		cum += ws.batch_hist[i];
		fprintf(f, "volray_wal_fsync_batch_records_bucket{le=\"%s\"} "
		    "%llu\n", batch_le[i], (unsigned long long)cum);
	}
	fprintf(f, "volray_wal_fsync_batch_records_sum %llu\n"
	    "volray_wal_fsync_batch_records_count %llu\n",
	    (unsigned long long)ws.records, (unsigned long long)ws.syncs);
	fprintf(f, "# HELP volray_wal_fsync_seconds fsync latency.\n"
	    "# TYPE volray_wal_fsync_seconds histogram\n");
	for (cum = 0, i = 0; i < 8; i++) {
		cum += ws.lat_hist[i];
		fprintf(f, "volray_wal_fsync_seconds_bucket{le=\"%s\"} %llu\n",
		    lat_le[i], (unsigned long long)cum);
	}
	fprintf(f, "volray_wal_fsync_seconds_sum %g\n"
	    "volray_wal_fsync_seconds_count %llu\n", ws.sync_usec_total / 1e6,
	    (unsigned long long)ws.syncs);
	watch_get_stats(hub, &ht);
	fprintf(f, "# TYPE volray_watchers gauge\nvolray_watchers %llu\n",
	    (unsigned long long)ht.watchers);
	fprintf(f, "# TYPE volray_watch_events_sent_total counter\n"
	    "volray_watch_events_sent_total %llu\n",
	    (unsigned long long)ht.events_sent);
	fprintf(f, "# TYPE volray_watch_lists_total counter\n"
	    "volray_watch_lists_total %llu\n", (unsigned long long)ht.lists);
	fprintf(f, "# TYPE volray_watch_closed_slow_total counter\n"
	    "volray_watch_closed_slow_total %llu\n",
	    (unsigned long long)ht.closed_slow);
	fprintf(f, "# TYPE volray_http_connections gauge\n"
	    "volray_http_connections %d\n", connections);
	fprintf(f, "# TYPE volray_objects gauge\n");
	store_each_res(st, objects, f);
	metrics_print_sources(f);
	fclose(f);
	return buf;
}
