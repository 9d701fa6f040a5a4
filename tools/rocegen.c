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
 * Plain C, libc only. Build: gcc -O2 -Wall -Wextra -o rocegen rocegen.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define ROCE_UDP_PORT	4791
#define PSN_MASK	0xffffffu
#define QPN_MASK	0xffffffu
#define MSN_MASK	0xffffffu
#define BTH_LEN		12
#define RETH_LEN	16
#define AETH_LEN	4
#define ICRC_LEN	4
#define CNP_RSVD_LEN	16
#define PKEY_DEFAULT	0xffff
#define MAX_MTU		4096
#define MAX_MSG_SIZE	(16u << 20)	/* keeps a message far below 2^23 PSNs */
#define PKT_MAX		(BTH_LEN + RETH_LEN + AETH_LEN + MAX_MTU + 3 + ICRC_LEN)
#define READ_VA_BASE	0x7f0000000000ull
#define RKEY_BASE	0x1000u

/* RC opcodes (transport bits 000), see DESIGN.md "RoCE v2 on the wire" */
enum {
	OP_SEND_FIRST		= 0x00,
	OP_SEND_MIDDLE		= 0x01,
	OP_SEND_LAST		= 0x02,
	OP_SEND_LAST_IMM	= 0x03,
	OP_SEND_ONLY		= 0x04,
	OP_SEND_ONLY_IMM	= 0x05,
	OP_WRITE_FIRST		= 0x06,
	OP_WRITE_MIDDLE		= 0x07,
	OP_WRITE_LAST		= 0x08,
	OP_WRITE_LAST_IMM	= 0x09,
	OP_WRITE_ONLY		= 0x0a,
	OP_WRITE_ONLY_IMM	= 0x0b,
	OP_READ_REQ		= 0x0c,
	OP_READ_RESP_FIRST	= 0x0d,
	OP_READ_RESP_MIDDLE	= 0x0e,
	OP_READ_RESP_LAST	= 0x0f,
	OP_READ_RESP_ONLY	= 0x10,
	OP_ACK			= 0x11,
	OP_ATOMIC_ACK		= 0x12,
	OP_CMP_SWAP		= 0x13,
	OP_FETCH_ADD		= 0x14,
	OP_SEND_LAST_INV	= 0x16,
	OP_SEND_ONLY_INV	= 0x17,
	OP_CNP			= 0x81,
};

/* AETH syndrome: top 3 bits 000 ACK, 001 RNR NAK (timer), 011 NAK (code) */
#define AETH_ACK_UNLIMITED	0x1f
#define AETH_RNR		0x20
#define AETH_NAK		0x60
#define AETH_TYPE_MASK		0xe0
#define NAK_PSN_SEQ_ERR		0x00

enum msg_op { MOP_SEND, MOP_WRITE, MOP_READ };

static const char *const mop_name[] = { "send", "write", "read" };

/* ------------------------------------------------------------------------ */
/* small helpers                                                            */

static int verbose;
static bool quiet;
static bool json_out;
static volatile sig_atomic_t stop_requested;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("rocegen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnx(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("rocegen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n, size_t sz)
{
	size_t bytes;

	if (sz && n > SIZE_MAX / sz)
		die("out of memory");
	bytes = n * sz;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		die("out of memory");
	return p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & PSN_MASK;
}

/* a - b as a signed 24-bit distance: PSNs compare modulo 2^24 */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

static inline void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Base Transport Header, 12 bytes */
static void put_bth(uint8_t *p, uint8_t opcode, unsigned int pad,
		    uint32_t dqpn, bool ackreq, uint32_t psn)
{
	p[0] = opcode;
	p[1] = 0x40 | (uint8_t)((pad & 3) << 4);	/* MigReq as rxe, TVer 0 */
	put16(p + 2, PKEY_DEFAULT);
	p[4] = 0;
	put24(p + 5, dqpn & QPN_MASK);
	p[8] = ackreq ? 0x80 : 0;
	put24(p + 9, psn & PSN_MASK);
}

static void put_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
	put64(p, va);
	put32(p + 8, rkey);
	put32(p + 12, len);
}

static void put_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn)
{
	p[0] = syndrome;
	put24(p + 1, msn & MSN_MASK);
}

static const char *opcode_name(uint8_t op)
{
	static const char *const rc[] = {
		"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_IMM",
		"SEND_ONLY", "SEND_ONLY_IMM", "WRITE_FIRST", "WRITE_MIDDLE",
		"WRITE_LAST", "WRITE_LAST_IMM", "WRITE_ONLY", "WRITE_ONLY_IMM",
		"READ_REQUEST", "READ_RESP_FIRST", "READ_RESP_MIDDLE",
		"READ_RESP_LAST", "READ_RESP_ONLY", "ACK", "ATOMIC_ACK",
		"CMP_SWAP", "FETCH_ADD", "RESYNC", "SEND_LAST_INV",
		"SEND_ONLY_INV",
	};

	if (op < sizeof(rc) / sizeof(rc[0]))
		return rc[op];
	if (op == OP_CNP)
		return "CNP";
	return "OTHER";
}

/* IB RNR NAK timer field -> microseconds (IBA table 45) */
static uint64_t rnr_timer_us(unsigned int code)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return us[code & 31];
}

static uint32_t pkts_for(uint32_t size, uint32_t mtu)
{
	return size ? (size + mtu - 1) / mtu : 1;
}

/* ------------------------------------------------------------------------ */
/* argument parsing                                                         */

static uint64_t parse_u64(const char *opt, const char *s, uint64_t min,
			  uint64_t max)
{
	const char *p = s;
	int base = 10;
	uint64_t v = 0;

	if (!s || !*s)
		die("missing number for %s", opt);
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!*p)
			die("invalid number for %s: '%s'", opt, s);
	}
	for (; *p; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			die("invalid number for %s: '%s'", opt, s);
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			die("number out of range for %s: '%s'", opt, s);
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v < min || v > max)
		die("%s must be in [%" PRIu64 ", %" PRIu64 "], got '%s'", opt,
		    min, max, s);
	return v;
}

static double parse_seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400 * 7)
		die("invalid number of seconds for %s: '%s'", opt, s);
	return v;
}

static int parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 4], portstr[8];
	size_t n = strlen(s);

	if (n >= sizeof(buf) || !n)
		return -1;
	/* accept [v6addr] as well as v6addr */
	if (s[0] == '[' && s[n - 1] == ']') {
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = '\0';
	} else {
		memcpy(buf, s, n + 1);
	}
	if (!strchr(buf, ':')) {
		/* strict dotted quad: getaddrinfo would take "1.2.3" too */
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		memset(ss, 0, sizeof(*ss));
		if (inet_pton(AF_INET, buf, &sin->sin_addr) != 1)
			return -1;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	snprintf(portstr, sizeof(portstr), "%u", port);
	hints.ai_family = AF_INET6;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(buf, portstr, &hints, &res) || !res)
		return -1;
	if (res->ai_addrlen > sizeof(*ss) ||
	    (res->ai_family != AF_INET && res->ai_family != AF_INET6)) {
		freeaddrinfo(res);
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static uint16_t sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static socklen_t sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
}

