/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One command-line core for every tool: an argp child with the options that
 * mean the same thing everywhere, the positional [interval] [count], the
 * libbpf print callback, signals, and errno-to-advice messages. The loop
 * after attach, and what [interval] [count], -e and --prom mean, is
 * tools/lib/loop.h.
 *
 * Letters reserved suite-wide (a tool may not reuse them for something else):
 *   -h help   -v verbose   -T timestamp   -j json   -i interface
 *   -e events -s stack     -P port        -4/-6 family
 *   -N network namespace (NAME in /run/netns, or a path)
 *   -A every packet: the tools look at RoCE v2 (UDP to --roce-port) by
 *      default, and -A widens to all (rxedrop: -U to any UDP in between)
 */
#ifndef AGENTXDP_CLI_H
#define AGENTXDP_CLI_H

#include <argp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <bpf/libbpf.h>

struct cli_env {
	bool verbose;
	bool timestamp;
	bool json;
	int interval;		/* seconds between reports, 0: only at exit */
	long count;		/* reports before exiting, 0: until a signal */
	int roce_port;
	const char *prom_path;	/* --prom FILE, NULL when off */
	const char *netns;	/* -N NAME, NULL: this process's */
};

extern struct cli_env cli;
extern const struct argp cli_argp;	/* include as an argp child */
extern volatile sig_atomic_t cli_exiting;
extern const char *argp_program_bug_address;

/* a tool's argp with the common options as a child, in one place; further
 * children (struct argp_child initializers, each with its comma) after doc_
 * (PCAPNG_CLI_ARGP) */
#define CLI_ARGP(name, opts_, parser_, doc_, ...)			\
	static const struct argp_child name##_children[] = {		\
		{ &cli_argp, 0, "Common options:", 0 },			\
		__VA_ARGS__						\
		{},							\
	};								\
	static const struct argp name = {				\
		.options = opts_,					\
		.parser = parser_,					\
		.doc = doc_,						\
		.children = name##_children,				\
	}

/* parse argv with the tool's argp (which lists cli_argp as a child);
 * exits 1 with a one-line error on bad input */
int cli_parse(const struct argp *argp, int argc, char **argv, void *input);

/* one-line error, "tool: msg", then exit(1) */
void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* one-line error without exit */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tool: what: advice" for a libbpf/syscall error (negative errno) */
void cli_bpf_err(const char *what, int err);

/* strict numeric parsing: whole string, within [min, max] */
bool cli_parse_long(const char *s, long min, long max, long *out);
/* strict unsigned parsing, decimal or 0x hex: the whole string, within
 * [min, max]; 0, or -ENODATA (empty), -EINVAL (not a number), -EOVERFLOW
 * (beyond 64 bits) or -ERANGE (outside [min, max]) */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* an option's argument by cli_parse_long(), or argp_failure()
 * "invalid WHAT: ARG (MIN-MAX)" (exit 1) */
long cli_arg_long(struct argp_state *state, const char *arg, long min, long max,
		  const char *what);
/* -i IFACE, repeatable: arg appended to names[0..*n), or argp_failure()
 * "at most MAX interfaces" or "interface IFACE given twice" (exit 1) */
void cli_arg_iface(struct argp_state *state, const char *arg,
		   const char **names, int *n, int max);
/* the index of arg among names[0..n), -1 when it is none of them */
int cli_choice(const char *arg, const char *const *names, int n);
/* at ARGP_KEY_END of a tool with -e/--events and -s/--stack: -s only with
 * -e, and [interval] [count] only without it */
void cli_check_events(struct argp_state *state, bool events, bool stack);
/* interface name to index within -N's namespace (else ours), or die with
 * a clear message */
int cli_ifindex(const char *name);
/* inode of -N's network namespace, else of this process's (what BPF
 * compares with dev->nd_net.net->ns.inum); dies when -N names none */
unsigned int cli_netns_inum(void);
/* with -N: this process moves into that namespace for the rest of its run
 * (a tool that attaches there: netlink, XDP and tc work in the caller's
 * namespace); dies when it cannot */
void cli_netns_enter(void);
/* the capabilities a tool needs, for cli_setup_caps() */
enum cli_cap {
	CLI_CAP_BPF = 1,	/* BPF maps and programs */
	CLI_CAP_PERFMON = 2,	/* tracing programs (tp_btf, fentry, kprobes) */
	CLI_CAP_NET_ADMIN = 4,	/* XDP, tc and nftables through netlink */
};
/* installs the libbpf print callback (verbose-aware), signal handlers,
 * checks that the process has the capabilities caps (or CAP_SYS_ADMIN
 * where the kernel takes it instead) and names the ones missing, and that
 * --prom's file can be written and -N's namespace exists (exit 1 with one
 * line if not) */
void cli_setup_caps(unsigned int caps);
/* cli_setup_caps() with all three */
void cli_setup(void);
/* "HH:MM:SS " when -T: now, or of an event's bpf_ktime_get_ns() time */
void cli_print_timestamp(FILE *f);
void cli_print_ktime(FILE *f, unsigned long long ktime_ns);
/* ... or of a wall-clock time (a capture's) */
void cli_print_epoch(FILE *f, double epoch);
/* with -T: "TIME     ", the header of the column the two above fill */
void cli_print_time_header(FILE *f);
/* with -T: "HH:MM:SS" on a line of its own, above a table whose rows
 * carry no time */
void cli_print_timestamp_line(FILE *f);
/* a failed write of the --prom file (-errno) after the start (a full
 * disk): "cannot write FILE: ...", once per run; the run goes on */
void cli_prom_err(int err);
/* "WARNING: N events lost (ring buffer full)" when N > 0; on stderr with -j,
 * so stdout stays pure JSON lines */
void cli_warn_events_lost(unsigned long long lost);
/* wall-clock time of a bpf_ktime_get_ns() value */
double cli_ktime_to_epoch(unsigned long long ktime_ns);

#endif
