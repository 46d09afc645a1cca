/*
 * batch/v1: Jobs and CronJobs.
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_job = {
	.group = "batch",
	.version = "v1",
	.plural = "jobs",
	.singular = "job",
	.kind = "Job",
	.namespaced = 1,
	.has_status = 1,
	.categories = "all",
	.mutate = admission_job_mutate,
	.validate = admission_job_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Status", "string", 0 },
		{ "Completions", "string", 0 },
		{ "Duration", "string", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_job,
	.protobuf = &pb_job,
};

const struct kind_desc kind_cronjob = {
	.group = "batch",
	.version = "v1",
	.plural = "cronjobs",
	.singular = "cronjob",
	.kind = "CronJob",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "cj",
	.categories = "all",
	.mutate = admission_workload_cronjob_mutate,
	.validate = admission_workload_cronjob_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Schedule", "string", 0 },
		{ "Timezone", "string", 0 },
		{ "Suspend", "boolean", 0 },
		{ "Active", "integer", 0 },
		{ "Last Schedule", "string", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_cronjob,
	.protobuf = &pb_cron_job,
};
