// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/lib/prom.c: the text it writes, atomic replacement, the cap, the
 * capped running totals. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/prom.h"
#include "tap.h"

static char dir[] = "/tmp/axp-prom-unit.XXXXXX";

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	int n = 0;

	while (dp && (de = readdir(dp)))
		n += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
	if (dp)
		closedir(dp);
	return n;
}

static void test_escape(void)
{
	char b[64];

	tap_ok(!strcmp(prom_escape(b, sizeof(b), "a\"b\\c\nd", true), "a\\\"b\\\\c\\nd"),
	       "label value escapes quote, backslash, newline: %s", b);
	tap_ok(!strcmp(prom_escape(b, sizeof(b), "say \"hi\"\\\n", false), "say \"hi\"\\\\\\n"),
	       "HELP escapes backslash and newline, not quotes: %s", b);
	tap_ok(!strcmp(prom_escape(b, 4, "a\\bc", true), "a\\\\"),
	       "truncation never splits an escape: %s", b);
}

static void test_write(void)
{
	struct prom_file pf;
	struct prom_label l[2] = { { "location", "nft_do_chain" }, { "reason", "x\"y" } };
	__u64 slots[4] = { 1, 0, 2, 3 };
	char path[256], *s;
	struct stat st;

	snprintf(path, sizeof(path), "%s/t.prom", dir);
	tap_eq(prom_open(&pf, path), 0, "prom_open");
	prom_family(&pf, "agentxdp_t_drops_total", PROM_COUNTER, "Drops.\nTwo lines");
	prom_counter(&pf, "agentxdp_t_drops_total", l, 2, 18446744073709551615ULL);
	prom_family(&pf, "agentxdp_t_up", PROM_GAUGE, "Up.");
	prom_gauge(&pf, "agentxdp_t_up", NULL, 0, 0.1);
	prom_family(&pf, "agentxdp_t_wait_seconds", PROM_HISTOGRAM, "Wait.");
	prom_hist_log2(&pf, "agentxdp_t_wait_seconds", l, 1, slots, 4, 1e-6, 100);
	prom_family(&pf, "agentxdp_t_p50_seconds", PROM_GAUGE, "Median.");
	prom_gauge_seconds(&pf, "agentxdp_t_p50_seconds", NULL, 0, 3244031.5, 1e-9);
	tap_ok(access(path, F_OK) != 0, "target absent until commit");
	tap_eq(prom_commit(&pf), 0, "prom_commit");
	s = slurp(path);
	tap_ok(s != NULL, "target written");
	if (!s)
		return;
	tap_ok(strstr(s, "# HELP agentxdp_t_drops_total Drops.\\nTwo lines\n"
			 "# TYPE agentxdp_t_drops_total counter\n") != NULL, "HELP and TYPE");
	tap_ok(strstr(s, "agentxdp_t_drops_total{location=\"nft_do_chain\",reason=\"x\\\"y\"} "
			 "18446744073709551615\n") != NULL, "counter exact in 64 bits, labels escaped");
	tap_ok(strstr(s, "agentxdp_t_up 0.1\n") != NULL, "gauge without labels, shortest form");
	tap_ok(strstr(s, "agentxdp_t_wait_seconds_bucket{location=\"nft_do_chain\",le=\"2e-06\"} 1\n"
			 "agentxdp_t_wait_seconds_bucket{location=\"nft_do_chain\",le=\"4e-06\"} 1\n"
			 "agentxdp_t_wait_seconds_bucket{location=\"nft_do_chain\",le=\"8e-06\"} 3\n"
			 "agentxdp_t_wait_seconds_bucket{location=\"nft_do_chain\",le=\"1.6e-05\"} 6\n"
			 "agentxdp_t_wait_seconds_bucket{location=\"nft_do_chain\",le=\"+Inf\"} 6\n"
			 "agentxdp_t_wait_seconds_sum{location=\"nft_do_chain\"} 0.0001\n"
			 "agentxdp_t_wait_seconds_count{location=\"nft_do_chain\"} 6\n") != NULL,
	       "histogram: cumulative buckets, le = 2^(i+1) us in seconds, sum in seconds");
	tap_ok(strstr(s, "agentxdp_t_p50_seconds 0.003244032\n") != NULL,
	       "a time gauge in whole ns, not 0.0032440315000000003");
	tap_ok(!stat(path, &st) && (st.st_mode & 0777) == 0644, "mode 0644 (node_exporter is not root)");
	tap_eq(count_entries(dir), 1, "no temp file left after commit");
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
		tap_eq(system(cmd), 0, "promtool check metrics");
	} else {
		tap_skip("promtool not installed", "promtool check metrics");
	}

	/* a second write replaces the first; an aborted one leaves it alone */
	tap_eq(prom_open(&pf, path), 0, "prom_open again");
	prom_family(&pf, "agentxdp_t_up", PROM_GAUGE, "Up.");
	prom_gauge(&pf, "agentxdp_t_up", NULL, 0, 1);
	prom_abort(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "agentxdp_t_drops_total"), "abort leaves the target as it was");
	tap_eq(count_entries(dir), 1, "abort removes its temp file");

	snprintf(path, sizeof(path), "%s/no/such/dir/t.prom", dir);
	tap_ok(prom_open(&pf, path) < 0, "prom_open into a missing directory fails");
	tap_eq(prom_check(path), -ENOENT, "prom_check: a missing directory");
	tap_eq(prom_check(dir), -EISDIR, "prom_check: a directory as the file");
	tap_eq(count_entries(dir), 1, "prom_check leaves no temp file");
	snprintf(path, sizeof(path), "%s/c.prom", dir);
	tap_eq(prom_check(path), 0, "prom_check: a writable place");
	tap_ok(access(path, F_OK) != 0, "prom_check creates no target");
	unlink(strcat(strcpy(path, dir), "/t.prom"));
}

