// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Network namespaces by inode number (netns.h): names from /run/netns,
 * PID 1 and the processes living in one, and setns() there and back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/nsfs.h>
#include <time.h>
#include <unistd.h>
#include "netns.h"

#define NETNS_RUN_DIR "/run/netns"

struct netns_ent {
	unsigned int inum;
	char name[64];
	char path[300];
};

static struct netns_ent *cache;
static int ncache, capcache;
/* the last inode no path reached, and when: not rescanned for a second */
static unsigned int missed;
static time_t missed_at;

static unsigned int path_inum(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned int)st.st_ino;
}

unsigned int netns_self(void)
{
	return path_inum("/proc/thread-self/ns/net") ?: path_inum("/proc/self/ns/net");
}

/* the inode of path when it is a network namespace (an nsfs file the
 * kernel says is one, NS_GET_NSTYPE, 4.11+), else 0 and errno: ENOENT
 * none, EINVAL something else (a directory, a file, another namespace
 * type, a /run/netns name whose mount is gone) */
static unsigned int netns_path_inum(const char *path)
{
	struct stat st;
	int fd, type;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type != CLONE_NEWNET || fstat(fd, &st)) {
		close(fd);
		errno = EINVAL;
		return 0;
	}
	close(fd);
	return (unsigned int)st.st_ino;
}

unsigned int netns_by_name(const char *name)
{
	char path[300];

	errno = ENOENT;
	if (!name || !*name)
		return 0;
	if (strchr(name, '/'))
		return netns_path_inum(name);
	if (strlen(name) > 255)
		return 0;
	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", name);
	return netns_path_inum(path);
}

static struct netns_ent *cache_find(unsigned int inum)
{
	for (int i = 0; i < ncache; i++)
		if (cache[i].inum == inum)
			return &cache[i];
	return NULL;
}

static void cache_add(unsigned int inum, const char *name, const char *path)
{
	struct netns_ent *e = cache_find(inum);

	if (e)
		return;
	if (ncache == capcache) {
		int cap = capcache ? capcache * 2 : 32;
		struct netns_ent *n = realloc(cache, cap * sizeof(*n));

		if (!n)
			return;
		cache = n;
		capcache = cap;
	}
	e = &cache[ncache++];
	e->inum = inum;
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->path, sizeof(e->path), "%s", path);
}

/* named namespaces first (their names are what users know), then PID 1,
 * then any process */
static void rescan(void)
{
	char path[300], name[64];
	struct dirent *d;
	DIR *dir;

	ncache = 0;
	dir = opendir(NETNS_RUN_DIR);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.' || strlen(d->d_name) > 63)
			continue;
		snprintf(path, sizeof(path), NETNS_RUN_DIR "/%.63s", d->d_name);
		cache_add(path_inum(path), d->d_name, path);
	}
	if (dir)
		closedir(dir);
	cache_add(path_inum("/proc/1/ns/net"), "init", "/proc/1/ns/net");
	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		unsigned int inum;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.255s/ns/net", d->d_name);
		inum = path_inum(path);
		if (!inum || cache_find(inum))
			continue;
		snprintf(name, sizeof(name), "pid:%.58s", d->d_name);
		cache_add(inum, name, path);
	}
	if (dir)
		closedir(dir);
}

/* the cache entry for inum, still valid (a /run/netns name can be deleted
 * and reused, a process can exit) */
static struct netns_ent *lookup(unsigned int inum)
{
	struct netns_ent *e = cache_find(inum);

	if (e && path_inum(e->path) == inum)
		return e;
	if (inum == missed && time(NULL) - missed_at < 1)
		return NULL;
	rescan();
	e = cache_find(inum);
	if (!e) {
		missed = inum;
		missed_at = time(NULL);
	}
	return e;
}

bool netns_name(unsigned int inum, char *buf, int len)
{
	struct netns_ent *e = inum ? lookup(inum) : NULL;

	snprintf(buf, len, "%s", e ? e->name : "-");
	return e;
}

static int netns_open(unsigned int inum)
{
	struct netns_ent *e = inum ? lookup(inum) : NULL;
	int fd;

	if (!e) {
		errno = ENOENT;
		return -1;
	}
	fd = open(e->path, O_RDONLY | O_CLOEXEC);
	/* the path may have moved on to another namespace since the scan */
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) || st.st_ino != inum) {
			close(fd);
			errno = ENOENT;
			return -1;
		}
	}
	return fd;
}

int netns_enter(unsigned int inum, int *saved)
{
	int fd, self;

	*saved = -1;
	if (inum == netns_self())
		return 0;
	fd = netns_open(inum);
	if (fd < 0)
		return -errno;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (setns(fd, CLONE_NEWNET)) {
		int err = -errno;

		close(fd);
		close(self);
		return err;
	}
	close(fd);
	*saved = self;
	return 0;
}

void netns_leave(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		perror("setns back to the original network namespace");
	close(saved);
}
