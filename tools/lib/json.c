// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON-lines writer of json.h: escaping and the few value shapes the
 * tools print, one object per line.
 */
#include "json.h"

void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void json_key(struct json_w *w, const char *key)
{
	if (w->need_comma)
		fputc(',', w->f);
	w->need_comma = true;
	if (key) {
		json_escape(w->f, key);
		fputc(':', w->f);
	}
}

void json_begin(struct json_w *w, FILE *f)
{
	w->f = f;
	w->depth = 1;
	w->need_comma = false;
	fputc('{', f);
}

void json_end(struct json_w *w)
{
	fputs("}\n", w->f);
	fflush(w->f);
}

void json_str(struct json_w *w, const char *key, const char *val)
{
	json_key(w, key);
	json_escape(w->f, val);
}

void json_u64(struct json_w *w, const char *key, unsigned long long val)
{
	json_key(w, key);
	fprintf(w->f, "%llu", val);
}

void json_i64(struct json_w *w, const char *key, long long val)
{
	json_key(w, key);
	fprintf(w->f, "%lld", val);
}

void json_f64(struct json_w *w, const char *key, double val)
{
	json_key(w, key);
	fprintf(w->f, "%.6f", val);
}

void json_bool(struct json_w *w, const char *key, bool val)
{
	json_key(w, key);
	fputs(val ? "true" : "false", w->f);
}

/* val to decimals places: a measurement at its resolution, not a
 * double's last digits (24.812345678 us of an interpolated quantile) */
void json_fixed(struct json_w *w, const char *key, double val, int decimals)
{
	json_key(w, key);
	fprintf(w->f, "%.*f", decimals, val);
}

/* every record's "time": seconds since the epoch, to the microsecond,
 * in one form for every record of every tool */
void json_time(struct json_w *w, double epoch_s)
{
	json_fixed(w, "time", epoch_s, 6);
}

/* a value the tool could not learn: null, never a number that reads
 * like one (-1 or 0) */
void json_null(struct json_w *w, const char *key)
{
	json_key(w, key);
	fputs("null", w->f);
}

void json_obj_open(struct json_w *w, const char *key)
{
	json_key(w, key);
	fputc('{', w->f);
	w->need_comma = false;
}

void json_obj_close(struct json_w *w)
{
	fputc('}', w->f);
	w->need_comma = true;
}

void json_arr_open(struct json_w *w, const char *key)
{
	json_key(w, key);
	fputc('[', w->f);
	w->need_comma = false;
}

void json_arr_close(struct json_w *w)
{
	fputc(']', w->f);
	w->need_comma = true;
}
