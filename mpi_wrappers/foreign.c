/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A library built for one MPI preloaded into a program of another.  Both
 * libmpi are then loaded, the program's first in the search order, so every
 * PMPI_* call of the layer reaches the program's MPI with handles of the
 * build's (an Open MPI communicator is a pointer, an MPICH one an int):
 * MPICH answers "Invalid communicator", Open MPI crashes.  Nor can the
 * wrappers pass the calls through safely, since a handle would be cut to or
 * read as the other ABI's width.  So the first MPI_Init asks the program's
 * MPI who it is (MPI_Get_library_version may be called before MPI_Init and
 * takes no handle) and, if it is not the family the library was built for,
 * ends the process with one line naming the preload and the build to use.
 */
/* dladdr(), to name the preloaded file. */
#define _GNU_SOURCE 1
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "ob_layer.h"
#include "ob_log.h"

/* Larger than MPI_MAX_LIBRARY_VERSION_STRING of either family (Open MPI
 * 256, MPICH 8192): the other MPI writes up to its own maximum. */
#define OB_FOREIGN_VERSION_MAX 16384

/* The family a version string belongs to: "openmpi", "mpich" (MPICH and
 * its ABI family), or NULL when the string names neither. */
static const char *ob_foreign_family(const char *version)
{
    static const char *const mpich_family[] = { "MPICH", "Intel(R) MPI", "MVAPICH" };

    if (NULL != strstr(version, "Open MPI")) {
        return "openmpi";
    }
    for (size_t k = 0; k < sizeof mpich_family / sizeof mpich_family[0]; k++) {
        if (NULL != strstr(version, mpich_family[k])) {
            return "mpich";
        }
    }
    return NULL;
}

#if defined(OPEN_MPI)
#define OB_BUILD_FAMILY "openmpi"
#define OB_OTHER_LIBRARY "libomnibatch-mpich.so (configure MPICC=mpicc.mpich)"
#else
#define OB_BUILD_FAMILY "mpich"
#define OB_OTHER_LIBRARY "libomnibatch.so (the Open MPI build)"
#endif

void ob_foreign_check(int env_rank)
{
    static char version[OB_FOREIGN_VERSION_MAX];
    const char *family;
    char *eol;
    int len = 0;
    Dl_info self;

    if (MPI_SUCCESS != PMPI_Get_library_version(version, &len)) {
        return;
    }
    version[sizeof version - 1] = '\0';
    family = ob_foreign_family(version);
    if (NULL == family || 0 == strcmp(family, OB_BUILD_FAMILY)) {
        return;
    }
    eol = strchr(version, '\n');
    if (NULL != eol) {
        *eol = '\0';
    }
    for (char *c = version; '\0' != *c; c++) {
        if ('\t' == *c) {
            *c = ' ';
        }
    }
    if (env_rank <= 0) {
        const char *path = 0 != dladdr((void *) ob_foreign_check, &self) && NULL != self.dli_fname
                         ? self.dli_fname : "libomnibatch";

        ob_log_error("LD_PRELOAD=%s is built for %s, but this program runs %s: preload %s instead",
                     path, OB_MPI_VENDOR, version, OB_OTHER_LIBRARY);
    }
    exit(EXIT_FAILURE);
}
