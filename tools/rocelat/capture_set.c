// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Several captures read as one recording (capture_set.h): every file
 * checked at open, then a k-way merge by time over the open files' next
 * frames, a file opened at its first frame and closed at its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "capture.h"
#include "capture_set.h"

struct capture_set_file {
	const char *path;
	struct capture *c;		/* open from its first frame to its end */
	const unsigned char *frame;	/* the head: this file's next frame */
	unsigned int len;
	unsigned long long ts;		/* the head's time (the first frame's while closed) */
	long long size;			/* bytes on disk, -1 for a pipe */
	int rank;			/* place by first frame: the tie-break */
	bool pinned;			/* cannot be reopened: open from the start */
	bool done;			/* read to its end (or without frames) */
};

struct capture_set {
	struct capture_set_file *files;	/* by first frame's time */
	int n;
	int next_closed;		/* the next file to open, in that order */
	struct capture_set_file **heap;	/* open files by head, earliest first */
	int nheap;
	bool advance;			/* the root's head was given: read on */
	bool failed;
	const char *last_path;
	unsigned long long bytes_done;	/* captured bytes of the files closed */
	long long size_total, size_done;
	char err[512];
};

/* a compressed file's tool that writes it out, by its magic; NULL else */
static const char *capture_set_decompressor(const unsigned char *m)
{
	static const struct { unsigned char m[4]; unsigned char n; const char *cat; } z[] = {
		{ { 0x1f, 0x8b }, 2, "zcat" },
		{ { 0xfd, '7', 'z', 'X' }, 4, "xzcat" },
		{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstdcat" },
		{ { 'B', 'Z', 'h' }, 3, "bzcat" },
		{ { 0x04, 0x22, 0x4d, 0x18 }, 4, "lz4cat" },
	};

	for (size_t i = 0; i < sizeof(z) / sizeof(z[0]); i++)
		if (!memcmp(m, z[i].m, z[i].n))
			return z[i].cat;
	return NULL;
}

static bool capture_set_magic(const unsigned char *m)
{
	unsigned int v = (unsigned int)m[0] << 24 | m[1] << 16 | m[2] << 8 | m[3];

	/* pcap (us, ns, Kuznetzov) in either byte order; pcapng's section header */
	return v == 0xa1b2c3d4 || v == 0xd4c3b2a1 || v == 0xa1b23c4d ||
	       v == 0x4d3cb2a1 || v == 0xa1b2cd34 || v == 0x34cdb2a1 ||
	       v == 0x0a0d0d0a;
}

/* a regular file's size and magic, or a pipe; without opening a pipe,
 * whose writer would see its reader go away */
static int capture_set_stat(struct capture_set_file *f, char *err, size_t errlen)
{
	unsigned char m[4];
	struct stat st;
	ssize_t got;
	int fd;

	f->size = -1;
	if (!strcmp(f->path, "-")) {
		f->pinned = true;
		return 0;
	}
	if (stat(f->path, &st) || access(f->path, R_OK)) {
		snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory", f->path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		f->pinned = true;
		return 0;
	}
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
		return -1;
	}
	got = read(fd, m, sizeof(m));
	close(fd);
	if (got == (ssize_t)sizeof(m) && capture_set_decompressor(m)) {
		snprintf(err, errlen, "%s: compressed, not a pcap or pcapng file: "
			 "read it as -r <(%s %s)", f->path,
			 capture_set_decompressor(m), f->path);
		return -1;
	}
	if (got != (ssize_t)sizeof(m) || !capture_set_magic(m)) {
		snprintf(err, errlen, "%s: not a pcap or pcapng file", f->path);
		return -1;
	}
	f->size = st.st_size;
	return 0;
}

/* open f and read its first frame into the head; done if it has none */
static int capture_set_first(struct capture_set_file *f, char *err, size_t errlen)
{
	char why[256];
	int rc;

	f->c = capture_open(f->path, why, sizeof(why));
	if (!f->c) {
		snprintf(err, errlen, "%s: %s%s", f->path, why,
			 errno == EMFILE ? " (more files overlap in time than "
			 "ulimit -n allows open)" : "");
		return -1;
	}
	rc = capture_next(f->c, &f->frame, &f->len, &f->ts);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", f->path, capture_error(f->c));
	if (rc <= 0) {
		capture_close(f->c);
		f->c = NULL;
		f->done = true;
	}
	return rc < 0 ? -1 : 0;
}

static bool capture_set_before(const struct capture_set_file *a,
			       const struct capture_set_file *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->rank < b->rank;
}

static int capture_set_cmp(const void *pa, const void *pb)
{
	const struct capture_set_file *a = pa, *b = pb;

	return a->ts != b->ts ? (a->ts < b->ts ? -1 : 1) : a->rank - b->rank;
}

