// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture files as Ethernet frames with nanosecond times (capture.h): a
 * classic pcap file of Ethernet frames mapped and walked here, any other
 * file through libpcap, cooked and raw IP frames given an Ethernet header.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <byteswap.h>
#include <pcap/pcap.h>
#include "capture.h"
#include "lib/roce_pkt.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#define LINKTYPE_IPV4	228
#define LINKTYPE_IPV6	229
#define LINKTYPE_RAW	101	/* DLT_RAW is 12 or 14 depending on the OS */
/* Linux cooked captures: the header's length, where its protocol is */
#define SLL_HLEN	16
#define SLL_PROTO	14
#define SLL2_HLEN	20
#define SLL2_PROTO	0

/* the file's stdio buffer: its default (4 KiB, the block size) would be a
 * read() per 4 KiB, a fifth of -r's time at 2 million packets a second */
#define CAPTURE_IO_BUF	(1 << 20)

/*
 * A classic pcap file of Ethernet frames, by far the most common capture
 * (tcpdump, ibdump, a mirror port's collector), is read here, not by
 * libpcap: mapped, a window at a time, each frame handed out where it
 * lies in the page cache. libpcap reads through stdio and copies every
 * record from the FILE's buffer into its own, a sixth of -r's time on 1M
 * frames (bench/offline.sh); read() into a buffer of our own still copied
 * every byte once, half of -r's CPU time then (system time 0.06 s of
 * 0.12 s on 449 MB; mapped: 0.02 s). A window's pages are mapped in one
 * call (MAP_POPULATE) and unmapped when the next one is mapped, so memory
 * stays one window's, however long the file. Everything else (pcapng,
 * other link types, other versions, a pipe, a file that does not map)
 * goes to libpcap. A file cut shorter while it is read faults (SIGBUS):
 * capture_open() makes that one line and exit status 1.
 */
#define CAPTURE_WINDOW		(8u << 20)
#define CAPTURE_AHEAD		2048
#define CAPTURE_BURST		512
#define PCAP_MAGIC_US		0xa1b2c3d4
#define PCAP_MAGIC_NS		0xa1b23c4d
#define PCAP_FILE_HLEN		24
#define PCAP_REC_HLEN		16
#define PCAP_LINKTYPE_ETHERNET	1
#define PCAP_LINKTYPE_MASK	0x03FFFFFF	/* the rest: FCS length */
#define PCAP_MAX_CAPLEN		262144		/* libpcap's limit for Ethernet */

struct capture_raw {
	int fd;
	bool swapped;		/* written on a host of the other byte order */
	unsigned int frac_ns;	/* ns per unit of the second's fraction */
	const unsigned char *map;	/* the window, MAP_FAILED: none */
	size_t map_len;
	long long map_off;	/* the window's offset in the file (pages) */
	size_t head;		/* the next unread byte: map[head] */
	size_t ahead;		/* map[..ahead) asked for: capture_raw_prefetch() */
};

struct capture {
	pcap_t *pc;		/* NULL: raw */
	struct capture_raw raw;
	FILE *raw_file;		/* raw's, closed at the end */
	char *iobuf;		/* the FILE's buffer, freed after pcap_close() */
	int dlt;
	unsigned long long bytes;	/* captured bytes of the frames read */
	char err[PCAP_ERRBUF_SIZE];
	unsigned char frame[CAPTURE_MAX_FRAME];
};

static int dlt_supported(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2 ||
	       dlt == DLT_RAW || dlt == LINKTYPE_IPV4 || dlt == LINKTYPE_IPV6 ||
	       dlt == LINKTYPE_RAW;
}

static uint32_t raw32(const struct capture_raw *r, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swapped ? bswap_32(v) : v;
}

static uint16_t raw16(const struct capture_raw *r, const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swapped ? bswap_16(v) : v;
}

/*
 * The window from the page holding file offset pos on, as long as the
 * file allows and CAPTURE_WINDOW at most; 0, or -1 with errno
 */
