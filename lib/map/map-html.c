/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The page of a node map: HTML with one inline SVG drawing, inline CSS and a few lines of
 * JavaScript, nothing fetched. It decides nothing: every number comes from the scene.
 *
 * The drawing nests boxes as the machine does -- socket, NUMA node, uncore (L3) cache, core,
 * CPU -- laid out in two passes (measure every box bottom-up, then place and draw top-down)
 * with one rule at each level: children flow left to right and wrap at a width. Two scales:
 * "detailed" (up to 256 CPUs) prints each CPU's id in its square; "compact" folds each NUMA
 * node into a tile of small squares (one column per core) so that 1,024 CPUs fit a screen,
 * with each socket's totals in its header row.
 *
 * Colours are CSS custom properties on classes: a CPU's group and its holder's legend swatch
 * carry the same class, so they cannot disagree. A pod's colour comes from its UID (a
 * 12-colour palette while a node holds at most 12 pods, a hue from the hash beyond), so it
 * stays the same from one step, or one refresh, to the next.
 *
 * Without JavaScript the page still works: every CPU and device has a tooltip (<title>) and
 * links to its pod's card (#pod-N, highlighted by :target). The script adds the hover panel
 * (the pod's card, its explanation open) and, on a live page, the reload after each change.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/map.h>

/* ---- escaping -------------------------------------------------------------------------- */

static void esc(ncm_buf *b, const char *s)
{
        for (; s && *s; s++) {
                switch (*s) {
                case '&':
                        ncm_buf_puts(b, "&amp;");
                        break;
                case '<':
                        ncm_buf_puts(b, "&lt;");
                        break;
                case '>':
                        ncm_buf_puts(b, "&gt;");
                        break;
                case '"':
                        ncm_buf_puts(b, "&quot;");
                        break;
                case '\'':
                        ncm_buf_puts(b, "&#39;");
                        break;
                default:
                        ncm_buf_putc(b, *s);
                }
        }
}

/* ---- colours --------------------------------------------------------------------------- */

/* Qualitative colours, far from the reserved (dark slate) and shared (light grey) ones. */
static const unsigned palette[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948,
                                   0xb07aa1, 0xff9da7, 0x9c755f, 0x17becf, 0x8cd17d, 0xd37295};
#define PALETTE_N NCM_ELEMENTSOF(palette)

static uint32_t fnv1a(const char *s)
{
        uint32_t h = 2166136261u;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 16777619u;
        return h;
}

static unsigned hsl_rgb(double h, double s, double l)
{
        double c = (1 - fabs(2 * l - 1)) * s, hp = h / 60, x = c * (1 - fabs(fmod(hp, 2) - 1));
        double r = 0, g = 0, b = 0, m = l - c / 2;

        if (hp < 1)
                r = c, g = x;
        else if (hp < 2)
                r = x, g = c;
        else if (hp < 3)
                g = c, b = x;
        else if (hp < 4)
                g = x, b = c;
        else if (hp < 5)
                r = x, b = c;
        else
                r = c, b = x;
        return (unsigned)lround((r + m) * 255) << 16 | (unsigned)lround((g + m) * 255) << 8 |
               (unsigned)lround((b + m) * 255);
}

/* Whether text on RGB should be dark (relative luminance, roughly). */
static bool light(unsigned rgb)
{
        double r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
        return 0.299 * r + 0.587 * g + 0.114 * b > 150;
}

/* Each pod's colour: stable for a UID; distinct palette colours while there are few pods. */
static void pod_colours(const ncm_map_scene *s, unsigned *rgb)
{
        bool used[PALETTE_N] = {false};

        for (size_t i = 0; i < s->n_pods; i++) {
                uint32_t h = fnv1a(s->pods[i].uid);
                if (s->n_pods <= PALETTE_N) {
                        size_t k = h % PALETTE_N;
                        while (used[k])
                                k = (k + 1) % PALETTE_N;
                        used[k] = true;
                        rgb[i] = palette[k];
                } else {
                        rgb[i] = hsl_rgb((double)(h % 360), 0.50 + (double)((h >> 9) % 4) * 0.08,
                                         0.40 + (double)((h >> 12) % 5) * 0.05);
                }
        }
}

/* ---- geometry -------------------------------------------------------------------------- */

typedef struct geom {
        bool compact;
        int cpu_w, cpu_h, cpu_gap; /* a CPU's square, and between the threads of a core */
        int core_pad, core_gap;    /* inside a core's outline, and between cores */
        int pad, gap;              /* inside a box, and between boxes */
        int head;                  /* a box's header line */
        int font;                  /* header text size */
        int dev_h;                 /* a device chip */
        int width;                 /* where the drawing wraps */
} geom;

static const geom detailed_geom = {false, 30, 22, 3, 3, 6, 8, 10, 18, 12, 18, 1180};
static const geom compact_geom = {true, 10, 10, 1, 1, 3, 5, 6, 14, 10, 8, 1180};

/* About how wide TEXT is at SIZE px (DejaVu Sans: a little under 0.6 em a character). */
static int text_w(const char *text, int size)
{
        size_t n = 0;
        for (const char *p = text; *p; p++)
                n += ((unsigned char)*p & 0xc0) != 0x80;
        return (int)(n * (size_t)size * 57 / 100) + 2;
}

/* Place N boxes (W, H) left to right, wrapping at MAXW; their positions and the total. */
static void flow(const int *w, const int *h, size_t n, int maxw, int gap, int *x, int *y, int *tw,
                 int *th)
{
        int cx = 0, cy = 0, row = 0, mw = 0;

        for (size_t i = 0; i < n; i++) {
                if (cx > 0 && cx + w[i] > maxw) {
                        cy += row + gap;
                        cx = 0;
                        row = 0;
                }
                x[i] = cx;
                y[i] = cy;
                cx += w[i] + gap;
                if (h[i] > row)
                        row = h[i];
                if (cx - gap > mw)
                        mw = cx - gap;
        }
        *tw = mw;
        *th = n ? cy + row : 0;
}

/* ---- the layout ------------------------------------------------------------------------ */

typedef struct lcore {
        size_t first, n; /* in order[] */
} lcore;

typedef struct luncore {
        size_t first, n; /* cores */
        int64_t id;
        int w, h, x, y;
} luncore;

typedef struct lnuma {
        size_t first, n; /* uncore groups */
        int id, socket;
        const ncm_map_numa *m; /* the scene's node, or NULL */
        bool l3;               /* draw the uncore caches as boxes */
        int cols;              /* core grid (without L3 boxes) */
        int body_w, body_h;    /* the cores, or the L3 boxes */
        size_t *dev, n_dev;    /* devices drawn here */
        size_t *pci, n_pci;
        int dev_w, dev_h; /* their rows */
        int *dx, *dy;     /* chip positions: devices, then PCI devices */
        int w, h, x, y;
} lnuma;

typedef struct lsock {
        size_t first, n; /* NUMA groups */
        int id;
        int cpus, reserved, shared, exclusive, room, room_max;
        bool spans; /* an uncore cache of it spans NUMA nodes */
        int w, h, x, y;
} lsock;

typedef struct layout {
        const ncm_map_scene *s;
        geom g;
        size_t *order; /* CPU indices by socket, NUMA node, uncore, core, id */
        lcore *cores;
        size_t n_cores;
        luncore *uncs;
        size_t n_uncs;
        lnuma *numas;
        size_t n_numas;
        lsock *socks;
        size_t n_socks;
        size_t *loose, n_loose; /* devices without a NUMA node drawn here */
        size_t *loose_pci, n_loose_pci;
        int *lx, *ly; /* their chips */
        int loose_w, loose_h;
        int w, h;
        unsigned *rgb;  /* pod colours */
        bool *coloured; /* pods that hold CPUs or devices */
        bool isolated;  /* some CPU has NCM_MAP_CPU_ISOLATED */
        bool nohz;      /* ... NCM_MAP_CPU_NOHZ_FULL */
        bool memory;    /* some NUMA node has memory figures */
} layout;

static int cmp_order(const void *x, const void *y, void *data)
{
        const ncm_map_scene *s = data;
        const ncm_map_cpu *a = &s->cpus[*(const size_t *)x];
        const ncm_map_cpu *b = &s->cpus[*(const size_t *)y];
        if (a->socket != b->socket)
                return a->socket < b->socket ? -1 : 1;
        if (a->numa != b->numa)
                return a->numa < b->numa ? -1 : 1;
        if (a->uncore != b->uncore)
                return a->uncore < b->uncore ? -1 : 1;
        if (a->core != b->core)
                return a->core < b->core ? -1 : 1;
        return a->cpu < b->cpu ? -1 : a->cpu > b->cpu;
}

static void layout_done(layout *l)
{
        free(l->order);
        free(l->cores);
        free(l->uncs);
        for (size_t i = 0; i < l->n_numas; i++) {
                free(l->numas[i].dev);
                free(l->numas[i].pci);
                free(l->numas[i].dx);
                free(l->numas[i].dy);
        }
        free(l->numas);
        free(l->socks);
        free(l->loose);
        free(l->loose_pci);
        free(l->lx);
        free(l->ly);
        free(l->rgb);
        free(l->coloured);
}

static const ncm_map_cpu *cpu_at(const layout *l, size_t k)
{
        return &l->s->cpus[l->order[k]];
}

/* Cut the sorted CPUs into cores, uncore groups, NUMA groups and sockets. */
static int group(layout *l)
{
        const ncm_map_scene *s = l->s;
        size_t n = s->n_cpus;

        l->order = calloc(n + 1, sizeof(*l->order));
        l->cores = calloc(n + 1, sizeof(*l->cores));
        l->uncs = calloc(n + 1, sizeof(*l->uncs));
        l->numas = calloc(n + 1, sizeof(*l->numas));
        l->socks = calloc(n + 1, sizeof(*l->socks));
        if (!l->order || !l->cores || !l->uncs || !l->numas || !l->socks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                l->order[i] = i;
        qsort_r(l->order, n, sizeof(*l->order), cmp_order, (void *)s);
        for (size_t k = 0; k < n; k++) {
                const ncm_map_cpu *c = cpu_at(l, k), *p = k ? cpu_at(l, k - 1) : NULL;
                bool new_sock = !p || p->socket != c->socket;
                bool new_numa = new_sock || p->numa != c->numa;
                bool new_unc = new_numa || p->uncore != c->uncore;
                bool new_core = new_unc || p->core != c->core;
                if (new_sock)
                        l->socks[l->n_socks++] = (lsock){.first = l->n_numas, .id = c->socket};
                if (new_numa) {
                        l->numas[l->n_numas++] = (lnuma){
                                        .first = l->n_uncs, .id = c->numa, .socket = c->socket};
                        l->socks[l->n_socks - 1].n++;
                }
                if (new_unc) {
                        l->uncs[l->n_uncs++] = (luncore){.first = l->n_cores, .id = c->uncore};
                        l->numas[l->n_numas - 1].n++;
                }
                if (new_core) {
                        l->cores[l->n_cores++] = (lcore){.first = k};
                        l->uncs[l->n_uncs - 1].n++;
                }
                l->cores[l->n_cores - 1].n++;
                l->isolated = l->isolated || (c->flags & NCM_MAP_CPU_ISOLATED);
                l->nohz = l->nohz || (c->flags & NCM_MAP_CPU_NOHZ_FULL);
        }
        for (size_t i = 0; i < l->n_numas; i++)
                for (size_t k = 0; k < s->n_numa; k++)
                        if (s->numa[k].id == l->numas[i].id)
                                l->numas[i].m = &s->numa[k];
        for (size_t k = 0; k < s->n_numa; k++)
                l->memory = l->memory || s->numa[k].memory || s->numa[k].n_hugepages;
        return 0;
}

/*
 * Whether each NUMA node draws its uncore caches as boxes: when every one of them lies within
 * the node (an uncore cache that spans NUMA nodes -- sub-NUMA clustering, or the socket id
 * standing in for a missing one -- is said in the socket's header instead), and, folded, only
 * when the node has more than one.
 */
static void mark_l3(layout *l)
{
        for (size_t i = 0; i < l->n_numas; i++) {
                lnuma *nm = &l->numas[i];
                bool inside = true;
                for (size_t u = nm->first; u < nm->first + nm->n && inside; u++)
                        for (size_t j = 0; j < l->n_uncs && inside; j++)
                                if (j < nm->first || j >= nm->first + nm->n)
                                        inside = l->uncs[j].id != l->uncs[u].id;
                nm->l3 = inside && (!l->g.compact || nm->n > 1);
                if (!inside)
                        for (size_t k = 0; k < l->n_socks; k++)
                                if (l->socks[k].id == nm->socket)
                                        l->socks[k].spans = true;
        }
}

static int core_w(const layout *l, size_t n)
{
        const geom *g = &l->g;
        if (g->compact)
                return 2 * g->core_pad + g->cpu_w;
        return 2 * g->core_pad + (int)n * g->cpu_w + ((int)n - 1) * g->cpu_gap;
}

static int core_h(const layout *l, size_t n)
{
        const geom *g = &l->g;
        if (!g->compact)
                return 2 * g->core_pad + g->cpu_h;
        return 2 * g->core_pad + (int)n * g->cpu_h + ((int)n - 1) * g->cpu_gap;
}

/* Columns of a grid of N cores. */
static int grid_cols(const layout *l, size_t n)
{
        size_t c;
        if (l->g.compact)
                c = n < 16 ? n : 16;
        else
                c = n <= 4 ? n : (n + 1) / 2 < 4 ? 4 : (n + 1) / 2 > 8 ? 8 : (n + 1) / 2;
        return c ? (int)c : 1;
}

/* The grid of cores [FIRST, FIRST + N): its cell and its size. */
static void grid_size(const layout *l, size_t first, size_t n, int cols, int *cw, int *ch, int *w,
                      int *h)
{
        int rows = (int)((n + (size_t)cols - 1) / (size_t)cols);

        *cw = 0;
        *ch = 0;
        for (size_t c = first; c < first + n; c++) {
                int a = core_w(l, l->cores[c].n), b = core_h(l, l->cores[c].n);
                *cw = a > *cw ? a : *cw;
                *ch = b > *ch ? b : *ch;
        }
        *w = cols * *cw + (cols - 1) * l->g.core_gap;
        *h = rows ? rows * *ch + (rows - 1) * l->g.core_gap : 0;
}

static void l3_label(const luncore *u, char *buf, size_t size)
{
        snprintf(buf, size, "L3 %lld", (long long)u->id);
}

static void chip_size(const layout *l, const char *label, int *w, int *h)
{
        *h = l->g.dev_h;
        *w = l->g.compact ? 12 : text_w(label, 10) + 10;
        if (!l->g.compact && *w < 34)
                *w = 34;
}

/* The short name of a PCI device: its label, else "3b:00.0". */
static const char *pci_name(const ncm_map_pci *p)
{
        const char *a = p->address ? p->address : "";
        if (p->label && p->label[0])
                return p->label;
        return strlen(a) > 5 && a[4] == ':' ? a + 5 : a;
}

/* The chips of DEV[0..ND) and PCI[0..NP) flowed within MAXW: positions and size. */
static int chips(const layout *l, const size_t *dev, size_t nd, const size_t *pci, size_t np,
                 int maxw, int **x, int **y, int *tw, int *th)
{
        size_t n = nd + np;
        int *w = calloc(n + 1, sizeof(int)), *h = calloc(n + 1, sizeof(int));

        *x = calloc(n + 1, sizeof(int));
        *y = calloc(n + 1, sizeof(int));
        if (!w || !h || !*x || !*y) {
                free(w);
                free(h);
                return -ENOMEM;
        }
        for (size_t i = 0; i < nd; i++)
                chip_size(l, l->s->devices[dev[i]].id, &w[i], &h[i]);
        for (size_t i = 0; i < np; i++)
                chip_size(l, pci_name(&l->s->pci[pci[i]]), &w[nd + i], &h[nd + i]);
        flow(w, h, n, maxw, l->g.compact ? 2 : 4, *x, *y, tw, th);
        free(w);
        free(h);
        return 0;
}

static void numa_header(const layout *l, const lnuma *nm, char *buf, size_t size)
{
        const ncm_map_numa *m = nm->m;
        if (!l->s->pinning)
                snprintf(buf, size, l->g.compact ? "N%d" : "NUMA %d", nm->id);
        else if (l->g.compact)
                snprintf(buf, size, "N%d · room %d", nm->id, m ? m->room : 0);
        else
                snprintf(buf, size, "NUMA %d · room for %d exclusive CPU%s", nm->id,
                         m ? m->room : 0, m && m->room == 1 ? "" : "s");
}

/* "64 GiB" */
static void put_bytes(ncm_buf *b, uint64_t v)
{
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        size_t u = 0;
        double d = (double)v;
        while (d >= 1024 && u + 1 < NCM_ELEMENTSOF(units)) {
                d /= 1024;
                u++;
        }
        if (d == floor(d))
                ncm_buf_printf(b, "%.0f %s", d, units[u]);
        else
                ncm_buf_printf(b, "%.1f %s", d, units[u]);
}

/* The memory line of a NUMA node (hook), or "" */
static void memory_line(const ncm_map_numa *m, ncm_buf *b)
{
        if (!m || (!m->memory && !m->n_hugepages))
                return;
        if (m->memory) {
                ncm_buf_puts(b, "memory ");
                put_bytes(b, m->memory);
                ncm_buf_puts(b, ", ");
                put_bytes(b, m->memory_free);
                ncm_buf_puts(b, " free");
        }
        for (size_t i = 0; i < m->n_hugepages; i++) {
                const ncm_map_hugepages *h = &m->hugepages[i];
                ncm_buf_printf(b, "%shugepages ", b->len ? " · " : "");
                put_bytes(b, h->page_size_kib * 1024);
                ncm_buf_printf(b, ": %llu of %llu free", (unsigned long long)h->free,
                               (unsigned long long)h->total);
        }
}

static int measure_numa(layout *l, lnuma *nm, int maxw)
{
        const geom *g = &l->g;
        char head[96];
        int hw, cw, ch;

        if (nm->l3) {
                int *w = calloc(nm->n + 1, sizeof(int)), *h = calloc(nm->n + 1, sizeof(int));
                int *x = calloc(nm->n + 1, sizeof(int)), *y = calloc(nm->n + 1, sizeof(int));
                if (!w || !h || !x || !y) {
                        free(w);
                        free(h);
                        free(x);
                        free(y);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < nm->n; i++) {
                        luncore *u = &l->uncs[nm->first + i];
                        char lab[48];
                        int gw, gh;
                        grid_size(l, u->first, u->n, grid_cols(l, u->n), &cw, &ch, &gw, &gh);
                        l3_label(u, lab, sizeof(lab));
                        u->w = 2 * g->pad + (gw > text_w(lab, 10) ? gw : text_w(lab, 10));
                        u->h = 2 * g->pad + (g->compact ? 0 : 14) + gh;
                        w[i] = u->w;
                        h[i] = u->h;
                }
                flow(w, h, nm->n, maxw - 2 * g->pad, g->gap, x, y, &nm->body_w, &nm->body_h);
                for (size_t i = 0; i < nm->n; i++) {
                        l->uncs[nm->first + i].x = x[i];
                        l->uncs[nm->first + i].y = y[i];
                }
                free(w);
                free(h);
                free(x);
                free(y);
        } else {
                /* one grid of every core of the node */
                size_t first = l->uncs[nm->first].first, n = 0;
                for (size_t i = 0; i < nm->n; i++)
                        n += l->uncs[nm->first + i].n;
                nm->cols = grid_cols(l, n);
                grid_size(l, first, n, nm->cols, &cw, &ch, &nm->body_w, &nm->body_h);
        }
        numa_header(l, nm, head, sizeof(head));
        hw = text_w(head, g->font) * 11 / 10; /* bold */
        nm->w = nm->body_w > hw ? nm->body_w : hw;
        if (nm->n_dev + nm->n_pci) {
                int r = chips(l, nm->dev, nm->n_dev, nm->pci, nm->n_pci, nm->w > 160 ? nm->w : 160,
                              &nm->dx, &nm->dy, &nm->dev_w, &nm->dev_h);
                if (r < 0)
                        return r;
                nm->w = nm->dev_w > nm->w ? nm->dev_w : nm->w;
        }
        nm->w += 2 * g->pad;
        nm->h = 2 * g->pad + g->head + nm->body_h + (nm->dev_h ? g->gap / 2 + nm->dev_h : 0);
        if (!g->compact && nm->m && (nm->m->memory || nm->m->n_hugepages))
                nm->h += 14;
        return 0;
}

/* Which NUMA group a device (or a PCI device) is drawn in: its first node's, or none. */
static lnuma *numa_group(layout *l, int64_t id)
{
        for (size_t i = 0; i < l->n_numas; i++)
                if (l->numas[i].id == id)
                        return &l->numas[i];
        return NULL;
}

static int place_devices(layout *l)
{
        const ncm_map_scene *s = l->s;

        for (size_t i = 0; i < l->n_numas; i++) {
                l->numas[i].dev = calloc(s->n_devices + 1, sizeof(size_t));
                l->numas[i].pci = calloc(s->n_pci + 1, sizeof(size_t));
                if (!l->numas[i].dev || !l->numas[i].pci)
                        return -ENOMEM;
        }
        l->loose = calloc(s->n_devices + 1, sizeof(size_t));
        l->loose_pci = calloc(s->n_pci + 1, sizeof(size_t));
        if (!l->loose || !l->loose_pci)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_devices; i++) {
                lnuma *nm = s->devices[i].n_numa ? numa_group(l, s->devices[i].numa[0]) : NULL;
                if (nm)
                        nm->dev[nm->n_dev++] = i;
                else
                        l->loose[l->n_loose++] = i;
        }
        for (size_t i = 0; i < s->n_pci; i++) {
                lnuma *nm = s->pci[i].numa >= 0 ? numa_group(l, s->pci[i].numa) : NULL;
                if (nm)
                        nm->pci[nm->n_pci++] = i;
                else
                        l->loose_pci[l->n_loose_pci++] = i;
        }
        return 0;
}

/* The summary row of a socket: what its CPUs are used for (LINE 0), its room (LINE 1). */
static void socket_summary(const layout *l, const lsock *k, int line, ncm_buf *b)
{
        if (line != 1)
                ncm_buf_printf(b, "%d CPUs: %d reserved, %d exclusive, %d shared", k->cpus,
                               k->reserved, k->exclusive, k->shared);
        if (line < 0 && l->s->pinning)
                ncm_buf_puts(b, " · ");
        if (line != 0 && l->s->pinning)
                ncm_buf_printf(b, "room for %d exclusive CPUs, at most %d on one NUMA node",
                               k->room, k->room_max);
}

static int measure(layout *l)
{
        const geom *g = &l->g;
        int *w, *h, *x, *y, r = 0;
        size_t most = l->n_numas > l->n_socks ? l->n_numas : l->n_socks;

        w = calloc(most + 1, sizeof(int));
        h = calloc(most + 1, sizeof(int));
        x = calloc(most + 1, sizeof(int));
        y = calloc(most + 1, sizeof(int));
        if (!w || !h || !x || !y) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < l->n_numas && r >= 0; i++)
                r = measure_numa(l, &l->numas[i], g->width - 4 * g->pad);
        for (size_t k = 0; k < l->n_socks && r >= 0; k++) {
                lsock *sk = &l->socks[k];
                ncm_buf sum = NCM_BUF_INIT;
                int fw, fh, hw;
                for (size_t i = 0; i < sk->n; i++) {
                        const lnuma *nm = &l->numas[sk->first + i];
                        w[i] = nm->w;
                        h[i] = nm->h;
                        if (nm->m) {
                                sk->cpus += nm->m->cpus;
                                sk->reserved += nm->m->reserved;
                                sk->shared += nm->m->shared;
                                sk->exclusive += nm->m->exclusive;
                                sk->room += nm->m->room;
                                sk->room_max = nm->m->room > sk->room_max ? nm->m->room
                                                                          : sk->room_max;
                        }
                }
                flow(w, h, sk->n, g->width - 2 * g->pad, g->gap, x, y, &fw, &fh);
                for (size_t i = 0; i < sk->n; i++) {
                        l->numas[sk->first + i].x = x[i];
                        l->numas[sk->first + i].y = y[i];
                }
                for (int line = 0; line < 2; line++) {
                        ncm_buf_reset(&sum);
                        socket_summary(l, sk, line, &sum);
                        hw = text_w(sum.data ? sum.data : "", 11);
                        fw = hw > fw ? hw : fw;
                }
                ncm_buf_done(&sum);
                sk->w = 2 * g->pad + fw;
                sk->h = 2 * g->pad + g->head + 30 + (sk->spans ? 14 : 0) + fh;
        }
        if (r < 0)
                goto out;
        for (size_t k = 0; k < l->n_socks; k++) {
                w[k] = l->socks[k].w;
                h[k] = l->socks[k].h;
        }
        flow(w, h, l->n_socks, g->width, g->gap, x, y, &l->w, &l->h);
        for (size_t k = 0; k < l->n_socks; k++) {
                l->socks[k].x = x[k];
                l->socks[k].y = y[k];
        }
        if (l->n_loose + l->n_loose_pci) {
                r = chips(l, l->loose, l->n_loose, l->loose_pci, l->n_loose_pci, g->width, &l->lx,
                          &l->ly, &l->loose_w, &l->loose_h);
                l->h += g->gap + 18 + l->loose_h;
                if (l->loose_w > l->w)
                        l->w = l->loose_w;
        }
out:
        free(w);
        free(h);
        free(x);
        free(y);
        return r;
}

