/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node map: one self-contained HTML page (inline SVG and CSS, a few lines of plain
 * JavaScript, nothing fetched from anywhere) that draws a node -- sockets, NUMA nodes, uncore
 * caches, cores, CPUs -- with who holds each CPU and device, and where there is room for more.
 * `nodecm node status --html`, `nodecm simulate --html` and nodecmd's /map draw with it
 * (docs/map.md).
 *
 * Two steps, so that the drawing decides nothing and can be tested without a node:
 *
 *   scene    ncm_map_scene_from_node()  a plain snapshot of a node: every member below is data
 *                                       the node's public accessors gave, and the counts
 *                                       ("room") computed from them
 *   page     ncm_map_render_html()      the page of a scene, appended to an ncm_buf
 *
 * and a history (ncm_map_history) that a front end fills as decisions are made -- the
 * simulator's steps, with each admission's explanation -- so that the page can say why a pod
 * holds what it holds. Without one, ncm_map_scene_from_node() can replay each pod's admission
 * on a copy of the node (NCM_MAP_REPLAY).
 *
 * Hooks. The scene has members for what the node does not report yet: NUMA memory and
 * hugepages (the memory manager), isolated and nohz_full CPUs, PCI devices by locality. The
 * builder leaves them empty (zero, NULL); a front end or a later builder fills them, and the
 * page draws them when present (tests/unit/test-map.c fills each, and checks the page of an
 * empty one has none of their marks). Members are only ever added at the end of a struct.
 *
 * Every string and array of a scene is malloc'd and owned by the scene; a caller that fills a
 * hook hands its allocations over (ncm_map_scene_free frees them). Nothing here is thread-safe;
 * a scene is independent of the node once built.
 */
#ifndef NODECM_MAP_H
#define NODECM_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a CPU is used for. */
typedef enum ncm_map_use {
        NCM_MAP_SHARED = 0, /* the shared pool: containers without CPUs of their own */
        NCM_MAP_RESERVED,   /* reserved for the system (never given to a container) */
        NCM_MAP_EXCLUSIVE,  /* a container's own */
        NCM_MAP_FREE,       /* neither (a state the kubelet would not leave; drawn as such) */
} ncm_map_use;

/* Flags of a CPU (hooks: the isolation work fills them). */
enum {
        NCM_MAP_CPU_ISOLATED = 1 << 0,  /* isolated from the scheduler (isolcpus) */
        NCM_MAP_CPU_NOHZ_FULL = 1 << 1, /* in nohz_full */
};

typedef struct ncm_map_cpu {
        int cpu;
        int core; /* the topology's ids (nodecm/topology.h) */
        int socket;
        int numa;
        int64_t uncore;
        ncm_map_use use;
        int pod;        /* EXCLUSIVE: the holder, an index into the scene's pods; else -1 */
        int container;  /* ... and into that pod's containers */
        int also;       /* how many other containers the state lists with this CPU (an init
                           container's CPUs that an app container reuses) */
        unsigned flags; /* NCM_MAP_CPU_* */
} ncm_map_cpu;

typedef struct ncm_map_container {
        char *name;
        bool init;      /* in spec.initContainers */
        bool sidecar;   /* an init container with restartPolicy: Always */
        bool removed;   /* removed from the node since */
        bool exclusive; /* holds CPUs of its own */
        char *cpus;     /* exclusive: its CPUs ("2-3,18-19"); else NULL (the shared pool) */
        char *numa;     /* exclusive: the NUMA nodes of those CPUs ("0-1"); else NULL */
        char *devices;  /* the devices it holds ("example.com/gpu gpu0,gpu1"), or NULL */
} ncm_map_container;

typedef struct ncm_map_pod {
        char *uid;
        char *name; /* "" when the node knows the pod from its checkpoint only */
        char *ns;   /* NULL likewise */
        char *qos;  /* "Guaranteed", "Burstable", "BestEffort"; NULL likewise */
        ncm_map_container *containers;
        size_t n_containers;
        int exclusive_cpus; /* CPUs its containers hold (each counted once) */
        /*
         * Why it holds what it holds, as `--explain` writes it (hints, merge, the allocator's
         * steps; long lines and long texts cut), or NULL. EXPLAIN_FROM says where the text
         * comes from: "admission" (recorded when it was admitted) or "replay" (decided again,
         * now, on a copy of the node: NCM_MAP_REPLAY).
         */
        char *explain;
        const char *explain_from;
} ncm_map_pod;