static int capture_raw_map(struct capture_raw *r, long long pos)
{
	long long page = sysconf(_SC_PAGESIZE), off = pos - pos % page;
	struct stat st;
	void *m;

	if (fstat(r->fd, &st))
		return -1;
	if (r->map != MAP_FAILED)
		munmap((void *)r->map, r->map_len);
	r->map = MAP_FAILED;
	r->map_off = off;
	r->head = pos - off;
	r->ahead = 0;
	r->map_len = st.st_size <= off ? 0 :
		     st.st_size - off < CAPTURE_WINDOW ? st.st_size - off : CAPTURE_WINDOW;
	if (!r->map_len)
		return 0;
	m = mmap(NULL, r->map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, r->fd, off);
	if (m == MAP_FAILED) {
		r->map_len = 0;
		return -1;
	}
	r->map = m;
	/* read once, in order: unmapping the window then does not count as
	 * a second use of its pages (the kernel's LRU keeps pages used twice
	 * and lets use-once pages go first). Without it one read moved every
	 * page of the capture to the active list (Active(file) +449 MB for
	 * the 449 MB bench capture), at a tenth more CPU time for that read
	 * (perf: LRU lock, workingset_activation); now that happens on a
	 * second read, as for any file read twice. Reads after that cost the
	 * same either way (6 x 10 runs each). */
	madvise(m, r->map_len, MADV_SEQUENTIAL);
	return 0;
}

/* a mapped file cut short under us: one line, not a crash */
static void capture_raw_bus(int sig)
{
	static const char msg[] = ": the capture file was cut short while it was read\n";
	const char *me = program_invocation_short_name;

	(void)sig;
	/* exit 1 whether or not stderr takes the line */
	if (write(STDERR_FILENO, me, strlen(me)) > 0)
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static void capture_raw_sigbus(void)
{
	struct sigaction sa = { .sa_handler = capture_raw_bus };

	sigaction(SIGBUS, &sa, NULL);
}

/*
 * f read by us: true when it is a classic pcap file of Ethernet frames,
 * version 2.4, that maps (pread leaves the FILE as it was otherwise).
 */
static bool capture_raw_open(struct capture *c, FILE *f)
{
	struct capture_raw *r = &c->raw;
	unsigned char h[PCAP_FILE_HLEN];
	struct stat st;
	uint32_t magic;

	r->fd = fileno(f);
	r->map = MAP_FAILED;
	/* a pipe, a device, a file read from elsewhere than its start, or
	 * too short: libpcap reads it, or says why it cannot */
	if (fstat(r->fd, &st) || !S_ISREG(st.st_mode) || lseek(r->fd, 0, SEEK_CUR) != 0 ||
	    pread(r->fd, h, sizeof(h), 0) != sizeof(h))
		return false;
	memcpy(&magic, h, 4);
	r->swapped = magic == bswap_32(PCAP_MAGIC_US) || magic == bswap_32(PCAP_MAGIC_NS);
	magic = raw32(r, h);
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS)
		return false;
	if (raw16(r, h + 4) != 2 || raw16(r, h + 6) != 4 ||
	    (raw32(r, h + 20) & PCAP_LINKTYPE_MASK) != PCAP_LINKTYPE_ETHERNET)
		return false;
	if (capture_raw_map(r, PCAP_FILE_HLEN) || r->map == MAP_FAILED)
		return false;
	r->frac_ns = magic == PCAP_MAGIC_NS ? 1 : 1000;
	capture_raw_sigbus();
	c->raw_file = f;
	c->dlt = DLT_EN10MB;
	return true;
}

/* at least n unread bytes in the window: 1; 0 at the end of the file with
 * none unread; -1 on an error (errno) or a file cut short (errno 0) */
