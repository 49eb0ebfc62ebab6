/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A server's state in a file (omnibatch_ps_save(), omnibatch_ps_restore()),
 * the blob of ob_psstate.h.  The workers hold nothing a restart needs (their
 * model and task come from the servers), so a restarted run's workers
 * simply pull.  Server 0 saves between its omnibatch_ps_serve() calls and
 * orders the other servers to save: each does when it comes to the order,
 * after the same pushes, to "path.s".  Each server restores its own file.
 * Written aside and renamed, so a file is whole or absent.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_ps.h"
#include "ob_psstate.h"

/* This server's file: path itself for server 0, "path.s" for the others. */
static int ob_ps_state_path(const struct omnibatch_ps *ps, const char *fn, const char *path, char *out,
                            size_t size)
{
    int n = 0 == ps->server_index ? snprintf(out, size, "%s", path)
                                  : snprintf(out, size, "%s.%d", path, ps->server_index);

    if (n < 0 || (size_t) n >= size) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: path='%s': too long", fn, path);
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_ps_state_head(const struct omnibatch_ps *ps, ob_psstate_head *h)
{
    const int s = ps->server_index;

    memset(h, 0, sizeof *h);
    h->elem = (uint32_t) ps->elem;
    h->count = ps->count;
    h->first = ps->first[s];
    h->range = ob_ps_range(ps, s);
    h->servers = ps->servers;
    h->workers = ps->workers;
    h->global_batch = ps->global_batch;
    h->dataset_size = ps->dataset_size;
    h->seed = ps->opt.seed;
    h->updates = ps->server->version;
    h->data = 0 == s;
}

/* Server 0's part: the slices in flight (handed out again after a restore, so not counted as
 * handed), where the cursor stands, the batches and the cycle models. */
static int ob_ps_state_data(const struct omnibatch_ps *ps, ob_psstate_head *h, ob_psstate_data *d,
                            ob_slice **flight)
{
    const ob_ps_server *sv = ps->server;
    int n = 0;

    *flight = calloc((size_t) ps->workers, sizeof **flight);
    if (NULL == *flight) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_ps_save: no memory for %d slices", ps->workers);
    }
    for (int w = 0; w < ps->workers; w++) {
        if (sv->flight[w].count > 0) {
            (*flight)[n++] = sv->flight[w];
        }
    }
    h->epoch = sv->slicer.epoch;
    h->cursor = sv->slicer.cursor;
    h->handed = sv->slicer.handed - n;
    h->flight = n;
    d->plan = sv->balance.plan;
    d->est = sv->balance.est;
    d->flight = *flight;
    return OMNIBATCH_SUCCESS;
}

static int ob_ps_write_file(const char *fn, const char *file, const void *buf, size_t size)
{
    char aside[4200];
    FILE *f;
    int bad;

    snprintf(aside, sizeof aside, "%s.tmp", file);
    f = fopen(aside, "wb");
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot write '%s': %s", fn, aside, strerror(errno));
    }
    bad = 1 != fwrite(buf, size, 1, f);
    bad = 0 != fclose(f) || bad;
    if (bad || 0 != rename(aside, file)) {
        int err = errno;

        remove(aside);
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot write '%s': %s", fn, file, strerror(err));
    }
    return OMNIBATCH_SUCCESS;
}

int ob_ps_save_own(struct omnibatch_ps *ps, const char *fn, const char *path)
{
    char file[4096];
    ob_psstate_head h;
    ob_psstate_data d;
    ob_slice *flight = NULL;
    void *buf;
    int rc = ob_ps_state_path(ps, fn, path, file, sizeof file);

    ob_ps_state_head(ps, &h);
    memset(&d, 0, sizeof d);
    if (OMNIBATCH_SUCCESS == rc && h.data) {
        rc = ob_ps_state_data(ps, &h, &d, &flight);
    }
    buf = OMNIBATCH_SUCCESS == rc ? malloc(ob_psstate_size(&h)) : NULL;
    if (OMNIBATCH_SUCCESS == rc && NULL == buf) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a state of %zu bytes", fn, ob_psstate_size(&h));
    }
    if (OMNIBATCH_SUCCESS == rc) {
        ob_psstate_pack(buf, &h, ob_ps_at(ps, ps->params, h.first), ps->server->momentum, &d);
        rc = ob_ps_write_file(fn, file, buf, ob_psstate_size(&h));
    }
    free(buf);
    free(flight);
    return rc;
}

