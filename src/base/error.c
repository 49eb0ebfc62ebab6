/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Status codes and the per-thread detail line (see ob_error.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "ob_error.h"

/* One line per thread: a failure on a background thread (a Horovod-style
 * communication thread) must not overwrite the main thread's message. */
static __thread char ob_error_line[512];

int ob_fail(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ob_error_line, sizeof ob_error_line, fmt, ap);
    va_end(ap);
    return code;
}

const char *ob_last_error(void)
{
    return ob_error_line;
}

void ob_clear_error(void)
{
    ob_error_line[0] = '\0';
}

OMNIBATCH_EXPORT const char *omnibatch_strerror(int code)
{
    switch (code) {
    case OMNIBATCH_SUCCESS:
        return "success";
    case OMNIBATCH_ERR_ARG:
        return "invalid argument";
    case OMNIBATCH_ERR_CONFIG:
        return "invalid OMNIBATCH_* setting";
    case OMNIBATCH_ERR_INFEASIBLE:
        return "bounds cannot hold the global batch";
    case OMNIBATCH_ERR_NOMEM:
        return "out of memory";
    case OMNIBATCH_ERR_MPI:
        return "MPI call failed";
    case OMNIBATCH_ERR_STATE:
        return "call out of order";
    case OMNIBATCH_ERR_DISAGREE:
        return "ranks computed different plans";
    case OMNIBATCH_ERR_DEVICE:
        return "device buffer cannot be reduced";
    case OMNIBATCH_ERR_IO:
        return "cannot write an output file";
    default:
        return "unknown status code";
    }
}

OMNIBATCH_EXPORT const char *omnibatch_last_error(void)
{
    return ob_error_line;
}

OMNIBATCH_EXPORT unsigned omnibatch_get_version(void)
{
    return OMNIBATCH_VERSION;
}