/* ---- drawing --------------------------------------------------------------------------- */

static const char *use_class(ncm_map_use u)
{
        switch (u) {
        case NCM_MAP_RESERVED:
                return "rs";
        case NCM_MAP_EXCLUSIVE:
                return "ex";
        case NCM_MAP_FREE:
                return "fr";
        default:
                return "sh";
        }
}

static const char *use_name(ncm_map_use u)
{
        switch (u) {
        case NCM_MAP_RESERVED:
                return "reserved";
        case NCM_MAP_FREE:
                return "free";
        case NCM_MAP_EXCLUSIVE:
                return "exclusive";
        default:
                return "shared";
        }
}

/* A pod as people name it: its name, else its UID. */
static const char *pod_label(const ncm_map_pod *p)
{
        return p->name && p->name[0] ? p->name : p->uid;
}

/* "web-1/nginx" (holder text) */
static void put_holder(ncm_buf *b, const ncm_map_scene *s, int pod, int container)
{
        const ncm_map_pod *p = &s->pods[pod];
        esc(b, pod_label(p));
        if (container >= 0) {
                ncm_buf_putc(b, '/');
                esc(b, p->containers[container].name);
        }
}

/* data-holder="UID/CONTAINER" */
static void put_holder_attr(ncm_buf *b, const ncm_map_scene *s, int pod, int container)
{
        const ncm_map_pod *p = &s->pods[pod];
        ncm_buf_puts(b, " data-holder=\"");
        esc(b, p->uid);
        if (container >= 0) {
                ncm_buf_putc(b, '/');
                esc(b, p->containers[container].name);
        }
        ncm_buf_putc(b, '"');
}

