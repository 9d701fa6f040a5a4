// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp's per-driver counter tables (tools/rdmaqp/rdmaqp_counters.c) and
 * pause names (rdmaqp_pfc.c) against the real modules of Debian's kernel
 * packages, the ones the Soft-RoCE guests use (tests/vm/build-guest.sh,
 * /var/cache/agentxdp/vm/<kver>/, AGENTXDP_VM_CACHE).
 *
 * A driver's sysfs counter names are string literals of its module: mlx5's
 * in drivers/infiniband/hw/mlx5/counters.c (basic_q_cnts, retrans_q_cnts,
 * cong_cnts ...), irdma's in drivers/infiniband/hw/irdma/verbs.c
 * (irdma_hw_stat_names), bnxt_re's in drivers/infiniband/hw/bnxt_re/
 * hw_counters.c (bnxt_re_stat_descs), rxe's in drivers/infiniband/sw/rxe/
 * rxe_hw_counters.c (rxe_counter_descs). So every name of a table must be
 * a NUL-terminated string in that module's binary, in every kernel line
 * that ships it (a name a line lacks is listed, and fails when no line has
 * it). The netdev drivers' pause names likewise: mlx5_core builds
 * "rx_%s_pause" with "prio%d", ice has "rx_priority_%u_xoff.nic", bnxt_en
 * "rx_pfc_ena_frames_pri3".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rdmaqp_counters.h"
#include "rdmaqp_pfc.h"
#include "tap.h"

static const char *const kernels[] = { "5.10.0-46-amd64", "6.1.0-57-amd64",
				       "6.12.118+deb13-amd64" };
#define NK (sizeof(kernels) / sizeof(kernels[0]))

struct blob {
	char *p;
	size_t n;
};

/* a module of kernel kver, unpacked when .ko.xz; false: not shipped */
static bool module_read(const char *cache, const char *kver, const char *mod, struct blob *b)
{
	char cmd[1024];
	FILE *f;
	size_t cap = 1 << 20;

	snprintf(cmd, sizeof(cmd), "f=$(find '%s/%s/lib' -name '%s.ko*' | head -n1); "
		 "[ -n \"$f\" ] || exit 0; case $f in *.xz) xz -dc \"$f\";; *) cat \"$f\";; esac",
		 cache, kver, mod);
	f = popen(cmd, "r");
	b->n = 0;
	b->p = malloc(cap);
	while (f && b->p) {
		size_t r = fread(b->p + b->n, 1, cap - b->n, f);

		if (!r)
			break;
		b->n += r;
		if (b->n == cap)
			b->p = realloc(b->p, cap *= 2);
	}
	if (f)
		pclose(f);
	return b->p && b->n > 0;
}

/* s is a whole NUL-terminated string of the module */
static bool has_string(const struct blob *b, const char *s)
{
	size_t len = strlen(s);

	for (const char *p = b->p; (p = memmem(p, b->n - (p - b->p), s, len + 1));
	     p += len + 1)
		if (p == b->p || p[-1] == 0)
			return true;
	return false;
}

static void check_family(const char *cache, const struct rdmaqp_family *f)
{
	int *in_lines = calloc(f->n, sizeof(int)), lines = 0;

	for (size_t k = 0; k < NK; k++) {
		struct blob b;
		int found = 0;

		if (!module_read(cache, kernels[k], f->module, &b)) {
			printf("# %s: ships no %s\n", kernels[k], f->module);
			free(b.p);
			continue;
		}
		lines++;
		for (size_t i = 0; i < f->n; i++)
			if (has_string(&b, f->c[i].name)) {
				in_lines[i]++;
				found++;
			} else {
				printf("#   %s: %s.ko has no \"%s\"\n", kernels[k], f->module,
				       f->c[i].name);
			}
		printf("# %s: %s.ko: %d of %zu names of the %s table\n", kernels[k], f->module,
		       found, f->n, f->name);
		free(b.p);
	}
	for (size_t i = 0; i < f->n; i++)
		if (!in_lines[i])
			printf("#   %s: \"%s\" in no kernel line\n", f->name, f->c[i].name);
	bool all = lines > 0;

	for (size_t i = 0; i < f->n; i++)
		all &= in_lines[i] > 0;
	tap_ok(all, "%s table (%zu counters, %s): every name is a string of %s.ko in %d "
	       "kernel line(s)", f->name, f->n, f->source, f->module, lines);
	free(in_lines);
}

