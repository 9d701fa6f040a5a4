/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A pcapng file of dropped packets (-w FILE): one Section Header Block,
 * an Interface Description Block the first time an interface (name and
 * link type) is seen, an Enhanced Packet Block per packet with the tool's
 * verdict as its comment. Written in host byte order (the section's byte
 * order magic says which), microsecond timestamps (the default if_tsresol).
 */
#ifndef AGENTXDP_PCAPNG_H
#define AGENTXDP_PCAPNG_H

#include <argp.h>
#include <stdint.h>
#include <linux/types.h>
#include "lib/pkt_cap.h"

#define PCAPNG_LINKTYPE_ETHERNET 1
#define PCAPNG_LINKTYPE_RAW	101	/* IPv4 or IPv6, no link-layer header */

struct pcapng;

/* created (truncated) with its section header written; NULL with errno
 * set when it cannot be. app names the writer (shb_userappl). */
struct pcapng *pcapng_open(const char *path, const char *app, uint32_t snaplen);
/*
 * One packet: data holds caplen of its origlen bytes, starting at its
 * link-layer header (PCAPNG_LINKTYPE_ETHERNET) or at its IP header
 * (PCAPNG_LINKTYPE_RAW); ifname ("" when unknown) and linktype pick the
 * interface, described in the file on first use; epoch_us the wall-clock
 * time; comment may be NULL. 0, or -errno of a failed write.
 */
int pcapng_packet(struct pcapng *p, const char *ifname, int linktype, uint64_t epoch_us,
		  const void *data, uint32_t caplen, uint32_t origlen, const char *comment);
/*
 * -w: a dropped packet as the BPF side captured it (pkt_cap), at
 * wall-clock time epoch_s (cli_ktime_to_epoch(), the value the tool's
 * JSON shows: one conversion, so they agree to the microsecond): Ethernet from its mac header, raw IP
 * where the skb had none, no bytes where it had neither. A failed write
 * is reported once ("cannot write FILE: ...") and the run goes on.
 */
void pcapng_write_cap(struct pcapng *p, const char *ifname, const struct pkt_cap *cap,
		      double epoch_s, const char *comment);
/* "cannot write FILE: ..." and exit 1 unless FILE can be created */
struct pcapng *pcapng_open_or_die(const char *path, const char *app, uint32_t snaplen);
/* packets written so far */
unsigned long pcapng_count(const struct pcapng *p);
/* flushed and closed (NULL: nothing); 0, or -errno of the first failed
 * write (reported by pcapng_write_cap(), or here: "cannot write FILE") */
int pcapng_close(struct pcapng *p);

/*
 * -w FILE and --snaplen N for every tool that writes dropped packets:
 * pcapng_argp parses them into the tool's struct pcapng_args, as a child
 * of the tool's argp (PCAPNG_CLI_ARGP below, or its own children list),
 * whose parser hands the struct in at ARGP_KEY_INIT:
 *
 *	state->child_inputs[1] = &env.pcapng;
 *
 * The tool's write_doc is -w's help (what the comment holds); NULL, the
 * default, says "the drop's location and reason".
 */
struct pcapng_args {
	const char *path;	/* -w FILE, NULL without */
	unsigned int snaplen;	/* --snaplen, PKT_CAP_DEFAULT unless given */
	const char *write_doc;	/* -w's help text, the tool's; NULL: the default */
};
extern const struct argp pcapng_argp;

/* CLI_ARGP (lib/cli.h) with -w and --snaplen among the tool's options:
 * the children are cli_argp (child_inputs[0], a struct cli_env) and
 * pcapng_argp (child_inputs[1], a struct pcapng_args) */
#define PCAPNG_CLI_ARGP(name, opts_, parser_, doc_)			\
	CLI_ARGP(name, opts_, parser_, doc_, { &pcapng_argp, 0, NULL, 0 },)

#endif
