/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The head of an HTTP/1.x request, for a metrics endpoint that serves GET and nothing else
 * (RFC 9112 sections 2-5, read strictly where leniency would let a request smuggle a body),
 * and the events of a text/event-stream (the node map's /map/events). Pure: the caller owns
 * the bytes and the socket.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nodecm/metrics.h>

static bool is_tchar(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the head (after its empty line) in BUF[0..LEN), or 0. */
static size_t head_end(const char *buf, size_t len)
{
        for (size_t i = 0; i + 1 < len; i++) {
                if (buf[i] != '\n')
                        continue;
                if (buf[i + 1] == '\n')
                        return i + 2;
                if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
                        return i + 3;
        }
        return 0;
}

/* The line at *P (ending in LF or CRLF before END): its start and length; *P moves past it. */
static bool next_line(const char **p, const char *end, const char **ret, size_t *ret_len)
{
        const char *nl = memchr(*p, '\n', (size_t)(end - *p));
        size_t n;

        if (!nl)
                return false;
        n = (size_t)(nl - *p);
        if (n && (*p)[n - 1] == '\r')
                n--;
        *ret = *p;
        *ret_len = n;
        *p = nl + 1;
        return true;
}

/* Whether the comma-separated list V (LEN bytes) holds TOKEN, case-insensitively. */
static bool has_token(const char *v, size_t len, const char *token)
{
        size_t tl = strlen(token), i = 0;

        while (i < len) {
                size_t s, e;
                while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
                        i++;
                s = i;
                while (i < len && v[i] != ',')
                        i++;
                e = i;
                while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
                        e--;
                if (e - s == tl && strncasecmp(v + s, token, tl) == 0)
                        return true;
        }
        return false;
}

static int request_line(const char *l, size_t n, ncm_http_request *r)
{
        size_t i = 0, m = 0, t;

        while (i < n && is_tchar(l[i])) {
                if (m + 1 >= sizeof(r->method))
                        return -EBADMSG;
                r->method[m++] = l[i++];
        }
        r->method[m] = '\0';
        if (!m || i >= n || l[i++] != ' ')
                return -EBADMSG;
        t = i;
        while (i < n && l[i] > ' ' && l[i] < 0x7f)
                i++;
        if (i == t || i >= n || l[i] != ' ')
                return -EBADMSG;
        if (i - t >= sizeof(r->path))
                return -EMSGSIZE;
        {
                size_t plen = i - t;
                const char *q = memchr(l + t, '?', plen);
                if (q) {
                        size_t qlen = (size_t)(l + i - (q + 1));
                        plen = (size_t)(q - (l + t));
                        memcpy(r->query, q + 1, qlen);
                        r->query[qlen] = '\0';
                }
                memcpy(r->path, l + t, plen);
                r->path[plen] = '\0';
        }
        i++;
        if (n - i != 8 || memcmp(l + i, "HTTP/", 5) != 0 || l[i + 6] != '.' || l[i + 5] < '0' ||
            l[i + 5] > '9' || l[i + 7] < '0' || l[i + 7] > '9')
                return -EBADMSG;
        if (l[i + 5] != '1')
                return -EPROTONOSUPPORT;
        r->minor = l[i + 7] - '0';
        if (r->minor > 1)
                return -EPROTONOSUPPORT;
        return 0;
}

int ncm_http_parse_request(const char *buf, size_t len, size_t max_head, ncm_http_request *ret)
{
        ncm_http_request r;
        const char *p, *end, *l;
        size_t n, hl;
        bool close_seen = false, keep_seen = false;
        int rc;

        size_t skip = 0;

        /* RFC 9112 2.2: empty lines before the request line are ignored */
        while (skip < len && (buf[skip] == '\r' || buf[skip] == '\n'))
                skip++;
        if (skip >= max_head)
                return -EMSGSIZE;
        if (skip == len)
                return 0;
        p = buf + skip;
        hl = head_end(p, len - skip);
        if (!hl)
                return len >= max_head ? -EMSGSIZE : 0;
        hl += (size_t)(p - buf);
        if (hl > max_head)
                return -EMSGSIZE;
        end = buf + hl;
        memset(&r, 0, sizeof(r));
        if (!next_line(&p, end, &l, &n))
                return -EBADMSG;
        rc = request_line(l, n, &r);
        if (rc < 0)
                return rc;
        while (next_line(&p, end, &l, &n) && n) {
                const char *colon = memchr(l, ':', n);
                size_t k, vs;
                if (l[0] == ' ' || l[0] == '\t' || !colon)
                        return -EBADMSG; /* obsolete folding, or no field name */
                k = (size_t)(colon - l);
                for (size_t i = 0; i < k; i++)
                        if (!is_tchar(l[i]))
                                return -EBADMSG; /* also whitespace before the colon */
                if (!k)
                        return -EBADMSG;
                vs = k + 1;
                while (vs < n && (l[vs] == ' ' || l[vs] == '\t'))
                        vs++;
                for (size_t i = vs; i < n; i++)
                        if ((unsigned char)l[i] < 0x20 && l[i] != '\t')
                                return -EBADMSG;
                if (k == 17 && strncasecmp(l, "transfer-encoding", k) == 0)
                        return -EFBIG;
                if (k == 14 && strncasecmp(l, "content-length", k) == 0) {
                        size_t e = n;
                        bool zero = vs < e;
                        while (e > vs && (l[e - 1] == ' ' || l[e - 1] == '\t'))
                                e--;
                        for (size_t i = vs; i < e; i++) {
                                if (l[i] < '0' || l[i] > '9')
                                        return -EBADMSG;
                                if (l[i] != '0')
                                        zero = false;
                        }
                        if (vs == e)
                                return -EBADMSG;
                        if (!zero)
                                return -EFBIG;
                }
                if (k == 10 && strncasecmp(l, "connection", k) == 0) {
                        close_seen |= has_token(l + vs, n - vs, "close");
                        keep_seen |= has_token(l + vs, n - vs, "keep-alive");
                }
        }
        r.keep_alive = close_seen ? false : r.minor >= 1 ? true : keep_seen;
        r.head_len = hl;
        *ret = r;
        return 1;
}

void ncm_http_sse_event(ncm_buf *b, uint64_t id, const char *data)
{
        const char *p = data ? data : "";

        ncm_buf_printf(b, "id: %llu\n", (unsigned long long)id);
        do {
                size_t n = strcspn(p, "\r\n");
                ncm_buf_puts(b, "data: ");
                ncm_buf_append(b, p, n);
                ncm_buf_putc(b, '\n');
                p += n;
                if (*p == '\r' && p[1] == '\n')
                        p++;
                if (*p)
                        p++;
        } while (*p);
        ncm_buf_putc(b, '\n');
}

int ncm_http_query_param(const char *query, const char *name, char *out, size_t size)
{
        size_t nl = strlen(name);
        const char *p = query;

        while (p && *p) {
                const char *end = strchr(p, '&');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len > nl && p[nl] == '=' && memcmp(p, name, nl) == 0) {
                        size_t k = 0;
                        for (size_t i = nl + 1; i < len; i++) {
                                char c = p[i];
                                if (c == '%') {
                                        char h[3] = {0};
                                        if (i + 2 >= len || !isxdigit((unsigned char)p[i + 1]) ||
                                            !isxdigit((unsigned char)p[i + 2]))
                                                return -EINVAL;
                                        memcpy(h, p + i + 1, 2);
                                        c = (char)strtol(h, NULL, 16);
                                        if (!c)
                                                return -EINVAL;
                                        i += 2;
                                } else if (c == '+') {
                                        c = ' ';
                                }
                                if (k + 1 >= size)
                                        return -ENAMETOOLONG;
                                out[k++] = c;
                        }
                        if (!size)
                                return -ENAMETOOLONG;
                        out[k] = '\0';
                        return (int)k;
                }
                p = end ? end + 1 : NULL;
        }
        return -ENOENT;
}