/* the address bytes (4 or 16) of a sockaddr, zero padded to 16 */
static void sa_addr_bytes(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

static const char *sa_str(const struct sockaddr_storage *ss, char *buf,
			  size_t len)
{
	const void *a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

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

static void knob_parse(struct knob *k, const char *opt, const char *arg,
		       uint64_t max)
{
	const char *eq = strrchr(arg, '=');
	struct knob_ent e = { 0 };
	char key[64];
	size_t klen;

	if (!eq) {
		k->def = parse_u64(opt, arg, 0, max);
		return;
	}
	klen = (size_t)(eq - arg);
	if (!klen || klen >= sizeof(key))
		die("invalid value for %s: '%s' (want N, PORT=N or qpn:Q=N)",
		    opt, arg);
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (!strncmp(key, "qpn:", 4)) {
		e.by_qpn = true;
		e.key = (uint32_t)parse_u64(opt, key + 4, 0, QPN_MASK);
	} else if (!strncmp(key, "sport:", 6)) {
		e.key = (uint32_t)parse_u64(opt, key + 6, 1, 65535);
	} else {
		e.key = (uint32_t)parse_u64(opt, key, 1, 65535);
	}
	e.val = parse_u64(opt, eq + 1, 0, max);
	k->ents = xrealloc(k->ents, k->n + 1, sizeof(*k->ents));
	k->ents[k->n++] = e;
}

/* the last matching PORT= / qpn: entry wins; *specific tells which applied */
static uint64_t knob_get(const struct knob *k, uint16_t sport, uint32_t qpn,
			 bool *specific)
{
	size_t i = k->n;

	while (i--) {
		const struct knob_ent *e = &k->ents[i];

		if ((e->by_qpn && e->key == qpn) ||
		    (!e->by_qpn && e->key == sport)) {
			*specific = true;
			return e->val;
		}
	}
	*specific = false;
	return k->def;
}

/* ------------------------------------------------------------------------ */
/* summary output: one "rocegen: key=value ..." line or one JSON object     */

struct kv {
	const char *key;
	const char *sval;	/* string value if set, else uval */
	uint64_t uval;
};

static void print_kvs(const char *prefix, const struct kv *kv, size_t n)
{
	size_t i;

	if (json_out) {
		putchar('{');
		for (i = 0; i < n; i++) {
			if (kv[i].sval)
				printf("%s\"%s\":\"%s\"", i ? "," : "",
				       kv[i].key, kv[i].sval);
			else
				printf("%s\"%s\":%" PRIu64, i ? "," : "",
				       kv[i].key, kv[i].uval);
		}
		puts("}");
	} else {
		fputs(prefix, stdout);
		for (i = 0; i < n; i++) {
			if (kv[i].sval)
				printf(" %s=%s", kv[i].key, kv[i].sval);
			else
				printf(" %s=%" PRIu64, kv[i].key, kv[i].uval);
		}
		putchar('\n');
	}
	fflush(stdout);
}

#define KVU(k, v)	((struct kv){ .key = (k), .uval = (uint64_t)(v) })
#define KVS(k, v)	((struct kv){ .key = (k), .sval = (v) })

/* ------------------------------------------------------------------------ */
/* shared socket setup                                                      */

struct common_opts {
	uint16_t port;
	uint16_t ctl_port;	/* 0: no control handshake */
	uint32_t mtu;
	uint32_t qpn_offset;
	double timeout_s;
	bool timeout_set;
};

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void sock_bufs(int fd)
{
	int sz = 8 << 20;

	/* beyond net.core.[rw]mem_max when allowed: long reads come in bursts */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

/* UDP socket bound to addr (with its port), SO_REUSEADDR; -errno on failure */
static int udp_bound(const struct sockaddr_storage *addr, bool nocheck)
{
	int one = 1, fd, err;

	fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* rdma_rxe sends IPv4 RoCE with UDP checksum 0 */
	if (nocheck && addr->ss_family == AF_INET)
		setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, sa_len(addr->ss_family))) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* block SIGINT/SIGTERM except inside ppoll(), so no wakeup is ever lost */
static void setup_signals(sigset_t *ppoll_mask)
{
	struct sigaction sa = { 0 };
	sigset_t block;

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, ppoll_mask);
	sigdelset(ppoll_mask, SIGINT);
	sigdelset(ppoll_mask, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	/* microsecond delays need a tight timer slack */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

static int wait_fds(struct pollfd *pfd, nfds_t n, uint64_t now, uint64_t wake,
		    const sigset_t *mask)
{
	struct timespec ts, *tsp = NULL;
	int r;

	if (wake != UINT64_MAX) {
		uint64_t d = wake > now ? wake - now : 0;

		ts.tv_sec = (time_t)(d / 1000000000ull);
		ts.tv_nsec = (long)(d % 1000000000ull);
		tsp = &ts;
	}
	r = ppoll(pfd, n, tsp, mask);
	if (r < 0 && errno != EINTR)
		die("ppoll: %s", strerror(errno));
	return r;
}

/* ------------------------------------------------------------------------ */
/* responder                                                                */

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

struct sock_key {
	uint8_t family;
	uint8_t pad;
	uint16_t sport;
	uint32_t scope;
	uint8_t local[16];
};

struct rsock {
	struct sock_key key;	/* first: the hash table compares it */
	int fd;
};

struct flow_key {
	uint8_t family;
	uint8_t pad;
	uint16_t sport;
	uint32_t dqpn;
	uint32_t scope;
	uint8_t peer[16];
	uint8_t local[16];
};

struct rflow {
	struct flow_key key;	/* first: the hash table compares it */
	int fd;
	struct sockaddr_storage peer;	/* requester address, reply port */
	uint32_t req_qpn;		/* requester QPN = dqpn + offset */
	bool psn_init;
	bool nak_state;		/* NAK/RNR sent, drop out-of-order silently */
	uint32_t epsn;		/* next expected request PSN */
	uint32_t counted_next;	/* AckReq PSNs below this were counted once */
	uint32_t msn;
	uint64_t kcount;	/* AckReq requests counted for --*-every */
	uint64_t delay_ns;
	uint64_t nak_every, rnr_every, drop_every;
	bool nak_pf, rnr_pf, drop_pf;	/* knob is per flow: use kcount */
	uint32_t pend_cnt, pend_psn, pend_msn, pend_gen;
	uint32_t epoch;		/* bumped by a hello: drops queued answers */
	uint64_t last_due;
	uint64_t requests, msgs, dups, ooo, acks, naks, rnr, read_resp,
		 dropped, cnp;
};

struct htab {
	void **slot;
	size_t cap, n, keylen;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static void *ht_find(const struct htab *h, const void *key)
{
	size_t i;

	if (!h->cap)
		return NULL;
	i = (size_t)hash_bytes(key, h->keylen) & (h->cap - 1);
	while (h->slot[i]) {
		if (!memcmp(h->slot[i], key, h->keylen))
			return h->slot[i];
		i = (i + 1) & (h->cap - 1);
	}
	return NULL;
}

static void ht_put(struct htab *h, void *ent);

static void ht_grow(struct htab *h)
{
	struct htab nh = { .cap = h->cap ? h->cap * 2 : 64, .keylen = h->keylen };
	size_t i;

	nh.slot = xcalloc(nh.cap, sizeof(void *));
	for (i = 0; i < h->cap; i++)
		if (h->slot[i])
			ht_put(&nh, h->slot[i]);
	free(h->slot);
	*h = nh;
}

static void ht_put(struct htab *h, void *ent)
{
	size_t i;

	if ((h->n + 1) * 2 > h->cap)
		ht_grow(h);
	i = (size_t)hash_bytes(ent, h->keylen) & (h->cap - 1);
	while (h->slot[i])
		i = (i + 1) & (h->cap - 1);
	h->slot[i] = ent;
	h->n++;
}

enum ev_type { EV_ACK, EV_NAK, EV_RNR, EV_READ, EV_FLUSH };

struct rev {
	uint64_t due, seq;
	struct rflow *f;
	uint8_t type;
	uint32_t psn, msn, len, gen, epoch;
};

struct rheap {
	struct rev *a;
	size_t n, cap;
};

static bool rev_before(const struct rev *x, const struct rev *y)
{
	return x->due != y->due ? x->due < y->due : x->seq < y->seq;
}

static void heap_push(struct rheap *h, struct rev e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->a = xrealloc(h->a, h->cap, sizeof(*h->a));
	}
	i = h->n++;
	while (i && rev_before(&e, &h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = e;
}

static struct rev heap_pop(struct rheap *h)
{
	struct rev top = h->a[0], last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && rev_before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!rev_before(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

struct responder {
	struct rsp_opts o;
	struct htab socks, flows;
	struct rflow **flist;
	size_t nflows;
	struct rheap heap;
	uint64_t seq;
	uint64_t kcount;	/* AckReq requests counted, all flows */
	uint64_t rng;
	uint8_t zeros[MAX_MTU];
	/* totals */
	uint64_t requests, msgs, dups, ooo, acks, naks, rnr, read_resp,
		 dropped, cnp, cnp_rx, ignored, send_errors, sport_fallback;
};

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int rsp_sock_for(struct responder *r, int family, const uint8_t local[16],
			uint32_t scope, uint16_t sport)
{
	struct sock_key k;
	struct sockaddr_storage ss;
	struct rsock *s;
	char buf[INET6_ADDRSTRLEN];
	int fd;

	memset(&k, 0, sizeof(k));
	k.family = (uint8_t)family;
	k.sport = sport;
	k.scope = scope;
	memcpy(k.local, local, 16);
	s = ht_find(&r->socks, &k);
	if (s)
		return s->fd;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr, local, 4);
	} else {
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, local, 16);
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = scope;
	}
	sa_set_port(&ss, sport);
	fd = udp_bound(&ss, true);
	if (fd < 0) {
		/* the reply still goes out, but from another source port */
		warnx("cannot bind reply socket to %s port %u (%s); replying from an ephemeral port",
		      sa_str(&ss, buf, sizeof(buf)), sport, strerror(-fd));
		r->sport_fallback++;
		sa_set_port(&ss, 0);
		fd = udp_bound(&ss, true);
		if (fd < 0)
			die("cannot create reply socket: %s", strerror(-fd));
	}
	sock_bufs(fd);
	s = xcalloc(1, sizeof(*s));
	s->key = k;
	s->fd = fd;
	ht_put(&r->socks, s);
	return fd;
}

static void rsp_send(struct responder *r, struct rflow *f, const uint8_t *pkt,
		     size_t len)
{
	ssize_t n;

	do {
		n = sendto(f->fd, pkt, len, 0,
			   (const struct sockaddr *)&f->peer,
			   sa_len(f->peer.ss_family));
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* an ICMP error from an earlier reply surfaces once: retry */
		if (errno == ECONNREFUSED)
			n = sendto(f->fd, pkt, len, 0,
				   (const struct sockaddr *)&f->peer,
				   sa_len(f->peer.ss_family));
		if (n < 0)
			r->send_errors++;
	}
}

static void rsp_log(const struct rflow *f, const char *dir, uint8_t op,
		    uint32_t psn, const char *extra)
{
	char buf[INET6_ADDRSTRLEN];

	if (verbose < 1)
		return;
	fprintf(stderr, "%s %s peer=%s sport=%u qpn=0x%x psn=%u%s\n", dir,
		opcode_name(op), sa_str(&f->peer, buf, sizeof(buf)),
		f->key.sport, *dir == 't' ? f->req_qpn : f->key.dqpn, psn,
		extra ? extra : "");
}

static void rsp_send_aeth(struct responder *r, struct rflow *f, uint8_t syn,
			  uint32_t psn, uint32_t msn)
{
	uint8_t p[BTH_LEN + AETH_LEN + ICRC_LEN];
	char extra[32];

	put_bth(p, OP_ACK, 0, f->req_qpn, false, psn);
	put_aeth(p + BTH_LEN, syn, msn);
	memset(p + BTH_LEN + AETH_LEN, 0, ICRC_LEN);
	rsp_send(r, f, p, sizeof(p));
	snprintf(extra, sizeof(extra), " syndrome=0x%02x msn=%u", syn, msn);
	rsp_log(f, "tx", OP_ACK, psn, extra);
}

static void rsp_send_read(struct responder *r, struct rflow *f, uint32_t psn,
			  uint32_t len, uint32_t msn)
{
	uint32_t mtu = r->o.c.mtu, npk = pkts_for(len, mtu), i;
	uint8_t p[PKT_MAX];

	for (i = 0; i < npk; i++) {
		uint32_t plen = len ? (len - i * mtu < mtu ? len - i * mtu : mtu) : 0;
		unsigned int pad = (4 - plen % 4) % 4;
		bool first = i == 0, last = i == npk - 1;
		uint8_t op;
		size_t off = BTH_LEN;

		if (npk == 1)
			op = OP_READ_RESP_ONLY;
		else if (first)
			op = OP_READ_RESP_FIRST;
		else if (last)
			op = OP_READ_RESP_LAST;
		else
			op = OP_READ_RESP_MIDDLE;
		put_bth(p, op, pad, f->req_qpn, false, psn_add(psn, i));
		if (first || last) {
			put_aeth(p + off, AETH_ACK_UNLIMITED, msn);
			off += AETH_LEN;
		}
		memset(p + off, 0, plen + pad + ICRC_LEN);
		off += plen + pad + ICRC_LEN;
		rsp_send(r, f, p, off);
		rsp_log(f, "tx", op, psn_add(psn, i), NULL);
		f->read_resp++;
		r->read_resp++;
	}
}

static void rsp_send_cnp(struct responder *r, struct rflow *f)
{
	uint8_t p[BTH_LEN + CNP_RSVD_LEN + ICRC_LEN];

	memset(p, 0, sizeof(p));
	put_bth(p, OP_CNP, 0, f->req_qpn, false, 0);
	p[1] = 0;	/* CNP: no MigReq */
	rsp_send(r, f, p, sizeof(p));
	rsp_log(f, "tx", OP_CNP, 0, NULL);
	f->cnp++;
	r->cnp++;
}

static void rsp_run(struct responder *r, const struct rev *e);

/* queue an answer behind the flow's delay, keeping the flow's order */
static void rsp_emit(struct responder *r, struct rflow *f, uint8_t type,
		     uint32_t psn, uint32_t msn, uint32_t len)
{
	struct rev e = { .f = f, .type = type, .psn = psn, .msn = msn,
			 .len = len, .epoch = f->epoch };
	uint64_t now = now_ns(), due = now + f->delay_ns;

	if (r->o.jitter_us)
		due += rng_next(&r->rng) % (r->o.jitter_us * 1000 + 1);
	if (due < f->last_due)
		due = f->last_due;
	f->last_due = due;
	if (due <= now) {
		rsp_run(r, &e);
		return;
	}
	e.due = due;
	e.seq = r->seq++;
	heap_push(&r->heap, e);
}

static void rsp_coalesce_flush(struct responder *r, struct rflow *f)
{
	if (!f->pend_cnt)
		return;
	f->pend_cnt = 0;
	f->pend_gen++;
	rsp_emit(r, f, EV_ACK, f->pend_psn, f->pend_msn, 0);
}

static void rsp_run(struct responder *r, const struct rev *e)
{
	struct rflow *f = e->f;

	if (e->epoch != f->epoch)
		return;		/* queued before a new run started on the flow */
	switch (e->type) {
	case EV_ACK:
		rsp_send_aeth(r, f, AETH_ACK_UNLIMITED, e->psn, e->msn);
		f->acks++;
		r->acks++;
		break;
	case EV_NAK:
		rsp_send_aeth(r, f, AETH_NAK | NAK_PSN_SEQ_ERR, e->psn, e->msn);
		f->naks++;
		r->naks++;
		break;
	case EV_RNR:
		rsp_send_aeth(r, f, (uint8_t)(AETH_RNR | r->o.rnr_timer),
			      e->psn, e->msn);
		f->rnr++;
		r->rnr++;
		break;
	case EV_READ:
		rsp_send_read(r, f, e->psn, e->len, e->msn);
		break;
	case EV_FLUSH:
		if (f->pend_gen == e->gen)
			rsp_coalesce_flush(r, f);
		break;
	}
}

static bool every_hit(uint64_t every, bool per_flow, uint64_t fk, uint64_t gk)
{
	return every && ((per_flow ? fk : gk) % every) == 0;
}

static bool is_rc_request(uint8_t op)
{
	return op <= OP_READ_REQ || op == OP_SEND_LAST_INV ||
	       op == OP_SEND_ONLY_INV;
}

static bool is_last_pkt(uint8_t op)
{
	switch (op) {
	case OP_SEND_LAST: case OP_SEND_LAST_IMM: case OP_SEND_ONLY:
	case OP_SEND_ONLY_IMM: case OP_WRITE_LAST: case OP_WRITE_LAST_IMM:
	case OP_WRITE_ONLY: case OP_WRITE_ONLY_IMM: case OP_READ_REQ:
	case OP_SEND_LAST_INV: case OP_SEND_ONLY_INV:
		return true;
	}
	return false;
}

/*
 * One RC request packet, rxe-like: in order -> accept and answer; older PSN
 * (duplicate) -> ACK again with the latest PSN, or redo the read; newer PSN
 * (gap) -> one sequence-error NAK with the expected PSN, then silence until
 * the expected PSN arrives.
 */
static void rsp_request(struct responder *r, struct rflow *f, const uint8_t *p,
			size_t len, int tos)
{
	uint8_t op = p[0];
	uint32_t psn = get24(p + 9), rdlen = 0, npsn = 1;
	bool ackreq = p[8] & 0x80, is_read = op == OP_READ_REQ;
	int32_t d;

	f->requests++;
	r->requests++;
	rsp_log(f, "rx", op, psn, ackreq ? " ackreq" : NULL);
	if (r->o.cnp && (tos & 3) == 3)
		rsp_send_cnp(r, f);
	if (r->o.count_only)
		return;
	if (is_read) {
		if (len < BTH_LEN + RETH_LEN + ICRC_LEN) {
			r->ignored++;
			return;
		}
		rdlen = get32(p + BTH_LEN + 12);
		if (rdlen > MAX_MSG_SIZE) {
			r->ignored++;
			return;
		}
		npsn = pkts_for(rdlen, r->o.c.mtu);
	}
	if (!f->psn_init) {
		f->psn_init = true;
		f->epsn = psn;
		f->counted_next = psn;
	}
	d = psn_diff(psn, f->epsn);
	if (d < 0) {
		f->dups++;
		r->dups++;
		if (is_read)
			rsp_emit(r, f, EV_READ, psn, f->msn, rdlen);
		else if (ackreq)
			rsp_emit(r, f, EV_ACK, psn_add(f->epsn, PSN_MASK),
				 f->msn, 0);
		return;
	}
	if (d > 0) {
		f->ooo++;
		r->ooo++;
		if (!f->nak_state) {
			rsp_coalesce_flush(r, f);
			f->nak_state = true;
			rsp_emit(r, f, EV_NAK, f->epsn, f->msn, 0);
		}
		return;
	}
	f->nak_state = false;
	if ((ackreq || is_read) && psn_diff(psn, f->counted_next) >= 0) {
		/* each AckReq PSN counts once, so injected faults are exact */
		f->counted_next = psn_add(psn, 1);
		f->kcount++;
		r->kcount++;
		if (every_hit(f->drop_every, f->drop_pf, f->kcount, r->kcount)) {
			f->dropped++;
			r->dropped++;
			rsp_log(f, "drop", op, psn, NULL);
			return;
		}
		if (every_hit(f->rnr_every, f->rnr_pf, f->kcount, r->kcount)) {
			rsp_coalesce_flush(r, f);
			f->nak_state = true;
			rsp_emit(r, f, EV_RNR, psn, f->msn, 0);
			return;
		}
		if (every_hit(f->nak_every, f->nak_pf, f->kcount, r->kcount)) {
			rsp_coalesce_flush(r, f);
			f->nak_state = true;
			rsp_emit(r, f, EV_NAK, psn, f->msn, 0);
			return;
		}
	}
	f->epsn = psn_add(psn, npsn);
	if (is_last_pkt(op)) {
		f->msn = (f->msn + 1) & MSN_MASK;
		f->msgs++;
		r->msgs++;
	}
	if (is_read) {
		rsp_coalesce_flush(r, f);
		rsp_emit(r, f, EV_READ, psn, f->msn, rdlen);
		return;
	}
	if (!ackreq)
		return;
	if (r->o.coalesce <= 1) {
		rsp_emit(r, f, EV_ACK, psn, f->msn, 0);
		return;
	}
	f->pend_psn = psn;
	f->pend_msn = f->msn;
	if (++f->pend_cnt >= r->o.coalesce) {
		rsp_coalesce_flush(r, f);
	} else if (f->pend_cnt == 1) {
		struct rev e = {
			.due = now_ns() + r->o.coalesce_us * 1000,
			.seq = r->seq++, .f = f, .type = EV_FLUSH,
			.gen = f->pend_gen, .epoch = f->epoch,
		};

		heap_push(&r->heap, e);
	}
}

static struct rflow *rsp_flow(struct responder *r,
			      const struct sockaddr_storage *peer,
			      const uint8_t local[16], uint32_t scope,
			      uint32_t dqpn)
{
	struct flow_key k;
	struct rflow *f;
	const struct rsp_opts *o = &r->o;
	uint16_t sport = sa_port(peer);

	memset(&k, 0, sizeof(k));
	k.family = (uint8_t)peer->ss_family;
	k.sport = sport;
	k.dqpn = dqpn;
	k.scope = scope;
	sa_addr_bytes(peer, k.peer);
	memcpy(k.local, local, 16);
	f = ht_find(&r->flows, &k);
	if (f)
		return f;

	f = xcalloc(1, sizeof(*f));
	f->key = k;
	/* --reply-sport: each QP answers from a port of its own, as hardware
	 * RNICs pick one per QP on each side */
	f->fd = rsp_sock_for(r, peer->ss_family, local, scope,
			     o->reply_sport ? (uint16_t)(o->reply_sport + r->nflows) : sport);
	f->peer = *peer;
	sa_set_port(&f->peer, o->c.port);
	f->req_qpn = (dqpn + o->c.qpn_offset) & QPN_MASK;
	f->delay_ns = knob_get(&o->delay_us, sport, dqpn, &(bool){ 0 }) * 1000;
	f->nak_every = knob_get(&o->nak_every, sport, dqpn, &f->nak_pf);
	f->rnr_every = knob_get(&o->rnr_every, sport, dqpn, &f->rnr_pf);
	f->drop_every = knob_get(&o->drop_every, sport, dqpn, &f->drop_pf);
	ht_put(&r->flows, f);
	r->flist = xrealloc(r->flist, r->nflows + 1, sizeof(*r->flist));
	r->flist[r->nflows++] = f;
	return f;
}

static void rsp_packet(struct responder *r, const uint8_t *p, size_t len,
		       const struct sockaddr_storage *peer,
		       const uint8_t local[16], uint32_t scope, int tos)
{
	struct rflow *f;
	uint8_t op;

	if (len < BTH_LEN + ICRC_LEN) {
		r->ignored++;
		return;
	}
	op = p[0];
	if (op == OP_CNP) {
		r->cnp_rx++;
		return;
	}
	if (!is_rc_request(op)) {
		/* UD/UC/XRC, atomics, or answers sent to us */
		r->ignored++;
		return;
	}
	f = rsp_flow(r, peer, local, scope, get24(p + 5));
	rsp_request(r, f, p, len, tos);
}

/* one recvmsg; returns false when the socket is drained */
static bool rsp_recv_one(struct responder *r, int fd)
{
	uint8_t buf[PKT_MAX + 64], local[16];
	union {
		char buf[256];
		struct cmsghdr align;
	} cbuf;
	struct sockaddr_storage peer;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *c;
	uint32_t scope = 0;
	int tos = 0;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return false;
		if (errno == EINTR || errno == ECONNREFUSED)
			return true;
		die("recvmsg: %s", strerror(errno));
	}
	memset(local, 0, sizeof(local));
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(local, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TOS) {
			tos = *(uint8_t *)CMSG_DATA(c);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(local, &pi.ipi6_addr, 16);
			if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr))
				scope = pi.ipi6_ifindex;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS) {
			int tc;

			memcpy(&tc, CMSG_DATA(c), sizeof(tc));
			tos = tc;
		}
	}
	rsp_packet(r, buf, (size_t)n, &peer, local, scope, tos);
	return true;
}