static void draw_cpu(const layout *l, ncm_buf *b, const ncm_map_cpu *c, int x, int y)
{
        const ncm_map_scene *s = l->s;
        const geom *g = &l->g;
        bool held = c->use == NCM_MAP_EXCLUSIVE && c->pod >= 0;

        if (held)
                ncm_buf_printf(b, "<a href=\"#pod-%d\"><g class=\"u p%d\" data-pod=\"%d\">", c->pod,
                               c->pod, c->pod);
        else
                ncm_buf_printf(b, "<g class=\"u %s\">", use_class(c->use));
        ncm_buf_printf(b, "<title>CPU %d · core %d · L3 %lld · NUMA %d · socket %d\n", c->cpu,
                       c->core, (long long)c->uncore, c->numa, c->socket);
        if (held) {
                const ncm_map_pod *p = &s->pods[c->pod];
                put_holder(b, s, c->pod, c->container);
                if (p->qos) {
                        ncm_buf_puts(b, " (");
                        esc(b, p->qos);
                        ncm_buf_putc(b, ')');
                }
                if (c->also)
                        ncm_buf_printf(b, ", and %d more container%s of the pod", c->also,
                                       c->also == 1 ? "" : "s");
        } else if (c->use == NCM_MAP_SHARED) {
                ncm_buf_puts(b, "shared pool");
        } else if (c->use == NCM_MAP_RESERVED && s->reserved_in_pool) {
                ncm_buf_puts(b, "reserved (in the shared pool too: no container gets it for "
                                "itself)");
        } else {
                ncm_buf_puts(b, use_name(c->use));
        }
        if (c->flags & NCM_MAP_CPU_ISOLATED)
                ncm_buf_puts(b, " · isolated");
        if (c->flags & NCM_MAP_CPU_NOHZ_FULL)
                ncm_buf_puts(b, " · nohz_full");
        ncm_buf_printf(b, "</title><rect class=\"c\" data-cpu=\"%d\"", c->cpu);
        if (held)
                put_holder_attr(b, s, c->pod, c->container);
        else
                ncm_buf_printf(b, " data-holder=\"%s\"", use_name(c->use));
        ncm_buf_printf(b, " x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\"/>", x, y,
                       g->cpu_w, g->cpu_h, g->compact ? 1 : 3);
        if (!g->compact)
                ncm_buf_printf(b, "<text class=\"cl\" x=\"%d\" y=\"%d\">%d</text>",
                               x + g->cpu_w / 2, y + g->cpu_h / 2 + 4, c->cpu);
        if (c->flags & NCM_MAP_CPU_ISOLATED)
                ncm_buf_printf(b, "<path class=\"iso\" d=\"M%d %dh%dv%dz\"/>", x + g->cpu_w / 2, y,
                               g->cpu_w / 2, g->cpu_w / 2);
        if (c->flags & NCM_MAP_CPU_NOHZ_FULL)
                ncm_buf_printf(b,
                               "<rect class=\"nohz\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"2\"/>",
                               x + 1, y + g->cpu_h - 3, g->cpu_w - 2);
        ncm_buf_puts(b, held ? "</g></a>" : "</g>");
}

