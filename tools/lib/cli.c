// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command-line core of cli.h: the common options' argp child, which
 * fills the struct cli_env a tool hands it; strict number parsing; the
 * setup every tool runs after parsing (libbpf's print callback, signals,
 * capabilities, --prom and -N checked); errno turned into advice.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "netns.h"
#include "probe.h"
#include "prom.h"

/* what the signal handlers touch (cli_exiting()), and what libbpf's print
 * callback, which has no context, reads (-v, set by cli_setup()) */
static volatile sig_atomic_t exiting;
static bool libbpf_verbose;
/* argp prints "Report bugs to %s.": a place an installed user has (the
 * README is installed by make install and the package; Makefile, debian) */
const char *argp_program_bug_address =
	"the \"Reporting bugs\" section of /usr/share/doc/agentxdp/README.md "
	"(make install: /usr/local/share/doc/agentxdp/README.md)";

enum { OPT_ROCE_PORT = 0x1000, OPT_PROM, OPT_USAGE };

static const struct argp_option cli_options[] = {
	{ "verbose", 'v', NULL, 0, "Print libbpf debug output", -1 },
	{ "timestamp", 'T', NULL, 0, "Print a timestamp with each report", -1 },
	{ "json", 'j', NULL, 0, "Print JSON lines (one object per line)", -1 },
	{ "roce-port", OPT_ROCE_PORT, "PORT", 0,
	  "UDP destination port of RoCE v2 (default 4791)", -1 },
	{ "prom", OPT_PROM, "FILE", 0,
	  "Write Prometheus text metrics to FILE (atomically) at start, every interval (every 10 s without one, or with -e) and at exit", -1 },
	{ "netns", 'N', "NAME", 0,
	  "Network namespace NAME (/run/netns/NAME, or a path), where -i's "
	  "interface is; rxedrop, nfdrop and rocediag count only its drops", -1 },
	/* argp's own help options answer -? only (ARGP_NO_HELP in
	 * cli_parse): -h is help in every tool, as in libbpf-tools */
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ NULL, '?', NULL, OPTION_HIDDEN, NULL, -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{},
};

static const char *cli_progname(void)
{
	return program_invocation_short_name;
}

static void cli_verr(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_progname());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	exit(1);
}

/* name at p is a word of its own: no name, path or file name around it */
static bool cli_is_word(const char *text, const char *p, size_t n)
{
	const char *e = p + n;

	if (p > text && (isalnum((unsigned char)p[-1]) || strchr("_./-", p[-1])))
		return false;
	if (*e && (isalnum((unsigned char)*e) || *e == '_' || *e == '-'))
		return false;
	return !(*e == '.' && isalnum((unsigned char)e[1]));
}

/* text with each word `name` replaced by `as`: a malloc'd copy, or NULL
 * when nothing changes */
static char *cli_rename(const char *text, const char *name, const char *as)
{
	const char *p, *from = text;
	size_t n = strlen(name), len = 0;
	bool changed = false;
	char *out = NULL;
	FILE *f;

	if (!text || !n || !strstr(text, name))
		return NULL;
	f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (p = strstr(text, name); p; p = strstr(p + n, name)) {
		if (!cli_is_word(text, p, n))
			continue;
		fwrite(from, 1, p - from, f);
		fputs(as, f);
		from = p + n;
		changed = true;
	}
	fputs(from, f);
	if (fclose(f) || !changed) {
		free(out);
		return NULL;
	}
	return out;
}

/* the suite's programs, whose names a prefix (APP_PREFIX) applies to
 * alike; the Makefile passes them (-DAX_PROGS) */
#ifndef AX_PROGS
#define AX_PROGS ""
#endif

char *cli_as_named(const char *text, const char *name)
{
	const char *as = cli_progname(), *w = AX_PROGS;
	size_t n = strlen(name), m = strlen(as);
	char *out = NULL, *r, word[64], named[128];
	int len;

	if (!text || !n || !strcmp(name, as))
		return NULL;
	/* run as PREFIX<name>: every program of the suite named with it */
	if (m <= n || strcmp(as + m - n, name))
		return cli_rename(text, name, as);
	while (sscanf(w, "%63s%n", word, &len) == 1) {
		w += len;
		snprintf(named, sizeof(named), "%.*s%s", (int)(m - n), as, word);
		r = cli_rename(out ? out : text, word, named);
		if (r) {
			free(out);
			out = r;
		}
	}
	return out ? out : cli_rename(text, name, as);
}

bool cli_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *p = s;
	int base = 10;
	uint64_t v = 0;

	if (!s || !*s)
		return -ENODATA;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!*p)
			return -EINVAL;
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
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -EOVERFLOW;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

