/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The failures every file of the API reports alike (ob_api.h): a leaf, so
 * that api.c and api_step.c depend on it and not on each other.
 */
#include "config.h"

#include <mpi.h>

#include "ob_api.h"
#include "ob_error.h"

int ob_api_mpi_fail(int mpi_rc, const char *fn, const char *call)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;

    if (MPI_SUCCESS != PMPI_Error_string(mpi_rc, text, &len)) {
        text[0] = '\0';
    }
    return ob_fail(OMNIBATCH_ERR_MPI, "%s: %s failed with MPI error %d: %s", fn, call, mpi_rc, text);
}

int ob_api_finalized(const char *fn)
{
    return ob_fail(OMNIBATCH_ERR_STATE, "%s: MPI is finalized: call it between MPI_Init and "
                   "MPI_Finalize (omnibatch_destroy before MPI_Finalize)", fn);
}