/* A grid of COLS columns of the cores [FIRST, FIRST + N) at (X, Y). */
static void draw_grid(const layout *l, ncm_buf *b, size_t first, size_t n, int cols, int x, int y)
{
        const geom *g = &l->g;
        int cw, ch, w, h;

        grid_size(l, first, n, cols, &cw, &ch, &w, &h);
        for (size_t i = 0; i < n; i++) {
                const lcore *co = &l->cores[first + i];
                int cx = x + (int)(i % (size_t)cols) * (cw + g->core_gap);
                int cy = y + (int)(i / (size_t)cols) * (ch + g->core_gap);
                ncm_buf_printf(b,
                               "<rect class=\"core\" x=\"%d\" y=\"%d\" width=\"%d\" "
                               "height=\"%d\" rx=\"%d\"/>",
                               cx, cy, core_w(l, co->n), core_h(l, co->n), g->compact ? 1 : 4);
                for (size_t t = 0; t < co->n; t++) {
                        int px = cx + g->core_pad, py = cy + g->core_pad;
                        if (g->compact)
                                py += (int)t * (g->cpu_h + g->cpu_gap);
                        else
                                px += (int)t * (g->cpu_w + g->cpu_gap);
                        draw_cpu(l, b, cpu_at(l, co->first + t), px, py);
                }
        }
}

static void draw_chip_text(const layout *l, ncm_buf *b, const char *label, int x, int y, int w)
{
        if (l->g.compact)
                return;
        ncm_buf_printf(b, "<text class=\"dl\" x=\"%d\" y=\"%d\">", x + w / 2, y + 13);
        esc(b, label);
        ncm_buf_puts(b, "</text>");
}

