/*
 * volray node: verbs of volray's own for nodes. node add --virtual makes
 * simulated Nodes (volray.io/runtime=virtual), one request per node.
 */
#ifndef VOLRAY_CLI_NODE_H
#define VOLRAY_CLI_NODE_H

struct cli_node_opts {
	int		 is_virtual;	/* --virtual */
	long		 count;		/* --count */
	const char	*cpu;		/* --cpu */
	const char	*memory;	/* --memory */
	const char	*pods;		/* --pods */
	const char	*labels;	/* --labels k=v,... */
	const char	*taints;	/* --taints k=v:Effect,... */
	const char	*prefix;	/* --name-prefix */
	const char	*topology;	/* --topology N[,M,...] */
};

/* volray node add ...; 0, 1 when the server refused, 2 on a usage error. */
int cli_node(int argc, char **argv, const struct cli_node_opts *);

#endif