typedef struct ncm_map_device {
        char *resource;
        char *id;
        int64_t *numa; /* its NUMA nodes as the plugin gave them; none: no topology */
        size_t n_numa;
        bool healthy;
        int pod;       /* the holder (the first, by name), an index into pods; else -1 */
        int container; /* ... and into that pod's containers */
} ncm_map_device;

/* Hugepages of one size on a NUMA node (hook: the memory manager). */
typedef struct ncm_map_hugepages {
        uint64_t page_size_kib;
        uint64_t total; /* pages */
        uint64_t free;  /* pages no container holds */
} ncm_map_hugepages;

typedef struct ncm_map_numa {
        int id;
        int socket; /* the socket of its first CPU; -1 for a node without CPUs */
        int cpus;   /* how many CPUs it has, and what they are used for */
        int reserved;
        int shared;
        int exclusive;
        /*
         * Room: how many exclusive CPUs one more Guaranteed container could get on this node
         * now -- its CPUs in the shared pool that the policy may give (the reserved ones
         * never), and with full-pcpus-only only those of wholly free cores. 0 under the none
         * policy.
         */
        int room;
        /* Memory (hooks: the memory manager). 0 / NULL: not known. */
        uint64_t memory;      /* bytes */
        uint64_t memory_free; /* bytes no container holds */
        ncm_map_hugepages *hugepages;
        size_t n_hugepages;
} ncm_map_numa;

/* A PCI device and where it sits (hook: the node's PCI devices, ncm_node_pci; no bridges). */
typedef struct ncm_map_pci {
        char *address;    /* "0000:3b:00.0" */
        char *class_id;   /* "0x020000" */
        int numa;         /* the kernel's numa_node; -1: none */
        char *local_cpus; /* local_cpulist ("10-19,30-39"), or NULL */
        char *label;      /* what it is, for people ("mlx5 NIC"), or NULL */
} ncm_map_pci;

/* One step of a history, as the page lists it. */
typedef struct ncm_map_step {
        size_t index; /* the scenario's step number */
        char *text;   /* one line for people ("admit web-1: admitted: nginx exclusive 2-3 ...") */
} ncm_map_step;

typedef struct ncm_map_scene {
        char *title;       /* what is drawn ("web-db", a host name) */
        char *caption;     /* which moment ("after step 7 of 9", "state as of ..."), or NULL */
        char *settings;    /* the policies in force, one line */
        char *room_rule;   /* how room is counted under these settings, one line */
        char *reserved;    /* the reserved CPUs ("0,16"), "" for none */
        char *shared_pool; /* the shared pool's CPUs */
        bool pinning;      /* the CPU manager gives exclusive CPUs (static policy) */
        ncm_map_cpu *cpus; /* by CPU id */
        size_t n_cpus;
        ncm_map_numa *numa; /* every NUMA node, by id */
        size_t n_numa;
        ncm_map_pod *pods; /* by UID */
        size_t n_pods;
        ncm_map_device *devices; /* by resource, then id */
        size_t n_devices;
        ncm_map_pci *pci; /* hook; by address */
        size_t n_pci;
        ncm_map_step *steps; /* the history up to this moment, oldest first */
        size_t n_steps;
        long step; /* the step this moment follows; -1: not a simulation step */
        /* the reserved CPUs are in the shared pool too (the kubelet's default; not with
         * strict-cpu-reservation): drawn as reserved, they run containers of the pool */
        bool reserved_in_pool;
} ncm_map_scene;

NCM_API ncm_map_scene *ncm_map_scene_free(ncm_map_scene *s);
NCM_DEFINE_AUTOPTR(ncm_map_scene, ncm_map_scene_free)

/* ---- a history -------------------------------------------------------------------------- */

typedef struct ncm_map_history ncm_map_history;

NCM_API ncm_map_history *ncm_map_history_new(void);
NCM_API ncm_map_history *ncm_map_history_free(ncm_map_history *h);
NCM_DEFINE_AUTOPTR(ncm_map_history, ncm_map_history_free)

/*
 * Record admission A of POD: an admitted pod's explanation (A made with NCM_NODE_EXPLAIN; the
 * text ncm_node_format_admission_text writes, cut as ncm_map_pod.explain says) replaces the
 * one recorded for its UID before. A refusal records nothing. -ENOMEM.
 */