static int capture_raw_fill(struct capture_raw *r, size_t n)
{
	size_t left = r->map_len - r->head;

	if (left >= n)
		return 1;
	/* the next window starts at the unread bytes (the file may have
	 * grown meanwhile: one that is being written) */
	if (capture_raw_map(r, r->map_off + r->head))
		return -1;
	left = r->map_len - r->head;
	if (left >= n)
		return 1;
	errno = 0;
	return left ? -1 : 0;
}

/*
 * The window's lines up to CAPTURE_AHEAD bytes past the next record asked
 * for, while this one is parsed: where a record starts is known only from
 * the record before it, so each would otherwise wait for memory in turn
 * (perf: a third of -r's time on the load of the next record's length).
 * At most CAPTURE_BURST bytes a record: after a long record the whole
 * distance at once filled the core's line-fill buffers, and then the
 * prefetches themselves waited (perf: three quarters of capture_next's
 * samples on the one after the prefetch). 8 lines a record keep ahead
 * of the bench capture's 7 on average; -r took 9% less CPU time than
 * with no cap (6 x 10 runs each, twice); 6 or 16 lines gained less.
 */
static void capture_raw_prefetch(struct capture_raw *r)
{
	size_t end = r->head + CAPTURE_AHEAD;

	if (r->ahead < r->head)
		r->ahead = r->head;
	if (end > r->ahead + CAPTURE_BURST)
		end = r->ahead + CAPTURE_BURST;
	if (end > r->map_len)
		end = r->map_len;
	for (; r->ahead < end; r->ahead += 64)
		__builtin_prefetch(r->map + r->ahead);
}

/* why capture_raw_fill() could not give want bytes of a record's part
 * (what), in libpcap's words */
static void capture_raw_short(struct capture *c, const char *what, size_t want, size_t got)
{
	if (errno)
		snprintf(c->err, sizeof(c->err), "%s", strerror(errno));
	else
		snprintf(c->err, sizeof(c->err), "truncated dump file; tried to read %zu "
			 "%s bytes, only got %zu", want, what, got);
}

static int capture_raw_next(struct capture *c, const unsigned char **frame,
			    unsigned int *len, unsigned long long *ts_ns)
{
	struct capture_raw *r = &c->raw;
	const unsigned char *h;
	uint32_t caplen;
	int rc = capture_raw_fill(r, PCAP_REC_HLEN);

	if (rc < 0)
		capture_raw_short(c, "header", PCAP_REC_HLEN, r->map_len - r->head);
	if (rc <= 0)
		return rc;
	h = r->map + r->head;
	caplen = raw32(r, h + 8);
	if (caplen > PCAP_MAX_CAPLEN) {
		snprintf(c->err, sizeof(c->err), "invalid packet capture length %u, "
			 "bigger than maximum of %u", caplen, PCAP_MAX_CAPLEN);
		return -1;
	}
	*ts_ns = (unsigned long long)raw32(r, h) * 1000000000ULL +
		 (unsigned long long)raw32(r, h + 4) * r->frac_ns;
	rc = capture_raw_fill(r, PCAP_REC_HLEN + caplen);
	if (rc <= 0) {
		capture_raw_short(c, "captured", caplen, r->map_len - r->head - PCAP_REC_HLEN);
		return -1;
	}
	*frame = r->map + r->head + PCAP_REC_HLEN;
	*len = caplen < CAPTURE_MAX_FRAME ? caplen : CAPTURE_MAX_FRAME;
	r->head += PCAP_REC_HLEN + caplen;
	capture_raw_prefetch(r);
	c->bytes += caplen;
	return 1;
}

