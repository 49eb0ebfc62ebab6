/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Fortran entry points.  Open MPI's Fortran bindings (mpif.h and the `mpi`
 * module) call PMPI_* directly, so the C wrappers never see a Fortran
 * code's calls: these take their place, under each name the MPI library
 * itself exports (MPI_X, mpi_x, mpi_x_, mpi_x__), convert the handles, and
 * share the C path.  MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS(ES)_IGNORE
 * arrive as the addresses of common blocks; they are recognised by address:
 * for Open MPI the blocks libmpi defines (mpi_fortran_in_place_ ...), for
 * the MPICH family the addresses its Fortran library records in
 * MPIR_F_MPI_IN_PLACE ... once mpirinitf_() has run (which MPICH's own
 * mpi_init_ would have done: these wrappers do it in its place).  The
 * names are generated from wrappers.spec (genwrappers.awk).
 *
 * Open MPI's mpi_f08 module has procedures of its own (MPI_X_f08, gfortran's
 * mpi_x_f08_), which call Open MPI's internals: they get a fifth alias of
 * the same implementation.  They pass each handle type, TYPE(MPI_Comm) and
 * the like, by reference as its one INTEGER member, and TYPE(MPI_Status)
 * has the Fortran status's layout: the arguments of mpif.h's procedures,
 * except that an absent OPTIONAL ierror arrives as NULL (which ob_f_set()
 * allows).  MPICH's mpi_f08 (descriptor-based, mpi_x_f08ts_) is not
 * covered.
 */
#include "config.h"

#include <stdlib.h>

#include "ob_layer.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as C int arrays");

/* gfortran's default LOGICAL: 4 bytes, .TRUE. is 1 (Open MPI's
 * OMPI_FORTRAN_VALUE_TRUE for gfortran).  The wrappers start c_flag from the
 * program's flag and write it back as the MPI's own binding does.  Open
 * MPI's hands the program's flag to PMPI_Test* as it is, so the flag holds
 * whatever the C call left in it, whatever the call returns (.TRUE. with
 * MPI_ERR_IN_STATUS); MPICH's writes it only when the call succeeds. */
typedef MPI_Fint ob_flogical;
#if defined(MPICH_VERSION)
#define OB_F_FLAG_WRITTEN(rc) (MPI_SUCCESS == (rc))
#else
#define OB_F_FLAG_WRITTEN(rc) 1
#endif

/* Integers in a Fortran status (MPI_STATUS_SIZE). */
#define OB_F_STATUS_SIZE ((int) (sizeof(MPI_Status) / sizeof(MPI_Fint)))

/* A Fortran call of this many requests converts them on the stack. */
#define OB_F_STACK 16

#if defined(OPEN_MPI)
/* The sentinels' common blocks, under every mangling a Fortran compiler
 * may use; weak, so that the names libmpi lacks are simply NULL. */
