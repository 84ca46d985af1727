/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Plans: the ordered operations that create, update or remove cgroups; their text and JSON
 * forms; and their execution through a root fd with undo on failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>
#include "base/array.h"

void ncm_cgroup_plan_done(ncm_cgroup_plan *p)
{
        for (size_t i = 0; i < p->n_ops; i++) {
                free(p->ops[i].path);
                free(p->ops[i].value);
        }
        for (size_t i = 0; i < p->n_steps; i++) {
                free(p->steps[i].title);
                free(p->steps[i].path);
        }
        free(p->ops);
        free(p->steps);
        p->ops = NULL;
        p->steps = NULL;
        p->n_ops = p->cap_ops = p->n_steps = p->cap_steps = 0;
        p->next_group = 0;
}

int ncm_cgroup_plan_step(ncm_cgroup_plan *p, const char *title, const char *cgroup_path)
{
        ncm_cgroup_step s;

        if (ncm__array_grow(p->steps, p->cap_steps, p->n_steps) < 0)
                return -ENOMEM;
        s.title = strdup(title);
        s.path = strdup(cgroup_path);
        if (!s.title || !s.path) {
                free(s.title);
                free(s.path);
                return -ENOMEM;
        }
        p->steps[p->n_steps++] = s;
        return 0;
}

unsigned ncm_cgroup_plan_new_group(ncm_cgroup_plan *p)
{
        return ++p->next_group;
}

int ncm_cgroup_plan_add(ncm_cgroup_plan *p, ncm_cgroup_op_kind kind, unsigned flags,
                        const char *path, const char *value)
{
        ncm_cgroup_op op = {.kind = kind, .flags = flags};

        if (kind == NCM_CGROUP_OP_WRITE && !value)
                return -EINVAL;
        if (ncm__array_grow(p->ops, p->cap_ops, p->n_ops) < 0)
                return -ENOMEM;
        op.step = p->n_steps ? p->n_steps - 1 : 0;
        op.group = p->next_group;
        op.path = strdup(path);
        op.value = value ? strdup(value) : NULL;
        if (!op.path || (value && !op.value)) {
                free(op.path);
                free(op.value);
                return -ENOMEM;
        }
        p->ops[p->n_ops++] = op;
        return 0;
}

int ncm_cgroup_plan_append(ncm_cgroup_plan *dst, const ncm_cgroup_plan *src)
{
        unsigned base = dst->next_group;
        size_t op = 0;

        if (!dst->display_root[0])
                snprintf(dst->display_root, sizeof(dst->display_root), "%s", src->display_root);
        for (size_t st = 0; st < src->n_steps; st++) {
                if (ncm_cgroup_plan_step(dst, src->steps[st].title, src->steps[st].path) < 0)
                        return -ENOMEM;
                for (; op < src->n_ops && src->ops[op].step == st; op++) {
                        const ncm_cgroup_op *o = &src->ops[op];
                        dst->next_group = base + o->group;
                        if (ncm_cgroup_plan_add(dst, o->kind, o->flags, o->path, o->value) < 0)
                                return -ENOMEM;
                }
        }
        dst->next_group = base + src->next_group;
        return 0;
}

void ncm_cgroup_plan_drop_superseded(ncm_cgroup_plan *p)
{
        size_t k = 0;

        for (size_t i = 0; i < p->n_ops; i++) {
                const ncm_cgroup_op *o = &p->ops[i];
                bool drop = false;
                /* a write a later write of the same file undoes; a directory made already; a
                 * subtree_control line written already */
                for (size_t j = i + 1; !drop && o->kind == NCM_CGROUP_OP_WRITE &&
                                       !(o->flags & NCM_CGROUP_OPF_SUBTREE) && j < p->n_ops;
                     j++)
                        drop = p->ops[j].kind == NCM_CGROUP_OP_WRITE &&
                               strcmp(p->ops[j].path, o->path) == 0;
                for (size_t j = 0;
                     !drop && j < k &&
                     (o->kind == NCM_CGROUP_OP_MKDIR || (o->flags & NCM_CGROUP_OPF_SUBTREE));
                     j++)
                        drop = p->ops[j].kind == o->kind && strcmp(p->ops[j].path, o->path) == 0 &&
                               (!o->value ||
                                (p->ops[j].value && strcmp(p->ops[j].value, o->value) == 0));
                /* a file filled from its parent when empty, which it no longer is */
                for (size_t j = 0; !drop && o->kind == NCM_CGROUP_OP_INHERIT && j < k; j++)
                        drop = (p->ops[j].kind == NCM_CGROUP_OP_INHERIT ||
                                p->ops[j].kind == NCM_CGROUP_OP_WRITE) &&
                               strcmp(p->ops[j].path, o->path) == 0;
                if (drop) {
                        free(p->ops[i].path);
                        free(p->ops[i].value);
                        continue;
                }
                p->ops[k++] = p->ops[i];
        }
        p->n_ops = k;
}

