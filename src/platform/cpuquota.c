/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under (see ob_cpuquota.h).
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_cpuquota.h"

/* The first line of \p dir/\p name, without its newline; 0 when it cannot be read. */
static int ob_read_line(const char *dir, const char *name, char *buf, size_t size)
{
    char path[PATH_MAX];
    FILE *f;
    int ok;

    if ((size_t) snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path ||
        NULL == (f = fopen(path, "r"))) {
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

/* The smaller of two quotas, 0 standing for none. */
static double ob_least(double a, double b)
{
    return a > 0.0 && (0.0 == b || a < b) ? a : b;
}

/* The quota of one cgroup directory, in cores; 0 when it sets none. */
static double ob_dir_quota(const char *dir, int v2)
{
    char line[128], line2[128];
    long quota = 0, period = 0;
    char *sp;

    if (v2) {
        /* "max 100000" (no quota) or "40000 100000". */
        if (!ob_read_line(dir, "cpu.max", line, sizeof line) || NULL == (sp = strchr(line, ' '))) {
            return 0.0;
        }
        *sp = '\0';
        snprintf(line2, sizeof line2, "%s", sp + 1);
    } else if (!ob_read_line(dir, "cpu.cfs_quota_us", line, sizeof line) ||
               !ob_read_line(dir, "cpu.cfs_period_us", line2, sizeof line2)) {
        return 0.0;
    }
    if (!ob_parse_long(line, &quota) || !ob_parse_long(line2, &period)) {
        return 0.0;
    }
    /* v1's -1 is "no quota". */
    return quota > 0 && period > 0 ? (double) quota / (double) period : 0.0;
}

/* The least quota over \p base + \p rel and its ancestors up to \p base;
 * the directory that sets it into \p where (\p size bytes; NULL: not
 * wanted), left as it was when none does. */
static double ob_walk_quota(const char *base, const char *rel, int v2, char *where, size_t size)
{
    char dir[PATH_MAX];
    double least = 0.0;

    if ((size_t) snprintf(dir, sizeof dir, "%s%s", base, rel) >= sizeof dir) {
        return 0.0;
    }
    for (;;) {
        double q = ob_dir_quota(dir, v2);
        char *slash;

        if (q > 0.0 && (0.0 == least || q < least) && NULL != where) {
            snprintf(where, size, "%s", dir);
        }
        least = ob_least(q, least);
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

/* The quota one line of /proc/self/cgroup sets ("N:controllers:/path"), 0
 * when none; the directory that sets it into \p where (ob_walk_quota). */
static double ob_line_quota(char *line, const char *root, char *where, size_t size)
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
        return ob_walk_quota(root, rel, 1, where, size);
    }
    if (!ob_lists(c1 + 1, "cpu")) {
        return 0.0;
    }
    for (size_t k = 0; k < sizeof v1_mounts / sizeof v1_mounts[0] && 0.0 == q; k++) {
        char base[PATH_MAX];

        if ((size_t) snprintf(base, sizeof base, "%s/%s", root, v1_mounts[k]) < sizeof base) {
            q = ob_walk_quota(base, rel, 0, where, size);
        }
    }
    return q;
}

double ob_cpu_quota_where(const char *proc_cgroup, const char *root, char *dir, size_t size)
{
    FILE *f;
    char line[PATH_MAX + 64];
    double least = 0.0;

    if (NULL != dir && size > 0) {
        dir[0] = '\0';
    }
    if (NULL == proc_cgroup || NULL == root || NULL == (f = fopen(proc_cgroup, "r"))) {
        return 0.0;
    }
    while (NULL != fgets(line, sizeof line, f)) {
        char here[PATH_MAX] = "";
        double q = ob_line_quota(line, root, here, sizeof here);

        if (q > 0.0 && (0.0 == least || q < least) && NULL != dir && size > 0) {
            snprintf(dir, size, "%s", here);
        }
        least = ob_least(q, least);
    }
    fclose(f);
    return least;
}

double ob_cpu_quota(const char *proc_cgroup, const char *root)
{
    return ob_cpu_quota_where(proc_cgroup, root, NULL, 0);
}

/* A whole non-negative number of at most 18 digits at \p s, up to the end
 * of its line; 0 otherwise. */
static int ob_parse_count(const char *s, int64_t *out)
{
    int64_t v = 0;
    int digits = 0;

    for (; *s >= '0' && *s <= '9' && digits < 18; s++, digits++) {
        v = 10 * v + (*s - '0');
    }
    if (0 == digits || ('\0' != *s && '\n' != *s)) {
        return 0;
    }
    *out = v;
    return 1;
}

int ob_cpu_throttle_parse(const char *text, ob_cpu_throttle *t)
{
    int64_t periods = -1, throttled = -1, time = -1;
    double unit = 0.0;

    if (NULL == text || NULL == t) {
        return 0;
    }
    for (const char *p = text; '\0' != *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = strcspn(p, "\n");
        int64_t v;

        if (NULL != sp && (size_t) (sp - p) < len && ob_parse_count(sp + 1, &v)) {
            size_t klen = (size_t) (sp - p);

            if (10 == klen && 0 == strncmp(p, "nr_periods", klen)) {
                periods = v;
            } else if (12 == klen && 0 == strncmp(p, "nr_throttled", klen)) {
                throttled = v;
            } else if (14 == klen && 0 == strncmp(p, "throttled_time", klen)) {
                time = v;          /* v1: nanoseconds */
                unit = 1e-9;
            } else if (14 == klen && 0 == strncmp(p, "throttled_usec", klen)) {
                time = v;          /* v2: microseconds */
                unit = 1e-6;
            }
        }
        p += len;
        p += '\n' == *p;
    }
    if (periods < 0 || throttled < 0 || time < 0) {
        return 0;
    }
    t->periods = periods;
    t->throttled = throttled;
    t->throttled_s = (double) time * unit;
    return 1;
}
