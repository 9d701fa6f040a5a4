/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Network namespaces by inode number, the key BPF programs can read from
 * a packet (dev->nd_net.net->ns.inum): a name for it (the /run/netns name
 * "ip netns" gave it, "init" for PID 1's, "pid:N" for a process that lives
 * in it) and setns() into it and back. Used to read a ruleset, or open a
 * netlink socket, in the namespace where a packet was seen.
 */
#ifndef AGENTXDP_NETNS_H
#define AGENTXDP_NETNS_H

#include <stdbool.h>

/* inode of this thread's network namespace, 0 on error */
unsigned int netns_self(void);
/* inode of /run/netns/NAME (or of a path to a netns file), 0 when none
 * (errno ENOENT) or when it is not a network namespace (EINVAL) */
unsigned int netns_by_name(const char *name);
/* a name for inum into buf; false (and "-") when no path reaches it */
bool netns_name(unsigned int inum, char *buf, int len);
/*
 * Enter inum; *saved gets an fd of the namespace to return to with
 * netns_leave(). Entering the current namespace is a no-op (*saved = -1).
 * Returns 0 or a negative errno.
 */
int netns_enter(unsigned int inum, int *saved);
void netns_leave(int saved);

#endif