/* ---- text and JSON ---- */

static const char *op_name(ncm_cgroup_op_kind k)
{
        switch (k) {
        case NCM_CGROUP_OP_MKDIR:
                return "mkdir";
        case NCM_CGROUP_OP_WRITE:
                return "write";
        case NCM_CGROUP_OP_INHERIT:
                return "inherit";
        case NCM_CGROUP_OP_RMDIR:
                return "rmdir";
        }
        return "?";
}

static void put_path(const ncm_cgroup_plan *p, const char *path, ncm_buf *b)
{
        /* Paths inside the root start with '/'; a root of "/" must not double it. */
        if (strcmp(p->display_root, "/") != 0)
                ncm_buf_puts(b, p->display_root);
        ncm_buf_puts(b, path);
}

void ncm_cgroup_plan_format(const ncm_cgroup_plan *p, ncm_buf *b)
{
        size_t step = (size_t)-1;

        for (size_t i = 0; i < p->n_ops; i++) {
                const ncm_cgroup_op *op = &p->ops[i];
                if (op->step != step && op->step < p->n_steps) {
                        step = op->step;
                        if (i)
                                ncm_buf_putc(b, '\n');
                        ncm_buf_printf(b, "# %s: %s\n", p->steps[step].title, p->steps[step].path);
                }
                ncm_buf_printf(b, "%-8s ", op_name(op->kind));
                put_path(p, op->path, b);
                if (op->kind == NCM_CGROUP_OP_WRITE) {
                        ncm_buf_putc(b, ' ');
                        if (!*op->value || strchr(op->value, ' '))
                                ncm_buf_go_quote(b, op->value, strlen(op->value));
                        else
                                ncm_buf_puts(b, op->value);
                }
                if (op->kind == NCM_CGROUP_OP_INHERIT)
                        ncm_buf_puts(b, "  (the parent's value, if empty)");
                if (op->flags & NCM_CGROUP_OPF_READBACK)
                        ncm_buf_puts(b, "  (read back)");
                if (op->flags & NCM_CGROUP_OPF_RETRY_AFTER_NEXT)
                        ncm_buf_puts(b, "  (on EINVAL, again after the next write)");
                if (op->flags & NCM_CGROUP_OPF_OPTIONAL)
                        ncm_buf_puts(b, "  (if the kernel has it)");
                if (op->flags & NCM_CGROUP_OPF_SUBTREE)
                        ncm_buf_puts(b, "  (one at a time on failure)");
                if (op->flags & NCM_CGROUP_OPF_BEST_EFFORT)
                        ncm_buf_puts(b, "  (if the kernel lets it)");
                ncm_buf_putc(b, '\n');
        }
}

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

