/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CDI spec files (ncm_cdi_spec_parse) and qualified names (ncm_cdi_check_name). Whatever spec
 * the reader accepts has a valid kind, at least one device, every device name qualified by the
 * kind and passing the name check, no name twice, and device nodes with a path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cdi.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_cdi_spec *s = NULL;
        char *name;

        name = malloc(size + 1);
        if (!name)
                return 0;
        memcpy(name, data, size);
        name[size] = '\0';
        (void)ncm_cdi_check_name(name, NULL);
        free(name);

        if (ncm_cdi_spec_parse((const char *)data, size, "fuzz", &s, NULL) != 0)
                return 0;
        if (ncm_cdi_check_kind(s->kind, NULL) != 0 || s->n_devices == 0)
                abort();
        for (size_t i = 0; i < s->n_devices; i++) {
                const ncm_cdi_device *d = &s->devices[i];
                if (ncm_cdi_check_name(d->name, NULL) != 0 ||
                    strncmp(d->name, s->kind, strlen(s->kind)) != 0)
                        abort();
                for (size_t k = 0; k < i; k++)
                        if (strcmp(s->devices[k].name, d->name) == 0)
                                abort();
                for (size_t k = 0; k < d->n_nodes; k++)
                        if (!d->nodes[k].path || !d->nodes[k].path[0])
                                abort();
        }
        ncm_cdi_spec_free(s);
        return 0;
}