/*
 * Control channel (UDP, --ctl-port, default 4792): a requester announces
 * "ROCEGEN1 HELLO sport=B flows=N qpn=Q" before it starts, like the
 * out-of-band connection setup of real RDMA, and the responder forgets the
 * PSN state of those flows. Without it a second run reusing ports, QPNs and
 * PSNs would look like a stream of duplicates. Never on the RoCE port.
 */
#define CTL_MAGIC	"ROCEGEN1"

static void rsp_ctl(struct responder *r, int fd)
{
	char buf[256], reply[64];
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	unsigned int sport, flows, qpn;
	uint8_t pa[16];
	size_t i, nreset = 0;
	ssize_t n;

	n = recvfrom(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT,
		     (struct sockaddr *)&peer, &pl);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, CTL_MAGIC " HELLO sport=%u flows=%u qpn=%u", &sport,
		   &flows, &qpn) != 3)
		return;
	sa_addr_bytes(&peer, pa);
	for (i = 0; i < r->nflows; i++) {
		struct rflow *f = r->flist[i];
		uint32_t k = (uint32_t)f->key.sport - sport;

		if (f->key.family != peer.ss_family ||
		    memcmp(f->key.peer, pa, 16) || f->key.sport < sport ||
		    k >= flows || f->key.dqpn != ((qpn + k) & QPN_MASK))
			continue;
		f->psn_init = false;
		f->nak_state = false;
		f->msn = 0;
		f->pend_cnt = 0;
		f->pend_gen++;
		f->epoch++;
		f->last_due = 0;
		nreset++;
	}
	n = snprintf(reply, sizeof(reply), CTL_MAGIC " OK reset=%zu", nreset);
	sendto(fd, reply, (size_t)n, 0, (struct sockaddr *)&peer, pl);
	if (verbose)
		warnx("control: hello sport=%u flows=%u qpn=0x%x, %zu flows reset",
		      sport, flows, qpn, nreset);
}