void ncm_cgroup_plan_format_json(const ncm_cgroup_plan *p, ncm_buf *b)
{
        size_t step = (size_t)-1;
        bool any_step = false;

        ncm_buf_puts(b, "{\"root\": ");
        json_str(b, p->display_root);
        ncm_buf_puts(b, ", \"steps\": [");
        for (size_t i = 0; i < p->n_ops; i++) {
                const ncm_cgroup_op *op = &p->ops[i];
                bool first_op = false;
                if (op->step != step) {
                        step = op->step;
                        if (any_step)
                                ncm_buf_puts(b, "]}, ");
                        any_step = true;
                        first_op = true;
                        ncm_buf_puts(b, "{\"title\": ");
                        json_str(b, step < p->n_steps ? p->steps[step].title : "");
                        ncm_buf_puts(b, ", \"cgroup\": ");
                        json_str(b, step < p->n_steps ? p->steps[step].path : "");
                        ncm_buf_puts(b, ", \"ops\": [");
                }
                if (!first_op)
                        ncm_buf_puts(b, ", ");
                ncm_buf_puts(b, "{\"op\": ");
                json_str(b, op_name(op->kind));
                ncm_buf_puts(b, ", \"path\": ");
                {
                        ncm_buf path = NCM_BUF_INIT;
                        put_path(p, op->path, &path);
                        ncm_buf_json_string(b, path.data ? path.data : "", path.len);
                        ncm_buf_done(&path);
                }
                if (op->value) {
                        ncm_buf_puts(b, ", \"value\": ");
                        json_str(b, op->value);
                }
                if (op->flags & NCM_CGROUP_OPF_READBACK)
                        ncm_buf_puts(b, ", \"readBack\": true");
                if (op->flags & NCM_CGROUP_OPF_RETRY_AFTER_NEXT)
                        ncm_buf_puts(b, ", \"retryAfterNext\": true");
                if (op->flags & NCM_CGROUP_OPF_OPTIONAL)
                        ncm_buf_puts(b, ", \"optional\": true");
                if (op->flags & NCM_CGROUP_OPF_SUBTREE)
                        ncm_buf_puts(b, ", \"oneAtATimeOnFailure\": true");
                if (op->flags & NCM_CGROUP_OPF_BEST_EFFORT)
                        ncm_buf_puts(b, ", \"bestEffort\": true");
                ncm_buf_putc(b, '}');
        }
        if (any_step)
                ncm_buf_puts(b, "]}");
        ncm_buf_puts(b, "]}\n");
}

/* ---- execution ---- */

typedef struct undo {
        ncm_cgroup_op_kind kind; /* MKDIR: rmdir it; WRITE: write value back */
        size_t prev_mkdir;       /* MKDIR: the MKDIR before it (index + 1; 0 none) */
        char *path;
        char *value;
} undo;

typedef struct exec_ctx {
        const ncm_cgroup_plan *plan;
        int rootfd;
        const ncm_cgroup_exec_options *opts;
        undo *undos;
        size_t n_undos, cap_undos;
        size_t last_mkdir; /* the last MKDIR undo (index + 1; 0 none): their chain */
        size_t floor;      /* undos below this belong to earlier plans of an undo log */
        int changed;
} exec_ctx;

/* What applied plans changed, to put back (ncm_cgroup_plan_apply_undo). */
struct ncm_cgroup_undo {
        undo *v;
        size_t n, cap;
        size_t last_mkdir;
        char display_root[256];
};

static void disp(const exec_ctx *x, const char *path, char *buf, size_t size)
{
        const char *root = strcmp(x->plan->display_root, "/") == 0 ? "" : x->plan->display_root;
        int n = snprintf(buf, size, "%s%s", root, path);

        /* Long paths are only shown: cut them visibly. */
        if (n < 0 || (size_t)n >= size)
                memcpy(buf + size - 4, "...", 4);
}

static int push_undo(exec_ctx *x, ncm_cgroup_op_kind kind, const char *path, const char *value)
{
        undo u = {kind, 0, NULL, NULL};

        if (ncm__array_grow(x->undos, x->cap_undos, x->n_undos) < 0)
                return -ENOMEM;
        u.path = strdup(path);
        u.value = value ? strdup(value) : NULL;
        if (!u.path || (value && !u.value)) {
                free(u.path);
                free(u.value);
                return -ENOMEM;
        }
        if (kind == NCM_CGROUP_OP_MKDIR) {
                u.prev_mkdir = x->last_mkdir;
                x->last_mkdir = x->n_undos + 1;
        }
        x->undos[x->n_undos++] = u;
        return 0;
}

/* Was the directory holding file PATH created by this run? Then undoing the mkdir is enough. */
static bool in_created_dir(const exec_ctx *x, const char *path)
{
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) : 0;

        /* the MKDIRs only, by their chain: a transaction that writes to many cgroups it did not
         * make (the shared pool reaching every container) must not walk its other undos */
        for (size_t i = x->last_mkdir; i > 0; i = x->undos[i - 1].prev_mkdir)
                if (strlen(x->undos[i - 1].path) == dlen &&
                    memcmp(x->undos[i - 1].path, path, dlen) == 0)
                        return true;
        return false;
}

