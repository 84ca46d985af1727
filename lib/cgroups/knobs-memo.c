/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The knobs' memo (nodecm/cgroup-knobs.h): what the machine held before a knob changed it, by
 * key, kept sorted so that its file is the same whatever order the writes came in.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroup-knobs.h>
#include "base/json.h"
#include "base/sorted.h"
#include "base/utf8.h"

typedef struct memo_kv {
        char *key;
        char *value;
} memo_kv;

struct ncm_knob_memo {
        memo_kv *v;
        size_t n;
};

ncm_knob_memo *ncm_knob_memo_new(void)
{
        return calloc(1, sizeof(ncm_knob_memo));
}

ncm_knob_memo *ncm_knob_memo_free(ncm_knob_memo *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n; i++) {
                free(m->v[i].key);
                free(m->v[i].value);
        }
        free(m->v);
        free(m);
        return NULL;
}

/* The index of KEY, or -(where it would go) - 1. */
static ssize_t find(const ncm_knob_memo *m, const char *key)
{
        return ncm__sorted_find(m->v, m->n, sizeof(*m->v), offsetof(memo_kv, key), key);
}

const char *ncm_knob_memo_get(const ncm_knob_memo *m, const char *key)
{
        ssize_t i = find(m, key);
        return i >= 0 ? m->v[i].value : NULL;
}

int ncm_knob_memo_set(ncm_knob_memo *m, const char *key, const char *value)
{
        ssize_t i = find(m, key);
        char *v = strdup(value), *k = NULL;
        memo_kv *nv = NULL;
        size_t at;

        if (!v)
                return -ENOMEM;
        if (i >= 0) {
                free(m->v[i].value);
                m->v[i].value = v;
                return 0;
        }
        at = (size_t)(-i - 1);
        k = strdup(key);
        if (k)
                nv = ncm__sorted_insert(m->v, m->n, sizeof(*m->v), at);
        if (!nv) {
                free(k);
                free(v);
                return -ENOMEM;
        }
        m->v = nv;
        m->v[at] = (memo_kv){k, v};
        m->n++;
        return 0;
}

int ncm_knob_memo_keep(ncm_knob_memo *m, const char *key, const char *value)
{
        return ncm_knob_memo_get(m, key) ? 0 : ncm_knob_memo_set(m, key, value);
}

void ncm_knob_memo_drop(ncm_knob_memo *m, const char *key)
{
        ssize_t i = find(m, key);

        if (i < 0)
                return;
        free(m->v[i].key);
        free(m->v[i].value);
        memmove(&m->v[i], &m->v[i + 1], (m->n - (size_t)i - 1) * sizeof(*m->v));
        m->n--;
}

ncm_knob_memo *ncm_knob_memo_dup(const ncm_knob_memo *m)
{
        ncm_knob_memo *c = ncm_knob_memo_new();

        for (size_t i = 0; c && i < m->n; i++)
                if (ncm_knob_memo_set(c, m->v[i].key, m->v[i].value) < 0)
                        c = ncm_knob_memo_free(c);
        return c;
}

size_t ncm_knob_memo_count(const ncm_knob_memo *m)
{
        return m->n;
}

const char *ncm_knob_memo_key(const ncm_knob_memo *m, size_t i)
{
        return i < m->n ? m->v[i].key : NULL;
}

const char *ncm_knob_memo_value(const ncm_knob_memo *m, size_t i)
{
        return i < m->n ? m->v[i].value : NULL;
}

bool ncm_knob_memo_equal(const ncm_knob_memo *a, const ncm_knob_memo *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (strcmp(a->v[i].key, b->v[i].key) != 0 ||
                    strcmp(a->v[i].value, b->v[i].value) != 0)
                        return false;
        return true;
}

void ncm_knob_memo_format(const ncm_knob_memo *m, ncm_buf *b)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < m->n; i++) {
                ncm_buf_puts(b, i ? ",\n " : "");
                ncm_buf_json_string(b, m->v[i].key, strlen(m->v[i].key));
                ncm_buf_puts(b, ": ");
                ncm_buf_json_string(b, m->v[i].value, strlen(m->v[i].value));
        }
        ncm_buf_puts(b, "}\n");
}

int ncm_knob_memo_parse(const char *text, size_t len, const char *name, ncm_knob_memo **ret,
                        ncm_error *err)
{
        ncm_autojson o = NULL;
        ncm_autoptr(ncm_knob_memo) m = ncm_knob_memo_new();
        int r;

        if (!m)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm__json_parse(text, len, name, &o, err);
        if (r < 0)
                return r;
        if ((r = ncm__json_expect(o, json_type_object, name, err)) < 0)
                return r;
        json_object_object_foreach(o, key, val)
        {
                if (!json_object_is_type(val, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: \"%s\": expected string, got %s",
                                             name, key, ncm__json_type_name(val));
                /* paths and masks: what is not UTF-8 was not written by nodecm */
                if (!ncm__utf8_valid(key, strlen(key)) ||
                    !ncm__utf8_valid(json_object_get_string(val),
                                     (size_t)json_object_get_string_len(val)) ||
                    strlen(json_object_get_string(val)) != (size_t)json_object_get_string_len(val))
                        return ncm_error_set(err, EINVAL, "%s: a key or value is not UTF-8 text",
                                             name);
                if (ncm_knob_memo_set(m, key, json_object_get_string(val)) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *ret = NCM_TAKE_PTR(m);
        return 0;
}