NCM_API int ncm_map_history_admission(ncm_map_history *h, const ncm_pod *pod,
                                      const ncm_node_admission *a);

/* Record step INDEX, TEXT its line for people (its first line is kept). -ENOMEM. */
NCM_API int ncm_map_history_step(ncm_map_history *h, size_t index, const char *text);

/* ---- a scene of a node ------------------------------------------------------------------ */

enum {
        /*
         * Explain each pod the history does not: decide its admission again on a copy of the
         * node where its CPUs and devices are free (what `nodecm node explain` does for a new
         * pod), and say whether it would get the same CPUs now. The node is not changed.
         */
        NCM_MAP_REPLAY = 1 << 0,
};

typedef struct ncm_map_scene_options {
        const char *title;              /* NULL: "node" */
        const char *caption;            /* NULL: none */
        const ncm_map_history *history; /* explanations and steps; NULL: none */
        long step;                      /* the step this moment follows; -1: none */
        unsigned flags;                 /* NCM_MAP_* */
} ncm_map_scene_options;

/*
 * A snapshot of N (options O, NULL for the defaults): its CPUs and their use from the CPU
 * state, the pods it holds with their containers, the devices of its device manager with
 * their holders, the counts and room of each NUMA node. The scene does not refer to N.
 * 0, -ENOMEM (a replay's own failures only leave that pod unexplained).
 */
NCM_API int ncm_map_scene_from_node(const ncm_node *n, const ncm_map_scene_options *o,
                                    ncm_map_scene **ret, ncm_error *err);

/*
 * Why pod POD_UID of N holds what it holds, as NCM_MAP_REPLAY explains it (its admission decided
 * again on a copy of N where its CPUs and devices are free), appended to OUT: nodecmd's
 * /map/explain, so that a live page asks for one explanation when it is looked at rather than
 * replaying every pod at each change. -ENOENT when N has no spec of that pod, -ENOMEM.
 */
NCM_API int ncm_map_explain_pod(const ncm_node *n, const char *pod_uid, ncm_buf *out,
                                ncm_error *err);

/* ---- the page --------------------------------------------------------------------------- */

/* The name of the page of step INDEX beside the others (`simulate --html-steps DIR`). */
#define NCM_MAP_STEP_PAGE_FMT "step-%04zu.html"
#define NCM_MAP_INDEX_PAGE "index.html"

typedef struct ncm_map_html_options {
        /*
         * A live page: the URL of a server-sent event stream (nodecmd's "/map/events") after
         * whose events the page loads itself again. NULL: a page for a file.
         */
        const char *events_url;
        /* Link each step of the history, and the previous and next step, to its page
         * (NCM_MAP_STEP_PAGE_FMT) and the scenario's end to NCM_MAP_INDEX_PAGE. */
        bool step_links;
        size_t n_steps_total; /* with STEP_LINKS: how many steps the scenario has */
        /* When the page was made, shown as is ("2025-01-31 12:00:00 UTC"); NULL: not shown. */
        const char *generated;
        /*
         * A pod the scene has no explanation of, but whose spec the node knows, gets its
         * explanation from EXPLAIN_URL followed by its UID, percent-encoded
         * ("/map/explain?pod="), when its card opens or the pointer is on it. NULL: none.
         */
        const char *explain_url;
} ncm_map_html_options;

/*
 * Append the page of scene S to OUT (options O, NULL for the defaults). Small machines (up to
 * 256 CPUs) are drawn core by core with each CPU's id; larger ones fold each NUMA node into a
 * tile of small squares, under one summary row per socket. Every CPU is one SVG rect with
 * data-cpu and data-holder attributes and its holder's class, which the legend's swatch shares
 * (so the colours match by construction; tests check it in a browser). 0 or -ENOMEM.
 */
NCM_API int ncm_map_render_html(const ncm_map_scene *s, const ncm_map_html_options *o,
                                ncm_buf *out);

/* ncm_map_scene_from_node() then ncm_map_render_html(): the page of N, appended to OUT. */
NCM_API int ncm_map_node_html(const ncm_node *n, const ncm_map_scene_options *so,
                              const ncm_map_html_options *ho, ncm_buf *out, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