static int rsp_listen(const struct sockaddr_storage *ss, bool must)
{
	char buf[INET6_ADDRSTRLEN];
	int fd = udp_bound(ss, true), one = 1;

	if (fd < 0) {
		if (!must && (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL))
			return -1;
		die("cannot listen on %s port %u: %s%s",
		    sa_str(ss, buf, sizeof(buf)), sa_port(ss), strerror(-fd),
		    fd == -EADDRINUSE ?
		    " (another rocegen or rdma_rxe holds the port?)" : "");
	}
	if (ss->ss_family == AF_INET) {
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
	}
	sock_bufs(fd);
	set_nonblock(fd);
	return fd;
}

static void rsp_summary(struct responder *r)
{
	char peer[INET6_ADDRSTRLEN], qpn[16];
	size_t i;

	if (r->o.flow_stats) {
		for (i = 0; i < r->nflows; i++) {
			struct rflow *f = r->flist[i];

			snprintf(qpn, sizeof(qpn), "0x%x", f->key.dqpn);
			struct kv kv[] = {
				KVS("role", "responder-flow"),
				KVS("peer", sa_str(&f->peer, peer, sizeof(peer))),
				KVU("sport", f->key.sport), KVS("qpn", qpn),
				KVU("requests", f->requests), KVU("msgs", f->msgs),
				KVU("dups", f->dups), KVU("ooo", f->ooo),
				KVU("acks", f->acks), KVU("naks", f->naks),
				KVU("rnr", f->rnr), KVU("read_resp", f->read_resp),
				KVU("dropped", f->dropped), KVU("cnp", f->cnp),
			};
			print_kvs("rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
		}
	}
	struct kv kv[] = {
		KVS("role", "responder"),
		KVU("requests", r->requests), KVU("msgs", r->msgs),
		KVU("dups", r->dups), KVU("ooo", r->ooo),
		KVU("acks", r->acks), KVU("naks", r->naks), KVU("rnr", r->rnr),
		KVU("read_resp", r->read_resp), KVU("dropped", r->dropped),
		KVU("cnp", r->cnp), KVU("cnp_rx", r->cnp_rx),
		KVU("ignored", r->ignored), KVU("flows", r->nflows),
		KVU("send_errors", r->send_errors),
		KVU("sport_fallback", r->sport_fallback),
	};
	print_kvs("rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
}

static int run_responder(struct responder *r)
{
	struct pollfd pfd[4];
	bool is_ctl[4] = { false };
	struct sockaddr_storage ss;
	socklen_t sl;
	sigset_t mask;
	char buf[INET6_ADDRSTRLEN + 8], where[2][INET6_ADDRSTRLEN + 16];
	uint64_t deadline = UINT64_MAX;
	nfds_t n = 0, i;

	r->socks.keylen = sizeof(struct sock_key);
	r->flows.keylen = sizeof(struct flow_key);
	r->rng = r->o.seed ? r->o.seed : 0x9e3779b97f4a7c15ull;
	raise_nofile();
	setup_signals(&mask);

	if (r->o.bind_addr) {
		if (parse_addr(r->o.bind_addr, r->o.c.port, &ss, &sl))
			die("invalid bind address: '%s'", r->o.bind_addr);
		pfd[n].fd = rsp_listen(&ss, true);
		snprintf(where[n], sizeof(where[n]), "%s", r->o.bind_addr);
		n++;
	} else {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET;
		sa_set_port(&ss, r->o.c.port);
		pfd[n].fd = rsp_listen(&ss, true);
		snprintf(where[n], sizeof(where[n]), "0.0.0.0");
		n++;
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET6;
		sa_set_port(&ss, r->o.c.port);
		pfd[n].fd = rsp_listen(&ss, false);
		if (pfd[n].fd >= 0) {
			snprintf(where[n], sizeof(where[n]), "[::]");
			n++;
		}
	}
	if (r->o.c.ctl_port) {
		nfds_t ndata = n;

		for (i = 0; i < ndata; i++) {
			socklen_t l = sizeof(ss);

			if (getsockname(pfd[i].fd, (struct sockaddr *)&ss, &l))
				die("getsockname: %s", strerror(errno));
			sa_set_port(&ss, r->o.c.ctl_port);
			pfd[n].fd = udp_bound(&ss, false);
			if (pfd[n].fd < 0)
				die("cannot listen on control port %u: %s",
				    r->o.c.ctl_port, strerror(-pfd[n].fd));
			set_nonblock(pfd[n].fd);
			is_ctl[n++] = true;
		}
	}
	for (i = 0; i < n; i++)
		pfd[i].events = POLLIN;
	if (r->o.c.timeout_s > 0)
		deadline = now_ns() + (uint64_t)(r->o.c.timeout_s * 1e9);

	snprintf(buf, sizeof(buf), "%u", r->o.c.port);
	warnx("responder listening on %s%s%s port %s", where[0],
	      n > 1 && !is_ctl[1] ? " and " : "",
	      n > 1 && !is_ctl[1] ? where[1] : "", buf);

	while (!stop_requested) {
		uint64_t now = now_ns(), wake = deadline;
		int budget;

		if (now >= deadline)
			break;
		while (r->heap.n && r->heap.a[0].due <= now) {
			struct rev e = heap_pop(&r->heap);

			rsp_run(r, &e);
		}
		if (r->heap.n && r->heap.a[0].due < wake)
			wake = r->heap.a[0].due;
		if (wait_fds(pfd, n, now_ns(), wake, &mask) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (is_ctl[i]) {
				rsp_ctl(r, pfd[i].fd);
				continue;
			}
			/* bounded, so due answers are not starved */
			for (budget = 256; budget && rsp_recv_one(r, pfd[i].fd);
			     budget--)
				;
		}
	}
	rsp_summary(r);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* requester                                                                */

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

struct msg {
	uint32_t psn;		/* first PSN */
	uint32_t npsn;		/* PSNs consumed (read: response packets) */
	uint32_t npk;		/* request packets */
	uint32_t size;
	uint8_t op;		/* enum msg_op */
	bool retransmitted;	/* Karn: no RTT sample */
	uint32_t retries, rnr_retries;
	uint32_t rd_next;	/* next expected read response PSN */
	uint64_t first_tx_ns, tx_ns;
};

struct qflow {
	int fd;
	uint16_t sport;
	uint32_t dqpn, lqpn;
	uint32_t next_psn;
	uint64_t quota, issued;
	struct msg *q;
	size_t qcap, qhead, qlen;
	bool rnr_wait;
	uint64_t rnr_until;
	uint32_t rnr_psn;
	bool dead;
	uint64_t progress_ns;	/* last ACK/response progress: restarts timer */
	/* stats */
	uint64_t requests, completed, retransmits, acks, naks, rnr, read_resp;
	uint64_t rtt_n, rtt_sum, rtt_min, rtt_max;
};

struct dup_ent {
	uint64_t due;
	uint32_t flow;
	struct msg m;
};

enum retx_cause { RC_INJECTED, RC_TIMEOUT, RC_NAK, RC_RNR };

struct requester {
	struct req_opts o;
	struct qflow *fl;
	struct sockaddr_storage dst, src;
	int ack_fd;
	struct dup_ent *dups;
	size_t ndup_head, ndup, dupcap;
	uint64_t issued_total;
	uint64_t last_rx_ns;
	uint8_t payload[MAX_MTU];
	/* totals */
	uint64_t requests, sent, retransmits, retx[4], acks, dup_acks, naks,
		 rnr, read_resp, cnp, completed, failed, timeouts, stray,
		 bad_qpn, send_errors;
	uint64_t rtt_n, rtt_sum, rtt_min, rtt_max;
};

static struct msg *fq_at(struct qflow *f, size_t i)
{
	return &f->q[(f->qhead + i) % f->qcap];
}

static void fq_push(struct qflow *f, const struct msg *m)
{
	if (f->qlen == f->qcap) {
		size_t ncap = f->qcap ? f->qcap * 2 : 16, i;
		struct msg *nq = xcalloc(ncap, sizeof(*nq));

		for (i = 0; i < f->qlen; i++)
			nq[i] = *fq_at(f, i);
		free(f->q);
		f->q = nq;
		f->qcap = ncap;
		f->qhead = 0;
	}
	f->q[(f->qhead + f->qlen) % f->qcap] = *m;
	f->qlen++;
}

static void fq_pop(struct qflow *f)
{
	f->qhead = (f->qhead + 1) % f->qcap;
	f->qlen--;
}

static uint32_t msg_end(const struct msg *m)
{
	return psn_add(m->psn, m->npsn - 1);
}

static void req_log(const struct requester *rq, const struct qflow *f,
		    const char *dir, uint8_t op, uint32_t psn, const char *extra)
{
	(void)rq;
	if (verbose < 1)
		return;
	fprintf(stderr, "%s %s sport=%u qpn=0x%x psn=%u%s\n", dir,
		opcode_name(op), f->sport, *dir == 't' ? f->dqpn : f->lqpn, psn,
		extra ? extra : "");
}

static uint8_t req_opcode(const struct msg *m, uint32_t k)
{
	bool first = k == 0, last = k == m->npk - 1;

	if (m->op == MOP_READ)
		return OP_READ_REQ;
	if (m->op == MOP_SEND)
		return first && last ? OP_SEND_ONLY : first ? OP_SEND_FIRST :
		       last ? OP_SEND_LAST : OP_SEND_MIDDLE;
	return first && last ? OP_WRITE_ONLY : first ? OP_WRITE_FIRST :
	       last ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
}

/* transmit request packet k of message m */
static void req_send_pkt(struct requester *rq, struct qflow *f,
			 const struct msg *m, uint32_t k, const char *why)
{
	uint8_t pkt[PKT_MAX];
	uint32_t mtu = rq->o.c.mtu, psn = psn_add(m->psn, k), plen = 0;
	uint32_t idx = (uint32_t)(f - rq->fl);
	uint8_t op = req_opcode(m, k);
	bool last = k == m->npk - 1;
	unsigned int pad = 0;
	size_t off = BTH_LEN;
	ssize_t n;

	if (m->op != MOP_READ && m->size) {
		plen = m->size - k * mtu < mtu ? m->size - k * mtu : mtu;
		pad = (4 - plen % 4) % 4;
	}
	put_bth(pkt, op, pad, f->dqpn, last, psn);
	if (op == OP_READ_REQ || op == OP_WRITE_FIRST || op == OP_WRITE_ONLY) {
		put_reth(pkt + off, READ_VA_BASE + ((uint64_t)idx << 32),
			 RKEY_BASE + idx, m->size);
		off += RETH_LEN;
	}
	if (plen) {
		memcpy(pkt + off, rq->payload, plen);
		off += plen;
	}
	memset(pkt + off, 0, pad + ICRC_LEN);
	off += pad + ICRC_LEN;
	do {
		n = send(f->fd, pkt, off, 0);
		/* a pending ICMP error is reported once, then cleared */
	} while (n < 0 && (errno == EINTR || errno == ECONNREFUSED));
	if (n < 0)
		rq->send_errors++;
	if (verbose >= 1) {
		char extra[48];

		snprintf(extra, sizeof(extra), "%s%s%s", last ? " ackreq" : "",
			 why ? " " : "", why ? why : "");
		req_log(rq, f, "tx", op, psn, extra);
	}
}

static void req_retx_count(struct requester *rq, struct qflow *f,
			   enum retx_cause c)
{
	rq->retransmits++;
	rq->retx[c]++;
	f->retransmits++;
}

/* go-back-N: resend everything outstanding from PSN from */
static void req_go_back(struct requester *rq, struct qflow *f, uint32_t from,
			enum retx_cause cause)
{
	static const char *const why[] = { "retx=injected", "retx=timeout",
					   "retx=nak", "retx=rnr" };
	uint64_t now = now_ns();
	size_t i, j = f->qlen;

	for (i = 0; i < f->qlen; i++) {
		struct msg *m = fq_at(f, i);

		if (psn_diff(from, m->psn) >= 0 &&
		    psn_diff(from, m->psn) < (int32_t)m->npsn) {
			j = i;
			break;
		}
	}
	if (j == f->qlen) {
		if (!f->qlen || psn_diff(from, fq_at(f, 0)->psn) > 0)
			return;	/* stale: nothing outstanding there */
		j = 0;
		from = fq_at(f, 0)->psn;
	}
	for (i = j; i < f->qlen; i++) {
		struct msg *m = fq_at(f, i);
		uint32_t k = 0;

		if (i == j && m->op != MOP_READ)
			k = (uint32_t)psn_diff(from, m->psn);
		for (; k < m->npk; k++) {
			req_send_pkt(rq, f, m, k, why[cause]);
			req_retx_count(rq, f, cause);
		}
		m->retransmitted = true;
		m->rd_next = m->psn;
		m->tx_ns = now;
	}
}

static void req_complete_head(struct requester *rq, struct qflow *f,
			      uint64_t now)
{
	struct msg *m = fq_at(f, 0);

	if (!m->retransmitted) {
		uint64_t rtt = (now - m->first_tx_ns) / 1000;

		rq->rtt_n++;
		rq->rtt_sum += rtt;
		if (rq->rtt_n == 1 || rtt < rq->rtt_min)
			rq->rtt_min = rtt;
		if (rtt > rq->rtt_max)
			rq->rtt_max = rtt;
		f->rtt_n++;
		f->rtt_sum += rtt;
		if (f->rtt_n == 1 || rtt < f->rtt_min)
			f->rtt_min = rtt;
		if (rtt > f->rtt_max)
			f->rtt_max = rtt;
	}
	rq->completed++;
	f->completed++;
	f->progress_ns = now;
	fq_pop(f);
}

/* cumulative: complete every message whose last PSN is <= psn */
static uint64_t req_ack_upto(struct requester *rq, struct qflow *f,
			     uint32_t psn)
{
	uint64_t now = now_ns(), n = 0;

	/* an acknowledgement beyond what was sent is bogus */
	if (psn_diff(psn, f->next_psn) >= 0)
		return 0;
	while (f->qlen && psn_diff(psn, msg_end(fq_at(f, 0))) >= 0) {
		req_complete_head(rq, f, now);
		n++;
	}
	return n;
}

static void req_flow_dead(struct requester *rq, struct qflow *f,
			  const char *why)
{
	warnx("flow sport=%u qpn=0x%x: %s, giving up", f->sport, f->dqpn, why);
	rq->failed += f->qlen + (f->quota - f->issued);
	f->qlen = 0;
	f->issued = f->quota;
	f->dead = true;
	f->rnr_wait = false;
}

/* the outstanding message holding psn, if any */
static struct msg *req_find(struct qflow *f, uint32_t psn)
{
	size_t i;

	for (i = 0; i < f->qlen; i++) {
		struct msg *m = fq_at(f, i);
		int32_t d = psn_diff(psn, m->psn);

		if (d >= 0 && d < (int32_t)m->npsn)
			return m;
	}
	return NULL;
}

static void req_aeth(struct requester *rq, struct qflow *f, uint32_t psn,
		     uint8_t syn)
{
	struct msg *m;

	switch (syn & AETH_TYPE_MASK) {
	case 0x00:		/* ACK */
		rq->acks++;
		f->acks++;
		if (!req_ack_upto(rq, f, psn))
			rq->dup_acks++;
		break;
	case AETH_RNR:
		rq->rnr++;
		f->rnr++;
		/* acknowledges everything before psn */
		req_ack_upto(rq, f, psn_add(psn, PSN_MASK));
		m = req_find(f, psn);
		if (!m || rq->o.no_recovery)
			break;
		if (++m->rnr_retries > rq->o.rnr_retry) {
			req_flow_dead(rq, f, "RNR retry count exceeded");
			break;
		}
		f->rnr_wait = true;
		f->rnr_psn = psn;
		f->rnr_until = now_ns() + rnr_timer_us(syn & 0x1f) * 1000;
		break;
	case AETH_NAK:
		rq->naks++;
		f->naks++;
		req_ack_upto(rq, f, psn_add(psn, PSN_MASK));
		m = req_find(f, psn);
		if (!m || rq->o.no_recovery)
			break;
		if ((syn & 0x1f) != NAK_PSN_SEQ_ERR) {
			req_flow_dead(rq, f, "fatal NAK");
			break;
		}
		if (++m->retries > rq->o.retry) {
			req_flow_dead(rq, f, "retry count exceeded after NAKs");
			break;
		}
		req_go_back(rq, f, psn, RC_NAK);
		break;
	default:
		rq->stray++;
		break;
	}
}

static void req_read_resp(struct requester *rq, struct qflow *f, uint8_t op,
			  uint32_t psn)
{
	uint64_t now = now_ns();
	struct msg *m;

	rq->read_resp++;
	f->read_resp++;
	m = req_find(f, psn);
	if (!m || m->op != MOP_READ)
		return;		/* duplicate of a finished read */
	/* the first response implicitly acknowledges all earlier requests */
	while (fq_at(f, 0) != m)
		req_complete_head(rq, f, now);
	if (op == OP_READ_RESP_FIRST || op == OP_READ_RESP_ONLY) {
		if (psn != m->psn)
			return;
	} else if (psn != m->rd_next) {
		return;		/* out of sequence: the timer will redo it */
	}
	m->rd_next = psn_add(psn, 1);
	/* a long read is progressing: restart the retransmit timer */
	f->progress_ns = now;
	if ((op == OP_READ_RESP_LAST || op == OP_READ_RESP_ONLY) &&
	    psn == msg_end(m))
		req_complete_head(rq, f, now);
}

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];

	if (a->ss_family != b->ss_family)
		return false;
	sa_addr_bytes(a, x);
	sa_addr_bytes(b, y);
	return !memcmp(x, y, 16);
}

static bool req_recv_one(struct requester *rq)
{
	uint8_t p[PKT_MAX + 64];
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	struct qflow *f;
	uint32_t psn;
	ssize_t n;
	uint8_t op;

	n = recvfrom(rq->ack_fd, p, sizeof(p), MSG_DONTWAIT,
		     (struct sockaddr *)&peer, &pl);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return false;
		if (errno == EINTR || errno == ECONNREFUSED)
			return true;
		die("recvfrom: %s", strerror(errno));
	}
	rq->last_rx_ns = now_ns();
	if ((size_t)n < BTH_LEN + ICRC_LEN || !same_addr(&peer, &rq->dst)) {
		rq->stray++;
		return true;
	}
	/* an answer belongs to the flow whose QPN it names, whatever port
	 * it comes from (hardware RNICs answer from a port of their own) */
	{
		uint32_t idx = (get24(p + 5) - rq->fl[0].lqpn) & QPN_MASK;

		if (idx >= rq->o.flows) {
			rq->bad_qpn++;
			return true;
		}
		f = &rq->fl[idx];
	}
	op = p[0];
	psn = get24(p + 9);
	if (verbose >= 1) {
		char extra[32] = "";

		if (op == OP_ACK || op == OP_READ_RESP_FIRST ||
		    op == OP_READ_RESP_LAST || op == OP_READ_RESP_ONLY)
			snprintf(extra, sizeof(extra), " syndrome=0x%02x",
				 (size_t)n >= BTH_LEN + AETH_LEN ?
				 p[BTH_LEN] : 0);
		req_log(rq, f, "rx", op, psn, extra);
	}
	switch (op) {
	case OP_ACK:
		if ((size_t)n < BTH_LEN + AETH_LEN + ICRC_LEN) {
			rq->stray++;
			break;
		}
		req_aeth(rq, f, psn, p[BTH_LEN]);
		break;
	case OP_READ_RESP_FIRST:
	case OP_READ_RESP_MIDDLE:
	case OP_READ_RESP_LAST:
	case OP_READ_RESP_ONLY:
		req_read_resp(rq, f, op, psn);
		break;
	case OP_CNP:
		rq->cnp++;
		break;
	default:
		rq->stray++;
		break;
	}
	return true;
}