static void draw_device(const layout *l, ncm_buf *b, size_t i, int x, int y)
{
        const ncm_map_scene *s = l->s;
        const ncm_map_device *d = &s->devices[i];
        bool held = d->pod >= 0;
        int w, h;

        chip_size(l, d->id, &w, &h);
        if (held)
                ncm_buf_printf(b, "<a href=\"#pod-%d\"><g class=\"dv p%d%s\" data-pod=\"%d\"",
                               d->pod, d->pod, d->healthy ? "" : " bad", d->pod);
        else
                ncm_buf_printf(b, "<g class=\"dv %s\"", d->healthy ? "fd" : "fd bad");
        ncm_buf_puts(b, " data-device=\"");
        esc(b, d->resource);
        ncm_buf_putc(b, '/');
        esc(b, d->id);
        ncm_buf_putc(b, '"');
        if (held)
                put_holder_attr(b, s, d->pod, d->container);
        else
                ncm_buf_puts(b, " data-holder=\"free\"");
        ncm_buf_puts(b, "><title>");
        esc(b, d->id);
        ncm_buf_puts(b, " (");
        esc(b, d->resource);
        ncm_buf_puts(b, ")");
        if (d->n_numa) {
                ncm_buf_puts(b, " · NUMA ");
                for (size_t k = 0; k < d->n_numa; k++)
                        ncm_buf_printf(b, "%s%lld", k ? "," : "", (long long)d->numa[k]);
        } else {
                ncm_buf_puts(b, " · no NUMA affinity");
        }
        ncm_buf_puts(b, d->healthy ? "" : " · unhealthy");
        if (held) {
                ncm_buf_puts(b, " · held by ");
                put_holder(b, s, d->pod, d->container);
        } else {
                ncm_buf_puts(b, d->healthy ? " · free" : "");
        }
        ncm_buf_printf(b,
                       "</title><rect class=\"d\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "rx=\"3\"/>",
                       x, y, w, h);
        draw_chip_text(l, b, d->id, x, y, w);
        ncm_buf_puts(b, held ? "</g></a>" : "</g>");
}

static void draw_pci(const layout *l, ncm_buf *b, size_t i, int x, int y)
{
        const ncm_map_pci *p = &l->s->pci[i];
        const char *name = pci_name(p);
        int w, h;

        chip_size(l, name, &w, &h);
        ncm_buf_puts(b, "<g class=\"pci\" data-pci=\"");
        esc(b, p->address);
        ncm_buf_puts(b, "\"><title>PCI ");
        esc(b, p->address);
        if (p->class_id) {
                ncm_buf_puts(b, " class ");
                esc(b, p->class_id);
        }
        if (p->label) {
                ncm_buf_puts(b, " · ");
                esc(b, p->label);
        }
        ncm_buf_printf(b, " · NUMA %d", p->numa);
        if (p->local_cpus) {
                ncm_buf_puts(b, " · local CPUs ");
                esc(b, p->local_cpus);
        }
        ncm_buf_printf(b,
                       "</title><rect class=\"d\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "rx=\"3\"/>",
                       x, y, w, h);
        draw_chip_text(l, b, name, x, y, w);
        ncm_buf_puts(b, "</g>");
}

static void draw_numa(const layout *l, ncm_buf *b, const lnuma *nm, int x, int y)
{
        const geom *g = &l->g;
        const ncm_map_numa *m = nm->m;
        ncm_buf mem = NCM_BUF_INIT;
        char head[96];
        int by = y + g->pad + g->head;

        memory_line(m, &mem);
        numa_header(l, nm, head, sizeof(head));
        ncm_buf_printf(b,
                       "<g class=\"numa\" data-numa=\"%d\" data-room=\"%d\"><title>NUMA %d: %d "
                       "CPUs, %d exclusive, %d shared, %d reserved",
                       nm->id, m ? m->room : 0, nm->id, m ? m->cpus : 0, m ? m->exclusive : 0,
                       m ? m->shared : 0, m ? m->reserved : 0);
        if (l->s->pinning)
                ncm_buf_printf(b, "; room for %d exclusive CPU%s", m ? m->room : 0,
                               m && m->room == 1 ? "" : "s");
        if (mem.len) {
                ncm_buf_puts(b, "; ");
                esc(b, mem.data);
        }
        ncm_buf_printf(b,
                       "</title><rect class=\"bx nm\" x=\"%d\" y=\"%d\" width=\"%d\" "
                       "height=\"%d\" rx=\"%d\"/>",
                       x, y, nm->w, nm->h, g->compact ? 3 : 6);
        ncm_buf_printf(b, "<text class=\"h%s\" x=\"%d\" y=\"%d\">",
                       !l->s->pinning || (m && m->room) ? "" : " full", x + g->pad,
                       y + g->pad + g->font);
        esc(b, head);
        ncm_buf_puts(b, "</text>");
        if (mem.len && !g->compact) {
                ncm_buf_printf(b, "<text class=\"mem\" x=\"%d\" y=\"%d\">", x + g->pad, by + 11);
                esc(b, mem.data);
                ncm_buf_puts(b, "</text>");
                by += 14;
        }
        ncm_buf_done(&mem);
        if (nm->l3) {
                for (size_t i = 0; i < nm->n; i++) {
                        const luncore *u = &l->uncs[nm->first + i];
                        int ux = x + g->pad + u->x, uy = by + u->y, gw, gh, cw, ch;
                        char lab[48];
                        l3_label(u, lab, sizeof(lab));
                        grid_size(l, u->first, u->n, grid_cols(l, u->n), &cw, &ch, &gw, &gh);
                        ncm_buf_printf(b,
                                       "<rect class=\"bx l3\" x=\"%d\" y=\"%d\" width=\"%d\" "
                                       "height=\"%d\" rx=\"4\"/>",
                                       ux, uy, u->w, u->h);
                        if (!g->compact)
                                ncm_buf_printf(b, "<text class=\"l3t\" x=\"%d\" y=\"%d\">%s</text>",
                                               ux + g->pad, uy + g->pad + 9, lab);
                        draw_grid(l, b, u->first, u->n, grid_cols(l, u->n), ux + g->pad,
                                  uy + g->pad + (g->compact ? 0 : 14));
                }
        } else {
                size_t n = 0;
                for (size_t i = 0; i < nm->n; i++)
                        n += l->uncs[nm->first + i].n;
                draw_grid(l, b, l->uncs[nm->first].first, n, nm->cols, x + g->pad, by);
        }
        if (nm->n_dev + nm->n_pci) {
                int dy = by + nm->body_h + g->gap / 2;
                for (size_t i = 0; i < nm->n_dev; i++)
                        draw_device(l, b, nm->dev[i], x + g->pad + nm->dx[i], dy + nm->dy[i]);
                for (size_t i = 0; i < nm->n_pci; i++)
                        draw_pci(l, b, nm->pci[i], x + g->pad + nm->dx[nm->n_dev + i],
                                 dy + nm->dy[nm->n_dev + i]);
        }
        ncm_buf_puts(b, "</g>");
}

static void draw_svg(const layout *l, ncm_buf *b)
{
        const geom *g = &l->g;
        int W = l->w + 2, H = l->h + 2;

        ncm_buf_printf(b,
                       "<svg id=\"map\" class=\"%s\" "
                       "width=\"%d\" height=\"%d\" viewBox=\"-1 -1 %d %d\">",
                       g->compact ? "compact" : "detailed", W, H, W, H);
        for (size_t k = 0; k < l->n_socks; k++) {
                const lsock *sk = &l->socks[k];
                int hy = sk->y + g->pad + g->head + 30;
                ncm_buf_printf(b,
                               "<g class=\"socket\" data-socket=\"%d\"><rect class=\"bx sk\" "
                               "x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"8\"/>",
                               sk->id, sk->x, sk->y, sk->w, sk->h);
                ncm_buf_printf(b, "<text class=\"st\" x=\"%d\" y=\"%d\">socket %d</text>",
                               sk->x + g->pad, sk->y + g->pad + 13, sk->id);
                for (int line = 0; line < 2; line++) {
                        ncm_buf sum = NCM_BUF_INIT;
                        socket_summary(l, sk, line, &sum);
                        ncm_buf_printf(b, "<text class=\"sum\" x=\"%d\" y=\"%d\">", sk->x + g->pad,
                                       sk->y + g->pad + g->head + 10 + 14 * line);
                        esc(b, sum.data);
                        ncm_buf_puts(b, "</text>");
                        ncm_buf_done(&sum);
                }
                if (sk->spans) {
                        ncm_buf_printf(b,
                                       "<text class=\"sum\" x=\"%d\" y=\"%d\">an uncore (L3) "
                                       "cache spans NUMA nodes here (or none was reported: "
                                       "the socket stands for it)</text>",
                                       sk->x + g->pad, hy + 8);
                        hy += 14;
                }
                for (size_t i = 0; i < sk->n; i++) {
                        const lnuma *nm = &l->numas[sk->first + i];
                        draw_numa(l, b, nm, sk->x + g->pad + nm->x, hy + nm->y);
                }
                ncm_buf_puts(b, "</g>");
        }
        if (l->n_loose + l->n_loose_pci) {
                int y = l->h - l->loose_h;
                ncm_buf_printf(b,
                               "<text class=\"sum\" x=\"0\" y=\"%d\">devices without NUMA "
                               "affinity</text>",
                               y - 6);
                for (size_t i = 0; i < l->n_loose; i++)
                        draw_device(l, b, l->loose[i], l->lx[i], y + l->ly[i]);
                for (size_t i = 0; i < l->n_loose_pci; i++)
                        draw_pci(l, b, l->loose_pci[i], l->lx[l->n_loose + i],
                                 y + l->ly[l->n_loose + i]);
        }
        ncm_buf_puts(b, "</svg>\n");
}

