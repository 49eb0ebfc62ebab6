/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under (see ob_cpuquota.h).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_cpuquota.h"

/* The first line of \p path, without its newline; 0 when it cannot be read. */
static int ob_read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    int ok;

    if (NULL == f) {
        return 0;
    }
    ok = NULL != fgets(buf, (int) size, f);
    fclose(f);
    if (ok) {
        buf[strcspn(buf, "\n")] = '\0';
    }
    return ok;
}

/* A whole number, all of \p s; 0 otherwise. */
static int ob_parse_long(const char *s, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    if (end == s || '\0' != *end) {
        return 0;
    }
    *out = v;
    return 1;
}

/* The quota of one cgroup directory, in cores; 0 when it sets none. */
static double ob_dir_quota(const char *dir, int v2)
{
    char path[PATH_MAX];
    char line[128];
    long quota = 0, period = 0;

    if (v2) {
        char *sp;

        /* "max 100000" (no quota) or "40000 100000". */
        if ((size_t) snprintf(path, sizeof path, "%s/cpu.max", dir) >= sizeof path ||
            !ob_read_line(path, line, sizeof line) || NULL == (sp = strchr(line, ' '))) {
            return 0.0;
        }
        *sp = '\0';
        if (!ob_parse_long(line, &quota) || !ob_parse_long(sp + 1, &period)) {
            return 0.0;
        }
    } else {
        if ((size_t) snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= sizeof path ||
            !ob_read_line(path, line, sizeof line) || !ob_parse_long(line, &quota)) {
            return 0.0;
        }
        if ((size_t) snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >= sizeof path ||
            !ob_read_line(path, line, sizeof line) || !ob_parse_long(line, &period)) {
            return 0.0;
        }
    }
    /* v1's -1 is "no quota". */
    return quota > 0 && period > 0 ? (double) quota / (double) period : 0.0;
}

/* The least quota over \p base + \p rel and its ancestors up to \p base. */
static double ob_walk_quota(const char *base, const char *rel, int v2)
{
    char dir[PATH_MAX];
    double least = 0.0;

    if ((size_t) snprintf(dir, sizeof dir, "%s%s", base, rel) >= sizeof dir) {
        return 0.0;
    }
    for (;;) {
        double q = ob_dir_quota(dir, v2);
        char *slash;

        if (q > 0.0 && (0.0 == least || q < least)) {
            least = q;
        }
        if (strlen(dir) <= strlen(base)) {
            break;
        }
        slash = strrchr(dir + strlen(base), '/');
        if (NULL == slash) {
            break;
        }
        *slash = '\0';
    }
    return least;
}

/* Whether the comma-separated \p list names \p name. */
static int ob_lists(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; '\0' != *p;) {
        size_t len = strcspn(p, ",");

        if (len == n && 0 == strncmp(p, name, n)) {
            return 1;
        }
        p += len;
        p += ',' == *p;
    }
    return 0;
}

/* The quota one line of /proc/self/cgroup sets ("N:controllers:/path"), 0 when none. */
static double ob_line_quota(char *line, const char *root)
{
    static const char *const v1_mounts[] = { "cpu", "cpu,cpuacct", "cpuacct,cpu" };
    char *c1 = strchr(line, ':');
    char *c2 = NULL != c1 ? strchr(c1 + 1, ':') : NULL;
    char *path;
    const char *rel;
    double q = 0.0;

    if (NULL == c2) {
        return 0.0;
    }
    *c1 = '\0';
    *c2 = '\0';
    path = c2 + 1;
    path[strcspn(path, "\n")] = '\0';
    if ('/' != path[0]) {
        return 0.0;
    }
    rel = 0 == strcmp(path, "/") ? "" : path;
    if ('\0' == c1[1] && 0 == strcmp(line, "0")) {
        return ob_walk_quota(root, rel, 1);
    }
    if (!ob_lists(c1 + 1, "cpu")) {
        return 0.0;
    }
    for (size_t k = 0; k < sizeof v1_mounts / sizeof v1_mounts[0] && 0.0 == q; k++) {
        char base[PATH_MAX];

        if ((size_t) snprintf(base, sizeof base, "%s/%s", root, v1_mounts[k]) < sizeof base) {
            q = ob_walk_quota(base, rel, 0);
        }
    }
    return q;
}

double ob_cpu_quota(const char *proc_cgroup, const char *root)
{
    FILE *f;
    char line[PATH_MAX + 64];
    double least = 0.0;

    if (NULL == proc_cgroup || NULL == root || NULL == (f = fopen(proc_cgroup, "r"))) {
        return 0.0;
    }
    while (NULL != fgets(line, sizeof line, f)) {
        double q = ob_line_quota(line, root);

        if (q > 0.0 && (0.0 == least || q < least)) {
            least = q;
        }
    }
    fclose(f);
    return least;
}
