/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/memorymanager: what the state, checkpoint and policy files share. */
#ifndef NCM_MM_INTERNAL_H
#define NCM_MM_INTERNAL_H

#include <nodecm/memorymanager.h>

void ncm__mem_block_done(ncm_mem_block *b);
void ncm__mem_container_done(ncm_mem_container *c);
void ncm__mem_pod_done(ncm_mem_pod *p);
void ncm__mem_pod_entry_done(ncm_mem_pod_entry *e);
void ncm__mem_node_done(ncm_mem_node *n);
void ncm__mem_nodes_free(ncm_mem_node *v, size_t n);
int ncm__mem_block_copy(const ncm_mem_block *src, ncm_mem_block *dst);
int ncm__mem_blocks_copy(const ncm_mem_block *src, size_t n, ncm_mem_block **ret);
int ncm__mem_node_copy(const ncm_mem_node *src, ncm_mem_node *dst);
int ncm__mem_nodes_copy(const ncm_mem_node *src, size_t n, ncm_mem_node **ret);

/* SetMemoryBlocks: the container's blocks become BLOCKS (N of them; taken over). -ENOMEM
 * (BLOCKS then still the caller's). */
int ncm__mem_state_set(ncm_mem_state *s, const char *pod_uid, const char *container,
                       ncm_mem_block *blocks, size_t n);

/* One pod's entry as it was (for undoing a change to it without copying the whole state). */
typedef struct ncm__mem_pod_saved {
        bool found, pods_nil;
        ncm_mem_pod pod;
} ncm__mem_pod_saved;

/* Save pod UID's entry (or that it has none). -ENOMEM. */
int ncm__mem_pod_save(const ncm_mem_state *s, const char *uid, ncm__mem_pod_saved *ret);
/* Put it back as saved (SAVED is taken over; no allocation). */
void ncm__mem_pod_restore(ncm_mem_state *s, const char *uid, ncm__mem_pod_saved *saved);
void ncm__mem_pod_saved_done(ncm__mem_pod_saved *saved);

/* The machine-state part of the checkpoint as encoding/json writes it. */
void ncm__mem_format_machine(const ncm_mem_state *s, ncm_buf *b);

/* nodecm's "promised" member (mm-resize.c): appended to B before the checksum when S has
 * promises; read back from TEXT into S (-NCM_E_INVALID_STATE naming NAME and the member). */
void ncm__mem_promised_format(const ncm_mem_state *s, ncm_buf *b);
int ncm__mem_promised_parse(const char *text, size_t len, const char *name, ncm_mem_state *s,
                            ncm_error *err);

#endif
