// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capture_set: files written here (nanosecond pcap, 60-byte frames whose
 * first two bytes say which file and which frame) read back through the
 * merge: time order, the tie-break, every frame once, bytes, descriptors
 * in use while many files are read, and the errors of bad files. And the
 * classic pcap forms capture.c reads itself: either byte order,
 * microseconds or nanoseconds, frames across the edges of the 8 MiB
 * windows it maps, and a file cut short under it while it is read.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "capture_set.h"

#define FRAME 60

static char dir[64];

/* a file of n frames at times ts[] (ns), frames tagged id, 0..n-1 */
static const char *write_pcap(const char *name, int id, const uint64_t *ts, int n)
{
	static char paths[512][96];
	static int np;
	uint32_t hdr[6] = { 0xa1b23c4d, 2 | 4 << 16, 0, 0, 65535, 1 };
	char *path = paths[np++ % 512];
	FILE *f;

	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	f = fopen(path, "wb");
	fwrite(hdr, sizeof(hdr), 1, f);
	for (int i = 0; i < n; i++) {
		uint32_t rec[4] = { ts[i] / 1000000000, ts[i] % 1000000000, FRAME, FRAME };
		unsigned char fr[FRAME] = { id, i };

		fwrite(rec, sizeof(rec), 1, f);
		fwrite(fr, sizeof(fr), 1, f);
	}
	fclose(f);
	return path;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void test_interleaved(void)
{
	static const uint64_t a[] = { 10, 30, 50, 50 }, b[] = { 20, 30, 40 }, c[] = { 5, 60 };
	const char *paths[] = {
		write_pcap("b.pcap", 2, b, 3), write_pcap("a.pcap", 1, a, 4),
		write_pcap("c.pcap", 3, c, 2), write_pcap("empty.pcap", 4, NULL, 0),
	};
	/* by time; at 30 a (first frame 10) before b (first frame 20) */
	static const int want[][2] = { {3, 0}, {1, 0}, {2, 0}, {1, 1}, {2, 1},
		{2, 2}, {1, 2}, {1, 3}, {3, 1} };
	const unsigned char *fr;
	unsigned long long ts, last = 0;
	struct capture_set *s;
	unsigned int len;
	char err[256];
	int n = 0, order = 1;

	s = capture_set_open(paths, 4, err, sizeof(err));
	tap_ok(s != NULL, "four files, one without frames, open%s%s", s ? "" : ": ", s ? "" : err);
	if (!s)
		return;
	while (capture_set_next(s, &fr, &len, &ts) == 1) {
		if (n >= 9 || fr[0] != want[n][0] || fr[1] != want[n][1] || ts < last)
			order = 0;
		last = ts;
		n++;
	}
	tap_eq(n, 9, "every frame once");
	tap_ok(order, "in time order, ties by the file whose first frame is earlier");
	tap_eq(capture_set_bytes(s), 9 * FRAME, "bytes: the frames' captured bytes");
	tap_ok(capture_set_fraction(s) == 1.0, "all of the files read");
	tap_eq(capture_set_next(s, &fr, &len, &ts), 0, "the end stays the end");
	capture_set_close(s);
}

static void test_many_files(void)
{
	enum { FILES = 200 };
	const char *paths[FILES];
	int base = open_fds(), most = 0, n = 0, order = 1;
	const unsigned char *fr;
	unsigned long long ts, last = 0;
	struct capture_set *s;
	unsigned int len;
	char err[256];

	for (int i = 0; i < FILES; i++) {
		uint64_t t[3] = { 1000 * i + 1, 1000 * i + 2, 1000 * i + 3 };
		char name[32];

		snprintf(name, sizeof(name), "rot%03d.pcap", i);
		/* given last to first */
		paths[FILES - 1 - i] = write_pcap(name, i & 0xff, t, 3);
	}
	s = capture_set_open(paths, FILES, err, sizeof(err));
	tap_ok(s != NULL, "%d rotated files open", FILES);
	if (!s)
		return;
	tap_eq(open_fds() - base, 1, "after the check only the earliest file is open");
	while (capture_set_next(s, &fr, &len, &ts) == 1) {
		int fds = open_fds() - base;

		most = fds > most ? fds : most;
		if (ts < last || fr[0] != ((n / 3) & 0xff))
			order = 0;
		last = ts;
		n++;
	}
	tap_eq(n, 3 * FILES, "every frame of every file");
	tap_ok(order, "file after file, whatever the order given");
	tap_ok(most <= 2, "at most 2 descriptors in use at once (%d)", most);
	capture_set_close(s);
	tap_eq(open_fds() - base, 0, "none left open");
}

static void test_errors(void)
{
	static const uint64_t t[] = { 1, 2 };
	const char *good = write_pcap("good.pcap", 1, t, 2);
	const char *paths[2] = { good };
	char bad[96], sub[96], err[256];
	FILE *f;

	snprintf(bad, sizeof(bad), "%s/text.pcap", dir);
	f = fopen(bad, "w");
	fputs("hello, world\n", f);
	fclose(f);
	paths[1] = bad;
	tap_ok(!capture_set_open(paths, 2, err, sizeof(err)) &&
	       !strncmp(err, bad, strlen(bad)) && strstr(err, "not a pcap or pcapng file"),
	       "not a capture: named (%s)", err);
	snprintf(sub, sizeof(sub), "%s/missing.pcap", dir);
	paths[1] = sub;
	tap_ok(!capture_set_open(paths, 2, err, sizeof(err)) && strstr(err, "No such file"),
	       "missing: named (%s)", err);
	paths[1] = dir;
	tap_ok(!capture_set_open(paths, 2, err, sizeof(err)) && strstr(err, "is a directory"),
	       "a directory (%s)", err);
}

static void test_truncated(void)
{
	static const uint64_t t[] = { 1, 2, 3 }, u[] = { 4 };
	const char *paths[2] = { write_pcap("cut.pcap", 1, t, 3), write_pcap("after.pcap", 2, u, 1) };
	const unsigned char *fr;
	unsigned long long ts;
	struct capture_set *s;
	unsigned int len;
	char err[256];
	int n = 0, rc;

	if (truncate(paths[0], 24 + 2 * (16 + FRAME) + 20))
		tap_ok(0, "truncate %s", paths[0]);
	s = capture_set_open(paths, 2, err, sizeof(err));
	tap_ok(s != NULL, "a file cut inside its third frame opens");
	if (!s)
		return;
	while ((rc = capture_set_next(s, &fr, &len, &ts)) == 1)
		n++;
	tap_eq(n, 2, "the frames before the cut");
	tap_ok(rc == -1 && !strncmp(capture_set_error(s), paths[0], strlen(paths[0])),
	       "then an error naming the file (%s)", capture_set_error(s));
	tap_eq(capture_set_next(s, &fr, &len, &ts), -1, "and it stays an error");
	capture_set_close(s);
}

static uint32_t form32(uint32_t v, int swapped)
{
	return swapped ? __builtin_bswap32(v) : v;
}

/* n frames of 60..1459 bytes, frame i at i * 1001 us plus 1 s, tagged
 * (id, i low byte, i high byte) */
static const char *write_form(const char *name, int swapped, int ns, int n)
{
	static char path[96];
	uint32_t hdr[6] = { form32(ns ? 0xa1b23c4d : 0xa1b2c3d4, swapped),
		swapped ? 2 << 8 | 4 << 24 : 2 | 4 << 16, 0, 0,
		form32(65535, swapped), form32(1, swapped) };
	unsigned char fr[1460] = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	fwrite(hdr, sizeof(hdr), 1, f);
	for (int i = 0; i < n; i++) {
		uint32_t len = 60 + i * 37 % 1400, us = i * 1001;
		uint32_t rec[4] = { form32(1 + us / 1000000, swapped),
			form32(us % 1000000 * (ns ? 1000 : 1), swapped),
			form32(len, swapped), form32(len, swapped) };

		fr[0] = 9, fr[1] = i, fr[2] = i >> 8, fr[len - 1] = 0x5a;
		fwrite(rec, sizeof(rec), 1, f);
		fwrite(fr, len, 1, f);
		fr[len - 1] = 0;
	}
	fclose(f);
	return path;
}

static void test_forms(void)
{
	/* 24000 frames: about 18 MB, frames across the edges of three of
	 * capture.c's 8 MiB windows */
	const int n = 24000;

	for (int form = 0; form < 4; form++) {
		int swapped = form & 1, ns = form >> 1, i = 0, good = 1;
		const char *path = write_form("form.pcap", swapped, ns, n);
		unsigned long long ts, bytes = 0;
		const unsigned char *fr;
		struct capture_set *s;
		unsigned int len;
		char err[256];

		s = capture_set_open(&path, 1, err, sizeof(err));
		if (!s) {
			tap_ok(0, "form %d opens: %s", form, err);
			continue;
		}
		while (capture_set_next(s, &fr, &len, &ts) == 1) {
			uint32_t want = 60 + i * 37 % 1400, us = i * 1001;

			if (len != want || fr[0] != 9 || fr[1] != (i & 0xff) ||
			    fr[2] != i >> 8 || fr[len - 1] != 0x5a ||
			    ts != 1000000000ULL + us * 1000ULL)
				good = 0;
			bytes += want;
			i++;
		}
		tap_ok(good && i == n && capture_set_bytes(s) == bytes,
		       "%s-endian pcap in %s: %d of %d frames, each whole and at its time",
		       swapped ? "other" : "host", ns ? "ns" : "us", i, n);
		capture_set_close(s);
	}
}

/* a file cut short while it is mapped: the next read of the cut part
 * faults (SIGBUS), which must end the reader with one line and status 1,
 * not a crash. In a child, since that ends the process. */
static void test_cut_while_read(void)
{
	const char *path = write_form("shrinks.pcap", 0, 1, 2000);
	const char *want = "capture_set: the capture file was cut short while it was read";
	char got[256] = "";
	int fds[2], status = 0, line;
	ssize_t n = 0;
	pid_t pid;

	if (pipe(fds)) {
		tap_ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		const unsigned char *fr;
		unsigned long long ts;
		struct capture_set *s;
		unsigned int len;
		char err[256];

		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		s = capture_set_open(&path, 1, err, sizeof(err));
		for (int i = 0; s && i < 10; i++)
			if (capture_set_next(s, &fr, &len, &ts) != 1)
				_exit(3);
		/* the rest of the file gone: its pages leave the mapping */
		if (!s || truncate(path, 0))
			_exit(4);
		while (capture_set_next(s, &fr, &len, &ts) == 1)
			;
		_exit(5);	/* the cut went unnoticed */
	}
	close(fds[1]);
	while (n < (ssize_t)sizeof(got) - 1) {
		ssize_t r = read(fds[0], got + n, sizeof(got) - 1 - n);

		if (r <= 0)
			break;
		n += r;
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	       "a file truncated while it is read: exit status 1, no signal (status %#x)",
	       status);
	/* one line: the message and its newline, nothing else */
	line = n > 0 && got[n - 1] == '\n' && !memchr(got, '\n', n - 1);
	if (n > 0 && got[n - 1] == '\n')
		got[n - 1] = 0;
	tap_ok(line && !strcmp(got, want), "and one line saying so (%s)", got);
}

int main(void)
{
	char cmd[96];

	snprintf(dir, sizeof(dir), "/tmp/capture_set.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_interleaved();
	test_many_files();
	test_errors();
	test_truncated();
	test_forms();
	test_cut_while_read();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return tap_done();
}
