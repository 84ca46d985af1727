/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize of pinned memory (KEP-5554's rules applied to the memory manager's blocks,
 * behind InPlacePodVerticalScalingExclusiveMemory), and nodecm's "promised" member of
 * memory_manager_state.
 *
 * Why the machine state is replayed rather than patched. The kubelet's Start replays every
 * assignment on the default machine state and refuses a stored state that differs. A
 * container's block consumes its nodes in order, filling each one's free memory, and a removal
 * gives back from the first node on; growing or shrinking one block in place by those rules
 * can leave a per-node split the replay would not produce (two containers sharing a group).
 * So the resize changes the block's size and then makes the machine state the replay's
 * (ncm_mem_policy_fit): what a restart validates, by construction.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "base/json.h"
#include "memorymanager/mm-internal.h"

/* Which block of C holds TYPE, or -1. */
static int block_of(const ncm_mem_container *c, const char *type)
{
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->blocks[i].type, type) == 0)
                        return (int)i;
        return -1;
}

/* The free bytes of TYPE on block B's nodes. */
static uint64_t free_on(const ncm_mem_state *s, const ncm_mem_block *b, const char *type)
{
        uint64_t sum = 0;

        for (size_t i = 0; i < b->nnuma; i++) {
                const ncm_mem_node *nd = ncm_mem_state_node(s, b->numa[i]);
                const ncm_mem_table *t = nd && !nd->nil ? ncm_mem_node_table(nd, type) : NULL;
                if (t)
                        sum = sum + t->free < sum ? UINT64_MAX : sum + t->free;
        }
        return sum;
}

static void nodes_text(const ncm_mem_block *b, char *buf, size_t size)
{
        size_t at = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < b->nnuma && at < size; i++)
                at += (size_t)snprintf(buf + at, size - at, "%s%d", i ? "," : "", b->numa[i]);
}