static void req_issue(struct requester *rq, struct qflow *f, uint64_t now)
{
	struct msg m = { 0 };
	uint32_t k, mtu = rq->o.c.mtu;

	rq->issued_total++;
	m.op = (uint8_t)(rq->o.op >= 0 ? rq->o.op :
			 (int)((rq->issued_total - 1) % 3));
	m.psn = f->next_psn;
	m.size = rq->o.size;
	m.npsn = pkts_for(m.size, mtu);
	m.npk = m.op == MOP_READ ? 1 : m.npsn;
	m.rd_next = m.psn;
	m.first_tx_ns = m.tx_ns = now;
	f->next_psn = psn_add(f->next_psn, m.npsn);
	f->issued++;
	f->requests++;
	rq->requests++;
	fq_push(f, &m);
	for (k = 0; k < m.npk; k++)
		req_send_pkt(rq, f, &m, k, NULL);
	rq->sent += m.npk;

	if (rq->o.retransmit_every &&
	    rq->issued_total % rq->o.retransmit_every == 0) {
		if (rq->ndup == rq->dupcap) {
			rq->dupcap = rq->dupcap ? rq->dupcap * 2 : 64;
			rq->dups = xrealloc(rq->dups, rq->dupcap,
					    sizeof(*rq->dups));
		}
		rq->dups[rq->ndup++] = (struct dup_ent){
			.due = now + rq->o.retransmit_pause_us * 1000,
			.flow = (uint32_t)(f - rq->fl), .m = m,
		};
	}
}

