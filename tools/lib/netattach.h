/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An observer's XDP (ingress) and tc egress programs on an interface,
 * attached so that nothing stays behind: XDP and tcx (6.6+) as links, gone
 * with the process even after SIGKILL; on older kernels a clsact filter of
 * a fixed handle and priority, which the next run removes when no process
 * holds its program any more; each tool has a priority of its own and a
 * few handles, so that the suite's tools (and two runs of one) share a
 * clsact qdisc there too, each removing only its own filter. An XDP
 * program already on the interface is
 * never replaced: the ingress side moves to tc ingress instead, so the
 * suite's tools share an interface with each other and with XDP
 * firewalls. Shared by rocelat, rocediag and roceinject (tc only).
 */
#ifndef AGENTXDP_NETATTACH_H
#define AGENTXDP_NETATTACH_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

enum netattach_mode { NETATTACH_AUTO, NETATTACH_SKB, NETATTACH_NATIVE };

/* the suite's clsact priorities, one per tool (a qdisc holding only
 * these is the suite's: the last of its tools to leave removes it) */
enum {
	NETATTACH_PRIO_ROCEINJECT = 0xC5,
	NETATTACH_PRIO_ROCELAT = 0xC7,
	NETATTACH_PRIO_ROCEDIAG = 0xC8,
};
/* handles handle .. handle + NETATTACH_TC_SLOTS - 1: one per concurrent
 * run of the same tool on an interface */
#define NETATTACH_TC_SLOTS	4

/* the tc filter's identity: a leftover of a killed run is recognised by
 * handle (one of the slots), priority and program name (and no process
 * holding it) */
struct netattach_tc_id {
	__u32 handle;
	__u32 prio;
	const char *prog_name;
	const char *tool;	/* in messages: "another rocelat running?" */
};

enum netattach_dir { NETATTACH_EGRESS, NETATTACH_INGRESS, NETATTACH_DIRS };

struct netattach {
	const char *name;
	int ifindex;
	struct bpf_link *xdp_link;	/* default mode: libbpf's link */
	int xdp_link_fd;		/* forced mode: raw link fd */
	const char *xdp_mode_name;	/* "native", "generic", ... */
	/* tc, by enum netattach_dir: ingress only where XDP was taken */
	int tcx_fd[NETATTACH_DIRS];	/* tcx link (6.6+), -1 none */
	bool tc_attached[NETATTACH_DIRS];	/* clsact filter (older kernels) */
	const struct netattach_tc_id *tc_id[NETATTACH_DIRS];
	__u32 tc_handle[NETATTACH_DIRS];	/* the slot's handle in use */
	/* the clsact qdisc is ours to remove once empty: made here, or
	 * found holding only the suite's filters */
	bool tc_hook_created;
	bool xdp_taken;			/* ingress on tc: XDP was someone else's */
	bool xdp_mtu_refused;		/* ingress on tc: XDP refused at mtu */
	bool xdp_frags;			/* the XDP program takes multi-buffer frames */
	int mtu;			/* the interface's, read at attach */
};

/* f for interface name, of index ifindex where the tool attaches
 * (cli_ifindex(), which dies when there is none) */
void netattach_init(struct netattach *f, const char *name, int ifindex);
/* XDP prog on f in mode; 0, or a negative errno after a one-line error */
int netattach_xdp(struct netattach *f, struct bpf_program *prog, enum netattach_mode mode);
/*
 * The ingress side: XDP prog on f, or where another program holds XDP
 * (a firewall, a CNI, another of the suite's tools) and mode is
 * NETATTACH_AUTO, tc_in on tc ingress instead (a note names the XDP
 * program). The same where the driver refuses XDP at the interface's
 * MTU (jumbo frames on a kernel before 5.18, whose XDP has no frags, or
 * a driver without multi-buffer XDP): a note gives the kernel's reason.
 * An explicit mode refused there fails with that reason in one line.
 * 0 or a negative errno after a one-line error.
 */
int netattach_ingress(struct netattach *f, struct bpf_program *xdp,
		      struct bpf_program *tc_in, enum netattach_mode mode,
		      const struct netattach_tc_id *in_id);
/* tc egress prog on f (tcx, else clsact with id); 0 or negative errno
 * after a one-line error. AGENTXDP_FORCE_CLSACT in the environment skips
 * tcx (tests of the older kernels' path). */
int netattach_tc_egress(struct netattach *f, struct bpf_program *prog,
			const struct netattach_tc_id *id);
/* the same on either direction (roceinject's ingress or egress) */
int netattach_tc(struct netattach *f, struct bpf_program *prog,
		 const struct netattach_tc_id *id, enum netattach_dir dir);
/* a leftover clsact filter of id on dir removed (a killed run's, held by
 * no process), and with remove_hook the clsact qdisc too when no filter
 * is left on it: for a watchdog that outlives a SIGKILLed tool */
void netattach_tc_leftover(struct netattach *f, const struct netattach_tc_id *id,
			   enum netattach_dir dir, bool remove_hook);
/* everything of f detached (and the clsact qdisc removed when it is ours
 * and no filter is left on it: another tool's filters stay) */
void netattach_detach(struct netattach *f);
/* "XDP native, tcx egress" for banners */
const char *netattach_describe(const struct netattach *f, char *buf, int len);
/* a note on stderr when a mirror/SPAN port is not promiscuous */
void netattach_warn_promisc(const struct netattach *f);

#endif
