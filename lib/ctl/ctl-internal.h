/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/ctl (its messages are built with pb-util.h's arena). */
#ifndef NCM_CTL_INTERNAL_H
#define NCM_CTL_INTERNAL_H

#include <stddef.h>

#include <nodecm/ctl.h>
#include "nodecm-v1.pb-c.h"
#include "pb-util.h"

/* The proto's Format as ours. */
ncm_ctl_format ncm__ctl_format(Nodecm__V1__Format f);

#endif
