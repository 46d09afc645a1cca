/*
 * The job journal, where a head's jobs survive a restart of volrayd:
 * DATA_DIR/pods/NS/NAME/ray-jobs.jsonl, whose first line names the pod's
 * uid (so a new pod of the same name starts empty), then one JSON record
 * per line. Jobs change state a few times each and every change is one
 * appended line, so a submission costs the same with 10 jobs or 100,000;
 * once the journal holds twice as many lines as there are jobs it is
 * rewritten as one record per job (written to a temporary file, then
 * renamed over it). Read back, the last record of each job wins and a
 * deletion record drops it. What a record holds is jobs.c's business.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "ray/ray_int.h"

static void
write_line(struct ray_head *h, int fd, cJSON *t)
{
	char *s = json_print(t), *line = util_printf("%s\n", s);
	size_t n = strlen(line);

	if (write(fd, line, n) != (ssize_t)n)
		log_warn("ray: %s/%s: writing the job journal: %s", h->ns,
		    h->name, strerror(errno));
	free(line);
	free(s);
}

static char *
journal_path(const struct ray_head *h)
{
	return util_printf("%s/ray-jobs.jsonl", h->dir);
}

void
ray_journal_rewrite(struct ray_head *h, ray_journal_record_fn record)
{
	char *path = journal_path(h), *tmp = util_printf("%s.tmp", path);
	cJSON *head = cJSON_CreateObject();
	int fd, i;

	ray_journal_close(h);
	(void)util_mkdirs(h->dir, 0700);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		json_set_str(head, "uid", h->uid);
		write_line(h, fd, head);
		for (i = 0; i < h->njobs; i++) {
			cJSON *t = record(h->order[i]);

			write_line(h, fd, t);
			cJSON_Delete(t);
		}
		if (close(fd) != 0 || rename(tmp, path) != 0)
			log_warn("ray: %s: %s", path, strerror(errno));
	}
	cJSON_Delete(head);
	h->journal = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	h->journal_lines = h->njobs;
	free(path);
	free(tmp);
}

void
ray_journal_append(struct ray_head *h, cJSON *rec,
    ray_journal_record_fn record)
{
	if (h->journal < 0 || h->journal_lines > 2 * h->njobs + 1024)
		ray_journal_rewrite(h, record);
	if (h->journal >= 0) {
		write_line(h, h->journal, rec);
		h->journal_lines++;
	}
	cJSON_Delete(rec);
}

cJSON *
ray_journal_read(struct ray_head *h)
{
	char *path = journal_path(h), *line = NULL;
	FILE *f;
	cJSON *byid = cJSON_CreateObject(), *all = NULL, *t, *it;
	size_t cap = 0;
	int first = 1, ok = 0;

	(void)util_mkdirs(h->dir, 0700);
	f = fopen(path, "r");
	free(path);
	while (f != NULL && getline(&line, &cap, f) > 0) {
		const char *id;

		if ((t = cJSON_Parse(line)) == NULL)
			continue;	/* a torn last line */
		if (first) {
			first = 0;
			ok = json_str(t, "uid") != NULL && strcmp(json_str(t,
			    "uid"), h->uid) == 0;
			cJSON_Delete(t);
			if (!ok)
				break;
			continue;
		}
		if ((id = json_str(t, "submission_id")) == NULL) {
			cJSON_Delete(t);
			continue;
		}
		if (cJSON_IsTrue(json_at(t, "deleted"))) {
			cJSON_DeleteItemFromObjectCaseSensitive(byid, id);
			cJSON_Delete(t);
		} else if (cJSON_GetObjectItemCaseSensitive(byid, id) != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(byid, id, t);
		else
			cJSON_AddItemToObject(byid, id, t);
	}
	free(line);
	if (f != NULL)
		fclose(f);
	if (ok) {
		all = cJSON_CreateArray();
		while ((it = byid->child) != NULL)
			cJSON_AddItemToArray(all, cJSON_DetachItemViaPointer(byid,
			    it));
	}
	cJSON_Delete(byid);
	return all;
}

void
ray_journal_close(struct ray_head *h)
{
	if (h->journal >= 0)
		close(h->journal);
	h->journal = -1;
}
