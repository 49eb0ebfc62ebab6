/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How much CPU a rank got (see ob_cpuuse.h).
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ob_cpuquota.h"
#include "ob_cpuuse.h"

/* Longest cpu.stat read: v1 has five lines, v2 up to a dozen (its
 * pressure-stall and burst keys), each well under 40 bytes. */
#define OB_CPUUSE_STAT_MAX 1024

static double ob_clock_s(clockid_t clock)
{
    struct timespec ts;

    if (0 != clock_gettime(clock, &ts)) {
        return (double) NAN;
    }
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The whole text of the file open as \p fd, read again from its start
 * (procfs and cgroupfs files are generated at each read from offset 0);
 * 0 when it cannot be read. */
static int ob_pread_text(int fd, char *buf, size_t size)
{
    ssize_t n;

    if (fd < 0) {
        return 0;
    }
    n = pread(fd, buf, size - 1, 0);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    return 1;
}

/* schedstat: "run_ns delay_ns timeslices". */
static void ob_read_schedstat(int fd, ob_cpu_sample *s)
{
    char buf[128];
    unsigned long long run, delay;

    if (ob_pread_text(fd, buf, sizeof buf) && 2 == sscanf(buf, "%llu %llu", &run, &delay)) {
        s->run_s = (double) run * 1e-9;
        s->delay_s = (double) delay * 1e-9;
    }
}

static void ob_read_throttle(int fd, ob_cpu_sample *s)
{
    char buf[OB_CPUUSE_STAT_MAX];
    ob_cpu_throttle t;

    if (ob_pread_text(fd, buf, sizeof buf) && ob_cpu_throttle_parse(buf, &t)) {
        s->periods = t.periods;
        s->throttled = t.throttled;
        s->throttled_s = t.throttled_s;
    }
}

void ob_cpu_probe_open(ob_cpu_probe *p, const char *proc_cgroup, const char *root, const char *schedstat)
{
    char dir[PATH_MAX], stat[PATH_MAX + 16];

    p->schedstat_fd = NULL != schedstat ? open(schedstat, O_RDONLY | O_CLOEXEC) : -1;
    p->stat_fd = -1;
    p->quota = ob_cpu_quota_where(proc_cgroup, root, dir, sizeof dir);
    if (p->quota > 0.0 && (size_t) snprintf(stat, sizeof stat, "%s/cpu.stat", dir) < sizeof stat) {
        p->stat_fd = open(stat, O_RDONLY | O_CLOEXEC);
    }
}

void ob_cpu_probe_open_self(ob_cpu_probe *p)
{
    ob_cpu_probe_open(p, "/proc/self/cgroup", "/sys/fs/cgroup", "/proc/self/schedstat");
}

void ob_cpu_probe_read(const ob_cpu_probe *p, ob_cpu_sample *s)
{
    struct rusage ru;

    s->wall_s = ob_clock_s(CLOCK_MONOTONIC);
    s->cpu_s = ob_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    s->nivcsw = s->nvcsw = -1;
    if (0 == getrusage(RUSAGE_SELF, &ru)) {
        s->nivcsw = ru.ru_nivcsw;
        s->nvcsw = ru.ru_nvcsw;
    }
    s->run_s = s->delay_s = -1.0;
    s->periods = s->throttled = -1;
    s->throttled_s = -1.0;
    ob_read_schedstat(p->schedstat_fd, s);
    ob_read_throttle(p->stat_fd, s);
}

void ob_cpu_probe_close(ob_cpu_probe *p)
{
    if (p->schedstat_fd >= 0) {
        close(p->schedstat_fd);
    }
    if (p->stat_fd >= 0) {
        close(p->stat_fd);
    }
    p->schedstat_fd = p->stat_fd = -1;
}

/* b - a of a counter known (>= 0) in both and not gone back; -1 otherwise. */
static int64_t ob_count_between(int64_t a, int64_t b)
{
    return a >= 0 && b >= a ? b - a : -1;
}

static double ob_time_between(double a, double b)
{
    return a >= 0.0 && b >= a ? b - a : -1.0;
}

void ob_cpu_use_between(const ob_cpu_sample *a, const ob_cpu_sample *b, double quota, ob_cpu_use *u)
{
    u->wall_s = b->wall_s > a->wall_s ? b->wall_s - a->wall_s : 0.0;
    u->cpu_s = b->cpu_s > a->cpu_s ? b->cpu_s - a->cpu_s : 0.0;
    u->nivcsw = ob_count_between(a->nivcsw, b->nivcsw);
    u->nvcsw = ob_count_between(a->nvcsw, b->nvcsw);
    u->run_s = ob_time_between(a->run_s, b->run_s);
    u->delay_s = u->run_s >= 0.0 ? ob_time_between(a->delay_s, b->delay_s) : -1.0;
    u->run_s = u->delay_s >= 0.0 ? u->run_s : -1.0;
    u->quota = quota > 0.0 ? quota : 0.0;
    u->periods = ob_count_between(a->periods, b->periods);
    u->throttled = ob_count_between(a->throttled, b->throttled);
    u->throttled_s = ob_time_between(a->throttled_s, b->throttled_s);
    if (u->periods < 0 || u->throttled < 0 || u->throttled_s < 0.0) {
        u->periods = u->throttled = -1;
        u->throttled_s = -1.0;
    }
}

static double ob_share(double part, double whole)
{
    return part >= whole ? 1.0 : part / whole;
}

double ob_cpu_use_cpu_share(const ob_cpu_use *u)
{
    return u->wall_s > 0.0 ? u->cpu_s / u->wall_s : (double) NAN;
}

double ob_cpu_use_throttled_share(const ob_cpu_use *u)
{
    /* v1 and v2 sum the stopped time over the CPUs the cgroup ran on: a
     * group stopped on two CPUs at once for a second counts two. */
    return u->wall_s > 0.0 && u->throttled_s >= 0.0 ? ob_share(u->throttled_s, u->wall_s) : -1.0;
}

double ob_cpu_use_held_share(const ob_cpu_use *u)
{
    return u->wall_s > 0.0 && u->delay_s >= 0.0 ? ob_share(u->delay_s, u->wall_s) : -1.0;
}

double ob_cpu_use_wait_share(const ob_cpu_use *u)
{
    /* A throttled cgroup's stopped time is in the run delay too: it is the
     * quota's, not the neighbours'. */
    double stopped = u->throttled_s > 0.0 ? u->throttled_s : 0.0;
    double waited = u->delay_s > stopped ? u->delay_s - stopped : 0.0;
    double wanted = u->run_s + waited;

    return u->run_s >= 0.0 && u->delay_s >= 0.0 && wanted > 0.0 ? ob_share(waited, wanted) : -1.0;
}
