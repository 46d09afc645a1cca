/*
 * batch/v1: Jobs and CronJobs.
 */
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds_int.h"

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
};
