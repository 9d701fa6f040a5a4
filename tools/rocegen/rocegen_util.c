// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rocegen's helpers shared by both roles: numbers and addresses from the
 * command line, sockets, signals, the summary line. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "rocegen.h"

const char *const rg_op_names[] = { "send", "write", "read" };
/* what the signal handler touches (rg_stopping()) */
static volatile sig_atomic_t stop;

void *rg_calloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		cli_die("out of memory");
	return p;
}

void *rg_realloc(void *p, size_t n, size_t sz)
{
	size_t bytes;

	if (sz && n > SIZE_MAX / sz)
		cli_die("out of memory");
	bytes = n * sz;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		cli_die("out of memory");
	return p;
}

uint64_t rg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t rg_pkts_for(uint32_t size, uint32_t mtu)
{
	return size ? (size + mtu - 1) / mtu : 1;
}

uint64_t rg_opt_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;

	switch (cli_parse_u64(s, min, max, &v)) {
	case 0:
		return v;
	case -ENODATA:
		cli_die("missing number for %s", opt);
	case -EOVERFLOW:
		cli_die("number out of range for %s: '%s'", opt, s);
	case -ERANGE:
		cli_die("%s must be in [%" PRIu64 ", %" PRIu64 "], got '%s'", opt,
			min, max, s);
	default:
		cli_die("invalid number for %s: '%s'", opt, s);
	}
}

double rg_opt_seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400 * 7)
		cli_die("invalid number of seconds for %s: '%s'", opt, s);
	return v;
}

int rg_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss,
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

void rg_sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

uint16_t rg_sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

socklen_t rg_sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
}

/* the address bytes (4 or 16) of a sockaddr, zero padded to 16 */
void rg_sa_addr_bytes(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

const char *rg_sa_str(const struct sockaddr_storage *ss, char *buf,
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


void rg_knob_parse(struct knob *k, const char *opt, const char *arg,
		   uint64_t max)
{
	const char *eq = strrchr(arg, '=');
	struct knob_ent e = { 0 };
	char key[64];
	size_t klen;

	if (!eq) {
		k->def = rg_opt_u64(opt, arg, 0, max);
		return;
	}
	klen = (size_t)(eq - arg);
	if (!klen || klen >= sizeof(key))
		cli_die("invalid value for %s: '%s' (want N, PORT=N or qpn:Q=N)",
			opt, arg);
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (!strncmp(key, "qpn:", 4)) {
		e.by_qpn = true;
		e.key = (uint32_t)rg_opt_u64(opt, key + 4, 0, ROCE_QPN_MASK);
	} else if (!strncmp(key, "sport:", 6)) {
		e.key = (uint32_t)rg_opt_u64(opt, key + 6, 1, 65535);
	} else {
		e.key = (uint32_t)rg_opt_u64(opt, key, 1, 65535);
	}
	e.val = rg_opt_u64(opt, eq + 1, 0, max);
	k->ents = rg_realloc(k->ents, k->n + 1, sizeof(*k->ents));
	k->ents[k->n++] = e;
}

/* the last matching PORT= / qpn: entry wins; *specific tells which applied */
uint64_t rg_knob_get(const struct knob *k, uint16_t sport, uint32_t qpn,
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


void rg_print_kvs(const struct common_opts *c, const char *prefix, const struct kv *kv,
		  size_t n)
{
	size_t i;

	if (c->json) {
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



void rg_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void rg_sock_bufs(int fd)
{
	int sz = 8 << 20;

	/* beyond net.core.[rw]mem_max when allowed: long reads come in bursts */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

/* UDP socket bound to addr (with its port), SO_REUSEADDR; -errno on failure */
int rg_udp_bound(const struct sockaddr_storage *addr, bool nocheck)
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
	if (bind(fd, (const struct sockaddr *)addr, rg_sa_len(addr->ss_family))) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

void rg_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void rg_on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

bool rg_stopping(void)
{
	return stop;
}

/* block SIGINT/SIGTERM except inside ppoll(), so no wakeup is ever lost */
void rg_setup_signals(sigset_t *ppoll_mask)
{
	struct sigaction sa = { 0 };
	sigset_t block;

	sa.sa_handler = rg_on_signal;
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

int rg_wait_fds(struct pollfd *pfd, nfds_t n, uint64_t now, uint64_t wake,
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
		cli_die("ppoll: %s", strerror(errno));
	return r;
}


bool rg_recv_again(const char *what)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return false;
	if (errno == EINTR || errno == ECONNREFUSED)
		return true;
	cli_die("%s: %s", what, strerror(errno));
}

bool rg_same_addr(const struct sockaddr_storage *a,
		  const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];

	if (a->ss_family != b->ss_family)
		return false;
	rg_sa_addr_bytes(a, x);
	rg_sa_addr_bytes(b, y);
	return !memcmp(x, y, 16);
}