#define OB_F_SENTINEL(lower, upper)                                                               \
    extern int lower __attribute__((weak));                                                       \
    extern int lower##_ __attribute__((weak));                                                    \
    extern int lower##__ __attribute__((weak));                                                   \
    extern int upper __attribute__((weak));                                                       \
    static int ob_is_##lower(const void *p)                                                       \
    {                                                                                             \
        return NULL != p && (p == (void *) &lower || p == (void *) &lower##_                      \
                             || p == (void *) &lower##__ || p == (void *) &upper);                \
    }

OB_F_SENTINEL(mpi_fortran_in_place, MPI_FORTRAN_IN_PLACE)
OB_F_SENTINEL(mpi_fortran_bottom, MPI_FORTRAN_BOTTOM)
OB_F_SENTINEL(mpi_fortran_status_ignore, MPI_FORTRAN_STATUS_IGNORE)
OB_F_SENTINEL(mpi_fortran_statuses_ignore, MPI_FORTRAN_STATUSES_IGNORE)
#elif defined(MPICH_VERSION)
/* MPICH's Fortran library (libmpichfort) keeps the sentinels' addresses in
 * these, filled by mpirinitf_() on its first call; weak, as a C-only
 * program does not load it (and then no Fortran call reaches us). */
extern int MPIR_F_NeedInit __attribute__((weak));
extern void *MPIR_F_MPI_IN_PLACE __attribute__((weak));
extern void *MPIR_F_MPI_BOTTOM __attribute__((weak));
extern void mpirinitf_(void) __attribute__((weak));

/* What MPICH's own bindings do before reading a sentinel. */
static void ob_f_mpich_sync(void)
{
    if (NULL != &MPIR_F_NeedInit && MPIR_F_NeedInit && NULL != mpirinitf_) {
        mpirinitf_();
        MPIR_F_NeedInit = 0;
    }
}

static int ob_is_mpi_fortran_in_place(const void *p)
{
    ob_f_mpich_sync();
    return NULL != p && NULL != &MPIR_F_MPI_IN_PLACE && p == MPIR_F_MPI_IN_PLACE;
}

static int ob_is_mpi_fortran_bottom(const void *p)
{
    ob_f_mpich_sync();
    return NULL != p && NULL != &MPIR_F_MPI_BOTTOM && p == MPIR_F_MPI_BOTTOM;
}

/* MPI_F_STATUS(ES)_IGNORE are libmpich's own C globals, set by the same
 * mpirinitf_(). */
static int ob_is_mpi_fortran_status_ignore(const void *p)
{
    ob_f_mpich_sync();
    return NULL != p && p == (const void *) MPI_F_STATUS_IGNORE;
}

static int ob_is_mpi_fortran_statuses_ignore(const void *p)
{
    ob_f_mpich_sync();
    return NULL != p && p == (const void *) MPI_F_STATUSES_IGNORE;
}
#else
#error "fortran.c knows the Fortran sentinels of Open MPI and of the MPICH family only"
#endif

static void ob_f_set(MPI_Fint *ierr, int rc)
{
    if (NULL != ierr) {
        *ierr = (MPI_Fint) rc;
    }
}

static void *ob_f_buffer(void *p, int send)
{
    if (send && ob_is_mpi_fortran_in_place(p)) {
        return MPI_IN_PLACE;
    }
    return ob_is_mpi_fortran_bottom(p) ? MPI_BOTTOM : p;
}

/* ------------------------------------------------------------ lifecycle */

static void ob_f_init(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;

    ob_f_set(ierr, ob_init(&argc, &argv));
}

static void ob_f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    int c_provided = MPI_THREAD_SINGLE;
    int rc = ob_init_thread(&argc, &argv, (int) *required, &c_provided);

    if (MPI_SUCCESS == rc) {
        *provided = (MPI_Fint) c_provided;
    }
    ob_f_set(ierr, rc);
}

static void ob_f_finalize(MPI_Fint *ierr)
{
    ob_f_set(ierr, ob_finalize());
}

static void ob_f_pcontrol(MPI_Fint *level)
{
    PMPI_Pcontrol((int) *level);
    ob_layer_pcontrol((int) *level);
}

/* ---------------------------------------------------------- collectives */

static void ob_f_allreduce(char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                           MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    ob_f_set(ierr, ob_allreduce(ob_f_buffer(sendbuf, 1), ob_f_buffer(recvbuf, 0), (int) *count,
                                PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm)));
}

static void ob_f_iallreduce(char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                            MPI_Fint *op, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request c_req;
    int rc = ob_iallreduce(ob_f_buffer(sendbuf, 1), ob_f_buffer(recvbuf, 0), (int) *count,
                           PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm), &c_req);

    if (MPI_SUCCESS == rc) {
        *request = PMPI_Request_c2f(c_req);
    }
    ob_f_set(ierr, rc);
}

/* ------------------------------------------------------------ completion */

static void ob_f_wait(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request c_req = PMPI_Request_f2c(*request);
    MPI_Status c_status;
    int ignore = ob_is_mpi_fortran_status_ignore(status);
    int rc = ob_wait(&c_req, ignore ? MPI_STATUS_IGNORE : &c_status);

    if (MPI_SUCCESS == rc) {
        *request = PMPI_Request_c2f(c_req);
        if (!ignore) {
            PMPI_Status_c2f(&c_status, status);
        }
    }
    ob_f_set(ierr, rc);
}

