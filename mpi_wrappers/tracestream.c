/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace, streamed while the run goes (OMNIBATCH_TRACE).  Rank 0
 * writes the one CSV file through an ob_writer (src/observe/ob_writer.h);
 * every other rank sends its rows to rank 0 in small chunks, by
 * non-blocking point-to-point messages on the layer's private
 * communicator.  Why rank 0 writes, and not each rank its own rows:
 *   - one writer keeps one file correct on any file system: ranks
 *     appending to a shared file interleave safely only where O_APPEND is
 *     atomic (not on NFS), and a rank on another node may not see the path;
 *   - messages, unlike a gather every few steps, need no agreement on when
 *     to exchange: each rank detects its own steps, and a collective entered
 *     at different calls on different ranks would deadlock against the
 *     application's allreduces;
 *   - a chunk (OB_TS_CHUNK_ROWS rows, 2.5 KiB) stays under the eager limit of
 *     Open MPI's transports, so a send completes without rank 0 and rank 0
 *     receives without waiting for the sender.
 * A chunk goes when full or OB_WRITER_FLUSH_SECONDS old; rank 0 takes what
 * has arrived at each recognised call and each of its steps and writes its
 * buffer out at least every OB_WRITER_FLUSH_SECONDS.  Memory is bounded:
 * OB_TS_SLOTS chunks per rank; a row that finds every chunk still in flight
 * is counted as dropped.  At MPI_Finalize every rank sends what is left and
 * an end message (its dropped count); rank 0 receives until it has every
 * rank's end.  Everything runs under the layer's lock.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_error.h"
#include "ob_layer.h"
#include "ob_log.h"
#include "ob_timeline.h"
#include "ob_trace.h"
#include "ob_writer.h"

/* Rows per message: 64 rows of 40 bytes, under every eager limit. */
#define OB_TS_CHUNK_ROWS 64
/* Chunks a rank may have in flight (or filling). */
#define OB_TS_SLOTS 8
/* The tag of the trace's messages on the layer's private communicator. */
#define OB_TS_TAG 0x0b7e

typedef struct ob_ts_slot {
    ob_trace_row rows[OB_TS_CHUNK_ROWS];
    MPI_Request req;             /* MPI_REQUEST_NULL: free */
} ob_ts_slot;

static struct {
    int on;
    MPI_Comm comm;
    int rank, size;
    ob_writer *out;              /* rank 0: the CSV, or NULL */
    FILE *timeline;              /* rank 0: the timeline's file, or NULL */
    ob_timeline_stream tl;
    double tl_flushed;           /* when the timeline's file was last flushed (the layer's clock) */
    char (*hosts)[OB_TRACE_HOST_MAX]; /* rank 0: every rank's host, or NULL */
    int warned;
    long long dropped;
    /* other ranks: the chunk being filled and those in flight */
    ob_ts_slot slots[OB_TS_SLOTS];
    int cur;                     /* slot being filled, -1 when all are in flight */
    int n;                       /* rows in it */
    double since;                /* when its first row came */
} ob_ts;

static void ob_ts_check(int rc)
{
    if (OMNIBATCH_SUCCESS != rc && !ob_ts.warned) {
        ob_ts.warned = 1;
        ob_log_warn("trace: %s", ob_last_error());
    }
}

static const char *ob_ts_host(int rank)
{
    return NULL != ob_ts.hosts && rank >= 0 && rank < ob_ts.size ? ob_ts.hosts[rank] : NULL;
}

static void ob_ts_write_row(const ob_trace_row *row, int rank)
{
    if (NULL != ob_ts.out) {
        char line[OB_TRACE_ROW_MAX];
        size_t n = ob_trace_format(line, row, rank, ob_ts_host(rank));

        ob_ts_check(ob_writer_append(ob_ts.out, line, n));
    }
    if (NULL != ob_ts.timeline) {
        ob_timeline_stream_add(&ob_ts.tl, rank, row);
    }
}