/* ---- the page around it ---------------------------------------------------------------- */

static const char style[] =
                "body{font:14px/1.45 'DejaVu Sans',system-ui,sans-serif;margin:16px "
                "22px;color:#1f2933;background:#f5f7fa}"
                "h1{font-size:21px;margin:0 0 2px}h1 small{font-weight:normal;color:#52606d;"
                "font-size:15px;margin-left:8px}h2{font-size:16px;margin:22px 0 6px}"
                ".set{color:#3e4c59;margin:2px 0}.gen{color:#7b8794;font-size:12px}"
                "nav{margin:6px 0}nav a{margin-right:14px}"
                ".legend{display:flex;flex-wrap:wrap;gap:3px 16px;margin:10px 0 12px;"
                "font-size:13px;max-width:1180px}.legend a{color:inherit;text-decoration:none}"
                ".sw{display:inline-block;width:12px;height:12px;border-radius:3px;"
                "background:var(--c);border:1px solid rgba(0,0,0,.3);vertical-align:-1px;"
                "margin-right:5px}"
                "svg text{font-family:'DejaVu Sans',sans-serif}"
                ".bx{fill:#fff;stroke:#9aa5b1}.sk{fill:#e9edf2;stroke:#7b8794}"
                ".l3{fill:#f7f9fb;stroke-dasharray:3 2}.core{fill:none;stroke:#bcccdc}"
                ".st{font-size:14px;font-weight:bold;fill:#1f2933}"
                ".sum{font-size:11px;fill:#3e4c59}.h{font-size:12px;font-weight:bold;"
                "fill:#1f2933}.compact .h{font-size:10px}.h.full{fill:#9aa5b1}"
                ".mem,.l3t{font-size:10px;fill:#52606d}"
                ".c{fill:var(--c);stroke:rgba(0,0,0,.3);stroke-width:.6}"
                ".cl{fill:var(--t);font-size:11px;text-anchor:middle;pointer-events:none}"
                ".u:hover .c,.dv:hover .d{stroke:#000;stroke-width:2}"
                ".iso{fill:#1f2933}.nohz{fill:#e12d39}"
                ".d{fill:var(--c);stroke:rgba(0,0,0,.45)}.fd .d{fill:#fff;stroke:#52606d}"
                ".bad .d{stroke:#e12d39;stroke-width:2;stroke-dasharray:3 2}"
                ".dl{font-size:10px;text-anchor:middle;fill:var(--t,#1f2933);"
                "pointer-events:none}.pci .d{fill:#fff;stroke:#7b8794;stroke-dasharray:2 2}"
                ".rs{--c:#3e4c59;--t:#fff}.sh{--c:#d9e2ec;--t:#3e4c59}.fr{--c:#fff;--t:#7b8794}"
                ".fd{--t:#1f2933}"
                "table{border-collapse:collapse;font-size:13px;margin:4px 0 8px}"
                "td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #d9e2ec}"
                "td:first-child,th:first-child{text-align:left}"
                "details.sock>summary{cursor:pointer;margin:4px 0}"
                ".pods{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));"
                "gap:10px;max-width:1180px}"
                ".pod{background:#fff;border:1px solid #d9e2ec;border-radius:6px;padding:6px "
                "10px}.pod:target{outline:3px solid #f0b429}.pod h3{font-size:14px;margin:0}"
                ".pod h3 small{font-weight:normal;color:#52606d}.pod ul{margin:4px 0;"
                "padding-left:18px}.pod pre{font-size:11px;white-space:pre-wrap;"
                "background:#f5f7fa;padding:6px;margin:4px 0;max-height:24em;overflow:auto}"
                ".pod summary{cursor:pointer;color:#2680c2;font-size:13px}"
                ".steps{font-size:13px;font-family:'DejaVu Sans Mono',monospace;"
                "padding-left:60px}.steps .now{background:#fff3c4}"
                "#tip{position:fixed;right:12px;bottom:12px;width:460px;max-height:70vh;"
                "overflow:auto;box-shadow:0 4px 18px rgba(0,0,0,.25);z-index:9}"
                "#tip[hidden]{display:none}";

static void pod_styles(const layout *l, ncm_buf *b)
{
        const ncm_map_scene *s = l->s;

        for (size_t i = 0; i < s->n_pods; i++) {
                if (!l->coloured[i])
                        continue;
                ncm_buf_printf(b, ".p%zu{--c:#%06x;--t:%s}", i, l->rgb[i],
                               light(l->rgb[i]) ? "#1f2933" : "#fff");
                /* hovering one CPU of a pod outlines all of them */
                ncm_buf_printf(b, "svg:has(.p%zu:hover) .p%zu .c{stroke:#000;stroke-width:2}", i,
                               i);
        }
}

static int cmp_pods_by_name(const void *x, const void *y, void *data)
{
        const ncm_map_scene *s = data;
        const ncm_map_pod *a = &s->pods[*(const size_t *)x], *b = &s->pods[*(const size_t *)y];
        int c = strcmp(pod_label(a), pod_label(b));
        return c ? c : strcmp(a->uid, b->uid);
}

/* Beyond this many pods with colours, their legend goes below the drawing. */
#define LEGEND_ABOVE_MAX 24

static size_t n_coloured(const layout *l)
{
        size_t n = 0;
        for (size_t i = 0; i < l->s->n_pods; i++)
                n += l->coloured[i];
        return n;
}

static void pod_legend(const layout *l, const size_t *byname, ncm_buf *b)
{
        const ncm_map_scene *s = l->s;

        for (size_t k = 0; k < s->n_pods; k++) {
                size_t i = byname[k];
                const ncm_map_pod *p = &s->pods[i];
                if (!l->coloured[i])
                        continue;
                ncm_buf_puts(b, "<a href=\"#pod-");
                ncm_buf_printf(b, "%zu\" data-legend=\"", i);
                esc(b, p->uid);
                ncm_buf_printf(b, "\"><span class=\"sw p%zu\"></span>", i);
                esc(b, pod_label(p));
                if (p->exclusive_cpus)
                        ncm_buf_printf(b, " (%d)", p->exclusive_cpus);
                ncm_buf_puts(b, "</a>");
        }
}