/* Server 0 orders the other servers to save too: each does when it comes to the order, after
 * the same pushes as server 0, so the files hold one version of the model. */
static int ob_ps_order_save(struct omnibatch_ps *ps, const char *fn, const char *path)
{
    ob_ps_order_msg o;

    memset(&o, 0, sizeof o);
    o.kind = OB_PS_ORDER_SAVE;
    for (int s = 1; s < ps->servers; s++) {
        int mpi_rc = PMPI_Send(&o, (int) sizeof o, MPI_BYTE, s, OB_PS_TAG_ORDER, ps->comm);

        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = PMPI_Send(path, (int) strlen(path) + 1, MPI_CHAR, s, OB_PS_TAG_PATH, ps->comm);
        }
        if (MPI_SUCCESS != mpi_rc) {
            return ob_api_mpi_fail(mpi_rc, fn, "MPI_Send");
        }
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_ps_save(omnibatch_ps_t ps, const char *path)
{
    const char *fn = "omnibatch_ps_save";
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_SERVER);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (0 != ps->server_index) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: rank %d is server %d: server 0 saves, and orders the other "
                       "servers to save with it", fn, ps->rank, ps->server_index);
    }
    if (NULL == path || '\0' == path[0] || strlen(path) >= 4000) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: path=%s: expected a file name (shorter than 4000 bytes)", fn,
                       NULL == path ? "NULL" : '\0' == path[0] ? "\"\"" : "(too long)");
    }
    if (ps->server->ended) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: every worker is done: the other servers take no more "
                       "orders (save between omnibatch_ps_serve() calls, before the end)", fn);
    }
    rc = ob_ps_save_own(ps, fn, path);
    return OMNIBATCH_SUCCESS == rc ? ob_ps_order_save(ps, fn, path) : rc;
}

/* The whole file into *buf (malloc'ed). */
static int ob_ps_read_file(const char *fn, const char *file, void **buf, size_t *size)
{
    FILE *f = fopen(file, "rb");
    long n;

    *buf = NULL;
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot read '%s': %s", fn, file, strerror(errno));
    }
    n = 0 == fseek(f, 0, SEEK_END) ? ftell(f) : -1;
    if (n < 0 || 0 != fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot read '%s': not a regular file", fn, file);
    }
    *buf = malloc((size_t) n + 1);
    *size = (size_t) n;
    if (NULL == *buf || (n > 0 && 1 != fread(*buf, (size_t) n, 1, f))) {
        fclose(f);
        free(*buf);
        *buf = NULL;
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot read '%s' (%ld bytes)", fn, file, n);
    }
    fclose(f);
    return OMNIBATCH_SUCCESS;
}

/* The state must be this server's, of this run's shape: each number named where it differs. */
static int ob_ps_state_matches(const struct omnibatch_ps *ps, const char *fn, const char *file,
                               const ob_psstate_head *got)
{
    ob_psstate_head want;
    const struct {
        const char *name;
        int64_t mine;
        int64_t theirs;
    } rows[] = {
        { "count", ps->count, got->count },
        { "element size", (int64_t) ps->elem, (int64_t) got->elem },
        { "servers", ps->servers, got->servers },
        { "workers", ps->workers, got->workers },
        { "global_batch", ps->global_batch, got->global_batch },
        { "dataset_size", ps->dataset_size, got->dataset_size },
        { "seed", (int64_t) ps->opt.seed, (int64_t) got->seed },
    };

    ob_ps_state_head(ps, &want);
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        if (rows[k].mine != rows[k].theirs) {
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: '%s' is a state of %s %lld: this context has %lld",
                           fn, file, rows[k].name, (long long) rows[k].theirs, (long long) rows[k].mine);
        }
    }
    if (want.first != got->first || want.range != got->range || want.data != got->data) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: '%s' is the state of another server (elements %lld..%lld): "
                       "this is server %d", fn, file, (long long) got->first,
                       (long long) (got->first + got->range - 1), ps->server_index);
    }
    return OMNIBATCH_SUCCESS;
}