static void ob_f_test(MPI_Fint *request, ob_flogical *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request c_req = PMPI_Request_f2c(*request);
    MPI_Status c_status;
    int c_flag = (int) *flag;
    int ignore = ob_is_mpi_fortran_status_ignore(status);
    int rc = ob_test(&c_req, &c_flag, ignore ? MPI_STATUS_IGNORE : &c_status);

    if (OB_F_FLAG_WRITTEN(rc)) {
        *flag = (ob_flogical) c_flag;
    }
    if (MPI_SUCCESS == rc) {
        *request = PMPI_Request_c2f(c_req);
        if (c_flag && !ignore) {
            PMPI_Status_c2f(&c_status, status);
        }
    }
    ob_f_set(ierr, rc);
}

/* Fortran request and status arrays as C ones: on the stack for a few,
 * allocated beyond. */
typedef struct ob_f_arrays {
    int count;                   /* as the program gave it: MPI judges a negative one */
    int n;                       /* entries converted: count, or 0 when it is negative */
    MPI_Request *req;
    MPI_Status *st;              /* MPI_STATUSES_IGNORE when ignored */
    MPI_Request sreq[OB_F_STACK];
    MPI_Status sst[OB_F_STACK];
} ob_f_arrays;

static void ob_f_arrays_drop(ob_f_arrays *a)
{
    if (a->req != a->sreq) {
        free(a->req);
    }
    if (a->st != a->sst && MPI_STATUSES_IGNORE != a->st) {
        free(a->st);
    }
}

static int ob_f_arrays_get(ob_f_arrays *a, int n, const MPI_Fint *requests, const MPI_Fint *statuses,
                           int with_statuses)
{
    int ignore = !with_statuses || ob_is_mpi_fortran_statuses_ignore(statuses);

    a->count = n;
    a->n = n > 0 ? n : 0;
    a->req = a->n <= OB_F_STACK ? a->sreq : malloc((size_t) a->n * sizeof *a->req);
    a->st = ignore ? MPI_STATUSES_IGNORE
          : a->n <= OB_F_STACK ? a->sst : malloc((size_t) a->n * sizeof *a->st);
    if (NULL == a->req || (!ignore && NULL == a->st)) {
        ob_f_arrays_drop(a);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < a->n; i++) {
        a->req[i] = PMPI_Request_f2c(requests[i]);
    }
    return MPI_SUCCESS;
}

/* Hand back the requests (completed ones are now MPI_REQUEST_NULL) and the
 * first \p nstatus statuses: all of them for Waitall/Testall, the completed
 * ones for Waitsome/Testsome, which fill statuses[0..outcount). */
static void ob_f_arrays_put(ob_f_arrays *a, MPI_Fint *requests, MPI_Fint *statuses, int nstatus)
{
    for (int i = 0; i < a->n; i++) {
        requests[i] = PMPI_Request_c2f(a->req[i]);
    }
    if (MPI_STATUSES_IGNORE != a->st) {
        for (int k = 0; k < nstatus; k++) {
            PMPI_Status_c2f(&a->st[k], &statuses[k * OB_F_STATUS_SIZE]);
        }
    }
    ob_f_arrays_drop(a);
}

static void ob_f_waitall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    ob_f_arrays a;
    int rc = ob_f_arrays_get(&a, (int) *count, requests, statuses, 1);

    if (MPI_SUCCESS != rc) {
        ob_f_set(ierr, rc);
        return;
    }
    rc = ob_waitall(a.count, a.req, a.st);
    if (MPI_SUCCESS == rc || MPI_ERR_IN_STATUS == rc) {
        ob_f_arrays_put(&a, requests, statuses, a.n);
    } else {
        ob_f_arrays_drop(&a);
    }
    ob_f_set(ierr, rc);
}