static void legend(const layout *l, const size_t *byname, ncm_buf *b)
{
        const ncm_map_scene *s = l->s;
        int count[4] = {0};
        size_t coloured = n_coloured(l);

        for (size_t i = 0; i < s->n_cpus; i++)
                count[s->cpus[i].use]++;
        ncm_buf_puts(b, "<div class=\"legend\">");
        if (count[NCM_MAP_RESERVED])
                ncm_buf_printf(b,
                               "<span data-legend=\"reserved\"><span class=\"sw rs\"></span>"
                               "reserved (%d%s)</span>",
                               count[NCM_MAP_RESERVED],
                               s->reserved_in_pool ? ", in the shared pool too" : "");
        ncm_buf_printf(b,
                       "<span data-legend=\"shared\"><span class=\"sw sh\"></span>shared pool "
                       "(%d)</span>",
                       count[NCM_MAP_SHARED]);
        if (count[NCM_MAP_FREE])
                ncm_buf_printf(b,
                               "<span data-legend=\"free\"><span class=\"sw fr\"></span>"
                               "neither (%d)</span>",
                               count[NCM_MAP_FREE]);
        if (coloured <= LEGEND_ABOVE_MAX)
                pod_legend(l, byname, b);
        if (l->isolated)
                ncm_buf_puts(b, "<span data-legend=\"isolated\"><svg width=\"12\" height=\"12\">"
                                "<rect width=\"12\" height=\"12\" fill=\"#d9e2ec\"/><path "
                                "class=\"iso\" d=\"M6 0h6v6z\"/></svg> isolated</span>");
        if (l->nohz)
                ncm_buf_puts(b, "<span data-legend=\"nohz_full\"><svg width=\"12\" height=\"12\">"
                                "<rect width=\"12\" height=\"12\" fill=\"#d9e2ec\"/><rect "
                                "class=\"nohz\" y=\"9\" width=\"12\" height=\"2\"/></svg> "
                                "nohz_full</span>");
        if (s->n_devices)
                ncm_buf_puts(b, "<span><svg width=\"18\" height=\"12\"><rect x=\".5\" y=\".5\" "
                                "width=\"17\" height=\"11\" rx=\"3\" fill=\"#fff\" "
                                "stroke=\"#52606d\"/></svg> free device</span>");
        if (coloured > LEGEND_ABOVE_MAX)
                ncm_buf_printf(b,
                               "<span>%zu pods hold CPUs or devices: their colours are "
                               "below the drawing</span>",
                               coloured);
        ncm_buf_puts(b, "</div>\n");
}

/* The pods' colours below the drawing, when there are too many for above it. */
static void legend_below(const layout *l, const size_t *byname, ncm_buf *b)
{
        if (n_coloured(l) <= LEGEND_ABOVE_MAX)
                return;
        ncm_buf_puts(b, "<div class=\"legend\">");
        pod_legend(l, byname, b);
        ncm_buf_puts(b, "</div>\n");
}

static void room_table(const layout *l, ncm_buf *b)
{
        const ncm_map_scene *s = l->s;

        ncm_buf_puts(b, "<h2>Room</h2><p class=\"set\">");
        esc(b, s->room_rule);
        ncm_buf_puts(b, "</p>\n");
        for (size_t k = 0; k < l->n_socks; k++) {
                const lsock *sk = &l->socks[k];
                ncm_buf sum = NCM_BUF_INIT;
                socket_summary(l, sk, -1, &sum);
                ncm_buf_printf(b, "<details class=\"sock\"%s><summary><b>socket %d</b> · ",
                               sk->n <= 8 ? " open" : "", sk->id);
                esc(b, sum.data);
                ncm_buf_done(&sum);
                ncm_buf_puts(b, "</summary><table><tr><th>NUMA node</th><th>CPUs</th>"
                                "<th>reserved</th><th>exclusive</th><th>shared</th><th>room</th>");
                if (l->memory)
                        ncm_buf_puts(b, "<th>memory</th>");
                ncm_buf_puts(b, "</tr>");
                for (size_t i = 0; i < sk->n; i++) {
                        const ncm_map_numa *m = l->numas[sk->first + i].m;
                        if (!m)
                                continue;
                        ncm_buf_printf(b,
                                       "<tr><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d"
                                       "</td><td>%d</td>",
                                       m->id, m->cpus, m->reserved, m->exclusive, m->shared,
                                       m->room);
                        if (l->memory) {
                                ncm_buf mem = NCM_BUF_INIT;
                                memory_line(m, &mem);
                                ncm_buf_puts(b, "<td>");
                                esc(b, mem.data);
                                ncm_buf_puts(b, "</td>");
                                ncm_buf_done(&mem);
                        }
                        ncm_buf_puts(b, "</tr>");
                }
                ncm_buf_puts(b, "</table></details>\n");
        }
        /* NUMA nodes without CPUs: no room, but memory (and devices) may be there */
        for (size_t i = 0; i < s->n_numa; i++) {
                if (s->numa[i].socket >= 0)
                        continue;
                ncm_buf_printf(b, "<p class=\"set\">NUMA %d: no CPUs", s->numa[i].id);
                if (s->numa[i].memory || s->numa[i].n_hugepages) {
                        ncm_buf mem = NCM_BUF_INIT;
                        memory_line(&s->numa[i], &mem);
                        ncm_buf_puts(b, " · ");
                        esc(b, mem.data);
                        ncm_buf_done(&mem);
                }
                ncm_buf_puts(b, "</p>\n");
        }
}

/* S percent-encoded for a URL's query (what encodeURIComponent keeps, kept). */
static void url_escape(ncm_buf *b, const char *s)
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    strchr("-_.~", c))
                        ncm_buf_putc(b, (char)c);
                else
                        ncm_buf_printf(b, "%%%02X", c);
        }
}

static void pod_cards(const layout *l, const size_t *byname, const ncm_map_html_options *o,
                      ncm_buf *b)
{
        const ncm_map_scene *s = l->s;

        ncm_buf_printf(b, "<h2>Pods (%zu)</h2><div class=\"pods\">\n", s->n_pods);
        for (size_t k = 0; k < s->n_pods; k++) {
                size_t i = byname[k];
                const ncm_map_pod *p = &s->pods[i];
                ncm_buf_printf(b, "<div class=\"pod\" id=\"pod-%zu\" data-pod-uid=\"", i);
                esc(b, p->uid);
                if (l->coloured[i])
                        ncm_buf_printf(b, "\"><h3><span class=\"sw p%zu\"></span>", i);
                else
                        ncm_buf_puts(b, "\"><h3><span class=\"sw sh\"></span>");
                esc(b, pod_label(p));
                ncm_buf_puts(b, " <small>");
                if (p->ns) {
                        esc(b, p->ns);
                        ncm_buf_puts(b, " · ");
                }
                esc(b, p->qos ? p->qos : "known from the checkpoint only");
                ncm_buf_puts(b, " · uid ");
                esc(b, p->uid);
                ncm_buf_puts(b, "</small></h3><ul>");
                for (size_t c = 0; c < p->n_containers; c++) {
                        const ncm_map_container *mc = &p->containers[c];
                        ncm_buf_puts(b, "<li><b>");
                        esc(b, mc->name);
                        ncm_buf_puts(b, "</b>");
                        ncm_buf_puts(b, mc->sidecar ? " (sidecar)" : mc->init ? " (init)" : "");
                        if (mc->exclusive) {
                                ncm_buf_puts(b, " exclusive CPUs ");
                                esc(b, mc->cpus);
                                ncm_buf_puts(b, " · NUMA ");
                                esc(b, mc->numa);
                        } else {
                                ncm_buf_puts(b, " shared pool");
                        }
                        if (mc->devices) {
                                ncm_buf_puts(b, " · ");
                                esc(b, mc->devices);
                        }
                        ncm_buf_puts(b, mc->removed ? " · removed" : "");
                        ncm_buf_puts(b, "</li>");
                }
                ncm_buf_puts(b, "</ul>");
                if (p->explain) {
                        ncm_buf_printf(b, "<details><summary>why (%s)</summary><pre>",
                                       p->explain_from && strcmp(p->explain_from, "replay") == 0
                                                       ? "decided again now"
                                                       : "at its admission");
                        esc(b, p->explain);
                        ncm_buf_puts(b, "</pre></details>");
                } else if (o->explain_url && p->qos) {
                        /* fetched when looked at (the script below) */
                        ncm_buf_puts(b, "<details data-explain=\"");
                        esc(b, o->explain_url);
                        url_escape(b, p->uid);
                        ncm_buf_puts(b, "\"><summary>why (decided again now)</summary><pre>"
                                        "…</pre></details>");
                }
                ncm_buf_puts(b, "</div>\n");
        }
        ncm_buf_puts(b, "</div>\n");
}

/* The history: at most this many of the last steps are listed. */
#define STEPS_SHOWN 200

static void step_href(ncm_buf *b, size_t index)
{
        ncm_buf_printf(b, NCM_MAP_STEP_PAGE_FMT, index);
}

