/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the OCI hook reads: the container state on its standard input, the bundle's
 * config.json, and its own record of the containers it placed (which a crash or a person may
 * have left in any shape); and the CRI proxy's journal beside its record. Input: 1 selector
 * byte, then the document.
 */
#include <stdlib.h>

#include <nodecm/oci.h>
#include "runtime/runtime-record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text;
        unsigned sel;

        if (size < 1)
                return 0;
        sel = data[0] % 4;
        text = (const char *)data + 1;
        size--;
        if (sel == 0) {
                ncm_oci_state s;
                if (ncm_oci_state_parse(text, size, &s, NULL) == 0) {
                        if (!s.id || !s.status || s.pid < 0)
                                abort();
                        ncm_oci_state_done(&s);
                }
        } else if (sel == 1) {
                ncm_oci_config c;
                if (ncm_oci_config_parse(text, size, NULL, &c, NULL) == 0) {
                        ncm_runtime_identity id;
                        ncm_runtime_requests q;
                        ncm_qos_class qos;
                        (void)ncm_runtime_identify(c.annotations, c.n_annotations, &id, NULL);
                        (void)ncm_runtime_recover(&c.resources, false, NCM_QOS_BURSTABLE, &q, NULL);
                        (void)ncm_runtime_recover(&c.resources, true, NCM_QOS_GUARANTEED, &q, NULL);
                        (void)ncm_runtime_pod_cgroup_qos(c.cgroups_path, &qos, NULL, 0);
                        ncm_oci_config_done(&c);
                }
        } else if (sel == 3) {
                ncm__rt_record r = {0};
                int n = ncm__rt_journal_apply(text, size, "journal", &r, NULL);
                if (n >= 0) {
                        /* what a journal made of the record is a record that parses back */
                        ncm_buf b = NCM_BUF_INIT;
                        ncm__rt_record r2;
                        ncm__rt_record_format(&r, &b);
                        if (ncm__rt_record_parse(b.data, b.len, "again", &r2, NULL) != 0 ||
                            r2.n != r.n || r2.n_sandboxes != r.n_sandboxes)
                                abort();
                        ncm__rt_record_done(&r2);
                        ncm_buf_done(&b);
                }
                ncm__rt_record_done(&r);
        } else {
                ncm__rt_record r;
                if (ncm__rt_record_parse(text, size, "registry", &r, NULL) == 0) {
                        /* what parses formats and parses back the same */
                        ncm_buf b = NCM_BUF_INIT;
                        ncm__rt_record r2;
                        ncm__rt_record_format(&r, &b);
                        if (ncm__rt_record_parse(b.data, b.len, "again", &r2, NULL) != 0 ||
                            r2.n != r.n)
                                abort();
                        ncm__rt_record_done(&r2);
                        ncm_buf_done(&b);
                        ncm__rt_record_done(&r);
                }
        }
        return 0;
}