int ncm_mem_policy_resize(ncm_mem_policy *p, ncm_mem_state *s, const ncm_pod *pod,
                          const ncm_container *container, const char **ret_type, ncm_error *err)
{
        const ncm_mem_container *have;
        ncm_mem_request req = {0};
        ncm_mem_block *blocks = NULL;
        ncm_mem_state_mark *mark = NULL;
        bool changed = false;
        int r;

        *ret_type = NULL;
        if (!ncm_mem_policy_is_static(p) || ncm_pod_compute_qos(pod) != NCM_QOS_GUARANTEED ||
            ncm_pod_level_resources_set(pod))
                return 0;
        have = ncm_mem_state_container(s, pod->uid, container->name);
        if (!have)
                return 0;
        r = ncm_mem_request_of(pod, container, &req, err);
        if (r < 0)
                return r == -ENOMEM ? r : -NCM_E_ADMISSION;
        if (ncm__mem_blocks_copy(have->blocks, have->n, &blocks) < 0) {
                ncm_mem_request_done(&req);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < req.n; i++) {
                int k = block_of(have, req.types[i]);
                uint64_t want = req.bytes[i], was;
                char nodes[128];
                if (k < 0 || blocks[k].size == want)
                        continue;
                was = blocks[k].size;
                nodes_text(&blocks[k], nodes, sizeof(nodes));
                if (strcmp(req.types[i], "memory") != 0) {
                        r = ncm_error_set(err, NCM_E_ADMISSION,
                                          "[memorymanager] %s of container %s cannot be resized",
                                          req.types[i], container->name);
                        goto out;
                }
                if (want < was && !have->has_promised) {
                        *ret_type = NCM_MEM_REASON_PROMISED_MISSING;
                        r = ncm_error_set(err, NCM_E_ADMISSION,
                                          "getPromisedMemory Error: Skip resize, unable to get "
                                          "the promised memory, nothing to be done, (podUID = %s, "
                                          "containerName %s)",
                                          pod->uid, container->name);
                        goto out;
                }
                if (want < was && want < have->promised) {
                        *ret_type = NCM_MEM_REASON_PROHIBITED;
                        r = ncm_error_set(err, NCM_E_ADMISSION,
                                          "prohibitedMemoryAllocation Error: Skip resize, Not "
                                          "allowed to reduce container exclusively allocated "
                                          "memory below promised, (requested memory = %" PRIu64
                                          ", allocated memory = %" PRIu64
                                          ", promised memory = %" PRIu64 ")",
                                          want, was, have->promised);
                        goto out;
                }
                if (want > was && free_on(s, &blocks[k], req.types[i]) < want - was) {
                        r = ncm_error_set(err, NCM_E_ADMISSION,
                                          "[memorymanager] resize of container %s: NUMA node(s) "
                                          "%s have %" PRIu64 " bytes of %s free, %" PRIu64
                                          " more are needed (pinned memory does not move to "
                                          "other NUMA nodes)",
                                          container->name, nodes,
                                          free_on(s, &blocks[k], req.types[i]), req.types[i],
                                          want - was);
                        goto out;
                }
                blocks[k].size = want;
                changed = true;
        }
        if (!changed) {
                r = 0;
                goto out;
        }
        if (ncm_mem_state_mark_pod(s, pod->uid, &mark) < 0) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        r = ncm__mem_state_set(s, pod->uid, container->name, blocks, have->n);
        if (r < 0) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        blocks = NULL; /* the state's now */
        r = ncm_mem_policy_fit(p, s, err);
        if (r < 0) {
                /* an assignment that no longer fits: a refusal, the state as it was */
                ncm_mem_state_mark_restore(s, mark);
                if (r != -ENOMEM && err)
                        err->code = NCM_E_ADMISSION;
                r = r == -ENOMEM ? r : -NCM_E_ADMISSION;
        }
out:
        if (blocks)
                ncm_mem_blocks_free(blocks, have->n);
        ncm_mem_state_mark_free(mark);
        ncm_mem_request_done(&req);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * nodecm's "promised" member
 */

void ncm__mem_promised_format(const ncm_mem_state *s, ncm_buf *b)
{
        bool first_pod = true;

        if (!ncm_mem_state_has_promised(s))
                return;
        ncm_buf_puts(b, ",\"promised\":{");
        for (size_t i = 0; i < s->npods; i++) {
                bool first = true;
                for (size_t k = 0; k < s->pods[i].n; k++) {
                        const ncm_mem_container *c = &s->pods[i].c[k];
                        if (!c->has_promised)
                                continue;
                        if (first) {
                                if (!first_pod)
                                        ncm_buf_putc(b, ',');
                                ncm_buf_json_string(b, s->pods[i].uid, strlen(s->pods[i].uid));
                                ncm_buf_puts(b, ":{");
                                first = first_pod = false;
                        } else {
                                ncm_buf_putc(b, ',');
                        }
                        ncm_buf_json_string(b, c->name, strlen(c->name));
                        ncm_buf_printf(b, ":%" PRIu64, c->promised);
                }
                if (!first)
                        ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
}

int ncm__mem_promised_parse(const char *text, size_t len, const char *name, ncm_mem_state *s,
                            ncm_error *err)
{
        ncm_autojson doc = NULL;
        json_object *pr;
        int r;

        /* the kubelet's decoding accepted TEXT already: this only looks for nodecm's member */
        if (!memmem(text, len, "\"promised\"", 10))
                return 0;
        r = ncm__json_parse(text, len, name, &doc, err);
        if (r < 0)
                return r == -ENOMEM ? r : -NCM_E_INVALID_STATE;
        pr = json_object_is_type(doc, json_type_object) ? ncm__json_get(doc, "promised") : NULL;
        if (!pr)
                return 0;
        if (!json_object_is_type(pr, json_type_object))
                return ncm_error_set(err, NCM_E_INVALID_STATE, "%s: promised: expected object",
                                     name);
        json_object_object_foreach(pr, uid, ctrs)
        {
                if (!json_object_is_type(ctrs, json_type_object))
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "%s: promised.%s: expected object", name, uid);
                json_object_object_foreach(ctrs, ctr, v)
                {
                        char path[512];
                        const ncm_mem_container *c;
                        int64_t bytes;
                        int k;
                        snprintf(path, sizeof(path), "%s: promised.%s.%s", name, uid, ctr);
                        r = ncm__json_int(v, path, 0, INT64_MAX, &bytes, err);
                        if (r < 0)
                                return -NCM_E_INVALID_STATE;
                        c = ncm_mem_state_container(s, uid, ctr);
                        k = c ? block_of(c, "memory") : -1;
                        if (k < 0 || c->blocks[k].size < (uint64_t)bytes)
                                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                     "%s: the container has no memory block of "
                                                     "at least %" PRId64 " bytes",
                                                     path, bytes);
                        (void)ncm_mem_state_set_promised(s, uid, ctr, (uint64_t)bytes);
                }
        }
        return 0;
}
