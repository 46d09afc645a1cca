/*
 * Port-forward over SPDY/3.1 (portfwd.h): not yet; kubectl falls back to
 * nothing else, the Python and JavaScript clients use the channel
 * protocol (portfwd.c).
 */
#include "lib/util.h"
#include "node/portfwd.h"

int
portfwd_spdy_upgrade(uv_loop_t *loop, http_req *req, const char *ns,
    const char *pod, char **msg)
{
	(void)loop;
	(void)req;
	*msg = util_printf("port-forward to %s/%s over SPDY is not "
	    "supported yet", ns, pod);
	return 400;
}

int
portfwd_spdy_ws(uv_loop_t *loop, http_req *req, const char *proto,
    const char *ns, const char *pod, char **msg)
{
	(void)proto;
	return portfwd_spdy_upgrade(loop, req, ns, pod, msg);
}