/* the pause names rdmaqp matches, as each netdev driver writes them */
static void check_pause_sources(const char *cache)
{
	static const char *const want[][2] = {
		{ "mlx5_core", "rx_%s_pause" }, { "mlx5_core", "tx_%s_pause" },
		{ "mlx5_core", "prio%d" }, { "mlx5_core", "tx_pause_storm_warning_events" },
		{ "mlx5_core", "tx_pause_storm_error_events" },
		{ "ice", "rx_priority_%u_xoff.nic" }, { "ice", "tx_priority_%u_xoff.nic" },
		{ "bnxt_en", "rx_pfc_ena_frames_pri3" }, { "bnxt_en", "tx_pfc_ena_frames_pri3" },
	};
	struct blob b;

	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		bool ok = module_read(cache, "6.1.0-57-amd64", want[w][0], &b) &&
			  has_string(&b, want[w][1]);

		tap_ok(ok, "6.1: %s.ko has the pause name \"%s\"", want[w][0], want[w][1]);
		free(b.p);
	}
}

static void check_pause_names(void)
{
	static const struct { const char *name; int prio; bool tx; } yes[] = {
		{ "rx_prio3_pause", 3, false }, { "tx_prio7_pause", 7, true },
		{ "rx_global_pause", RDMAQP_PFC_GLOBAL, false },
		{ "tx_pause_storm_error_events", RDMAQP_PFC_STORM, true },
		{ "rx_priority_3_xoff.nic", 3, false }, { "tx_priority_0_xoff.nic", 0, true },
		{ "rx_pfc_ena_frames_pri5", 5, false }, { "link_xoff_tx.nic", RDMAQP_PFC_GLOBAL, true },
	};
	static const char *const no[] = {
		"rx_prio3_pause_duration", "rx_prio3_pause_transition", "rx_prio8_pause",
		"rx_prio3_packets", "rx_priority_3_xon.nic", "peer_ifindex", "",
	};
	int prio;
	bool tx;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		tap_ok(rdmaqp_pause_name(yes[i].name, &prio, &tx) && prio == yes[i].prio &&
		       tx == yes[i].tx, "pause name %s: prio %d %s", yes[i].name, yes[i].prio,
		       yes[i].tx ? "tx" : "rx");
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		tap_ok(!rdmaqp_pause_name(no[i], &prio, &tx), "not a pause counter: \"%s\"", no[i]);
}

int main(void)
{
	const char *cache = getenv("AGENTXDP_VM_CACHE") ?: "/var/cache/agentxdp/vm";
	const struct rdmaqp_family *f;
	struct rdmaqp_pfc p = {};
	size_t n;
	char dir[512];

	check_pause_names();
	/* lo has no ethtool statistics at all: said, no counter made up */
	tap_ok(rdmaqp_pfc_read(&p, "lo") <= 0 && p.n == 0 && strstr(p.why, "lo: no "),
	       "lo: no pause counters, said in one line: %s", p.why);
	snprintf(dir, sizeof(dir), "%s/6.1.0-57-amd64/lib", cache);
	if (access(dir, R_OK)) {
		tap_skip("no guest kernels in the cache (tests/vm/build-guest.sh)",
			 "counter names in the real modules");
		return tap_done();
	}
	f = rdmaqp_families(&n);
	for (size_t i = 0; i < n; i++)
		check_family(cache, &f[i]);
	check_pause_sources(cache);
	return tap_done();
}
