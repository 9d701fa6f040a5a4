/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocegen: a synthetic RoCE v2 (RC) requester/responder pair over UDP sockets.
 *
 * It produces traffic that looks, on the wire, like rdma_rxe between two
 * hosts (BTH, RETH, AETH, zero ICRC on UDP 4791) and reports the ground truth
 * (how many requests, retransmissions, ACKs, NAKs, RNR NAKs and read
 * responses really happened) so that the AgentXDP tracers can be checked
 * against it. The responder can inject delay, ACK coalescing, sequence-error
 * NAKs, RNR NAKs and silent drops.
 *
 * Conventions (both roles must agree):
 *  - Requests go to the responder's UDP port 4791 from the flow's own source
 *    port (--sport BASE + flow index). Answers (ACK, NAK, READ RESPONSE, CNP)
 *    go back to the requester's UDP port 4791 *from that same source port*,
 *    as rdma_rxe does for the two directions of one QP pair, or with
 *    --reply-sport from a port of each flow's own, as hardware RNICs do. The
 *    responder sends from a socket bound to (request destination address,
 *    that port); the requester receives on (its address, 4791).
 *  - Flow i sends to destination QPN (--qpn + i). The requester's own QPN is
 *    that plus --qpn-offset (default 0x100), modulo 2^24; the responder puts
 *    request QPN + --qpn-offset into every answer's BTH destination QP.
 *
 * The files: rocegen.c (command line), rocegen_requester.c and
 * rocegen_responder.c (the two state machines, independent of each other),
 * rocegen_util.c (addresses, sockets, signals, summary lines). Packets are
 * built by tools/lib/roce_pkt.c from the constants of bpf/lib/roce_proto.h;
 * the wire facts they follow are in docs/DESIGN.md. No BPF.
 */
#ifndef AGENTXDP_ROCEGEN_H
#define AGENTXDP_ROCEGEN_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "lib/cli.h"
#include "lib/roce_pkt.h"
#include "lib/roce_proto.h"

#define MAX_MTU		4096
#define MAX_MSG_SIZE	(16u << 20)	/* keeps a message far below 2^23 PSNs */
#define PKT_MAX		(ROCE_BTH_LEN + ROCE_RETH_LEN + ROCE_AETH_LEN + MAX_MTU + 3 + ROCE_ICRC_LEN)
#define READ_VA_BASE	0x7f0000000000ull
#define RKEY_BASE	0x1000u

enum msg_op { MOP_SEND, MOP_WRITE, MOP_READ };

extern const char *const rg_op_names[];	/* "send", "write", "read" */

/* an informational "rocegen: ..." line on stderr, unless c (a struct
 * common_opts) has -q */
#define rg_warn(c, ...)					\
	do {						\
		if (!(c)->quiet)			\
			cli_err(__VA_ARGS__);		\
	} while (0)

/*
 * Per-flow knob: "N" applies to every flow, "PORT=N" to the flow whose UDP
 * source port is PORT, "qpn:Q=N" to requests for destination QP Q.
 */
struct knob_ent {
	bool by_qpn;
	uint32_t key;
	uint64_t val;
};

struct knob {
	uint64_t def;
	struct knob_ent *ents;
	size_t n;
};

struct kv {
	const char *key;
	const char *sval;	/* string value if set, else uval */
	uint64_t uval;
};

#define KVU(k, v)	((struct kv){ .key = (k), .uval = (uint64_t)(v) })
#define KVS(k, v)	((struct kv){ .key = (k), .sval = (v) })

struct common_opts {
	int verbose;		/* -v, repeatable: each packet on stderr */
	bool quiet;		/* -q: no informational lines */
	bool json;		/* -j: the summaries as JSON objects */
	uint16_t port;
	uint16_t ctl_port;	/* 0: no control handshake */
	uint32_t mtu;
	uint32_t qpn_offset;
	double timeout_s;
	bool timeout_set;
};

struct rsp_opts {
	struct common_opts c;
	const char *bind_addr;
	struct knob delay_us;
	uint64_t jitter_us;
	uint32_t coalesce;
	uint64_t coalesce_us;
	struct knob nak_every;
	struct knob rnr_every;
	struct knob drop_every;
	unsigned int rnr_timer;
	bool cnp;
	bool count_only;
	bool flow_stats;
	uint64_t seed;
	uint16_t reply_sport;	/* 0: answer from the request's source port */
};