/* Rank 0: the timeline reaches its file as often as the trace does. */
static void ob_ts_timeline_flush_due(double now)
{
    if (NULL != ob_ts.timeline && now - ob_ts.tl_flushed >= OB_WRITER_FLUSH_SECONDS) {
        ob_ts.tl_flushed = now;
        if (0 != fflush(ob_ts.timeline)) {
            ob_ts_check(ob_fail(OMNIBATCH_ERR_ARG, "timeline: write failed"));
        }
    }
}

/* Every rank's host name to rank 0 (a collective, at the start). */
static void ob_ts_gather_hosts(void)
{
    char mine[OB_TRACE_HOST_MAX] = "";
    int ok = 1;

    if (0 != gethostname(mine, sizeof mine - 1)) {
        mine[0] = '\0';
    }
    if (0 == ob_ts.rank) {
        ob_ts.hosts = malloc((size_t) ob_ts.size * sizeof *ob_ts.hosts);
        ok = NULL != ob_ts.hosts;
    }
    /* Rank 0 without memory receives nothing: the rows then have no host. */
    PMPI_Bcast(&ok, 1, MPI_INT, 0, ob_ts.comm);
    if (ok) {
        PMPI_Gather(mine, (int) sizeof mine, MPI_CHAR, NULL != ob_ts.hosts ? ob_ts.hosts[0] : NULL,
                    (int) sizeof mine, MPI_CHAR, 0, ob_ts.comm);
    }
    for (int r = 0; NULL != ob_ts.hosts && r < ob_ts.size; r++) {
        ob_ts.hosts[r][OB_TRACE_HOST_MAX - 1] = '\0';
    }
}

/* One message that arrived at rank 0: rows, or a rank's end. */
static int ob_ts_receive(MPI_Message *msg, const MPI_Status *st)
{
    ob_trace_row rows[OB_TS_CHUNK_ROWS];
    int bytes = 0;

    PMPI_Get_count(st, MPI_BYTE, &bytes);
    if ((int) sizeof(long long) == bytes) {
        long long dropped = 0;

        PMPI_Mrecv(&dropped, 1, MPI_LONG_LONG, msg, MPI_STATUS_IGNORE);
        ob_ts.dropped += dropped;
        return 1;
    }
    PMPI_Mrecv(rows, (int) sizeof rows, MPI_BYTE, msg, MPI_STATUS_IGNORE);
    for (int k = 0; k < bytes / (int) sizeof rows[0]; k++) {
        ob_ts_write_row(&rows[k], st->MPI_SOURCE);
    }
    return 0;
}

/* Rank 0: take every message that has arrived; count the ends. */
static int ob_ts_drain(void)
{
    int ends = 0;

    for (;;) {
        MPI_Message msg;
        MPI_Status st;
        int flag = 0;

        if (MPI_SUCCESS != PMPI_Improbe(MPI_ANY_SOURCE, OB_TS_TAG, ob_ts.comm, &flag, &msg, &st)
            || !flag) {
            return ends;
        }
        ends += ob_ts_receive(&msg, &st);
    }
}

/* Another rank: a free slot to fill, or -1. */
static int ob_ts_free_slot(void)
{
    for (int s = 0; s < OB_TS_SLOTS; s++) {
        int done = 0;

        if (MPI_REQUEST_NULL == ob_ts.slots[s].req) {
            return s;
        }
        if (MPI_SUCCESS == PMPI_Test(&ob_ts.slots[s].req, &done, MPI_STATUS_IGNORE) && done) {
            return s;
        }
    }
    return -1;
}

static void ob_ts_send(double now)
{
    ob_ts_slot *slot = &ob_ts.slots[ob_ts.cur];

    if (MPI_SUCCESS != PMPI_Isend(slot->rows, ob_ts.n * (int) sizeof slot->rows[0], MPI_BYTE, 0,
                                  OB_TS_TAG, ob_ts.comm, &slot->req)) {
        ob_ts.dropped += ob_ts.n;
        slot->req = MPI_REQUEST_NULL;
    }
    ob_ts.n = 0;
    ob_ts.since = now;
    ob_ts.cur = ob_ts_free_slot();
}

