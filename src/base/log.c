/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Messages to the user, prefixed with the tool's name (see ob_log.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "ob_log.h"

static int ob_log_rank = -1;
static int ob_log_level = 0;

void ob_log_set_rank(int rank)
{
    ob_log_rank = rank;
}

void ob_log_set_debug(int level)
{
    ob_log_level = level;
}

int ob_log_debug_level(void)
{
    return ob_log_level;
}

/* One fprintf per line so that lines of concurrent ranks (and threads) do
 * not interleave mid-line on a shared stderr. */
static void ob_log_line(const char *kind, const char *fmt, va_list ap)
{
    char body[1024];
    char rank[32] = "";

    vsnprintf(body, sizeof body, fmt, ap);
    if (ob_log_rank >= 0) {
        snprintf(rank, sizeof rank, "[rank %d] ", ob_log_rank);
    }
    fprintf(stderr, "omnibatch: %s%s%s\n", rank, kind, body);
}

void ob_log_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ob_log_line("", fmt, ap);
    va_end(ap);
}

void ob_log_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ob_log_line("warning: ", fmt, ap);
    va_end(ap);
}

void ob_log_warn_rank0(const char *fmt, ...)
{
    va_list ap;

    if (ob_log_rank > 0) {
        return;
    }
    va_start(ap, fmt);
    ob_log_line("warning: ", fmt, ap);
    va_end(ap);
}

void ob_log_debug(int level, const char *fmt, ...)
{
    va_list ap;

    if (level > ob_log_level) {
        return;
    }
    va_start(ap, fmt);
    ob_log_line("debug: ", fmt, ap);
    va_end(ap);
}