/* Read a control file with one read(2). */
static ssize_t read_file(const exec_ctx *x, const char *path, char *buf, size_t size)
{
        return ncm_fs_read(x->rootfd, path, buf, size, NULL);
}

static bool blank(const char *s)
{
        for (; *s; s++)
                if (*s != ' ' && *s != '\n' && *s != '\t')
                        return false;
        return true;
}

/* A file's content equals VALUE, up to the trailing newline the kernel adds. */
static bool same_value(const char *content, const char *value)
{
        size_t n = strlen(value);
        return strncmp(content, value, n) == 0 &&
               (content[n] == '\0' || (content[n] == '\n' && content[n + 1] == '\0'));
}

static void chomp(char *s)
{
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
}

/* The parent directory of the directory holding file PATH. */
static int parent_file(const char *path, char *buf, size_t size)
{
        const char *file = strrchr(path, '/');
        const char *dir_end, *pslash;

        if (!file || file == path)
                return -EINVAL;
        dir_end = file;
        pslash = dir_end - 1;
        while (pslash > path && *pslash != '/')
                pslash--;
        if (*pslash != '/')
                return -EINVAL;
        if ((size_t)(pslash - path) + strlen(file) + 1 > size)
                return -ENAMETOOLONG;
        memcpy(buf, path, (size_t)(pslash - path));
        strcpy(buf + (pslash - path), file);
        return 0;
}

/* Remove PATH's child directories, deepest first, then PATH (a cgroup tree). */
static int remove_tree(exec_ctx *x, const char *path, int depth, ncm_error *err)
{
        DIR *d = NULL;
        struct dirent *de;
        char shown[4096];
        int r;

        if (depth > 64)
                return ncm_error_set(err, ELOOP, "'%s': cgroup tree too deep", path);
        r = ncm_fs_opendir(x->rootfd, path, &d, NULL);
        if (r == -ENOENT)
                return 0;
        disp(x, path, shown, sizeof(shown));
        if (r < 0)
                return ncm_error_errno(err, -r, "open '%s'", shown);
        while ((de = readdir(d)) != NULL) {
                char child[4096];
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
                    strcmp(de->d_name, "..") == 0)
                        continue;
                if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >=
                    sizeof(child)) {
                        closedir(d);
                        return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", shown);
                }
                r = remove_tree(x, child, depth + 1, err);
                if (r < 0) {
                        closedir(d);
                        return r;
                }
        }
        closedir(d);
        if (x->opts && x->opts->before_rmdir) {
                r = x->opts->before_rmdir(x->rootfd, path, x->opts->userdata);
                if (r < 0)
                        return ncm_error_errno(err, -r, "rmdir '%s'", shown);
        }
        r = ncm_fs_rmdir(x->rootfd, path, NULL);
        if (r < 0) {
                if (r == -EBUSY)
                        return ncm_error_set(err, EBUSY,
                                             "rmdir '%s': the cgroup still has processes", shown);
                return ncm_error_errno(err, -r, "rmdir '%s'", shown);
        }
        if (r > 0)
                x->changed++;
        return 0;
}

