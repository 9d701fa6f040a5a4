/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Minimal TAP output for the C unit tests; tests/run counts the lines. */
#ifndef AGENTXDP_TAP_H
#define AGENTXDP_TAP_H

#include <stdio.h>
#include <stdarg.h>

static int tap_n, tap_failed;

static inline void tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

static inline void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # skip %s\n", why);
}

#define tap_eq(a, b, ...) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	tap_ok(_a == _b, __VA_ARGS__);					\
	if (_a != _b)							\
		printf("#   got %lld, want %lld\n", _a, _b);	\
} while (0)

/* "1..N" last, as TAP allows; exit status says whether all passed */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
