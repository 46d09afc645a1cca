/*
 * Authentication: who a request comes from. Bearer tokens (the admin's,
 * generated on first start, and kube-apiserver's static token file) and
 * client certificates signed by the daemon's CA (CN is the user, each O a
 * group). Every authenticated user is also in system:authenticated.
 */
#ifndef VOLRAY_AUTHN_H
#define VOLRAY_AUTHN_H

#include "lib/user.h"

typedef struct authn authn;

/* The admin: a member of system:masters. */
#define AUTHN_ADMIN_USER "volray-admin"

authn *authn_new(void);
void authn_free(authn *);
/* Accept token for user, in the comma-separated groups (may be ""). */
void authn_add_token(authn *, const char *token, const char *user,
    const char *uid, const char *groups);
/*
 * Load kube-apiserver's static token file, CSV lines of
 * token,user,uid[,"group1,group2"]. -1 with *cause naming the line.
 */
int authn_load_token_file(authn *, const char *path, char **cause);
/*
 * The admin's token, kept in dir/admin.token (mode 0600) and made on first
 * use; it is added to the accepted tokens. NULL with *cause.
 */
char *authn_admin_token(authn *, const char *dir, char **cause);
/*
 * A new random token for user in groups (comma-separated, may be ""),
 * accepted until exit; malloc'd, NULL without randomness.
 */
char *authn_mint_token(authn *, const char *user, const char *groups);
/* The user a bearer token belongs to, or NULL (compared in constant time). */
const user_info *authn_token(const authn *, const char *token);
/*
 * The user of a verified client certificate: groups (up to cap entries)
 * are the organizations and system:authenticated.
 */
void authn_cert(const char *cn, const char *const *orgs, int norgs,
    user_info *out, const char **groups, int cap);
/* Number of token users (for metrics and limits). */
int authn_token_count(const authn *);

#endif