/* Server 0's part into the slicer and the batches; nothing changed on failure. */
static int ob_ps_state_resume(struct omnibatch_ps *ps, const ob_psstate_head *h, const long *plan,
                              const ob_estimator *est, const ob_slice *flight)
{
    ob_ps_server *sv = ps->server;
    long *before = malloc((size_t) ps->workers * sizeof *before);
    int rc;

    if (NULL == before) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_ps_restore: no memory for %d batches", ps->workers);
    }
    memcpy(before, sv->balance.plan, (size_t) ps->workers * sizeof *before);
    rc = ob_balance_set_plan(&sv->balance, plan);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_slicer_resume(&sv->slicer, (long) h->epoch, (long) h->cursor, (long) h->handed, flight,
                              (int) h->flight);
        if (OMNIBATCH_SUCCESS != rc) {
            memcpy(sv->balance.plan, before, (size_t) ps->workers * sizeof *before);
        }
    }
    if (OMNIBATCH_SUCCESS == rc) {
        memcpy(sv->balance.est, est, (size_t) ps->workers * sizeof *est);
    }
    free(before);
    return rc;
}

static int ob_ps_restore_blob(struct omnibatch_ps *ps, const char *fn, const char *file, const void *buf,
                              size_t size)
{
    ob_psstate_head h;
    const void *params, *momentum;
    long *plan = calloc((size_t) ps->workers, sizeof *plan);
    ob_estimator *est = calloc((size_t) ps->workers, sizeof *est);
    ob_slice *flight = NULL;
    int rc = NULL == plan || NULL == est ? ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory", fn) : OMNIBATCH_SUCCESS;

    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_psstate_check(buf, size, &h);
        if (OMNIBATCH_SUCCESS != rc) {
            char why[512];

            /* The line is this thread's buffer, which ob_fail() writes. */
            snprintf(why, sizeof why, "%s", ob_last_error());
            rc = ob_fail(rc, "%s: '%s': %s", fn, file, why);
        }
    }
    /* Of this run's shape: server 0's part then fits the arrays above. */
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_ps_state_matches(ps, fn, file, &h);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_psstate_copy_data(buf, &h, plan, est, &flight);
    }
    if (OMNIBATCH_SUCCESS == rc && h.data) {
        rc = ob_ps_state_resume(ps, &h, plan, est, flight);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        ob_psstate_parts(buf, &h, &params, &momentum);
        memcpy(ob_ps_at(ps, ps->params, h.first), params, (size_t) h.range * ps->elem);
        memcpy(ps->server->momentum, momentum, (size_t) h.range * ps->elem);
        ps->server->version = (long) h.updates;
    }
    free(plan);
    free(est);
    free(flight);
    return rc;
}

OMNIBATCH_EXPORT int omnibatch_ps_restore(omnibatch_ps_t ps, const char *path)
{
    const char *fn = "omnibatch_ps_restore";
    char file[4096];
    void *buf = NULL;
    size_t size = 0;
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_SERVER);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == path || '\0' == path[0]) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: path=%s: expected a file name", fn, NULL == path ? "NULL" : "\"\"");
    }
    if (ps->server->started) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: the server has served already: restore before the first "
                       "omnibatch_ps_serve()", fn);
    }
    rc = ob_ps_state_path(ps, fn, path, file, sizeof file);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_ps_read_file(fn, file, &buf, &size);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_ps_restore_blob(ps, fn, file, buf, size);
    }
    free(buf);
    return rc;
}
