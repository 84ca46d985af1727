/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The services of nodecmd, in start order (they stop in the reverse order). A new service is
 * a file of its own defining a nodecmd_service_ops, declared in nodecmd.h and listed here
 * (docs/nodecmd.md, "Adding a service").
 */
#include <stddef.h>

#include "nodecmd.h"

const nodecmd_service_ops *const nodecmd_services[] = {
                &nodecmd_reconcile_service,
                /* before the control API: its calls go through the plugins' sessions */
                &nodecmd_devices_service,
                &nodecmd_control_service,
#ifdef NODECMD_TEST_BUILD
                /* after the control API, whose calls it holds up; never in build/nodecmd */
                &nodecmd_test_service,
#endif
                &nodecmd_podresources_service,
                &nodecmd_metrics_service,
                &nodecmd_cri_service,
                NULL,
};