struct req_opts {
	struct common_opts c;
	const char *dst;
	const char *src;
	uint64_t count;
	int op;			/* enum msg_op, or -1 for mix */
	uint32_t flows;
	uint16_t sport;
	uint32_t qpn;
	uint32_t psn;
	bool psn_random;	/* each flow its own starting PSN, as RNICs pick */
	uint32_t size;
	uint64_t retransmit_every;
	uint64_t retransmit_pause_us;
	uint64_t interval_us;
	uint32_t window;
	uint64_t ack_timeout_us;
	uint32_t retry;
	uint32_t rnr_retry;
	bool no_recovery;
	uint64_t linger_ms;
	int tos;
	bool flow_stats;
};

/*
 * Control channel (UDP, --ctl-port, default 4792): a requester announces
 * "ROCEGEN1 HELLO sport=B flows=N qpn=Q" before it starts, like the
 * out-of-band connection setup of real RDMA, and the responder forgets the
 * PSN state of those flows. Without it a second run reusing ports, QPNs and
 * PSNs would look like a stream of duplicates. Never on the RoCE port.
 */
#define CTL_MAGIC	"ROCEGEN1"

/* the two roles: each runs until done (or signalled) and prints its summary */
int rg_run_responder(const struct rsp_opts *o);
int rg_run_requester(const struct req_opts *o);

/* rocegen_util.c */
void *rg_calloc(size_t n, size_t sz);
void *rg_realloc(void *p, size_t n, size_t sz);
uint64_t rg_now_ns(void);
/* packets of a message of size bytes (at least one) */
uint32_t rg_pkts_for(uint32_t size, uint32_t mtu);
/* an option's number (decimal or 0x hex) in [min, max], or a one-line
 * error and exit 1 */
uint64_t rg_opt_u64(const char *opt, const char *s, uint64_t min, uint64_t max);
double rg_opt_seconds(const char *opt, const char *s);
int rg_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss,
		  socklen_t *len);
void rg_sa_set_port(struct sockaddr_storage *ss, uint16_t port);
uint16_t rg_sa_port(const struct sockaddr_storage *ss);
socklen_t rg_sa_len(int family);
/* the address bytes (4 or 16) of a sockaddr, zero padded to 16 */
void rg_sa_addr_bytes(const struct sockaddr_storage *ss, uint8_t out[16]);
const char *rg_sa_str(const struct sockaddr_storage *ss, char *buf, size_t len);
/* after a non-blocking receive failed: false when the socket is drained,
 * true to go on (interrupted, or the ICMP error of an earlier send); any
 * other error ends the run with "WHAT: error" */
bool rg_recv_again(const char *what);
bool rg_same_addr(const struct sockaddr_storage *a,
		  const struct sockaddr_storage *b);
void rg_knob_parse(struct knob *k, const char *opt, const char *arg,
		   uint64_t max);
/* the last matching PORT= / qpn: entry wins; *specific tells which applied */
uint64_t rg_knob_get(const struct knob *k, uint16_t sport, uint32_t qpn,
		     bool *specific);
/* one "rocegen: key=value ..." line or, with c's -j, one JSON object */
void rg_print_kvs(const struct common_opts *c, const char *prefix, const struct kv *kv,
		  size_t n);
void rg_raise_nofile(void);
void rg_sock_bufs(int fd);
/* UDP socket bound to addr (with its port), SO_REUSEADDR; -errno on failure */
int rg_udp_bound(const struct sockaddr_storage *addr, bool nocheck);
void rg_set_nonblock(int fd);
/* block SIGINT/SIGTERM except inside ppoll(), so no wakeup is ever lost */
void rg_setup_signals(sigset_t *ppoll_mask);
/* true once SIGINT or SIGTERM came (rg_setup_signals()'s handler) */
bool rg_stopping(void);
int rg_wait_fds(struct pollfd *pfd, nfds_t n, uint64_t now, uint64_t wake,
		const sigset_t *mask);

#endif