void ob_ts_start(MPI_Comm comm, int rank, int size, ob_writer *out, FILE *timeline,
                 double origin)
{
    memset(&ob_ts, 0, sizeof ob_ts);
    ob_ts.comm = comm;
    ob_ts.rank = rank;
    ob_ts.size = size;
    ob_ts.out = 0 == rank ? out : NULL;
    ob_ts_gather_hosts();
    if (0 == rank && NULL != timeline) {
        const char **names = NULL != ob_ts.hosts ? malloc((size_t) size * sizeof *names) : NULL;

        for (int r = 0; NULL != names && r < size; r++) {
            names[r] = ob_ts.hosts[r];
        }
        ob_ts.timeline = timeline;
        ob_ts_check(ob_timeline_stream_begin(&ob_ts.tl, timeline, size, names, origin));
        free(names);
    }
    for (int s = 0; s < OB_TS_SLOTS; s++) {
        ob_ts.slots[s].req = MPI_REQUEST_NULL;
    }
    ob_ts.cur = 0;
    ob_ts.on = 1;
}

void ob_ts_tick(double now)
{
    if (!ob_ts.on) {
        return;
    }
    if (0 == ob_ts.rank) {
        ob_ts_drain();
        if (NULL != ob_ts.out) {
            ob_ts_check(ob_writer_flush_due(ob_ts.out, now));
        }
        ob_ts_timeline_flush_due(now);
    } else if (ob_ts.cur >= 0 && ob_ts.n > 0 && now - ob_ts.since >= OB_WRITER_FLUSH_SECONDS) {
        ob_ts_send(now);
    }
}

void ob_ts_row(const ob_trace_row *row, double now)
{
    if (!ob_ts.on) {
        return;
    }
    if (0 == ob_ts.rank) {
        ob_ts_write_row(row, 0);
        ob_ts_tick(now);
        return;
    }
    if (ob_ts.cur < 0) {
        ob_ts.cur = ob_ts_free_slot();
    }
    if (ob_ts.cur < 0) {
        ob_ts.dropped++;
        return;
    }
    if (0 == ob_ts.n) {
        ob_ts.since = now;
    }
    ob_ts.slots[ob_ts.cur].rows[ob_ts.n++] = *row;
    if (OB_TS_CHUNK_ROWS == ob_ts.n || now - ob_ts.since >= OB_WRITER_FLUSH_SECONDS) {
        ob_ts_send(now);
    }
}

long long ob_ts_finish(double now)
{
    long long dropped;

    if (!ob_ts.on) {
        return 0;
    }
    if (0 == ob_ts.rank) {
        int ends = ob_ts_drain();

        /* Every other rank ends with one message, after all its rows
         * (messages from one rank arrive in order). */
        while (ends < ob_ts.size - 1) {
            MPI_Message msg;
            MPI_Status st;

            if (MPI_SUCCESS != PMPI_Mprobe(MPI_ANY_SOURCE, OB_TS_TAG, ob_ts.comm, &msg, &st)) {
                break;
            }
            ends += ob_ts_receive(&msg, &st);
        }
        if (NULL != ob_ts.out) {
            ob_ts_check(ob_writer_close(ob_ts.out, now));
            ob_ts.dropped += ob_ts.out->lost;
        }
        if (NULL != ob_ts.timeline) {
            ob_ts_check(ob_timeline_stream_end(&ob_ts.tl));
            if (0 != fclose(ob_ts.timeline)) {
                ob_ts_check(ob_fail(OMNIBATCH_ERR_ARG, "timeline: write failed"));
            }
            ob_ts.timeline = NULL;
        }
        free(ob_ts.hosts);
        ob_ts.hosts = NULL;
    } else {
        long long mine;

        if (ob_ts.cur >= 0 && ob_ts.n > 0) {
            ob_ts_send(now);
        }
        for (int s = 0; s < OB_TS_SLOTS; s++) {
            PMPI_Wait(&ob_ts.slots[s].req, MPI_STATUS_IGNORE);
        }
        mine = ob_ts.dropped + ob_ts.n;
        PMPI_Send(&mine, 1, MPI_LONG_LONG, 0, OB_TS_TAG, ob_ts.comm);
    }
    dropped = ob_ts.dropped;
    ob_ts.on = 0;
    return dropped;
}