static void nav(const ncm_map_scene *s, const ncm_map_html_options *o, ncm_buf *b)
{
        size_t total = o->n_steps_total;

        if (!o->step_links || !total)
                return;
        ncm_buf_puts(b, "<nav>");
        if (s->step < 0) {
                ncm_buf_puts(b, "<a href=\"");
                step_href(b, 0);
                ncm_buf_printf(b, "\">first step</a><a href=\"");
                step_href(b, total - 1);
                ncm_buf_printf(b, "\">last step (%zu)</a>", total - 1);
        } else {
                size_t k = (size_t)s->step;
                if (k > 0) {
                        ncm_buf_puts(b, "<a rel=\"prev\" href=\"");
                        step_href(b, k - 1);
                        ncm_buf_printf(b, "\">← step %zu</a>", k - 1);
                }
                ncm_buf_printf(b, "<b>step %zu of %zu</b> ", k, total);
                if (k + 1 < total) {
                        ncm_buf_puts(b, "<a rel=\"next\" href=\"");
                        step_href(b, k + 1);
                        ncm_buf_printf(b, "\">step %zu →</a>", k + 1);
                }
                ncm_buf_puts(b, "<a href=\"" NCM_MAP_INDEX_PAGE "\">the end</a>");
        }
        ncm_buf_puts(b, "</nav>\n");
}

static void steps(const ncm_map_scene *s, const ncm_map_html_options *o, ncm_buf *b)
{
        size_t first = s->n_steps > STEPS_SHOWN ? s->n_steps - STEPS_SHOWN : 0;

        if (!s->n_steps)
                return;
        ncm_buf_printf(b, "<h2>Steps</h2>");
        if (first)
                ncm_buf_printf(b, "<p class=\"set\">… %zu earlier step%s</p>", first,
                               first == 1 ? "" : "s");
        ncm_buf_puts(b, "<ol class=\"steps\">");
        for (size_t i = first; i < s->n_steps; i++) {
                const ncm_map_step *st = &s->steps[i];
                bool now = s->step >= 0 && st->index == (size_t)s->step;
                ncm_buf_printf(b, "<li value=\"%zu\"%s>", st->index, now ? " class=\"now\"" : "");
                if (o->step_links) {
                        ncm_buf_puts(b, "<a href=\"");
                        step_href(b, st->index);
                        ncm_buf_puts(b, "\">");
                }
                esc(b, st->text);
                ncm_buf_puts(b, o->step_links ? "</a></li>" : "</li>");
        }
        ncm_buf_puts(b, "</ol>\n");
}

/*
 * The script, all of it: the hover panel shows the card of the pod under the pointer with its
 * explanation open; an explanation the page does not hold (explain_url) is fetched the first
 * time its card is hovered or opened; a link to a card opens its explanation; a live page
 * loads itself again after each event of its stream (the server sends at most one a second).
 */
static const char script[] =
                "(function(){var t=document.getElementById('tip'),m=document.getElementById('map');"
                "function x(c,f){var "
                "d=c.querySelector('details[data-explain]');if(!d||d.dataset.got)"
                "{f();return}d.dataset.got=1;fetch(d.dataset.explain).then(function(r){return "
                "r.ok?r.text():'('+r.status+')'}).then(function(s){d.querySelector('pre')."
                "textContent=s;f()})}\n"
                "function show(c){c=c.cloneNode(true);c.removeAttribute('id');c.querySelectorAll("
                "'details').forEach(function(d){d.open=true});t.replaceChildren(c);t.hidden=false}"
                "\n"
                "m.addEventListener('mouseover',function(e){var g=e.target.closest('[data-pod]'),"
                "c=g&&document.getElementById('pod-'+g.dataset.pod);if(!c){t.hidden=true;return}"
                "show(c);x(c,function(){if(!t.hidden&&t.firstChild&&t.firstChild.dataset.podUid=="
                "c.dataset.podUid)show(c)})});\n"
                "m.addEventListener('mouseleave',function(){t.hidden=true});\n"
                "addEventListener('toggle',function(e){if(e.target.open&&e.target.dataset.explain)"
                "x(e.target.closest('.pod'),function(){})},true);\n"
                "function o(){var d=location.hash&&document.querySelector(location.hash+' "
                "details');if(d)d.open=true}addEventListener('hashchange',o);o();\n";

int ncm_map_render_html(const ncm_map_scene *s, const ncm_map_html_options *o, ncm_buf *out)
{
        static const ncm_map_html_options defaults = {0};
        layout l = {.s = s};
        size_t *byname = NULL;
        int r;

        if (!o)
                o = &defaults;
        l.g = s->n_cpus > 256 ? compact_geom : detailed_geom;
        l.rgb = calloc(s->n_pods + 1, sizeof(*l.rgb));
        l.coloured = calloc(s->n_pods + 1, sizeof(*l.coloured));
        byname = calloc(s->n_pods + 1, sizeof(*byname));
        if (!l.rgb || !l.coloured || !byname) {
                r = -ENOMEM;
                goto out;
        }
        pod_colours(s, l.rgb);
        for (size_t i = 0; i < s->n_cpus; i++)
                if (s->cpus[i].use == NCM_MAP_EXCLUSIVE && s->cpus[i].pod >= 0)
                        l.coloured[s->cpus[i].pod] = true;
        for (size_t i = 0; i < s->n_devices; i++)
                if (s->devices[i].pod >= 0)
                        l.coloured[s->devices[i].pod] = true;
        for (size_t i = 0; i < s->n_pods; i++)
                byname[i] = i;
        qsort_r(byname, s->n_pods, sizeof(*byname), cmp_pods_by_name, (void *)s);
        r = group(&l);
        if (r >= 0) {
                mark_l3(&l);
                r = place_devices(&l);
        }
        if (r >= 0)
                r = measure(&l);
        if (r < 0)
                goto out;

        ncm_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                          "<meta name=\"generator\" content=\"nodecm\"><title>nodecm map: ");
        esc(out, s->title);
        if (s->caption) {
                ncm_buf_puts(out, " — ");
                esc(out, s->caption);
        }
        ncm_buf_printf(out, "</title>\n<style>%s", style);
        pod_styles(&l, out);
        ncm_buf_puts(out, "</style></head>\n<body>\n<header><h1>");
        esc(out, s->title);
        if (s->caption) {
                ncm_buf_puts(out, "<small>");
                esc(out, s->caption);
                ncm_buf_puts(out, "</small>");
        }
        ncm_buf_puts(out, "</h1><p class=\"set\">");
        esc(out, s->settings);
        ncm_buf_puts(out, "</p><p class=\"set\">");
        if (s->pinning) {
                ncm_buf_puts(out, "reserved CPUs ");
                esc(out, s->reserved && s->reserved[0] ? s->reserved : "none");
                ncm_buf_puts(out, " · ");
        }
        ncm_buf_puts(out, "shared pool ");
        esc(out, s->shared_pool && s->shared_pool[0] ? s->shared_pool : "empty");
        ncm_buf_printf(out, " · %zu CPUs, %zu NUMA node%s, %zu pod%s", s->n_cpus, s->n_numa,
                       s->n_numa == 1 ? "" : "s", s->n_pods, s->n_pods == 1 ? "" : "s");
        if (s->n_devices)
                ncm_buf_printf(out, ", %zu device%s", s->n_devices, s->n_devices == 1 ? "" : "s");
        ncm_buf_puts(out, "</p>");
        if (o->generated) {
                ncm_buf_puts(out, "<p class=\"gen\">");
                esc(out, o->generated);
                ncm_buf_puts(out, o->events_url ? " · live: follows every change of the node" : "");
                ncm_buf_puts(out, "</p>");
        }
        ncm_buf_puts(out, "</header>\n");
        nav(s, o, out);
        legend(&l, byname, out);
        draw_svg(&l, out);
        legend_below(&l, byname, out);
        room_table(&l, out);
        pod_cards(&l, byname, o, out);
        steps(s, o, out);
        ncm_buf_printf(out, "<div id=\"tip\" hidden></div>\n<script>%s", script);
        if (o->events_url) {
                ncm_buf_puts(out, "new EventSource('");
                esc(out, o->events_url);
                ncm_buf_puts(out, "').onmessage=function(){location.reload()};\n");
        }
        ncm_buf_puts(out, "})();</script>\n</body></html>\n");
        r = ncm_buf_failed(out) ? -ENOMEM : 0;
out:
        layout_done(&l);
        free(byname);
        return r;
}
