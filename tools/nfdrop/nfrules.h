/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The netfilter ruleset of the current network namespace, read (never
 * changed) as a small model: chains with their hooks, priorities and
 * policies, and for each rule what it can do to a packet (drop, reject,
 * jump) and its text as the administrator's tool prints it.
 *
 * nftables (and iptables-nft, which writes nftables rules) comes from the
 * kernel over netlink with libnftnl; the text from libnftables, the same
 * code as `nft -a -s list ruleset`. iptables-legacy tables, which only the
 * legacy tools can decode, come from iptables-legacy-save, and only when
 * the namespace has them (/proc/net/ip_tables_names), so that reading
 * never creates a table.
 *
 * Also here: names of netfilter families and hooks, and the nftrace helper
 * table that `nfdrop --trace-rules` adds and removes.
 */
#ifndef AGENTXDP_NFRULES_H
#define AGENTXDP_NFRULES_H

#include <stdbool.h>
#include "nfmatch.h"

/* linux/netfilter.h values, without dragging its header in */
#define NFR_PROTO_INET		1
#define NFR_PROTO_IPV4		2
#define NFR_PROTO_ARP		3
#define NFR_PROTO_NETDEV	5
#define NFR_PROTO_BRIDGE	7
#define NFR_PROTO_IPV6		10

#define NFR_POLICY_DROP		0	/* NF_DROP */
#define NFR_POLICY_ACCEPT	1	/* NF_ACCEPT */

enum nfr_engine {
	NFR_ENGINE_NONE = 0,
	NFR_ENGINE_NFT,			/* nftables, iptables-nft included */
	NFR_ENGINE_LEGACY,		/* iptables-legacy / ip6tables-legacy */
};

/* what a rule can do to a packet that matches it */
enum nfr_kind {
	NFR_KIND_NONE = 0,		/* accept, return, counter, log, ... */
	NFR_KIND_DROP,
	NFR_KIND_REJECT,		/* drop after sending an ICMP error/TCP RST */
	NFR_KIND_JUMP,			/* jump or goto another chain */
	NFR_KIND_MAYBE,			/* verdict map or queue: may drop */
};

struct nfr_rule {
	unsigned long long handle;	/* nft handle; legacy: position from 1 */
	int kind;			/* enum nfr_kind */
	char *target;			/* NFR_KIND_JUMP: the chain */
	char *text;			/* `nft -s` text, or the iptables-save line */
	struct nfm_prog prog;		/* what it does, for nfm_walk_hook() */
	char *counter_obj;		/* counter name "x": x, else NULL */
	bool has_packets;		/* packets below is its counter's (a named
					 * counter's, shared by its rules) */
	unsigned long long packets;
};

struct nfr_dev {
	char name[16];			/* IFNAMSIZ */
	bool prefix;			/* matches names starting with name */
};

struct nfr_chain {
	int engine;			/* enum nfr_engine */
	int family;			/* NFR_PROTO_* of the table */
	char *table;
	/* nftables: the table's handle, unique in the namespace for its
	 * life (a table deleted and added again gets a new one, while rule
	 * handles start again); 0 unknown, and for iptables-legacy */
	unsigned long long table_handle;
	char *name;
	bool base;			/* attached to a hook */
	int hook;			/* base: hook number in the family's numbering */
	int prio;
	int policy;			/* NFR_POLICY_*, -1 for regular chains */
	char *type;			/* filter, nat, route (legacy: NULL) */
	/*
	 * Devices a base chain's hook is bound to (netdev ingress and
	 * egress, inet ingress): it sees only their packets. A name
	 * registers on the device of that name whenever one exists
	 * (6.16+ keeps names of devices not there yet); a prefix (6.16+
	 * wildcard, "eth*") on every device whose name starts with it.
	 */
	bool dev_bound;			/* the hook is per device */
	bool devs_unknown;		/* the dump held a device spec not read */
	struct nfr_dev *devs;
	int ndevs;
	struct nfr_rule *rules;
	int nrules;
	bool has_counter;		/* base chain counters: policy hits */
	unsigned long long policy_packets;
};

struct nfr_ruleset {
	struct nfr_chain *chains;
	int nchains;
	bool have_nft;			/* the nftables dump worked */
	bool have_legacy;		/* legacy tables exist and were read */
	struct nfm_set *sets;		/* nftables sets and maps, with elements */
	int nsets;
	char err[160];			/* why a part could not be read */
};

/* read the ruleset of this thread's network namespace; 0 or -errno (then
 * rs->err says what failed; what could be read is still there) */
int nfr_load(struct nfr_ruleset *rs);
void nfr_free(struct nfr_ruleset *rs);
/* the same, without rule texts and sets: for counter snapshots */
int nfr_load_counters(struct nfr_ruleset *rs);
/* the nftables ruleset's generation in this thread's namespace (every
 * committed change moves it), -1 when it cannot be read */
long long nfr_nft_gen(void);

struct nfr_chain *nfr_chain_find(const struct nfr_ruleset *rs, int engine,
				 int family, const char *table, const char *name);

/* does base chain c see packets of device ifname: 1 yes, 0 no, -1 not
 * known (ifname NULL, or c's devices could not be read); chains not
 * bound to devices see every device's */
int nfr_chain_sees_dev(const struct nfr_chain *c, const char *ifname);

/* a rule that can drop, and the chain it is in */
struct nfr_hit {
	const struct nfr_chain *chain;
	const struct nfr_rule *rule;
};
/* rules that can drop a packet traversing base, jumps followed (loops
 * and depth bounded); returns how many, at most max are stored */
int nfr_drop_rules(const struct nfr_ruleset *rs, const struct nfr_chain *base,
		   struct nfr_hit *out, int max);
/* can a packet in from reach to (from itself included) */
bool nfr_reaches(const struct nfr_ruleset *rs, const struct nfr_chain *from,
		 const struct nfr_chain *to);

/* "ip", "ip6", "inet", "arp", "bridge", "netdev"; NULL when unknown */
const char *nfr_family_name(int family);
/* NFR_PROTO_* for a name ("ip", "ipv4", "ip6", "ipv6", ...), -1 unknown */
int nfr_family_by_name(const char *name);
/* hook names in family's numbering: "input", "prerouting", ... */
const char *nfr_hook_name(int family, int hook);
/* is name a hook of any family (for checking user input) */
bool nfr_hook_name_valid(const char *name);
/* do chains of a table of table_family run for packets at a hook of
 * hook_family (an inet table serves both ip and ip6) */
bool nfr_family_covers(int table_family, int hook_family);
/* "DROP", "REJECT", "jump", "may drop" */
const char *nfr_kind_name(int kind);

/* an nftables context with output and errors buffered, the output flags
 * given (NFT_CTX_OUTPUT_*); NULL when out of memory */
struct nft_ctx;
struct nft_ctx *nfr_nft_ctx(unsigned int output_flags);

#endif
