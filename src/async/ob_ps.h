/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The inside of a parameter-server context (omnibatch_ps_* in omnibatch.h),
 * shared by the MPI files of the asynchronous mode: ps_context.c (options,
 * create, destroy, queries), ps_common.c (what they all ask of a context),
 * ps_server.c (the servers' loop), ps_worker.c
 * (pull and push), ps_wait.c (waiting asleep), ps_report.c (the run's
 * report and trace, server 0) and ps_save.c (a server's state in a file).
 * Not installed.
 *
 * The messages, all on the context's private duplicate communicator:
 *   worker -> server 0   OB_PS_TAG_PUSH   ob_ps_push_msg (a push, or the worker leaving)
 *   worker -> server s   OB_PS_TAG_GRAD   the gradient's range of server s
 *   server 0 -> worker   OB_PS_TAG_TASK   ob_ps_task_msg (the next task, or done)
 *   server s -> worker   OB_PS_TAG_MODEL  the model's range of server s
 *   server 0 -> server s OB_PS_TAG_ORDER  ob_ps_order_msg (what to do with the next push, or
 *                                         to save its state: the path follows, OB_PS_TAG_PATH)
 * A worker has at most one push in flight, so each server keeps one
 * receive posted per worker.  Server 0 decides every push (apply with a
 * factor, or drop) and orders the other servers to do the same in the same
 * order, so every range of the model goes through the same versions.
 */
#ifndef OB_PS_H
#define OB_PS_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "omnibatch.h"
#include "ob_api.h"
#include "ob_balance.h"
#include "ob_psreport.h"
#include "ob_slicer.h"
#include "ob_tally.h"
#include "ob_update.h"
#include "ob_writer.h"

enum {
    OB_PS_TAG_PUSH = 1,
    OB_PS_TAG_GRAD = 2,
    OB_PS_TAG_TASK = 3,
    OB_PS_TAG_MODEL = 4,
    OB_PS_TAG_ORDER = 5,
    OB_PS_TAG_PATH = 6
};

/** What a worker sends server 0. */
enum { OB_PS_MSG_PUSH = 1, OB_PS_MSG_LEAVE = 2 };

/** What server 0 orders the others to do (SAVE: the path follows, OB_PS_TAG_PATH). */
enum { OB_PS_ORDER_APPLY = 1, OB_PS_ORDER_LEAVE = 2, OB_PS_ORDER_END = 3, OB_PS_ORDER_SAVE = 4 };

/** Nanoseconds a rank naps between tests of the requests it waits for, while none has
 *  completed (a part of the answer arrived: it tests without napping until the rest has). */
#define OB_PS_NAP_NS 50000L

/** max_staleness = OMNIBATCH_PS_AUTO: this many times the workers. */
#define OB_PS_AUTO_STALENESS_PER_WORKER 4

typedef struct ob_ps_push_msg {
    int64_t kind;                /* OB_PS_MSG_* */
    int64_t read_version;        /* the version the gradient was computed on */
    int64_t count;               /* its samples */
    double compute_s;            /* the worker's compute of it */
    double wait_s;               /* the worker's wait for the answer to its last push (or pull) */
    double cycle_s;              /* the cycle the controller learns (ob_quota_cycle_learn()) */
} ob_ps_push_msg;

typedef struct ob_ps_task_msg {
    int64_t version;             /* of the model sent with it */
    int64_t epoch;
    int64_t start;
    int64_t count;
    int64_t done;
} ob_ps_task_msg;

typedef struct ob_ps_order_msg {
    int64_t kind;                /* OB_PS_ORDER_* */
    int64_t worker;
    int64_t done;                /* APPLY: the worker is done after this push (receive no more) */
    double scale;                /* APPLY: the step factor, 0 to drop */
} ob_ps_order_msg;

/** What a server keeps per worker. */
typedef struct ob_ps_peer {
    ob_ps_push_msg push;         /* server 0: its last push's header */
    ob_ps_task_msg task;         /* server 0: the task sent last */
    void *grad;                  /* the range's gradient (receive buffer) */
    void *model;                 /* the range of the model sent last (a copy: the model moves on) */
    int finished;                /* done, or left */
} ob_ps_peer;

/** Server 0's report and trace (ps_report.c). */
typedef struct ob_ps_report {
    int format;                  /* ob_report_format: OMNIBATCH_REPORT */
    int report_fd;               /* OMNIBATCH_REPORT_FILE.async, open; -1: stderr, or none */
    int report_created;
    char report_path[4096];
    ob_writer trace;             /* OMNIBATCH_TRACE.async */
    int tracing;
    char trace_path[4096];
} ob_ps_report;

/** A server's side of the context. */
typedef struct ob_ps_server {
    ob_ps_peer *peers;           /* workers */
    MPI_Request *push_reqs;      /* workers: server 0's posted receives of the next push */
    MPI_Request *grad_reqs;      /* workers: the posted receives of the next gradient's range */
    MPI_Request *sends;          /* 2 x workers: worker w's answer in flight, task (2w, server 0)
                                  * and model (2w + 1) */
    void *momentum;              /* the range's */
    ob_update_rule rule;
    long version;                /* the model's: updates applied (a restored run's included) */
    long pushes;                 /* this run's pushes: applied + dropped */
    long applied;
    long dropped;
    int started;                 /* the first serve sent the workers their model (and tasks) */
    int draining;                /* hand out no more slices (destroy before the end) */
    int finished_workers;
    int ended;                   /* every worker is done (servers s > 0: END ordered) */
    int save_rc;                 /* servers s > 0: a failed save server 0 ordered, for serve to return */
    uint64_t start_ns;
    uint64_t busy_ns;
    /* Server 0 only. */
    ob_tally *tally;             /* workers */
    ob_slicer slicer;
    ob_balance balance;
    ob_slice *flight;            /* workers: the slice each holds (count 0: none) */
    ob_ps_report report;
    /* Servers s > 0: the posted receive of server 0's next order. */
    MPI_Request order_req;
    ob_ps_order_msg order;
} ob_ps_server;

/** A worker's side of the context. */
typedef struct ob_ps_worker {
    int pulled;
    int done;
    long version;                /* of the model it holds */
    omnibatch_ps_task task;
    uint64_t start_ns;
    uint64_t got_ns;             /* its last task arrived */
    double last_wait_s;
    long pushes;
    double compute_s;
    double wait_s;
    int plan_quota;              /* OMNIBATCH_CPU_QUOTA: its cycles learnt on its CPU quota */
    double quota;                /* cores (0: none), read again every OB_API_QUOTA_REREAD_NS */
    uint64_t quota_read_ns;
    uint64_t cpu_ns;             /* the process's CPU when its cycle began; 0: not read */
    ob_quota_cycle cycles;
    MPI_Request *reqs;           /* 2 * (servers + 1) */
    ob_ps_push_msg push;
    ob_ps_task_msg task_msg;
} ob_ps_worker;

struct omnibatch_ps {
    MPI_Comm comm;               /* private duplicate */
    int rank;
    int nranks;
    int servers;
    int workers;
    int server_index;            /* s, or -1 on a worker */
    int worker_index;            /* w, or -1 on a server */
    void *params;                /* the caller's model, count elements */
    long count;
    MPI_Datatype type;           /* MPI_FLOAT or MPI_DOUBLE */
    size_t elem;
    long global_batch;
    long dataset_size;
    omnibatch_ps_options opt;    /* as validated, autos resolved */
    ob_update_rule rule;         /* the servers' update rule, from opt */
    long *first;                 /* servers + 1: server s holds [first[s], first[s + 1]) */
    long *lo;                    /* workers: every worker's bounds */
    long *hi;
    ob_ps_server *server;        /* NULL on a worker */
    ob_ps_worker *worker;        /* NULL on a server */
    ob_api_live live;            /* in the live handles (api_registry.c) */
};

/* ps_common.c */

/** \brief The check every function starts with: a live context, and of role \p role
 *         (-1: either), with \p fn's line. */
int ob_ps_check(const char *fn, const struct omnibatch_ps *ps, int role);

/** \brief Elements of server \p s's range. */
long ob_ps_range(const struct omnibatch_ps *ps, int s);

/** \brief The address of element \p i of buffer \p base. */
void *ob_ps_at(const struct omnibatch_ps *ps, const void *base, long i);

/** \brief Server 0's count of worker \p w. */
void ob_ps_worker_stats_of(const struct omnibatch_ps *ps, int w, omnibatch_ps_worker_stats *out);

/* ps_wait.c */

/**
 * \brief Wait for all \p n requests, the first \p nsend of them sends: naps of OB_PS_NAP_NS
 *        between tests only while every send is through and no receive has completed (with
 *        \p arrived: a part of the answer is in already), else tests without napping.
 * \return MPI_SUCCESS or MPI's error code.
 */
int ob_ps_wait_all(int n, MPI_Request *reqs, int nsend, int arrived);

/**
 * \brief Wait for any of \p n requests (\p *index: the one completed; MPI_UNDEFINED when all
 *        are MPI_REQUEST_NULL), moving the \p nsends sends \p sends on meanwhile: naps while
 *        none of them is in flight.
 */
int ob_ps_wait_any(int n, MPI_Request *reqs, int *index, MPI_Request *sends, int nsends);

/** \brief Complete \p n requests that are through already (an answer the worker took). */
int ob_ps_complete(int n, MPI_Request *reqs);

/** \brief Cancel and complete a posted receive (nothing when MPI_REQUEST_NULL). */
void ob_ps_cancel(MPI_Request *req);

/* ps_server.c */

/** \brief Set up a server's side (allocations only, no communication). */
int ob_ps_server_init(struct omnibatch_ps *ps);

/** \brief One call of omnibatch_ps_serve(): up to \p max_pushes pushes (0: to the end). */
int ob_ps_server_serve(struct omnibatch_ps *ps, long max_pushes, int *done);

/** \brief Answer every worker done and serve until all are (destroy before the end). */
int ob_ps_server_drain(struct omnibatch_ps *ps);

/** \brief Free a server's side (after the end). */
void ob_ps_server_free(struct omnibatch_ps *ps);

/* ps_worker.c */

/** \brief Set up a worker's side (allocations only). */
int ob_ps_worker_init(struct omnibatch_ps *ps);

/** \brief Receive the first task (omnibatch_ps_pull()). */
int ob_ps_worker_pull(struct omnibatch_ps *ps, omnibatch_ps_task *task);

/** \brief Push and receive the next task (omnibatch_ps_push()). */
int ob_ps_worker_push(struct omnibatch_ps *ps, const void *grad, omnibatch_ps_task *task);

/** \brief A worker that is not done tells the servers it leaves (taking its first task if it
 *         never pulled). */
int ob_ps_worker_leave(struct omnibatch_ps *ps);

/** \brief Free a worker's side. */
void ob_ps_worker_free(struct omnibatch_ps *ps);

/* ps_save.c */

/** \brief Save this server's state to \p path (server s > 0: "path.s"), for function \p fn. */
int ob_ps_save_own(struct omnibatch_ps *ps, const char *fn, const char *path);

/* ps_report.c */

/** \brief Server 0, at create: open the report's and the trace's files (OMNIBATCH_REPORT_FILE,
 *         OMNIBATCH_TRACE, each with ".async" appended), OMNIBATCH_ERR_IO with a line when one
 *         cannot be written. */
int ob_ps_report_open(struct omnibatch_ps *ps);

/** \brief Server 0: the trace's row of the push of worker \p w just taken. */
void ob_ps_report_push(struct omnibatch_ps *ps, int w, long tau, int applied, double scale);

/** \brief Server 0, at the end: the report written, the trace closed. */
void ob_ps_report_end(struct omnibatch_ps *ps);

/** \brief Server 0: close what a run that never ended left open (its files removed). */
void ob_ps_report_free(struct omnibatch_ps *ps);

#endif /* OB_PS_H */
