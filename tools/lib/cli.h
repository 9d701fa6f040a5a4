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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <bpf/libbpf.h>

/*
 * The common options, filled by cli_argp. Each tool keeps one in its own
 * env and hands it to the child: its parser, at ARGP_KEY_INIT,
 *
 *	state->child_inputs[0] = &env.cli;
 *
 * (cli_argp is CLI_ARGP's first child), then passes it to what reads it:
 * cli_setup(), loop_run(), the printers below, its parts' configs.
 */
struct cli_env {
	bool verbose;
	bool timestamp;
	bool json;
	int interval;		/* seconds between reports, 0: only at exit */
	long count;		/* reports before exiting, 0: until a signal */
	int roce_port;
	const char *prom_path;	/* --prom FILE, NULL when off */
	const char *netns;	/* -N NAME, NULL: this process's */
	unsigned int netns_inum;	/* -N's inode, once cli_setup() found it */
};

extern const struct argp cli_argp;	/* include as an argp child */
extern const char *argp_program_bug_address;

/* a tool's argp with the common options as its first child (its input:
 * child_inputs[0], a struct cli_env), in one place; further children
 * (struct argp_child initializers, each with its comma) after doc_
 * (PCAPNG_CLI_ARGP), their inputs child_inputs[1]... */
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
/* text with each word `name` (the tool's own name) replaced by the name the
 * program runs as (make install APP_PREFIX=bpf- installs rxedrop as
 * bpf-rxedrop), and, run as PREFIX<name>, every other program of the suite
 * named with PREFIX too: a malloc'd copy, or NULL when nothing changes. A
 * word is not part of a path, a file name (rxedrop.prom) or a longer
 * name. */
char *cli_as_named(const char *text, const char *name);
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
/* ... or argp_failure() "invalid WHAT: ARG (want a, b or c)" (exit 1) */
int cli_arg_choice(struct argp_state *state, const char *arg,
		   const char *const *names, int n, const char *what);
/* at ARGP_KEY_END of a tool with -e/--events and -s/--stack: -s only with
 * -e, and [interval] [count] (of cli) only without it */
void cli_check_events(struct argp_state *state, const struct cli_env *cli, bool events,
		      bool stack);
/* interface name to index within cli's -N namespace (else ours), or die
 * with a clear message */
int cli_ifindex(const struct cli_env *cli, const char *name);
/* inode of cli's -N network namespace, else of this process's (what BPF
 * compares with dev->nd_net.net->ns.inum); dies when -N names none */
unsigned int cli_netns_inum(const struct cli_env *cli);
/* with -N: this process moves into that namespace for the rest of its run
 * (a tool that attaches there: netlink, XDP and tc work in the caller's
 * namespace); dies when it cannot */
void cli_netns_enter(const struct cli_env *cli);
/* the capabilities a tool needs, for cli_setup() */
enum cli_cap {
	CLI_CAP_BPF = 1,	/* BPF maps and programs */
	CLI_CAP_PERFMON = 2,	/* tracing programs (tp_btf, fentry, kprobes) */
	CLI_CAP_NET_ADMIN = 4,	/* XDP, tc and nftables through netlink */
};
/* after cli_parse(): installs the libbpf print callback (quiet without
 * -v), signal handlers, checks that the process has the capabilities caps
 * (CLI_CAP_*; or CAP_SYS_ADMIN where the kernel takes it instead) and
 * names the ones missing, and that --prom's file can be written and -N's
 * namespace exists (its inode into cli->netns_inum); exit 1 with one line
 * if not */
void cli_setup(struct cli_env *cli, unsigned int caps);
/* true once SIGINT, SIGTERM, SIGHUP or SIGPIPE came (cli_setup()'s
 * handlers): the run ends */
bool cli_exiting(void);
/* after the run ended on SIGINT: a newline on the terminal when it echoed
 * "^C", so the last table does not start on that line (loop_run()) */
void cli_end_interrupted_line(void);
/* "HH:MM:SS " with cli's -T: now, or of an event's bpf_ktime_get_ns() time */
void cli_print_timestamp(const struct cli_env *cli, FILE *f);
void cli_print_ktime(const struct cli_env *cli, FILE *f, unsigned long long ktime_ns);
/* ... or of a wall-clock time (a capture's) */
void cli_print_epoch(const struct cli_env *cli, FILE *f, double epoch);
/* with -T: "TIME     ", the header of the column the two above fill */
void cli_print_time_header(const struct cli_env *cli, FILE *f);
/* with -T: "HH:MM:SS" on a line of its own, above a table whose rows
 * carry no time */
void cli_print_timestamp_line(const struct cli_env *cli, FILE *f);
/* a failed write of cli's --prom file (-errno) after the start (a full
 * disk): "cannot write FILE: ...", once per run; the run goes on */
void cli_prom_err(const struct cli_env *cli, int err);
/* "WARNING: N events lost (ring buffer full)" when N > 0; on stderr with
 * cli's -j, so stdout stays pure JSON lines */
void cli_warn_events_lost(const struct cli_env *cli, unsigned long long lost);
/* the wall-clock time now, to the microsecond: every JSON record's "time"
 * (json_time()), interval reports too, never whole seconds */
double cli_now_epoch(void);
/* wall-clock time of a bpf_ktime_get_ns() value */
double cli_ktime_to_epoch(unsigned long long ktime_ns);

#endif
