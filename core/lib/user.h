/*
 * Who is asking: the identity an authenticator established for a request
 * (a bearer token, a client certificate) or that an in-process component
 * acts as (a controller, the scheduler). Like Kubernetes' user.Info: a
 * name, a uid and groups; "system:masters" is the administrators' group,
 * and every authenticated user is also in "system:authenticated".
 */
#ifndef VOLRAY_USER_H
#define VOLRAY_USER_H

typedef struct user_info {
	const char *name;
	const char *uid;            /* "" when none */
	const char *const *groups;
	int ngroups;
} user_info;

#define USER_GROUP_MASTERS		"system:masters"
#define USER_GROUP_AUTHENTICATED	"system:authenticated"
#define USER_GROUP_UNAUTHENTICATED	"system:unauthenticated"
/*
 * The daemon's own components when they call its API over HTTP (the Lua
 * controllers' volray.http): RBAC decides what they may do, but the
 * per-user request rate does not apply, as it does not to their
 * in-process volray.* calls.
 */
#define USER_GROUP_COMPONENTS		"system:volray:components"

#endif
