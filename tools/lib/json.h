/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A tiny JSON-lines writer: one object per line, keys in call order. */
#ifndef AGENTXDP_JSON_H
#define AGENTXDP_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct json_w {
	FILE *f;
	int depth;
	bool need_comma;
};

void json_begin(struct json_w *w, FILE *f);	/* opens the object */
void json_end(struct json_w *w);		/* closes it, newline, flush */
void json_str(struct json_w *w, const char *key, const char *val);
void json_u64(struct json_w *w, const char *key, unsigned long long val);
void json_i64(struct json_w *w, const char *key, long long val);
void json_f64(struct json_w *w, const char *key, double val);
void json_bool(struct json_w *w, const char *key, bool val);
void json_null(struct json_w *w, const char *key);
void json_fixed(struct json_w *w, const char *key, double val, int decimals);
void json_time(struct json_w *w, double epoch_s);	/* "time":EPOCH_S.US */
/* a key whose value the caller prints raw (arrays, nested objects) */
void json_key(struct json_w *w, const char *key);
void json_obj_open(struct json_w *w, const char *key);
void json_obj_close(struct json_w *w);
void json_arr_open(struct json_w *w, const char *key);
void json_arr_close(struct json_w *w);
/* a string with JSON escaping, quotes included */
void json_escape(FILE *f, const char *s);

#endif
