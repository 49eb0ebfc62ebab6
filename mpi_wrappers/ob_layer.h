/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The PMPI layer's internal interface.  Three parts, as in mpiP:
 *   - lifecycle wrappers (lifecycle.c): MPI_Init, MPI_Init_thread,
 *     MPI_Finalize, MPI_Pcontrol;
 *   - thin per-call wrappers (collectives.c, completion.c, fortran.c): each
 *     tests a few handles and, for a call it does not recognise, calls
 *     PMPI_X at once -- no lock, no allocation, no clock read;
 *   - the layer's state feeding the MPI-free parts of src/ (step
 *     detection, report, trace): its start (setup.c), hot path (layer.c,
 *     requests.c, weight.c) and end (finalize.c), sharing ob_layer_state.h.
 * Every wrapper calls PMPI_X exactly once and returns its code unchanged.
 * The layer's own traffic is PMPI_* on a communicator duplicated from
 * MPI_COMM_WORLD at init.
 */
#ifndef OB_LAYER_H
#define OB_LAYER_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <mpi.h>

#include "omnibatch.h"

/* The library is built with -fvisibility=hidden: a wrapper without this
 * would silently stop interposing. */
#define OB_WRAPPER OMNIBATCH_EXPORT

#define OB_LIKELY(x) __builtin_expect(!!(x), 1)
#define OB_UNLIKELY(x) __builtin_expect(!!(x), 0)

/** What the fast paths read; written by the lifecycle wrappers only. */
typedef struct ob_layer_gate {
    int recognise;               /* recognise gradient allreduces (measure or weight) */
    int measure;                 /* record them (MPI_Pcontrol switches this) */
    size_t min_bytes;            /* least payload of a gradient allreduce */
    long min_count;              /* least element count that can reach min_bytes (8-byte elements) */
} ob_layer_gate;

extern ob_layer_gate ob_gate;

/** Set while this thread runs the layer's own code: wrappers then pass straight through. */
extern __thread int ob_in_layer;

/**
 * \brief Bytes per element when (type, op, count) makes a gradient allreduce
 *        (float or double, MPI_SUM, payload >= OMNIBATCH_MIN_BYTES), else 0.
 *        A few compares of handles: the whole cost of an unrecognised call.
 */
static inline int ob_gradient_elem(MPI_Datatype type, MPI_Op op, int count)
{
    int elem;

    /* Small messages (a loss, a counter) are the common passthrough and the
     * ones whose latency a few instructions can show in: one compare, before
     * any handle is looked at. */
    if (!__atomic_load_n(&ob_gate.recognise, __ATOMIC_RELAXED) || count < ob_gate.min_count ||
        MPI_SUM != op) {
        return 0;
    }
    if (MPI_FLOAT == type || MPI_REAL == type || MPI_REAL4 == type) {
        elem = 4;
    } else if (MPI_DOUBLE == type || MPI_DOUBLE_PRECISION == type || MPI_REAL8 == type) {
        elem = 8;
    } else {
        return 0;
    }
    if (count <= 0 || (size_t) count * (size_t) elem < ob_gate.min_bytes || ob_in_layer) {
        return 0;
    }
    return elem;
}

/* -------------------------------------------------------------- foreign.c */

/**
 * \brief Before PMPI_Init: end the process with one line (printed where
 *        \p env_rank is 0 or unknown) if the program's MPI is not the family
 *        this library was built for.
 */
void ob_foreign_check(int env_rank);

/* ------------------------------------------- setup.c, layer.c, finalize.c */

/** \brief Before PMPI_Init: read the settings; a bad value ends the process after PMPI_Init
 *         (see setup.c). */
void ob_layer_preinit(void);

/** \brief After a successful PMPI_Init / PMPI_Init_thread: start the layer. */
void ob_layer_postinit(int thread_provided);

/** \brief Before PMPI_Finalize: stop, gather, report, trace, free. */
void ob_layer_finalize(void);

/** \brief MPI_Pcontrol: 0 stops measuring, >= 1 resumes. */
void ob_layer_pcontrol(int level);

/** \brief Seconds since the layer started (monotonic). */
double ob_layer_clock(void);

