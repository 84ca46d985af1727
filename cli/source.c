/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "source.h"

static const struct {
        int opt;
        ncm_topo_source_kind kind;
        const char *name;
} source_opts[] = {
                {CLI_OPT_FSROOT, NCM_TOPO_SOURCE_FSROOT, "--fsroot"},
                {CLI_OPT_SYNTHETIC, NCM_TOPO_SOURCE_SYNTHETIC, "--synthetic"},
                {CLI_OPT_XML, NCM_TOPO_SOURCE_XML, "--xml"},
                {CLI_OPT_TOPOLOGY, NCM_TOPO_SOURCE_JSON, "--topology"},
};

static const char *option_name(ncm_topo_source_kind kind)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(source_opts); i++)
                if (source_opts[i].kind == kind)
                        return source_opts[i].name;
        return "?";
}

bool cli_source_option(cli_source *src, int opt, const char *arg)
{
        if (opt == CLI_OPT_NUMA_MEMORY) {
                src->memory = arg;
                return true;
        }
        if (opt == CLI_OPT_TOPOLOGY_RULES) {
                int rules = ncm_topo_rules_from_name(arg);
                if (rules < 0)
                        src->bad_rules = arg;
                else
                        src->rules = (ncm_topo_rules)rules;
                return true;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(source_opts); i++) {
                if (source_opts[i].opt != opt)
                        continue;
                if (src->given == 0)
                        src->first = source_opts[i].name;
                else if (src->given == 1)
                        src->second = source_opts[i].name;
                src->given++;
                src->kind = source_opts[i].kind;
                src->arg = arg;
                return true;
        }
        return false;
}

int cli_source_check(const cli_source *src, const char *cmd)
{
        if (src->bad_rules)
                return cli_usage_error(cmd,
                                       "--topology-rules: unknown rules '%s' (cadvisor or "
                                       "nodecm)",
                                       src->bad_rules);
        if (src->given > 1)
                return cli_usage_error(cmd, "%s and %s: give at most one topology source",
                                       src->first, src->second);
        return 0;
}

int cli_source_load(const cli_source *src, ncm_topo **ret, ncm_error *err)
{
        int r;
        if (src->given > 1)
                return ncm_error_set(err, EINVAL, "%s and %s: give at most one topology source",
                                     src->first, src->second);
        if (src->bad_rules)
                return ncm_error_set(err, EINVAL,
                                     "--topology-rules: unknown rules '%s' (cadvisor or nodecm)",
                                     src->bad_rules);
        if (!src->arg)
                r = ncm_topo_load_rules(NCM_TOPO_SOURCE_FSROOT, "/", src->rules, ret, err);
        else
                r = ncm_topo_load_rules(src->kind, src->arg, src->rules, ret, err);
        if (r < 0 && err && src->arg && src->kind == NCM_TOPO_SOURCE_FSROOT)
                /* sysfs errors name kernel paths; say under which root they were read */
                ncm_error_prefix(err, "--fsroot %s", src->arg);
        if (r >= 0 && src->memory) {
                r = ncm_topo_apply_memory_spec(*ret, src->memory, err);
                if (r < 0) {
                        *ret = ncm_topo_free(*ret);
                        ncm_error_prefix(err, "--numa-memory");
                }
        }
        return r;
}

int cli_source_load_pci(const cli_source *src, ncm_topo *t, ncm_error *err)
{
        int r = ncm_topo_load_pci(src->arg ? src->kind : NCM_TOPO_SOURCE_FSROOT,
                                  src->arg ? src->arg : "/", t, err);
        if (r < 0 && err && src->arg && src->kind == NCM_TOPO_SOURCE_FSROOT)
                ncm_error_prefix(err, "--fsroot %s", src->arg);
        return r;
}

const char *cli_source_describe(const cli_source *src, char *buf, size_t size)
{
        if (!src->arg)
                snprintf(buf, size, "this machine");
        else
                snprintf(buf, size, "%s %s", option_name(src->kind), src->arg);
        return buf;
}