static void test_hist_estimate(void)
{
	struct prom_file pf;
	__u64 slots[3] = { 0, 0, 4 };	/* 4 samples in [4, 8) ns */
	char path[256], *s;

	snprintf(path, sizeof(path), "%s/h.prom", dir);
	prom_open(&pf, path);
	prom_hist_log2(&pf, "h_seconds", NULL, 0, slots, 3, 1e-9, -1);
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "h_seconds_sum 2.4e-08\n"), "no sum kept: midpoint estimate (4 x 6 ns)");
	tap_ok(s && strstr(s, "h_seconds_bucket{le=\"1.6e-08\"}") == NULL,
	       "buckets stop at the last slot (8 ns)");
	unlink(path);
}

static void test_cap(void)
{
	struct prom_cap c;
	const char *k1[] = { "a", "b", "c", "d" };
	double w1[] = { 1, 50, 10, 10 };
	bool own[5];
	size_t o;

	prom_cap_init(&c, 2);
	o = prom_cap_select(&c, 4, k1, w1, own);
	tap_eq(o, 2, "cap 2 of 4: two summed into other");
	tap_ok(own[1] && own[2] && !own[0] && !own[3],
	       "the largest two, ties to the smaller key (b, c)");
	/* a grows past everyone: it stays in other, b and c keep their lines */
	const char *k2[] = { "a", "b", "c", "d", "e" };
	double w2[] = { 1000, 50, 10, 10, 5 };
	o = prom_cap_select(&c, 5, k2, w2, own);
	tap_ok(o == 3 && own[1] && own[2] && !own[0], "membership is sticky (nothing goes backwards)");
	prom_cap_free(&c);

	struct prom_cap z = { 0 };
	const char *k3[] = { "x" };
	double w3[] = { 0 };
	tap_eq(prom_cap_select(&z, 1, k3, w3, own), 0, "a zeroed cap works (default limit)");
	tap_eq(z.limit, PROM_CAP_DEFAULT, "default limit");
	prom_cap_free(&z);
}

static void test_totals(void)
{
	static const char *const names[] = { "location", "reason" };
	const char *a[] = { "nft_do_chain", "NETFILTER_DROP" };
	const char *b[] = { "udp_rcv", "NO_SOCKET" };
	const char *c[] = { "ip_rcv", "OTHERHOST" };
	struct prom_totals pt;
	struct prom_file pf;
	char path[256], *s;

	snprintf(path, sizeof(path), "%s/tot.prom", dir);
	prom_totals_init(&pt, names, 2, 2);
	prom_totals_add(&pt, a, 5, false);
	prom_totals_add(&pt, b, 3, false);
	prom_totals_add(&pt, a, 2, false);
	prom_totals_add(&pt, c, 1, true);	/* still in the map: this write only */
	tap_eq(prom_open(&pf, path), 0, "prom_open for totals");
	prom_family(&pf, "t_drops_total", PROM_COUNTER, "Drops.");
	prom_totals_write(&pf, &pt, "t_drops_total");
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "t_drops_total{location=\"nft_do_chain\",reason=\"NETFILTER_DROP\"} 7\n"),
	       "the same labels add up into one series");
	tap_ok(s && strstr(s, "t_drops_total{location=\"other\",reason=\"other\"} 1\n") &&
	       !strstr(s, "ip_rcv"), "past the cap: summed into other, every label other");

	/* c grows past a and b, stays in other; the once value is spent */
	prom_totals_add(&pt, c, 100, false);
	prom_totals_add(&pt, b, 1, true);
	prom_open(&pf, path);
	prom_totals_write(&pf, &pt, "t_drops_total");
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "{location=\"other\",reason=\"other\"} 100\n") &&
	       strstr(s, "reason=\"NO_SOCKET\"} 4\n"),
	       "membership sticky, a once value counted one write only");
	prom_totals_write(NULL, &pt, "t_drops_total");
	tap_eq(pt.t[1].once, 0, "a write that could not open spends the once values");

	prom_totals_free(&pt);
	prom_totals_init(&pt, names, 2, 2);
	prom_totals_add(&pt, a, 1, false);
	prom_open(&pf, path);
	prom_totals_write(&pf, &pt, "t_drops_total");
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && !strstr(s, "other"), "no other series while everything fits");
	prom_totals_free(&pt);
	unlink(path);
}

