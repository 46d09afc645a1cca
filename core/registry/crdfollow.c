/*
 * CRDs created through other API servers of one etcd cluster: registered
 * in this process's resource table when the store's watch of etcd brings
 * them, and dropped when it brings their deletion. One registered
 * already with the same spec is left as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "registry/crdfollow.h"
#include "registry/resource.h"
#include "store/store.h"

/* Whether the CRD name is registered with this spec already. */
static int
registered(const char *name, const cJSON *spec)
{
	int i, n = resource_count();

	for (i = 0; i < n; i++) {
		const resource *r = resource_at(i);

		if (r->crd_name != NULL && strcmp(r->crd_name, name) == 0)
			return cJSON_Compare(cJSON_GetObjectItem(r->crd,
			    "spec"), spec, 1);
	}
	return 0;
}

/* A store event: a CRD's creation, change or deletion followed. */
static void
follow_crds(void *arg, const store_event *ev)
{
	const char *name = ev->obj->name;
	char *cause = NULL;
	cJSON *t;

	(void)arg;
	if (strcmp(ev->obj->res,
	    "customresourcedefinitions.apiextensions.k8s.io") != 0)
		return;
	if (ev->type == STORE_DELETED) {
		resource_unregister_crd(name);
		return;
	}
	if ((t = store_obj_tree(ev->obj)) == NULL)
		return;
	if (registered(name, cJSON_GetObjectItem(t, "spec"))) {
		cJSON_Delete(t);
		return;
	}
	if (resource_register_crd(t, &cause) != 0) {
		log_warn("volrayd: CRD %s from etcd: %s", name, cause);
		free(cause);
	}
	cJSON_Delete(t);
}

void
crdfollow_start(store *st)
{
	store_subscribe(st, follow_crds, NULL);
}