long cli_arg_long(struct argp_state *state, const char *arg, long min, long max,
		  const char *what)
{
	long v = min;

	if (cli_parse_long(arg, min, max, &v))
		return v;
	if (max >= INT_MAX)
		argp_failure(state, 1, 0, "invalid %s: %s (%ld or more)", what, arg, min);
	else
		argp_failure(state, 1, 0, "invalid %s: %s (%ld-%ld)", what, arg, min, max);
	return v;
}

void cli_arg_iface(struct argp_state *state, const char *arg,
		   const char **names, int *n, int max)
{
	if (*n >= max)
		argp_failure(state, 1, 0, "at most %d interfaces", max);
	for (int i = 0; i < *n; i++)
		if (!strcmp(names[i], arg))
			argp_failure(state, 1, 0, "interface %s given twice", arg);
	names[(*n)++] = arg;
}

int cli_choice(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

int cli_arg_choice(struct argp_state *state, const char *arg,
		   const char *const *names, int n, const char *what)
{
	char list[256] = "";
	int i = cli_choice(arg, names, n);

	if (i >= 0)
		return i;
	for (int k = 0; k < n; k++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 !k ? "" : k == n - 1 ? " or " : ", ", names[k]);
	argp_failure(state, 1, 0, "invalid %s: %s (want %s)", what, arg, list);
	return -1;
}

void cli_check_events(struct argp_state *state, const struct cli_env *cli, bool events,
		      bool stack)
{
	if (stack && !events)
		argp_failure(state, 1, 0, "-s/--stack needs -e/--events");
	if (events && cli->interval)
		argp_failure(state, 1, 0,
			     "interval and count apply to counts mode, not -e");
}

unsigned int cli_netns_inum(const struct cli_env *cli)
{
	unsigned int inum;

	if (cli->netns_inum)
		return cli->netns_inum;
	inum = cli->netns ? netns_by_name(cli->netns) : netns_self();
	if (!inum && cli->netns && errno == EINVAL)
		cli_die("not a network namespace: %s", cli->netns);
	if (!inum && cli->netns)
		cli_die("no such network namespace: %s", cli->netns);
	if (!inum)
		cli_die("cannot read this process's network namespace");
	return inum;
}

void cli_netns_enter(const struct cli_env *cli)
{
	int saved, err;

	if (!cli->netns)
		return;
	err = netns_enter(cli_netns_inum(cli), &saved);
	if (err)
		cli_die("cannot enter network namespace %s: %s", cli->netns, strerror(-err));
	if (saved >= 0)
		close(saved);
}

int cli_ifindex(const struct cli_env *cli, const char *name)
{
	unsigned int idx;
	int saved = -1, err = 0;

	if (!name || !*name || strlen(name) >= IF_NAMESIZE)
		cli_die("invalid interface name '%s'", name ? name : "");
	/* an index means something only within its namespace: -N's */
	if (cli->netns)
		err = netns_enter(cli_netns_inum(cli), &saved);
	if (err)
		cli_die("cannot enter network namespace %s: %s", cli->netns, strerror(-err));
	idx = if_nametoindex(name);
	netns_leave(saved);
	if (!idx)
		cli_die(cli->netns ? "no such interface in network namespace %2$s: %1$s" :
			"no such interface: %s", name, cli->netns);
	return idx;
}

static error_t cli_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli_env *cli = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		/* the tool's parser hands its struct in (CLI_ARGP) */
		if (!cli)
			cli_die("internal error: no struct cli_env for the common options");
		*cli = (struct cli_env){ .roce_port = 4791 };
		break;
	case 'v':
		cli->verbose = true;
		break;
	case 'T':
		cli->timestamp = true;
		break;
	case 'j':
		cli->json = true;
		break;
	case OPT_ROCE_PORT:
		cli->roce_port = cli_arg_long(state, arg, 1, 65535, "RoCE port");
		break;
	case OPT_PROM:
		if (!*arg)
			argp_failure(state, 1, 0, "empty --prom file name");
		cli->prom_path = arg;
		break;
	case 'N':
		if (!*arg)
			argp_failure(state, 1, 0, "empty network namespace name");
		cli->netns = arg;
		break;
	case 'h':
	case '?':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case OPT_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		break;
	case 'V':
		/* "<tool> (AgentXDP) VERSION", named as the program runs */
		printf("%s%s\n", cli_progname(),
		       argp_program_version + strcspn(argp_program_version, " "));
		exit(0);
	case ARGP_KEY_ARG:
		/* an interval given is 1 or more */
		if (!cli->interval) {
			cli->interval = cli_arg_long(state, arg, 1, INT_MAX, "interval");
		} else if (!cli->count) {
			cli->count = cli_arg_long(state, arg, 1, LONG_MAX, "count");
		} else {
			argp_failure(state, 1, 0, "unexpected argument: %s", arg);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp cli_argp = {
	.options = cli_options,
	.parser = cli_parse_opt,
};

/* the tool's name (argp_program_version's first word) and its own help
 * filter, under the help filter that renames it (cli_parse) */
static char cli_tool[64];
static char *(*cli_tool_filter)(int key, const char *text, void *input);

static char *cli_help_filter(int key, const char *text, void *input)
{
	char *t = cli_tool_filter ? cli_tool_filter(key, text, input) : (char *)text;
	char *r = cli_as_named(t, cli_tool);

	if (!r)
		return t;
	if (t != text)
		free(t);
	return r;
}

int cli_parse(const struct argp *argp, int argc, char **argv, void *input)
{
	static struct argp renamed;

	argp_err_exit_status = 1;
	/* installed under another name (APP_PREFIX): the help names it so */
	snprintf(cli_tool, sizeof(cli_tool), "%.*s",
		 (int)strcspn(argp_program_version, " "), argp_program_version);
	if (strcmp(cli_tool, cli_progname())) {
		renamed = *argp;
		cli_tool_filter = argp->help_filter;
		renamed.help_filter = cli_help_filter;
		argp = &renamed;
	}
	/* getopt names the program by argv[0] ("build/rocelat: unrecognized
	 * option"), argp and cli_err() by its short name: one prefix */
	if (argc > 0)
		argv[0] = program_invocation_short_name;
	return argp_parse(argp, argc, argv, ARGP_NO_HELP, NULL, input);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	/* without -v nothing, errors too: the tool reports them, in one line */
	if (!libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/*
 * The programs may use the kfunc bpf_rdonly_cast (bpf/lib/skb.bpf.h, a weak
 * ksym). Where vmlinux's BTF lacks it (before 6.2), libbpf looks for it in
 * the modules' BTF, and listing those (BPF_BTF_GET_NEXT_ID) needs
 * CAP_SYS_ADMIN; libbpf 1.1 fails the load when it may not.
 */
static bool cli_btf_iter_denied(void)
{
	__u32 id = 0;

	if (probe_btf_func("bpf_rdonly_cast", NULL))
		return false;
	return bpf_btf_get_next_id(0, &id) && errno == EPERM;
}

static void on_signal(int sig)
{
	exiting = sig;
}

bool cli_exiting(void)
{
	return exiting;
}

void cli_end_interrupted_line(void)
{
	struct termios t;
	int fd = isatty(STDOUT_FILENO) ? STDOUT_FILENO :
		 isatty(STDERR_FILENO) ? STDERR_FILENO : -1;

	/* the terminal echoed ^C (ECHOCTL) where the cursor was: what
	 * follows starts on a line of its own, not "^C0 QPs" */
	if (exiting != SIGINT || fd < 0 || tcgetattr(fd, &t))
		return;
	if (!(t.c_lflag & ECHO) || !(t.c_lflag & ECHOCTL))
		return;
	fflush(stdout);
	if (write(fd, "\n", 1) != 1)
		return;
}

/* before 5.8's headers */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/*
 * The capabilities in caps that this process lacks, as the kernel checks
 * them: CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON (bpf_capable(),
 * perfmon_capable(); before 5.8 it is the only way), never for
 * CAP_NET_ADMIN, which rtnetlink (XDP, tc) and nfnetlink ask for by itself.
 * By capget(2): libcap is not linked.
 */
static void cli_check_caps(unsigned int caps)
{
	static const struct { unsigned int flag; int cap; const char *name; } need[] = {
		{ CLI_CAP_BPF, CAP_BPF, "CAP_BPF" },
		{ CLI_CAP_PERFMON, CAP_PERFMON, "CAP_PERFMON" },
		{ CLI_CAP_NET_ADMIN, CAP_NET_ADMIN, "CAP_NET_ADMIN" },
	};
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	const char *missing[3];
	char list[64] = "";
	unsigned long long eff;
	int n = 0;

	if (syscall(SYS_capget, &hdr, data))
		cli_die("cannot read this process's capabilities: %s", strerror(errno));
	eff = data[0].effective | (unsigned long long)data[1].effective << 32;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		bool sys_admin = need[i].cap != CAP_NET_ADMIN && (eff >> CAP_SYS_ADMIN & 1);

		if (!(caps & need[i].flag) || (eff >> need[i].cap & 1) || sys_admin)
			continue;
		missing[n++] = need[i].name;
	}
	if (!n)
		return;
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 !i ? "" : i == n - 1 ? " and " : ", ", missing[i]);
	cli_die("needs %s, which this process lacks: run it as root, or grant %s", list,
		n > 1 ? "them" : "it");
}

void cli_setup(struct cli_env *cli, unsigned int caps)
{
	struct sigaction sa = { .sa_handler = on_signal };

	libbpf_verbose = cli->verbose;
	libbpf_set_print(libbpf_print);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* the reader of our output went away (| head): end as on SIGTERM,
	 * detaching what was attached, not at once (nothing detached on
	 * kernels where that is not automatic), nor never (EPIPE ignored) */
	sigaction(SIGPIPE, &sa, NULL);
	cli_check_caps(caps);
	/* a metrics file that cannot be written is found now, not by a
	 * scraper that never sees it (a unit under systemd runs on) */
	if (cli->prom_path) {
		int err = prom_check(cli->prom_path);

		if (err)
			cli_die("cannot write %s: %s", cli->prom_path, strerror(-err));
	}
	if (cli->netns)
		cli->netns_inum = cli_netns_inum(cli);
}

void cli_bpf_err(const char *what, int err)
{
	const char *advice;

	if (err < 0)
		err = -err;
	if (cli_btf_iter_denied()) {
		cli_err("%s: libbpf must read the kernel modules' BTF here (this "
			"kernel's own lacks a kfunc the program can use), which needs "
			"CAP_SYS_ADMIN: run as root, or grant CAP_SYS_ADMIN", what);
		return;
	}
	switch (err) {
	case EPERM:
	case EACCES:
		/* root has the capabilities: the kernel refused what the
		 * program uses (an argument, helper or hook it lacks) */
		advice = geteuid() == 0 ?
			 "refused by this kernel although running as root: it "
			 "lacks a feature the program uses (run with -v for the "
			 "verifier log)" :
			 "operation not permitted: needs CAP_BPF, CAP_PERFMON "
			 "and CAP_NET_ADMIN (run as root), or the kernel forbids it";
		break;
	case ENOENT:
		advice = "not found in this kernel (hook, function or BTF missing)";
		break;
	case EBUSY:
		advice = "already in use by another program";
		break;
	case EOPNOTSUPP:
		advice = "not supported by this kernel or device";
		break;
	case EINVAL:
		advice = "rejected by the kernel (run with -v for the verifier log)";
		break;
	default:
		advice = strerror(err);
	}
	cli_err("%s: %s", what, advice);
}

static void print_hms(FILE *f, time_t t)
{
	char buf[16];

	strftime(buf, sizeof(buf), "%H:%M:%S", localtime(&t));
	fprintf(f, "%-8s ", buf);
}

void cli_print_timestamp(const struct cli_env *cli, FILE *f)
{
	if (cli->timestamp)
		print_hms(f, time(NULL));
}

void cli_print_epoch(const struct cli_env *cli, FILE *f, double epoch)
{
	if (cli->timestamp)
		print_hms(f, (time_t)epoch);
}

void cli_print_ktime(const struct cli_env *cli, FILE *f, unsigned long long ktime_ns)
{
	if (cli->timestamp)
		print_hms(f, (time_t)cli_ktime_to_epoch(ktime_ns));
}

void cli_print_time_header(const struct cli_env *cli, FILE *f)
{
	if (cli->timestamp)
		fprintf(f, "%-8s ", "TIME");
}

void cli_print_timestamp_line(const struct cli_env *cli, FILE *f)
{
	char buf[16];
	time_t t = time(NULL);

	if (!cli->timestamp)
		return;
	strftime(buf, sizeof(buf), "%H:%M:%S", localtime(&t));
	fprintf(f, "%s\n", buf);
}

void cli_prom_err(const struct cli_env *cli, int err)
{
	/* once per process: a run has one --prom file */
	static bool reported;

	if (reported)
		return;
	cli_err("cannot write %s: %s", cli->prom_path, strerror(-err));
	reported = true;
}

void cli_warn_events_lost(const struct cli_env *cli, unsigned long long lost)
{
	if (lost)
		fprintf(cli->json ? stderr : stdout,
			"WARNING: %llu events lost (ring buffer full)\n", lost);
}

double cli_now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double cli_ktime_to_epoch(unsigned long long ktime_ns)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return (double)real.tv_sec + real.tv_nsec / 1e9 -
	       ((double)mono.tv_sec + mono.tv_nsec / 1e9 - ktime_ns / 1e9);
}