static void test_fold(void)
{
	const struct prom_label l[3][2] = {
		{ { "dev", "rxe0" }, { "qpn", "17" } },
		{ { "dev", "rxe0" }, { "qpn", "18" } },
		{ { "dev", "rxe1" }, { "qpn", "19" } },
	};
	const struct prom_label other[2][2] = {
		{ { "dev", "rxe0" }, { "qpn", PROM_OTHER } },
		{ { "dev", "rxe1" }, { "qpn", PROM_OTHER } },
	};
	const __u64 values[3] = { 5, 7, 11 }, base[2] = { 100, 0 };
	const bool own[3] = { true, false, false };
	const int group[3] = { 0, 0, 1 };
	struct prom_fold f = {
		.n = 3, .nlabels = 2, .labels = &l[0][0], .values = values, .own = own,
		.group = group, .ngroups = 2, .other = &other[0][0], .base = base,
	};
	struct prom_file pf;
	char path[256], *s;

	snprintf(path, sizeof(path), "%s/fold.prom", dir);
	prom_open(&pf, path);
	prom_counters_fold(&pf, "q_total", &f);
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "q_total{dev=\"rxe0\",qpn=\"17\"} 5\n") && !strstr(s, "\"18\""),
	       "fold: a series of its own, one not");
	tap_ok(s && strstr(s, "q_total{dev=\"rxe0\",qpn=\"other\"} 107\n") &&
	       strstr(s, "q_total{dev=\"rxe1\",qpn=\"other\"} 11\n"),
	       "fold: per group, from its base");
	unlink(path);
}

static void test_sources(void)
{
	const struct prom_source src[] = {
		{ "latency", true, false, "latency: no -i given", false },
		{ "rules", false, true, "netfilter rules: --no-rules", false },
		{ "rdma_rxe", false, false, "rdma_rxe QP state: \"x\"", false },
		{ "rxe2", false, false, "rdma_rxe QP state: not loaded", true },
	};
	struct prom_file pf;
	char path[256], *s;

	snprintf(path, sizeof(path), "%s/sources.prom", dir);
	prom_open(&pf, path);
	prom_sources(&pf, "t", src, 4);
	prom_commit(&pf);
	s = slurp(path);
	tap_ok(s && strstr(s, "# TYPE t_source_up gauge\nt_source_up{source=\"latency\"} 1\n"
			  "t_source_up{source=\"rules\"} 0\nt_source_up{source=\"rdma_rxe\"} 0\n"),
	       "sources: up 1 or 0 each");
	tap_ok(s && strstr(s, "t_source_info{source=\"latency\",reason=\"\",off_by_option=\"false\",absent=\"false\"} 1\n"),
	       "sources: no reason for a source up, whatever it was given");
	tap_ok(s && strstr(s, "t_source_info{source=\"rules\",reason=\"netfilter rules: --no-rules\","
			  "off_by_option=\"true\",absent=\"false\"} 1\n"),
	       "sources: off by option");
	tap_ok(s && strstr(s, "reason=\"rdma_rxe QP state: \\\"x\\\"\",off_by_option=\"false\",absent=\"false\"} 1\n"),
	       "sources: the reason escaped");
	tap_ok(s && strstr(s, "t_source_info{source=\"rxe2\",reason=\"rdma_rxe QP state: not loaded\","
			  "off_by_option=\"false\",absent=\"true\"} 1\n"),
	       "sources: absent from the host");
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_escape();
	test_write();
	test_hist_estimate();
	test_cap();
	test_totals();
	test_fold();
	test_sources();
	rmdir(dir);
	return tap_done();
}