/** \brief Record a recognised allreduce that blocked from t0 to t1. */
void ob_layer_record_call(MPI_Comm comm, int count, int elem, double t0, double t1, long batch);

/**
 * \brief Is a gradient allreduce entered at \p t0 to be weighted?  Only while measuring
 *        (MPI_Pcontrol), when it is one of the learned per-step pattern's calls in a whole
 *        step (ob_stepdetect_expects()), on a communicator of more than one rank congruent
 *        with the context's \p context (of generation \p generation, ob_active.h).
 */
int ob_layer_weighs(MPI_Comm comm, int count, int elem, double t0, uint64_t context,
                    unsigned long generation);

/** \brief Record time blocked completing recognised requests on \p comm. */
void ob_layer_record_wait(uint64_t comm, double t0, double t1);

/* --------------------------------------------------------------- weight.c */

/**
 * \brief Prepare a recognised gradient for weighting (OMNIBATCH_WEIGHT).
 *
 * With an API context publishing the running step, and for a call that
 * ob_layer_weighs() accepts, scales this rank's data
 * by b_i / B (mean) or P * b_i / B (divide-by-P): an MPI_IN_PLACE buffer in
 * place, otherwise into \p *scratch (grown to fit, never shrunk), which the
 * caller then sends; the user's send buffer is never written.
 *
 * \param[in,out] sendbuf   the buffer to send: replaced by the scratch when scaled there.
 * \param[in,out] scratch, cap  the caller's reusable buffer.
 * \param[in] t0            when the call was entered (ob_layer_clock()).
 * \param[out] batch        the running step's local batch, or -1.
 * \return 0 on success (also when nothing was scaled); -1 when scratch could not be had
 *         (the call then passes through unweighted, with a warning once).
 */
int ob_weight_prepare(const void **sendbuf, void *recvbuf, int count, int elem, MPI_Comm comm,
                      double t0, void **scratch, size_t *cap, long *batch);

/** \brief This thread's scratch for blocking calls. */
void ob_weight_thread_scratch(void ***scratch, size_t **cap);

/** \brief Free the calling thread's scratch (at MPI_Finalize). */
void ob_weight_cleanup(void);

/* ------------------------------------------------------------ tracestream.c */

struct ob_writer;
struct ob_trace_row;

/**
 * \brief Start streaming the trace on \p comm (the layer's own), a collective: rank 0 gathers
 *        the ranks' host names, writes the CSV to \p out (NULL: none) and the timeline to
 *        \p timeline (NULL: none; closed by ob_ts_finish()), time 0 at \p origin (wall clock).
 */
void ob_ts_start(MPI_Comm comm, int rank, int size, struct ob_writer *out, FILE *timeline,
                 double origin);

/** \brief One step's row of this rank (called under the layer's lock, like the two below). */
void ob_ts_row(const struct ob_trace_row *row, double now);

/** \brief Send a chunk that waited long enough; rank 0: take what arrived, write out when due. */
void ob_ts_tick(double now);

/** \brief At MPI_Finalize, on every rank: send or receive what is left, close the file.
 *  \return rank 0: the rows dropped over all ranks (else this rank's). */
long long ob_ts_finish(double now);

/* ---------------------------------------------------------- collectives.c */

/** \brief MPI_Allreduce as the C and Fortran entry points share it. */
int ob_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm);

/** \brief MPI_Iallreduce as the C and Fortran entry points share it. */
int ob_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request *request);

/* ------------------------------------------------------------ lifecycle.c */

/** \brief MPI_Init for C and Fortran. */
int ob_init(int *argc, char ***argv);

/** \brief MPI_Init_thread for C and Fortran: \p required goes to PMPI unchanged. */
int ob_init_thread(int *argc, char ***argv, int required, int *provided);

/** \brief MPI_Finalize for C and Fortran. */
int ob_finalize(void);

/* ----------------------------------------------------------- completion.c */

/** \brief The Wait/Test family for C and Fortran. */
int ob_wait(MPI_Request *request, MPI_Status *status);
int ob_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int ob_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int ob_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[]);
int ob_test(MPI_Request *request, int *flag, MPI_Status *status);
int ob_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int ob_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int ob_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[]);

#endif /* OB_LAYER_H */