static int do_write(exec_ctx *x, const ncm_cgroup_op *op, ncm_error *err)
{
        char old[4096], shown[4096];
        ssize_t n;
        int r;

        disp(x, op->path, shown, sizeof(shown));
        n = read_file(x, op->path, old, sizeof(old));
        if (n == -ENOENT)
                return ncm_error_errno(err, ENOENT, "write '%s'", shown);
        if (n == -EFBIG)
                old[0] = '\0'; /* too large to restore (a huge cpuset): no undo */
        else if (n < 0)
                return ncm_error_errno(err, (int)-n, "read '%s'", shown);

        if (op->flags & NCM_CGROUP_OPF_SUBTREE) {
                r = ncm_fs_write(x->rootfd, op->path, op->value, NULL);
                if (r < 0) {
                        /* Enable what can be enabled; setting a value later reports the rest. */
                        char one[64];
                        const char *p = op->value;
                        while (*p) {
                                size_t len = strcspn(p, " ");
                                if (len > 0 && len < sizeof(one)) {
                                        memcpy(one, p, len);
                                        one[len] = '\0';
                                        (void)ncm_fs_write(x->rootfd, op->path, one, NULL);
                                }
                                p += len;
                                while (*p == ' ')
                                        p++;
                        }
                }
        } else {
                r = ncm_fs_write(x->rootfd, op->path, op->value, NULL);
                if (r < 0)
                        return ncm_error_errno(err, -r, "write '%s' to '%s'", op->value, shown);
        }
        /* Written in any case, as the kubelet does; counted only when it changed the file. */
        if (n < 0 || !same_value(old, op->value))
                x->changed++;
        if (n >= 0 && !in_created_dir(x, op->path)) {
                chomp(old);
                if (op->flags & NCM_CGROUP_OPF_SUBTREE) {
                        /* Disable only what this write enabled. */
                        char undo_val[512] = "";
                        const char *p = op->value;
                        while (*p) {
                                size_t len = strcspn(p, " ");
                                char name[64];
                                if (len > 1 && len < sizeof(name)) {
                                        const char *q = old;
                                        bool had = false;
                                        memcpy(name, p + 1, len - 1);
                                        name[len - 1] = '\0';
                                        while (*q) {
                                                size_t ql;
                                                if (*q == '+')
                                                        q++;
                                                ql = strcspn(q, " ");
                                                if (ql == strlen(name) && memcmp(q, name, ql) == 0)
                                                        had = true;
                                                q += ql;
                                                while (*q == ' ')
                                                        q++;
                                        }
                                        if (!had && strlen(undo_val) + len + 2 < sizeof(undo_val)) {
                                                if (*undo_val)
                                                        strcat(undo_val, " ");
                                                strcat(undo_val, "-");
                                                strcat(undo_val, name);
                                        }
                                }
                                p += len;
                                while (*p == ' ')
                                        p++;
                        }
                        if (*undo_val && push_undo(x, NCM_CGROUP_OP_WRITE, op->path, undo_val) < 0)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                } else if (push_undo(x, NCM_CGROUP_OP_WRITE, op->path, old) < 0) {
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        if (op->flags & NCM_CGROUP_OPF_READBACK) {
                char back[128];
                n = read_file(x, op->path, back, sizeof(back));
                if (n < 0)
                        return ncm_error_errno(err, (int)-n, "read '%s'", shown);
                chomp(back);
                if (strcmp(back, op->value) != 0) {
                        /* libcontainer's texts for cpu.shares. */
                        long long want = strtoll(op->value, NULL, 10),
                                  got = strtoll(back, NULL, 10);
                        return ncm_error_set(err, EINVAL, "%s: the %s allowed cpu-shares is %s",
                                             shown, want > got ? "maximum" : "minimum", back);
                }
        }
        return 0;
}

static int do_inherit(exec_ctx *x, const ncm_cgroup_op *op, ncm_error *err)
{
        char cur[8192], parent[4096], val[8192], shown[4096];
        ssize_t n;
        int r;

        disp(x, op->path, shown, sizeof(shown));
        n = read_file(x, op->path, cur, sizeof(cur));
        if (n < 0)
                return ncm_error_errno(err, (int)-n, "read '%s'", shown);
        if (!blank(cur))
                return 0;
        r = parent_file(op->path, parent, sizeof(parent));
        if (r < 0)
                return ncm_error_set(err, EINVAL, "'%s' has no parent cgroup", shown);
        n = read_file(x, parent, val, sizeof(val));
        if (n < 0) {
                char pshown[4096];
                disp(x, parent, pshown, sizeof(pshown));
                return ncm_error_errno(err, (int)-n, "read '%s'", pshown);
        }
        chomp(val);
        if (!*val) {
                char pshown[4096];
                disp(x, parent, pshown, sizeof(pshown));
                return ncm_error_set(err, ENOSPC, "'%s' is empty: nothing to inherit", pshown);
        }
        r = ncm_fs_write(x->rootfd, op->path, val, NULL);
        if (r < 0)
                return ncm_error_errno(err, -r, "write '%s' to '%s'", val, shown);
        x->changed++;
        if (!in_created_dir(x, op->path) && push_undo(x, NCM_CGROUP_OP_WRITE, op->path, "") < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

static int do_mkdir(exec_ctx *x, const ncm_cgroup_op *op, ncm_error *err)
{
        char shown[4096];
        int r = ncm_fs_mkdir(x->rootfd, op->path, 0755, NULL);

        disp(x, op->path, shown, sizeof(shown));
        if (r == -ENOTDIR)
                return ncm_error_set(err, ENOTDIR, "'%s' exists and is not a directory", shown);
        if (r < 0)
                return ncm_error_errno(err, -r, "mkdir '%s'", shown);
        if (r == 0)
                return 0;
        x->changed++;
        if (push_undo(x, NCM_CGROUP_OP_MKDIR, op->path, NULL) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (x->opts && x->opts->on_mkdir) {
                r = x->opts->on_mkdir(x->rootfd, op->path, x->opts->userdata);
                if (r < 0)
                        return ncm_error_errno(err, -r, "mkdir '%s'", shown);
        }
        return 0;
}

static void rollback(exec_ctx *x, ncm_error *err)
{
        size_t failures = 0;
        char first[512] = "";

        while (x->n_undos > x->floor) {
                undo *u = &x->undos[--x->n_undos];
                int r;
                if (u->kind == NCM_CGROUP_OP_MKDIR)
                        x->last_mkdir = u->prev_mkdir;
                if (u->kind == NCM_CGROUP_OP_MKDIR) {
                        if (x->opts && x->opts->before_rmdir)
                                (void)x->opts->before_rmdir(x->rootfd, u->path, x->opts->userdata);
                        r = ncm_fs_rmdir(x->rootfd, u->path, NULL);
                } else {
                        r = ncm_fs_write(x->rootfd, u->path, *u->value ? u->value : "\n", NULL);
                }
                if (r < 0 && failures++ == 0) {
                        char shown[4096];
                        disp(x, u->path, shown, sizeof(shown));
                        int n = snprintf(first, sizeof(first), "%s '%s': %s",
                                         u->kind == NCM_CGROUP_OP_MKDIR ? "rmdir" : "restore",
                                         shown, ncm_strerror(-r));
                        if (n < 0 || (size_t)n >= sizeof(first))
                                memcpy(first + sizeof(first) - 4, "...", 4);
                }
                free(u->path);
                free(u->value);
        }
        if (failures && err && err->code) {
                char msg[NCM_ERROR_MSG_MAX];
                memcpy(msg, err->msg, sizeof(msg));
                ncm_error_set(err, err->code, "%s (undo incomplete: %zu failure(s), first %s)", msg,
                              failures, first);
        }
}

/* Execute P in X; on failure undo X's records down to its floor. */
static int apply(exec_ctx *x, ncm_error *err)
{
        const ncm_cgroup_plan *p = x->plan;
        unsigned skip_group = 0;
        const ncm_cgroup_op *deferred = NULL;
        int r = 0;

        for (size_t i = 0; i < p->n_ops && r >= 0; i++) {
                const ncm_cgroup_op *op = &p->ops[i];
                if (skip_group && op->group == skip_group && (op->flags & NCM_CGROUP_OPF_OPTIONAL))
                        continue;
                switch (op->kind) {
                case NCM_CGROUP_OP_MKDIR:
                        r = do_mkdir(x, op, err);
                        break;
                case NCM_CGROUP_OP_INHERIT:
                        r = do_inherit(x, op, err);
                        break;
                case NCM_CGROUP_OP_RMDIR:
                        r = remove_tree(x, op->path, 0, err);
                        break;
                case NCM_CGROUP_OP_WRITE:
                        if ((op->flags & NCM_CGROUP_OPF_OPTIONAL) &&
                            ncm_fs_exists(x->rootfd, op->path) == 0) {
                                /* The kernel lacks it (e.g. hugetlb rsvd): skip the rest. */
                                skip_group = op->group;
                                break;
                        }
                        r = do_write(x, op, err);
                        if (r < 0 && r != -ENOMEM && (op->flags & NCM_CGROUP_OPF_BEST_EFFORT)) {
                                ncm_error_clear(err);
                                r = 0;
                                break;
                        }
                        if (r == -EINVAL && (op->flags & NCM_CGROUP_OPF_RETRY_AFTER_NEXT)) {
                                /* A smaller period can be refused until the quota is set. */
                                ncm_error_clear(err);
                                deferred = op;
                                r = 0;
                                break;
                        }
                        if (r >= 0 && deferred) {
                                const ncm_cgroup_op *d = deferred;
                                deferred = NULL;
                                r = do_write(x, d, err);
                        }
                        break;
                }
        }
        if (r >= 0 && deferred)
                r = do_write(x, deferred, err);
        if (r < 0) {
                rollback(x, err);
                return r;
        }
        return x->changed;
}

int ncm_cgroup_plan_apply(const ncm_cgroup_plan *p, int rootfd, const ncm_cgroup_exec_options *opts,
                          ncm_error *err)
{
        exec_ctx x = {.plan = p, .rootfd = rootfd, .opts = opts};
        int r = apply(&x, err);

        for (size_t i = 0; i < x.n_undos; i++) {
                free(x.undos[i].path);
                free(x.undos[i].value);
        }
        free(x.undos);
        return r;
}

ncm_cgroup_undo *ncm_cgroup_undo_new(void)
{
        return calloc(1, sizeof(ncm_cgroup_undo));
}

void ncm_cgroup_undo_clear(ncm_cgroup_undo *u)
{
        for (size_t i = 0; i < u->n; i++) {
                free(u->v[i].path);
                free(u->v[i].value);
        }
        u->n = 0;
        u->last_mkdir = 0;
}

ncm_cgroup_undo *ncm_cgroup_undo_free(ncm_cgroup_undo *u)
{
        if (u) {
                ncm_cgroup_undo_clear(u);
                free(u->v);
                free(u);
        }
        return NULL;
}

size_t ncm_cgroup_undo_count(const ncm_cgroup_undo *u)
{
        return u->n;
}

int ncm_cgroup_plan_apply_undo(const ncm_cgroup_plan *p, int rootfd,
                               const ncm_cgroup_exec_options *opts, ncm_cgroup_undo *u,
                               ncm_error *err)
{
        exec_ctx x = {.plan = p, .rootfd = rootfd, .opts = opts};
        int r;

        /* The log's records come first, so that a write into a directory an earlier plan of
         * the log created needs no undo of its own. */
        x.undos = u->v;
        x.n_undos = x.floor = u->n;
        x.cap_undos = u->cap;
        x.last_mkdir = u->last_mkdir;
        r = apply(&x, err);
        u->v = x.undos;
        u->n = x.n_undos;
        u->cap = x.cap_undos;
        u->last_mkdir = x.last_mkdir;
        snprintf(u->display_root, sizeof(u->display_root), "%s", p->display_root);
        return r;
}

int ncm_cgroup_undo_run(ncm_cgroup_undo *u, int rootfd, const ncm_cgroup_exec_options *opts,
                        ncm_error *err)
{
        ncm_cgroup_plan shown = NCM_CGROUP_PLAN_INIT;
        exec_ctx x = {.plan = &shown, .rootfd = rootfd, .opts = opts};
        ncm_error e = NCM_ERROR_INIT;

        snprintf(shown.display_root, sizeof(shown.display_root), "%s", u->display_root);
        x.undos = u->v;
        x.n_undos = u->n;
        x.cap_undos = u->cap;
        x.last_mkdir = u->last_mkdir;
        /* rollback() reports into an error that holds a code */
        e.code = EIO;
        rollback(&x, &e);
        u->v = x.undos;
        u->n = x.n_undos;
        u->cap = x.cap_undos;
        u->last_mkdir = x.last_mkdir;
        if (strstr(e.msg, "undo incomplete")) {
                const char *m = e.msg + strspn(e.msg, " (");
                size_t len = strlen(m);
                return ncm_error_set(err, EIO, "%.*s",
                                     (int)(len && m[len - 1] == ')' ? len - 1 : len), m);
        }
        return 0;
}