static void ob_f_testall(MPI_Fint *count, MPI_Fint *requests, ob_flogical *flag, MPI_Fint *statuses,
                         MPI_Fint *ierr)
{
    ob_f_arrays a;
    int c_flag = (int) *flag;
    int rc = ob_f_arrays_get(&a, (int) *count, requests, statuses, 1);

    if (MPI_SUCCESS != rc) {
        ob_f_set(ierr, rc);
        return;
    }
    rc = ob_testall(a.count, a.req, &c_flag, a.st);
    if ((MPI_SUCCESS == rc || MPI_ERR_IN_STATUS == rc) && c_flag) {
        ob_f_arrays_put(&a, requests, statuses, a.n);
    } else {
        ob_f_arrays_drop(&a);
    }
    if (OB_F_FLAG_WRITTEN(rc)) {
        *flag = (ob_flogical) c_flag;
    }
    ob_f_set(ierr, rc);
}

static void ob_f_any(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, ob_flogical *flag,
                     MPI_Fint *status, MPI_Fint *ierr)
{
    ob_f_arrays a;
    MPI_Status c_status;
    int ignore = ob_is_mpi_fortran_status_ignore(status);
    int c_index = MPI_UNDEFINED, c_flag = NULL == flag ? 1 : (int) *flag;
    int rc = ob_f_arrays_get(&a, (int) *count, requests, NULL, 0);

    if (MPI_SUCCESS != rc) {
        ob_f_set(ierr, rc);
        return;
    }
    if (NULL == flag) {
        rc = ob_waitany(a.count, a.req, &c_index, ignore ? MPI_STATUS_IGNORE : &c_status);
    } else {
        rc = ob_testany(a.count, a.req, &c_index, &c_flag, ignore ? MPI_STATUS_IGNORE : &c_status);
    }
    if (MPI_SUCCESS == rc) {
        for (int i = 0; i < a.n; i++) {
            requests[i] = PMPI_Request_c2f(a.req[i]);
        }
        /* Fortran indexes from 1. */
        *index = MPI_UNDEFINED == c_index ? MPI_UNDEFINED : (MPI_Fint) (c_index + 1);
        if (c_flag && !ignore) {
            PMPI_Status_c2f(&c_status, status);
        }
    }
    if (NULL != flag && OB_F_FLAG_WRITTEN(rc)) {
        *flag = (ob_flogical) c_flag;
    }
    ob_f_arrays_drop(&a);
    ob_f_set(ierr, rc);
}

static void ob_f_waitany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                         MPI_Fint *ierr)
{
    ob_f_any(count, requests, index, NULL, status, ierr);
}

static void ob_f_testany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, ob_flogical *flag,
                         MPI_Fint *status, MPI_Fint *ierr)
{
    ob_f_any(count, requests, index, flag, status, ierr);
}

static void ob_f_some(int wait, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                      MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    ob_f_arrays a;
    int c_out = 0;
    int rc = ob_f_arrays_get(&a, (int) *incount, requests, statuses, 1);

    if (MPI_SUCCESS != rc) {
        ob_f_set(ierr, rc);
        return;
    }
    if (wait) {
        rc = ob_waitsome(a.count, a.req, &c_out, indices, a.st);
    } else {
        rc = ob_testsome(a.count, a.req, &c_out, indices, a.st);
    }
    if (MPI_SUCCESS == rc || MPI_ERR_IN_STATUS == rc) {
        int done = MPI_UNDEFINED == c_out ? 0 : c_out;

        ob_f_arrays_put(&a, requests, statuses, done);
        for (int k = 0; k < done; k++) {
            indices[k] += 1;
        }
        *outcount = (MPI_Fint) c_out;
    } else {
        ob_f_arrays_drop(&a);
    }
    ob_f_set(ierr, rc);
}

static void ob_f_waitsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                          MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    ob_f_some(1, incount, requests, outcount, indices, statuses, ierr);
}

static void ob_f_testsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                          MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    ob_f_some(0, incount, requests, outcount, indices, statuses, ierr);
}

/* The four names Open MPI exports for each implementation (wrappers.spec). */
#include "fortran.inc"