/* resend the AckReq packet of every Nth message once, after a pause */
static void req_run_dups(struct requester *rq, uint64_t now)
{
	while (rq->ndup_head < rq->ndup && rq->dups[rq->ndup_head].due <= now) {
		struct dup_ent *d = &rq->dups[rq->ndup_head++];
		struct qflow *f = &rq->fl[d->flow];
		struct msg *m = req_find(f, d->m.psn);

		if (!f->dead) {
			req_send_pkt(rq, f, &d->m, d->m.npk - 1,
				     "retx=injected");
			req_retx_count(rq, f, RC_INJECTED);
			if (m && m->psn == d->m.psn)
				m->retransmitted = true;
		}
	}
	if (rq->ndup_head == rq->ndup)
		rq->ndup_head = rq->ndup = 0;
}

/* when the flow's retransmit timer fires (IB: per QP, restarted on progress) */
static uint64_t req_timer_due(const struct requester *rq, const struct qflow *f)
{
	uint64_t t = fq_at((struct qflow *)f, 0)->tx_ns;

	if (f->progress_ns > t)
		t = f->progress_ns;
	return t + rq->o.ack_timeout_us * 1000;
}

static void req_timeout(struct requester *rq, struct qflow *f)
{
	struct msg *m = fq_at(f, 0);

	rq->timeouts++;
	if (rq->o.no_recovery) {
		rq->failed++;
		fq_pop(f);
		return;
	}
	if (++m->retries > rq->o.retry) {
		req_flow_dead(rq, f, "retry count exceeded");
		return;
	}
	req_go_back(rq, f, m->psn, RC_TIMEOUT);
}

static void req_setup(struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	socklen_t dl, sl;
	char buf[INET6_ADDRSTRLEN];
	uint32_t i;
	int fd;

	if (parse_addr(o->dst, o->c.port, &rq->dst, &dl))
		die("invalid destination address: '%s'", o->dst);
	if (o->src) {
		if (parse_addr(o->src, 0, &rq->src, &sl))
			die("invalid source address: '%s'", o->src);
		if (rq->src.ss_family != rq->dst.ss_family)
			die("source and destination address families differ");
	} else {
		/* let routing pick the source, as the kernel would */
		fd = socket(rq->dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&rq->dst, dl))
			die("no route to %s: %s", o->dst, strerror(errno));
		sl = sizeof(rq->src);
		if (getsockname(fd, (struct sockaddr *)&rq->src, &sl))
			die("getsockname: %s", strerror(errno));
		close(fd);
	}

	if (same_addr(&rq->src, &rq->dst))
		die("source and destination are both %s: answers come back to port %u, so run the responder in another namespace or on another address",
		    sa_str(&rq->dst, buf, sizeof(buf)), o->c.port);
	sa_set_port(&rq->src, o->c.port);
	rq->ack_fd = udp_bound(&rq->src, true);
	if (rq->ack_fd < 0)
		die("cannot listen for answers on %s port %u: %s%s",
		    sa_str(&rq->src, buf, sizeof(buf)), o->c.port,
		    strerror(-rq->ack_fd),
		    rq->ack_fd == -EADDRINUSE ?
		    " (a responder or rdma_rxe in this namespace holds the port; use another address or namespace)" :
		    "");
	sock_bufs(rq->ack_fd);
	set_nonblock(rq->ack_fd);

	rq->fl = xcalloc(o->flows, sizeof(*rq->fl));
	for (i = 0; i < o->flows; i++) {
		struct qflow *f = &rq->fl[i];
		struct sockaddr_storage ss = rq->src;

		f->sport = (uint16_t)(o->sport + i);
		f->dqpn = (o->qpn + i) & QPN_MASK;
		f->lqpn = (f->dqpn + o->c.qpn_offset) & QPN_MASK;
		/* a fixed hash of the flow index: random-looking 24-bit
		 * starting PSNs, the same every run */
		f->next_psn = o->psn_random ?
			(uint32_t)((i + 1) * 0x9E3779B97F4A7C15ull >> 40) & PSN_MASK : o->psn;
		f->quota = o->count / o->flows + (i < o->count % o->flows);
		sa_set_port(&ss, f->sport);
		f->fd = udp_bound(&ss, true);
		if (f->fd < 0)
			die("cannot bind source port %u on %s: %s", f->sport,
			    sa_str(&ss, buf, sizeof(buf)), strerror(-f->fd));
		if (connect(f->fd, (struct sockaddr *)&rq->dst, dl))
			die("connect to %s: %s", o->dst, strerror(errno));
		sock_bufs(f->fd);
		if (o->tos >= 0) {
			int tos = o->tos;

			if (rq->dst.ss_family == AF_INET)
				setsockopt(f->fd, IPPROTO_IP, IP_TOS, &tos,
					   sizeof(tos));
			else
				setsockopt(f->fd, IPPROTO_IPV6, IPV6_TCLASS,
					   &tos, sizeof(tos));
		}
	}
	for (i = 0; i < sizeof(rq->payload); i++)
		rq->payload[i] = (uint8_t)i;
}

/* announce the flows to the responder; false if it never answered */
static bool req_hello(struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	struct sockaddr_storage ss = rq->src, to = rq->dst;
	char msg[128], buf[128];
	struct pollfd pfd;
	int fd, tries, len;
	bool ok = false;

	sa_set_port(&ss, 0);
	sa_set_port(&to, o->c.ctl_port);
	fd = udp_bound(&ss, false);
	if (fd < 0)
		die("cannot create control socket: %s", strerror(-fd));
	len = snprintf(msg, sizeof(msg), CTL_MAGIC " HELLO sport=%u flows=%u qpn=%u",
		       o->sport, o->flows, o->qpn);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (tries = 0; tries < 3 && !ok && !stop_requested; tries++) {
		sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&to,
		       sa_len(to.ss_family));
		while (poll(&pfd, 1, 100) > 0) {
			ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

			if (n < 0 && errno == ECONNREFUSED)
				break;
			if (n > 0) {
				buf[n] = '\0';
				if (!strncmp(buf, CTL_MAGIC " OK", strlen(CTL_MAGIC) + 3)) {
					ok = true;
					break;
				}
			}
		}
	}
	close(fd);
	if (!ok)
		warnx("no answer on control port %u of %s: a responder that saw these flows before may take the PSNs for duplicates",
		      o->c.ctl_port, o->dst);
	return ok;
}

static bool flow_can_issue(const struct requester *rq, const struct qflow *f)
{
	return !f->dead && !f->rnr_wait && f->issued < f->quota &&
	       (!rq->o.window || f->qlen < rq->o.window);
}

static bool req_all_done(const struct requester *rq)
{
	uint32_t i;

	if (rq->ndup_head < rq->ndup)
		return false;
	for (i = 0; i < rq->o.flows; i++) {
		const struct qflow *f = &rq->fl[i];

		if (!f->dead && (f->issued < f->quota || f->qlen))
			return false;
	}
	return true;
}