struct capture *capture_open(const char *path, char *err, size_t errlen)
{
	char pcerr[PCAP_ERRBUF_SIZE] = "";
	struct capture *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(c);
		return NULL;
	}
	if (capture_raw_open(c, f))
		return c;
	c->iobuf = malloc(CAPTURE_IO_BUF);
	if (c->iobuf)
		setvbuf(f, c->iobuf, _IOFBF, CAPTURE_IO_BUF);
	/* one thread reads it: no lock per fread (two a packet) */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	c->pc = pcap_fopen_offline_with_tstamp_precision(f,
			PCAP_TSTAMP_PRECISION_NANO, pcerr);
	if (!c->pc) {
		snprintf(err, errlen, "%s", pcerr);
		if (f != stdin)
			fclose(f);	/* libpcap leaves it open when it refuses it */
		free(c->iobuf);
		free(c);
		return NULL;
	}
	c->dlt = pcap_datalink(c->pc);
	if (!dlt_supported(c->dlt)) {
		const char *name = pcap_datalink_val_to_name(c->dlt);

		snprintf(err, errlen, "link type %s is not supported "
			 "(Ethernet, Linux cooked or raw IP only)",
			 name ? name : "unknown");
		capture_close(c);
		return NULL;
	}
	return c;
}

/* a frame of another link type as Ethernet, in c->frame */
static unsigned int to_ethernet(struct capture *c, const unsigned char *p,
				unsigned int caplen)
{
	unsigned int hdr, n;
	unsigned short proto;

	switch (c->dlt) {
	case DLT_LINUX_SLL:
		if (caplen < SLL_HLEN)
			return 0;
		proto = roce_get16(p + SLL_PROTO);
		hdr = SLL_HLEN;
		break;
	case DLT_LINUX_SLL2:
		if (caplen < SLL2_HLEN)
			return 0;
		proto = roce_get16(p + SLL2_PROTO);
		hdr = SLL2_HLEN;
		break;
	default:		/* raw IP */
		if (caplen < 1)
			return 0;
		proto = (p[0] >> 4) == 6 ? AX_ETH_P_IPV6 : AX_ETH_P_IP;
		hdr = 0;
		break;
	}
	/* no addresses, the ethertype last */
	memset(c->frame, 0, AX_ETH_HLEN - 2);
	roce_put16(c->frame + AX_ETH_HLEN - 2, proto);
	n = caplen - hdr;
	if (n > CAPTURE_MAX_FRAME - AX_ETH_HLEN)
		n = CAPTURE_MAX_FRAME - AX_ETH_HLEN;
	memcpy(c->frame + AX_ETH_HLEN, p + hdr, n);
	return n + AX_ETH_HLEN;
}

int capture_next(struct capture *c, const unsigned char **frame,
		 unsigned int *len, unsigned long long *ts_ns)
{
	struct pcap_pkthdr *h;
	const unsigned char *data;
	int rc;

	if (!c->pc)
		return capture_raw_next(c, frame, len, ts_ns);
	rc = pcap_next_ex(c->pc, &h, &data);
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(c->err, sizeof(c->err), "%s", pcap_geterr(c->pc));
		return -1;
	}
	c->bytes += h->caplen;
	if (c->dlt == DLT_EN10MB) {
		/* in place: libpcap's buffer holds it until the next call */
		*frame = data;
		*len = h->caplen < CAPTURE_MAX_FRAME ? h->caplen : CAPTURE_MAX_FRAME;
	} else {
		*len = to_ethernet(c, data, h->caplen);
		*frame = c->frame;
	}
	/* with nanosecond precision tv_usec holds nanoseconds */
	*ts_ns = (unsigned long long)h->ts.tv_sec * 1000000000ULL + h->ts.tv_usec;
	return 1;
}

unsigned long long capture_bytes(const struct capture *c)
{
	return c->bytes;
}

long long capture_offset(const struct capture *c)
{
	FILE *f;

	if (!c->pc)
		return c->raw.map_off + (long long)c->raw.head;
	f = pcap_file(c->pc);
	return f ? (long long)ftell(f) : -1;
}

const char *capture_error(const struct capture *c)
{
	return c->err;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	if (c->pc)
		pcap_close(c->pc);
	if (c->raw_file && c->raw_file != stdin)
		fclose(c->raw_file);
	if (!c->pc && c->raw.map != MAP_FAILED)
		munmap((void *)c->raw.map, c->raw.map_len);
	free(c->iobuf);
	free(c);
}
