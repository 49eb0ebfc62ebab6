/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The lifecycle wrappers.  The layer is off until PMPI_Init returns and
 * reports before PMPI_Finalize, so its own gathers run while MPI is whole.
 * MPI_Init_thread passes the requested level through untouched: the code
 * gets exactly what it asked the MPI library for.
 */
#include "config.h"

#include "ob_layer.h"

int ob_init(int *argc, char ***argv)
{
    int rc;

    ob_layer_preinit();
    rc = PMPI_Init(argc, argv);
    if (MPI_SUCCESS == rc) {
        ob_layer_postinit(MPI_THREAD_SINGLE);
    }
    return rc;
}

int ob_init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc;

    ob_layer_preinit();
    rc = PMPI_Init_thread(argc, argv, required, provided);
    if (MPI_SUCCESS == rc) {
        ob_layer_postinit(*provided);
    }
    return rc;
}

int ob_finalize(void)
{
    ob_layer_finalize();
    return PMPI_Finalize();
}

OB_WRAPPER int MPI_Init(int *argc, char ***argv)
{
    return ob_init(argc, argv);
}

OB_WRAPPER int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return ob_init_thread(argc, argv, required, provided);
}

OB_WRAPPER int MPI_Finalize(void)
{
    return ob_finalize();
}

OB_WRAPPER int MPI_Pcontrol(const int level, ...)
{
    int rc = PMPI_Pcontrol(level);

    ob_layer_pcontrol(level);
    return rc;
}