static void req_summary(struct requester *rq, uint64_t elapsed_us, bool timed_out)
{
	char qpn[16];
	uint32_t i;

	if (rq->o.flow_stats) {
		for (i = 0; i < rq->o.flows; i++) {
			struct qflow *f = &rq->fl[i];

			snprintf(qpn, sizeof(qpn), "0x%x", f->dqpn);
			struct kv kv[] = {
				KVS("role", "requester-flow"),
				KVU("sport", f->sport), KVS("qpn", qpn),
				KVU("requests", f->requests),
				KVU("completed", f->completed),
				KVU("retransmits", f->retransmits),
				KVU("acks", f->acks), KVU("naks", f->naks),
				KVU("rnr", f->rnr), KVU("read_resp", f->read_resp),
				KVU("next_psn", f->next_psn),
				KVU("rtt_min_us", f->rtt_min),
				KVU("rtt_avg_us", f->rtt_n ? f->rtt_sum / f->rtt_n : 0),
				KVU("rtt_max_us", f->rtt_max),
			};
			print_kvs("rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
		}
	}
	struct kv kv[] = {
		KVS("role", "requester"),
		KVS("op", rq->o.op >= 0 ? mop_name[rq->o.op] : "mix"),
		KVU("requests", rq->requests), KVU("sent", rq->sent),
		KVU("retransmits", rq->retransmits),
		KVU("retx_injected", rq->retx[RC_INJECTED]),
		KVU("retx_timeout", rq->retx[RC_TIMEOUT]),
		KVU("retx_nak", rq->retx[RC_NAK]),
		KVU("retx_rnr", rq->retx[RC_RNR]),
		KVU("acks", rq->acks), KVU("dup_acks", rq->dup_acks),
		KVU("naks", rq->naks), KVU("rnr", rq->rnr),
		KVU("read_resp", rq->read_resp), KVU("cnp", rq->cnp),
		KVU("completed", rq->completed), KVU("failed", rq->failed),
		KVU("timeouts", rq->timeouts), KVU("stray", rq->stray),
		KVU("bad_qpn", rq->bad_qpn), KVU("send_errors", rq->send_errors),
		KVU("rtt_min_us", rq->rtt_min),
		KVU("rtt_avg_us", rq->rtt_n ? rq->rtt_sum / rq->rtt_n : 0),
		KVU("rtt_max_us", rq->rtt_max),
		KVU("elapsed_us", elapsed_us),
		KVS("status", timed_out ? "timeout" :
			      stop_requested ? "interrupted" :
			      rq->completed == rq->o.count ? "ok" : "incomplete"),
	};
	print_kvs("rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
}

static int run_requester(struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	uint64_t start, deadline, next_issue, done_ns = 0;
	uint64_t linger = o->linger_ms * 1000000;
	struct pollfd pfd;
	sigset_t mask;
	bool timed_out = false;
	uint32_t rr = 0;

	raise_nofile();
	setup_signals(&mask);
	req_setup(rq);
	if (o->c.ctl_port)
		req_hello(rq);
	if (verbose) {
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

		warnx("requester %s -> %s op=%s count=%" PRIu64 " flows=%u sport=%u qpn=0x%x",
		      sa_str(&rq->src, s, sizeof(s)), sa_str(&rq->dst, d, sizeof(d)),
		      o->op >= 0 ? mop_name[o->op] : "mix", o->count, o->flows,
		      o->sport, o->qpn);
	}
	start = next_issue = now_ns();
	deadline = start + (uint64_t)(o->c.timeout_s * 1e9);
	pfd.fd = rq->ack_fd;
	pfd.events = POLLIN;

	while (!stop_requested) {
		uint64_t now = now_ns(), wake = deadline;
		uint32_t i;
		bool progress;

		if (now >= deadline) {
			timed_out = !req_all_done(rq);
			break;
		}
		for (i = 0; i < o->flows; i++) {
			struct qflow *f = &rq->fl[i];

			if (f->dead)
				continue;
			if (f->rnr_wait) {
				if (now < f->rnr_until)
					continue;
				f->rnr_wait = false;
				req_go_back(rq, f, f->rnr_psn, RC_RNR);
			}
			while (f->qlen && !f->dead &&
			       now >= req_timer_due(rq, f)) {
				size_t before = f->qlen;

				req_timeout(rq, f);
				if (!o->no_recovery || f->qlen == before)
					break;
			}
		}
		req_run_dups(rq, now);

		/* issue new messages, round robin over flows with room */
		do {
			progress = false;
			for (i = 0; i < o->flows; i++) {
				struct qflow *f = &rq->fl[(rr + i) % o->flows];

				if (!flow_can_issue(rq, f))
					continue;
				if (o->interval_us && now < next_issue)
					break;
				req_issue(rq, f, now);
				next_issue = now + o->interval_us * 1000;
				progress = true;
				if (o->interval_us) {
					rr = (uint32_t)((f - rq->fl) + 1) % o->flows;
					break;
				}
			}
		} while (progress && !o->interval_us);

		if (req_all_done(rq)) {
			uint64_t end;

			if (!done_ns)
				done_ns = now;
			end = (rq->last_rx_ns > done_ns ? rq->last_rx_ns :
			       done_ns) + linger;
			if (now >= end)
				break;
			if (end < wake)
				wake = end;
		} else {
			for (i = 0; i < o->flows; i++) {
				struct qflow *f = &rq->fl[i];

				if (f->dead)
					continue;
				if (f->rnr_wait) {
					if (f->rnr_until < wake)
						wake = f->rnr_until;
					continue;
				}
				if (f->qlen && req_timer_due(rq, f) < wake)
					wake = req_timer_due(rq, f);
				if (o->interval_us && flow_can_issue(rq, f) &&
				    next_issue < wake)
					wake = next_issue;
			}
			if (rq->ndup_head < rq->ndup &&
			    rq->dups[rq->ndup_head].due < wake)
				wake = rq->dups[rq->ndup_head].due;
		}
		if (wait_fds(&pfd, 1, now_ns(), wake, &mask) > 0) {
			int budget;

			for (budget = 1024; budget && req_recv_one(rq); budget--)
				;
		}
	}
	req_summary(rq, (now_ns() - start) / 1000, timed_out);
	return rq->completed == o->count && !rq->failed ? 0 : 2;
}

/* ------------------------------------------------------------------------ */
/* command line                                                             */

static void usage(FILE *out)
{
	fputs(
"Usage: rocegen responder [OPTIONS]\n"
"       rocegen requester -d ADDR [OPTIONS]\n"
"\n"
"Synthetic RoCE v2 (RC) traffic over UDP port 4791 with known ground truth,\n"
"for testing RoCE tracers. Run the two roles in two network namespaces (or\n"
"on two distinct local addresses of one namespace).\n"
"\n"
"Requester: sends RC requests and waits for their answers (closed loop).\n"
"  -d, --dst ADDR            responder address (IPv4 or IPv6), required\n"
"  -s, --src ADDR            local address (default: chosen by routing)\n"
"  -n, --count N             messages to send, over all flows (default 100)\n"
"  -o, --op OP               send|write|read|mix (default send; mix cycles)\n"
"  -f, --flows N             flows (QPs), each with its own UDP source port\n"
"                            and destination QPN (default 1)\n"
"      --sport BASE          source port of flow 0; flow i uses BASE+i\n"
"                            (default 49152)\n"
"      --qpn Q               responder QPN of flow 0; flow i uses Q+i\n"
"                            (default 0x11)\n"
"      --psn START|random    first PSN of every flow, modulo 2^24 (default 0);\n"
"                            random: each flow its own, as RNICs pick them\n"
"      --size BYTES          message size; > MTU gives FIRST/MIDDLE/LAST\n"
"                            packets (default 64; read: DMA length)\n"
"      --retransmit-every N  resend the AckReq packet of every Nth message\n"
"                            once more (same PSN) after a pause\n"
"      --retransmit-pause-us N  that pause (default 200)\n"
"      --interval-us N       gap between new messages (default 0)\n"
"      --window N            outstanding messages per flow (default 1,\n"
"                            0 = unlimited)\n"
"      --ack-timeout-us N    retransmit timer, go-back-N (default 50000)\n"
"      --retry N             timeouts/NAKs per message before the flow is\n"
"                            given up (default 7)\n"
"      --rnr-retry N         RNR NAKs per message before giving up (default 7)\n"
"      --no-recovery         never retransmit: unanswered messages fail\n"
"      --linger-ms N         after the last answer, keep counting late\n"
"                            answers until idle this long (default 20)\n"
"      --tos N               IPv4 TOS / IPv6 traffic class (3 = ECN CE)\n"
"      --timeout SEC         overall run time limit (default 5)\n"
"\n"
"Responder: answers like rdma_rxe, with optional injected faults. Runs until\n"
"SIGINT/SIGTERM (or --timeout), then prints its summary.\n"
"  -b, --bind ADDR           listen on ADDR only (default 0.0.0.0 and ::)\n"
"      --delay-us SPEC       delay every answer (ACK, NAK, read response)\n"
"      --jitter-us N         add 0..N us at random (order kept per flow)\n"
"      --coalesce N          ACK only every Nth AckReq request of a flow,\n"
"                            cumulatively with the latest PSN\n"
"      --coalesce-us N       send a held ACK after this long (default 1000)\n"
"      --nak-every SPEC      answer every Nth AckReq request with a PSN\n"
"                            sequence error NAK carrying its PSN\n"
"      --rnr-every SPEC      answer every Nth AckReq request with an RNR NAK\n"
"      --rnr-timer CODE      RNR NAK timer field, 0-31 (default 4 = 40 us)\n"
"      --drop-every SPEC     silently ignore every Nth AckReq request\n"
"      --cnp                 answer ECN CE-marked requests with a CNP (0x81)\n"
"      --reply-sport BASE    answer the k-th flow from UDP port BASE+k, not\n"
"                            from the request's port (hardware RNICs: each\n"
"                            side of a QP pair picks its own port)\n"
"      --count-only          count requests, never answer\n"
"      --seed N              seed for --jitter-us\n"
"      --timeout SEC         exit after SEC seconds (default 0 = never)\n"
"  SPEC is N (all flows), PORT=N (flows from UDP source port PORT) or\n"
"  qpn:Q=N (requests to QPN Q); repeatable, the last match wins. An every-N\n"
"  SPEC for one flow counts that flow's requests, otherwise all flows'.\n"
"  A PSN is counted once, so a NAKed request's retransmission is accepted.\n"
"  Faults apply in the order drop, RNR, NAK.\n"
"\n"
"Both roles:\n"
"      --port N              UDP port (default 4791)\n"
"      --mtu N               256|512|1024|2048|4096 (default 1024)\n"
"      --qpn-offset N        requester QPN = responder QPN + N (default 0x100)\n"
"      --ctl-port N          control port for the start-of-run handshake\n"
"                            (default 4792, 0 = none; see below)\n"
"      --flow-stats          one summary line per flow before the total\n"
"  -j, --json                summary as JSON objects instead of key=value\n"
"  -v, --verbose             log every packet to stderr\n"
"  -q, --quiet               no informational messages on stderr\n"
"  -h, --help                this help\n"
"\n"
"Wire conventions: answers go to the requester's port 4791 from the UDP\n"
"source port of the request (as rxe does for one QP pair), with destination\n"
"QP = request QPN + qpn-offset. P_Key 0xFFFF, ICRC 4 zero bytes, IPv4 UDP\n"
"checksum 0. AckReq is set on the last packet of each message.\n"
"Before sending, the requester tells the responder on UDP --ctl-port that a\n"
"new run starts on its flows (out of band, like RDMA connection setup), so\n"
"the responder forgets their PSNs and runs can reuse ports, QPNs and PSNs.\n"
"Without an answer it warns and goes on (e.g. when a firewall drops UDP).\n"
"\n"
"Summary (stdout, one line each):\n"
"  rocegen: role=requester op=OP requests= sent= retransmits= retx_injected=\n"
"    retx_timeout= retx_nak= retx_rnr= acks= dup_acks= naks= rnr= read_resp=\n"
"    cnp= completed= failed= timeouts= stray= bad_qpn= send_errors=\n"
"    rtt_min_us= rtt_avg_us= rtt_max_us= elapsed_us= status=ok|incomplete|...\n"
"  rocegen: role=responder requests= msgs= dups= ooo= acks= naks= rnr=\n"
"    read_resp= dropped= cnp= cnp_rx= ignored= flows= send_errors=\n"
"    sport_fallback=\n"
"  (requests = messages, sent/retransmits = request packets; the responder\n"
"  counts packets, acks/naks/rnr/read_resp = packets sent or received)\n"
"\n"
"Exit status: 0 success; 1 usage error; 2 requester run incomplete (some\n"
"message unanswered, failed, or the timeout hit).\n",
	      out);
}

enum {
	O_SPORT = 256, O_QPN, O_PSN, O_SIZE, O_RETX_EVERY, O_RETX_PAUSE,
	O_INTERVAL, O_WINDOW, O_ACK_TIMEOUT, O_RETRY, O_RNR_RETRY,
	O_NO_RECOVERY, O_LINGER, O_TOS, O_TIMEOUT, O_DELAY, O_JITTER,
	O_COALESCE, O_COALESCE_US, O_NAK_EVERY, O_RNR_EVERY, O_RNR_TIMER,
	O_DROP_EVERY, O_CNP, O_COUNT_ONLY, O_SEED, O_PORT, O_MTU,
	O_QPN_OFFSET, O_FLOW_STATS, O_CTL_PORT, O_REPLY_SPORT,
};

/* options: which role may use each (r = requester, s = responder) */
static const struct {
	struct option lo;
	char roles[3];
} opts[] = {
	{ { "dst", required_argument, NULL, 'd' }, "r" },
	{ { "src", required_argument, NULL, 's' }, "r" },
	{ { "count", required_argument, NULL, 'n' }, "r" },
	{ { "op", required_argument, NULL, 'o' }, "r" },
	{ { "flows", required_argument, NULL, 'f' }, "r" },
	{ { "sport", required_argument, NULL, O_SPORT }, "r" },
	{ { "qpn", required_argument, NULL, O_QPN }, "r" },
	{ { "psn", required_argument, NULL, O_PSN }, "r" },
	{ { "size", required_argument, NULL, O_SIZE }, "r" },
	{ { "retransmit-every", required_argument, NULL, O_RETX_EVERY }, "r" },
	{ { "retransmit-pause-us", required_argument, NULL, O_RETX_PAUSE }, "r" },
	{ { "interval-us", required_argument, NULL, O_INTERVAL }, "r" },
	{ { "window", required_argument, NULL, O_WINDOW }, "r" },
	{ { "ack-timeout-us", required_argument, NULL, O_ACK_TIMEOUT }, "r" },
	{ { "retry", required_argument, NULL, O_RETRY }, "r" },
	{ { "rnr-retry", required_argument, NULL, O_RNR_RETRY }, "r" },
	{ { "no-recovery", no_argument, NULL, O_NO_RECOVERY }, "r" },
	{ { "linger-ms", required_argument, NULL, O_LINGER }, "r" },
	{ { "tos", required_argument, NULL, O_TOS }, "r" },
	{ { "bind", required_argument, NULL, 'b' }, "s" },
	{ { "delay-us", required_argument, NULL, O_DELAY }, "s" },
	{ { "jitter-us", required_argument, NULL, O_JITTER }, "s" },
	{ { "coalesce", required_argument, NULL, O_COALESCE }, "s" },
	{ { "coalesce-us", required_argument, NULL, O_COALESCE_US }, "s" },
	{ { "nak-every", required_argument, NULL, O_NAK_EVERY }, "s" },
	{ { "rnr-every", required_argument, NULL, O_RNR_EVERY }, "s" },
	{ { "rnr-timer", required_argument, NULL, O_RNR_TIMER }, "s" },
	{ { "drop-every", required_argument, NULL, O_DROP_EVERY }, "s" },
	{ { "cnp", no_argument, NULL, O_CNP }, "s" },
	{ { "reply-sport", required_argument, NULL, O_REPLY_SPORT }, "s" },
	{ { "count-only", no_argument, NULL, O_COUNT_ONLY }, "s" },
	{ { "seed", required_argument, NULL, O_SEED }, "s" },
	{ { "timeout", required_argument, NULL, O_TIMEOUT }, "rs" },
	{ { "port", required_argument, NULL, O_PORT }, "rs" },
	{ { "mtu", required_argument, NULL, O_MTU }, "rs" },
	{ { "qpn-offset", required_argument, NULL, O_QPN_OFFSET }, "rs" },
	{ { "ctl-port", required_argument, NULL, O_CTL_PORT }, "rs" },
	{ { "flow-stats", no_argument, NULL, O_FLOW_STATS }, "rs" },
	{ { "json", no_argument, NULL, 'j' }, "rs" },
	{ { "verbose", no_argument, NULL, 'v' }, "rs" },
	{ { "quiet", no_argument, NULL, 'q' }, "rs" },
	{ { "help", no_argument, NULL, 'h' }, "rs" },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static const char *opt_name(int val)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].lo.val == val)
			return opts[i].lo.name;
	return "?";
}