static void capture_set_sift_down(struct capture_set *s, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		struct capture_set_file *t;

		if (l < s->nheap && capture_set_before(s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && capture_set_before(s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void capture_set_push(struct capture_set *s, struct capture_set_file *f)
{
	int i = s->nheap++;

	s->heap[i] = f;
	while (i > 0 && capture_set_before(s->heap[i], s->heap[(i - 1) / 2])) {
		struct capture_set_file *t = s->heap[(i - 1) / 2];

		s->heap[(i - 1) / 2] = s->heap[i];
		s->heap[i] = t;
		i = (i - 1) / 2;
	}
}

struct capture_set *capture_set_open(const char *const *paths, int n,
				     char *err, size_t errlen)
{
	struct capture_set *s = calloc(1, sizeof(*s));
	bool stdin_named = false;
	int keep = -1;

	if (!s || !(s->files = calloc(n, sizeof(*s->files))) ||
	    !(s->heap = calloc(n, sizeof(*s->heap)))) {
		snprintf(err, errlen, "out of memory for %d capture files", n);
		capture_set_close(s);
		return NULL;
	}
	s->n = n;
	for (int i = 0; i < n; i++) {
		struct capture_set_file *f = &s->files[i];

		f->path = paths[i];
		if (!strcmp(f->path, "-") && stdin_named) {
			snprintf(err, errlen, "-: standard input named twice "
				 "(it can be read once)");
			capture_set_close(s);
			return NULL;
		}
		stdin_named |= !strcmp(f->path, "-");
		f->rank = i;
		if (capture_set_stat(f, err, errlen) || capture_set_first(f, err, errlen)) {
			capture_set_close(s);
			return NULL;
		}
		/* the earliest file so far stays open: the merge starts with
		 * it, and would otherwise open and map it again */
		if (f->c && !f->pinned) {
			if (keep < 0 || capture_set_before(f, &s->files[keep])) {
				if (keep >= 0) {
					capture_close(s->files[keep].c);
					s->files[keep].c = NULL;
				}
				keep = i;
			} else {
				capture_close(f->c);
				f->c = NULL;
			}
		}
		s->size_total += f->size > 0 ? f->size : 0;
		if (f->done)	/* no frames: read already */
			s->size_done += f->size > 0 ? f->size : 0;
	}
	qsort(s->files, n, sizeof(*s->files), capture_set_cmp);
	for (int i = 0; i < n; i++) {
		s->files[i].rank = i;
		/* a pipe, or the earliest file: its head was read above */
		if (s->files[i].c)
			capture_set_push(s, &s->files[i]);
	}
	return s;
}

/* the root read to its end: out of the heap, closed */
static void capture_set_retire(struct capture_set *s)
{
	struct capture_set_file *f = s->heap[0];

	s->bytes_done += capture_bytes(f->c);
	s->size_done += f->size > 0 ? f->size : 0;
	capture_close(f->c);
	f->c = NULL;
	f->done = true;
	s->heap[0] = s->heap[--s->nheap];
	capture_set_sift_down(s, 0);
}

static int capture_set_fail(struct capture_set *s, const char *path, const char *why)
{
	if (why)
		snprintf(s->err, sizeof(s->err), "%s: %s", path, why);
	s->failed = true;
	return -1;
}

int capture_set_next(struct capture_set *s, const unsigned char **frame,
		     unsigned int *len, unsigned long long *ts_ns)
{
	struct capture_set_file *f;
	int rc;

	if (s->failed)
		return -1;
	if (s->advance) {
		s->advance = false;
		f = s->heap[0];
		rc = capture_next(f->c, &f->frame, &f->len, &f->ts);
		if (rc < 0)
			return capture_set_fail(s, f->path, capture_error(f->c));
		if (rc) {
			if (s->nheap > 1)
				capture_set_sift_down(s, 0);
		} else
			capture_set_retire(s);
	}
	/* open the next file once its first frame is the earliest */
	while (s->next_closed < s->n) {
		f = &s->files[s->next_closed];
		if (!f->done && !f->c) {
			if (s->nheap && capture_set_before(s->heap[0], f))
				break;
			if (capture_set_first(f, s->err, sizeof(s->err)))
				return capture_set_fail(s, f->path, NULL);
			if (f->c)
				capture_set_push(s, f);
		}
		s->next_closed++;
	}
	if (!s->nheap)
		return 0;
	f = s->heap[0];
	*frame = f->frame;
	*len = f->len;
	*ts_ns = f->ts;
	s->last_path = f->path;
	s->advance = true;
	return 1;
}

const char *capture_set_error(const struct capture_set *s)
{
	return s->err;
}

const char *capture_set_path(const struct capture_set *s)
{
	return s->last_path ? s->last_path : s->files[0].path;
}

int capture_set_files(const struct capture_set *s)
{
	return s->n;
}

unsigned long long capture_set_bytes(const struct capture_set *s)
{
	unsigned long long b = s->bytes_done;

	for (int i = 0; i < s->nheap; i++)
		b += capture_bytes(s->heap[i]->c);
	return b;
}

double capture_set_fraction(const struct capture_set *s)
{
	long long at = s->size_done;

	if (s->size_total <= 0)
		return -1;
	for (int i = 0; i < s->nheap; i++)
		if (s->heap[i]->size > 0)
			at += capture_offset(s->heap[i]->c);
	return (double)at / (double)s->size_total;
}

void capture_set_close(struct capture_set *s)
{
	if (!s)
		return;
	for (int i = 0; s->files && i < s->n; i++)
		capture_close(s->files[i].c);
	free(s->files);
	free(s->heap);
	free(s);
}
