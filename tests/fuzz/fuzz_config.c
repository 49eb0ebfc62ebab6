/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * libFuzzer target: the OMNIBATCH_* parser (src/base/config.c).  The input
 * is an environment, one "NAME=value" per line.  Besides the sanitizers'
 * findings it checks what the parser promises: a success leaves every
 * setting within its documented range, a failure leaves the settings as
 * they were and says why in one line that names the variable.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_config.h"
#include "ob_error.h"

/* Enough for every variable of the table twice, and unknown ones. */
#define FUZZ_MAX_ENTRIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_no_warning(void *ctx, const char *name, const char *suggestion)
{
    (void) ctx;
    (void) name;
    (void) suggestion;
}

static int fuzz_in(double x, double lo, double hi)
{
    return x >= lo && x <= hi;
}

static int fuzz_terminated(const char *s, size_t size)
{
    return NULL != memchr(s, '\0', size);
}

/* Every range ob_config.h states, and the rules between settings. */
static void fuzz_check_ranges(const ob_config *c)
{
    const double limit = (double) OB_CONFIG_BATCH_LIMIT;
    int ok = 1;

    ok = ok && (0 == c->enable || 1 == c->enable) && (0 == c->weight || 1 == c->weight)
         && (0 == c->verify || 1 == c->verify);
    ok = ok && c->gain > 0.0 && c->gain <= 1.0 && fuzz_in(c->deadband, 0.0, 0.5)
         && fuzz_in(c->forget, 0.5, 1.0);
    ok = ok && fuzz_in((double) c->period, 1.0, OB_CONFIG_STEPS_LIMIT)
         && fuzz_in((double) c->warmup, 0.0, OB_CONFIG_STEPS_LIMIT);
    ok = ok && fuzz_in((double) c->min_batch, 0.0, limit)
         && (0 == c->max_batch || fuzz_in((double) c->max_batch, (double) c->min_batch, limit))
         && fuzz_in((double) c->granularity, 1.0, limit)
         && (0 == c->global_batch || fuzz_in((double) c->global_batch, (double) c->min_batch, limit))
         && (0 == c->max_batch || c->max_batch >= c->granularity);
    ok = ok && c->min_bytes >= 1 && c->min_bytes <= OB_CONFIG_BYTES_LIMIT
         && fuzz_in((double) c->calls_per_step, 0.0, OB_CONFIG_CALLS_LIMIT)
         && fuzz_in((double) c->debug, 0.0, OB_CONFIG_DEBUG_LIMIT);
    ok = ok && fuzz_terminated(c->report_file, sizeof c->report_file)
         && fuzz_terminated(c->trace_file, sizeof c->trace_file)
         && ('\0' == c->trace_file[0] || 0 != strcmp(c->trace_file, c->report_file));
    ok = ok && NULL != ob_config_report_name(c->report) && NULL != ob_config_prior_name(c->prior)
         && NULL != ob_config_convention_name(c->convention);
    if (!ok) {
        abort();
    }
}

/* One line, naming an OMNIBATCH_* variable. */
static void fuzz_check_failure(const ob_config *before, const ob_config *after)
{
    const char *why = ob_last_error();

    if (0 != memcmp(before, after, sizeof *before) || '\0' == why[0] || NULL != strchr(why, '\n')
        || NULL == strstr(why, "OMNIBATCH_")) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *envp[FUZZ_MAX_ENTRIES + 1];
    ob_config before;
    ob_config cfg;
    size_t n = 0;
    int rc;

    if (NULL == text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    /* Lines become entries; a NUL inside one ends it, as in a real environ. */
    for (char *line = text; NULL != line && n < FUZZ_MAX_ENTRIES;) {
        char *end = strchr(line, '\n');

        if (NULL != end) {
            *end = '\0';
        }
        envp[n++] = line;
        line = NULL != end ? end + 1 : NULL;
    }
    envp[n] = NULL;

    ob_config_defaults(&cfg);
    before = cfg;
    ob_clear_error();
    rc = ob_config_from_env(&cfg, envp, fuzz_no_warning, NULL);
    if (OMNIBATCH_SUCCESS == rc) {
        fuzz_check_ranges(&cfg);
    } else if (OMNIBATCH_ERR_CONFIG == rc) {
        fuzz_check_failure(&before, &cfg);
    } else {
        abort();
    }
    free(text);
    return 0;
}