int main(int argc, char **argv)
{
	static struct requester rq;
	static struct responder rs;
	struct option lo[NOPTS + 1];
	struct common_opts *c;
	bool is_req;
	char role;
	size_t i;
	int ch;

	if (argc < 2)
		die("missing role: requester or responder (see rocegen --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "requester")) {
		is_req = true;
	} else if (!strcmp(argv[1], "responder")) {
		is_req = false;
	} else {
		die("unknown role '%s': want requester or responder (see rocegen --help)",
		    argv[1]);
	}
	role = is_req ? 'r' : 's';

	memset(lo, 0, sizeof(lo));
	for (i = 0; i < NOPTS; i++)
		lo[i] = opts[i].lo;

	rq.o.count = 100;
	rq.o.op = MOP_SEND;
	rq.o.flows = 1;
	rq.o.sport = 49152;
	rq.o.qpn = 0x11;
	rq.o.size = 64;
	rq.o.retransmit_pause_us = 200;
	rq.o.window = 1;
	rq.o.ack_timeout_us = 50000;
	rq.o.retry = 7;
	rq.o.rnr_retry = 7;
	rq.o.linger_ms = 20;
	rq.o.tos = -1;
	rs.o.coalesce = 1;
	rs.o.coalesce_us = 1000;
	rs.o.rnr_timer = 4;
	c = is_req ? &rq.o.c : &rs.o.c;
	c->port = ROCE_UDP_PORT;
	c->ctl_port = ROCE_UDP_PORT + 1;
	c->mtu = 1024;
	c->qpn_offset = 0x100;

	opterr = 0;
	argc--;
	argv++;
	while ((ch = getopt_long(argc, argv, "+:d:s:n:o:f:b:jvqh", lo, NULL)) != -1) {
		const char *name;

		if (ch == ':')
			die("option '%s' needs a value (see rocegen --help)",
			    argv[optind - 1]);
		if (ch == '?') {
			const char *bad = argv[optind - 1];

			if (optopt && bad && bad[0] == '-' && bad[1] != '-')
				die("unknown option '-%c' (see rocegen --help)",
				    optopt);
			die("unknown option '%s' (see rocegen --help)",
			    bad ? bad : "?");
		}
		name = opt_name(ch);
		for (i = 0; i < NOPTS; i++)
			if (opts[i].lo.val == ch && !strchr(opts[i].roles, role))
				die("--%s is a %s option", name,
				    is_req ? "responder" : "requester");
		switch (ch) {
		case 'h':
			usage(stdout);
			return 0;
		case 'j': json_out = true; break;
		case 'v': verbose++; break;
		case 'q': quiet = true; break;
		case 'd': rq.o.dst = optarg; break;
		case 's': rq.o.src = optarg; break;
		case 'b': rs.o.bind_addr = optarg; break;
		case 'n':
			rq.o.count = parse_u64("--count", optarg, 0, UINT32_MAX);
			break;
		case 'o':
			if (!strcmp(optarg, "send"))
				rq.o.op = MOP_SEND;
			else if (!strcmp(optarg, "write"))
				rq.o.op = MOP_WRITE;
			else if (!strcmp(optarg, "read"))
				rq.o.op = MOP_READ;
			else if (!strcmp(optarg, "mix"))
				rq.o.op = -1;
			else
				die("unknown op '%s': want send, write, read or mix",
				    optarg);
			break;
		case 'f':
			rq.o.flows = (uint32_t)parse_u64("--flows", optarg, 1, 16384);
			break;
		case O_SPORT:
			rq.o.sport = (uint16_t)parse_u64("--sport", optarg, 1, 65535);
			break;
		case O_QPN:
			rq.o.qpn = (uint32_t)parse_u64("--qpn", optarg, 0, QPN_MASK);
			break;
		case O_PSN:
			if (!strcmp(optarg, "random"))
				rq.o.psn_random = true;
			else
				rq.o.psn = (uint32_t)parse_u64("--psn", optarg, 0, PSN_MASK);
			break;
		case O_SIZE:
			rq.o.size = (uint32_t)parse_u64("--size", optarg, 0, MAX_MSG_SIZE);
			break;
		case O_RETX_EVERY:
			rq.o.retransmit_every = parse_u64("--retransmit-every", optarg, 0, UINT32_MAX);
			break;
		case O_RETX_PAUSE:
			rq.o.retransmit_pause_us = parse_u64("--retransmit-pause-us", optarg, 0, 60000000);
			break;
		case O_INTERVAL:
			rq.o.interval_us = parse_u64("--interval-us", optarg, 0, 60000000);
			break;
		case O_WINDOW:
			rq.o.window = (uint32_t)parse_u64("--window", optarg, 0, 1u << 20);
			break;
		case O_ACK_TIMEOUT:
			rq.o.ack_timeout_us = parse_u64("--ack-timeout-us", optarg, 1, 60000000);
			break;
		case O_RETRY:
			rq.o.retry = (uint32_t)parse_u64("--retry", optarg, 0, 1000000);
			break;
		case O_RNR_RETRY:
			rq.o.rnr_retry = (uint32_t)parse_u64("--rnr-retry", optarg, 0, 1000000);
			break;
		case O_NO_RECOVERY: rq.o.no_recovery = true; break;
		case O_LINGER:
			rq.o.linger_ms = parse_u64("--linger-ms", optarg, 0, 60000);
			break;
		case O_TOS:
			rq.o.tos = (int)parse_u64("--tos", optarg, 0, 255);
			break;
		case O_DELAY:
			knob_parse(&rs.o.delay_us, "--delay-us", optarg, 60000000);
			break;
		case O_JITTER:
			rs.o.jitter_us = parse_u64("--jitter-us", optarg, 0, 60000000);
			break;
		case O_COALESCE:
			rs.o.coalesce = (uint32_t)parse_u64("--coalesce", optarg, 1, 1u << 20);
			break;
		case O_COALESCE_US:
			rs.o.coalesce_us = parse_u64("--coalesce-us", optarg, 1, 60000000);
			break;
		case O_NAK_EVERY:
			knob_parse(&rs.o.nak_every, "--nak-every", optarg, UINT32_MAX);
			break;
		case O_RNR_EVERY:
			knob_parse(&rs.o.rnr_every, "--rnr-every", optarg, UINT32_MAX);
			break;
		case O_DROP_EVERY:
			knob_parse(&rs.o.drop_every, "--drop-every", optarg, UINT32_MAX);
			break;
		case O_RNR_TIMER:
			rs.o.rnr_timer = (unsigned int)parse_u64("--rnr-timer", optarg, 0, 31);
			break;
		case O_CNP: rs.o.cnp = true; break;
		case O_REPLY_SPORT:
			rs.o.reply_sport = (uint16_t)parse_u64("--reply-sport", optarg, 1, 65535 - 1024);
			break;
		case O_COUNT_ONLY: rs.o.count_only = true; break;
		case O_SEED:
			rs.o.seed = parse_u64("--seed", optarg, 0, UINT64_MAX);
			break;
		case O_TIMEOUT:
			c->timeout_s = parse_seconds("--timeout", optarg);
			c->timeout_set = true;
			break;
		case O_PORT:
			c->port = (uint16_t)parse_u64("--port", optarg, 1, 65535);
			break;
		case O_MTU:
			c->mtu = (uint32_t)parse_u64("--mtu", optarg, 256, 4096);
			if (c->mtu & (c->mtu - 1))
				die("--mtu must be 256, 512, 1024, 2048 or 4096, got '%s'",
				    optarg);
			break;
		case O_QPN_OFFSET:
			c->qpn_offset = (uint32_t)parse_u64("--qpn-offset", optarg, 0, QPN_MASK);
			break;
		case O_CTL_PORT:
			c->ctl_port = (uint16_t)parse_u64("--ctl-port", optarg, 0, 65535);
			break;
		case O_FLOW_STATS:
			rq.o.flow_stats = rs.o.flow_stats = true;
			break;
		default:
			die("unhandled option --%s", name);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see rocegen --help)", argv[optind]);
	if (c->ctl_port && c->ctl_port == c->port)
		die("--ctl-port must differ from --port");

	if (!is_req)
		return run_responder(&rs);

	if (!rq.o.dst)
		die("requester needs -d/--dst ADDR (see rocegen --help)");
	if (!c->timeout_set)
		c->timeout_s = 5;
	if (c->timeout_s <= 0)
		die("--timeout must be > 0 for the requester");
	if ((uint32_t)rq.o.sport + rq.o.flows - 1 > 65535)
		die("--sport %u with --flows %u runs past port 65535",
		    rq.o.sport, rq.o.flows);
	return run_requester(&rq);
}
