/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/ctl: building protobuf-c messages whose strings and arrays live in an arena. */
#ifndef NCM_CTL_INTERNAL_H
#define NCM_CTL_INTERNAL_H

#include <stddef.h>

#include <nodecm/ctl.h>
#include "nodecm-v1.pb-c.h"

/* Every allocation of one message being built, freed together once it is packed. */
typedef struct ctl_arena {
        void **v;
        size_t n, cap;
        bool failed; /* an allocation failed: the message must not be packed */
} ctl_arena;

void *ncm__ctl_alloc(ctl_arena *a, size_t size);
char *ncm__ctl_str(ctl_arena *a, const char *s);
char *ncm__ctl_take(ctl_arena *a, char *s); /* S (malloc'd, may be NULL) becomes the arena's */
void ncm__ctl_arena_done(ctl_arena *a);

/* Pack MSG into OUT; -ENOMEM. */
int ncm__ctl_pack(const ProtobufCMessage *msg, ncm_buf *out);

/* The proto's Format as ours. */
ncm_ctl_format ncm__ctl_format(Nodecm__V1__Format f);

#endif
