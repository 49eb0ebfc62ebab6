/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The OMNIBATCH_* settings: every variable with good and bad values, the
 * exact error lines, unknown names, the rules between variables, the
 * process-wide parse and the configuration page's table (docs/configuration.md).
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ob_check_run.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"

extern char **environ;

/* Environment entries are char *, as in environ. */
#define E(literal) ((char *) (literal))

/* The variables ob_config.h documents; the table must hold exactly these. */
static const char *const documented_names[] = {
    "OMNIBATCH_ENABLE", "OMNIBATCH_GAIN", "OMNIBATCH_DEADBAND", "OMNIBATCH_FORGET",
    "OMNIBATCH_PERIOD", "OMNIBATCH_REACT", "OMNIBATCH_CHUNKS", "OMNIBATCH_CHUNK_FLOOR",
    "OMNIBATCH_WARMUP", "OMNIBATCH_MIN_BATCH", "OMNIBATCH_MAX_BATCH",
    "OMNIBATCH_GRANULARITY", "OMNIBATCH_GLOBAL_BATCH", "OMNIBATCH_MIN_BYTES",
    "OMNIBATCH_CALLS_PER_STEP", "OMNIBATCH_WEIGHT", "OMNIBATCH_CONVENTION", "OMNIBATCH_REPORT",
    "OMNIBATCH_REPORT_FILE", "OMNIBATCH_TRACE", "OMNIBATCH_TIMELINE", "OMNIBATCH_PROFILE",
    "OMNIBATCH_PRIOR", "OMNIBATCH_PLANNER", "OMNIBATCH_WAIT", "OMNIBATCH_NODE_SUM", "OMNIBATCH_CPU_QUOTA",
    "OMNIBATCH_POOL",
    "OMNIBATCH_VERIFY", "OMNIBATCH_DEBUG", "OMNIBATCH_LIBRARY",
};
#define N_DOCUMENTED (sizeof documented_names / sizeof documented_names[0])

/* ---- helpers ---------------------------------------------------------------- */

typedef struct warnings {
    int n;
    char name[8][128];
    char suggestion[8][128];     /* "" for NULL */
} warnings;

static void record_warn(void *ctx, const char *name, const char *suggestion)
{
    warnings *w = ctx;

    if (w->n < 8) {
        snprintf(w->name[w->n], sizeof w->name[0], "%s", name);
        snprintf(w->suggestion[w->n], sizeof w->suggestion[0], "%s", NULL != suggestion ? suggestion : "");
    }
    w->n++;
}

static int config_equal(const ob_config *a, const ob_config *b)
{
    return a->enable == b->enable && a->gain == b->gain && a->deadband == b->deadband
           && a->forget == b->forget && a->period == b->period && a->warmup == b->warmup
           && a->min_batch == b->min_batch && a->max_batch == b->max_batch
           && a->granularity == b->granularity && a->global_batch == b->global_batch
           && a->min_bytes == b->min_bytes && a->calls_per_step == b->calls_per_step
           && a->weight == b->weight && a->convention == b->convention && a->report == b->report
           && 0 == strcmp(a->report_file, b->report_file)
           && 0 == strcmp(a->trace_file, b->trace_file)
           && 0 == strcmp(a->timeline_file, b->timeline_file) && a->prior == b->prior
           && a->planner == b->planner && a->wait == b->wait && a->node_sum == b->node_sum
           && a->cpu_quota == b->cpu_quota && a->pool == b->pool
           && 0 == strcmp(a->profile_file, b->profile_file) && a->react == b->react
           && a->chunks == b->chunks && a->chunk_floor == b->chunk_floor
           && a->verify == b->verify && a->debug == b->debug
           && 0 == strcmp(a->library, b->library);
}

/* Parse one NAME=value over *cfg, unknown names into *w (may be NULL). */
static int parse1(ob_config *cfg, const char *name, const char *value, warnings *w)
{
    static char entry[PATH_MAX + 256];
    char *envp[] = { entry, NULL };
    warnings ignored = { 0 };

    snprintf(entry, sizeof entry, "%s=%s", name, value);
    return ob_config_from_env(cfg, envp, record_warn, NULL != w ? w : &ignored);
}

/* Settings where every variable differs from its default (and the rules
 * between variables hold), to show that a failed parse leaves them alone. */
static void non_default_config(ob_config *cfg)
{
    ob_config_defaults(cfg);
    cfg->enable = 0;
    cfg->gain = 0.25;
    cfg->deadband = 0.125;
    cfg->forget = 0.75;
    cfg->period = 7;
    cfg->warmup = 9;
    cfg->min_batch = 3;
    cfg->max_batch = 500;
    cfg->granularity = 4;
    cfg->global_batch = 4000;
    cfg->min_bytes = 12345;
    cfg->calls_per_step = 5;
    cfg->weight = 1;
    cfg->convention = OB_CONVENTION_MEAN;
    cfg->report = OB_REPORT_JSON;
    snprintf(cfg->report_file, sizeof cfg->report_file, "report.json");
    snprintf(cfg->trace_file, sizeof cfg->trace_file, "trace.csv");
    snprintf(cfg->library, sizeof cfg->library, "/opt/lib/libomnibatch.so");
    snprintf(cfg->timeline_file, sizeof cfg->timeline_file, "timeline.json");
    cfg->prior = OB_PRIOR_GPUS;
    cfg->planner = OB_PLANNER_CENTRAL;
    snprintf(cfg->profile_file, sizeof cfg->profile_file, "profile.txt");
    cfg->react = 0;
    cfg->chunks = 1;
    cfg->chunk_floor = 16;
    cfg->wait = OB_WAIT_SLEEP;
    cfg->node_sum = 0;
    cfg->cpu_quota = 0;
    cfg->pool = 0;
    cfg->verify = 1;
    cfg->debug = 2;
}

/* ---- the table itself --------------------------------------------------------- */

START_TEST(test_table_holds_exactly_the_documented_variables)
{
    size_t n = 0;

    while (NULL != ob_config_doc_at(n)) {
        n++;
    }
    ck_assert_uint_eq(n, N_DOCUMENTED);
    for (size_t i = 0; i < N_DOCUMENTED; i++) {
        int found = 0;

        for (size_t j = 0; j < n; j++) {
            if (0 == strcmp(ob_config_doc_at(j)->name, documented_names[i])) {
                found++;
            }
        }
        ck_assert_msg(1 == found, "%s appears %d times in the table", documented_names[i], found);
    }
    for (size_t j = 0; j < n; j++) {
        const ob_config_doc *d = ob_config_doc_at(j);

        ck_assert_ptr_nonnull(d->allowed);
        ck_assert_ptr_nonnull(d->meaning);
        ck_assert_uint_gt(strlen(d->meaning), 10);
    }
}
END_TEST

/* Each variable, set to a value other than its default, changes its own
 * field and nothing else. */
typedef enum field_type { F_INT, F_LONG, F_DOUBLE, F_SIZE, F_STR } field_type;

typedef struct setting_case {
    const char *name;
    const char *value;
    size_t offset;
    field_type type;
    double expect;               /* numeric fields */
    const char *expect_str;      /* F_STR */
} setting_case;

#define OFF(f) offsetof(ob_config, f)

static const setting_case one_each[] = {
    { "OMNIBATCH_ENABLE", "off", OFF(enable), F_INT, 0, NULL },
    { "OMNIBATCH_GAIN", "0.5", OFF(gain), F_DOUBLE, 0.5, NULL },
    { "OMNIBATCH_DEADBAND", "0.25", OFF(deadband), F_DOUBLE, 0.25, NULL },
    { "OMNIBATCH_FORGET", "0.75", OFF(forget), F_DOUBLE, 0.75, NULL },
    { "OMNIBATCH_PERIOD", "17", OFF(period), F_LONG, 17, NULL },
    { "OMNIBATCH_WARMUP", "0", OFF(warmup), F_LONG, 0, NULL },
    { "OMNIBATCH_MIN_BATCH", "4", OFF(min_batch), F_LONG, 4, NULL },
    { "OMNIBATCH_MAX_BATCH", "256", OFF(max_batch), F_LONG, 256, NULL },
    { "OMNIBATCH_GRANULARITY", "8", OFF(granularity), F_LONG, 8, NULL },
    { "OMNIBATCH_GLOBAL_BATCH", "1024", OFF(global_batch), F_LONG, 1024, NULL },
    { "OMNIBATCH_MIN_BYTES", "4K", OFF(min_bytes), F_SIZE, 4096, NULL },
    { "OMNIBATCH_CALLS_PER_STEP", "3", OFF(calls_per_step), F_LONG, 3, NULL },
    { "OMNIBATCH_WEIGHT", "on", OFF(weight), F_INT, 1, NULL },
    { "OMNIBATCH_CONVENTION", "divide-by-p", OFF(convention), F_INT, OB_CONVENTION_DIVIDE_BY_P, NULL },
    { "OMNIBATCH_REPORT", "json", OFF(report), F_INT, OB_REPORT_JSON, NULL },
    { "OMNIBATCH_REPORT_FILE", "/tmp/omnibatch-report.txt", OFF(report_file), F_STR, 0,
      "/tmp/omnibatch-report.txt" },
    { "OMNIBATCH_TRACE", "trace.csv", OFF(trace_file), F_STR, 0, "trace.csv" },
    { "OMNIBATCH_TIMELINE", "timeline.json", OFF(timeline_file), F_STR, 0, "timeline.json" },
    { "OMNIBATCH_PRIOR", "cores", OFF(prior), F_INT, OB_PRIOR_CORES, NULL },
    { "OMNIBATCH_PLANNER", "distributed", OFF(planner), F_INT, OB_PLANNER_DISTRIBUTED, NULL },
    { "OMNIBATCH_WAIT", "sleep", OFF(wait), F_INT, OB_WAIT_SLEEP, NULL },
    { "OMNIBATCH_NODE_SUM", "off", OFF(node_sum), F_INT, 0, NULL },
    { "OMNIBATCH_CPU_QUOTA", "off", OFF(cpu_quota), F_INT, 0, NULL },
    { "OMNIBATCH_POOL", "off", OFF(pool), F_INT, 0, NULL },
    { "OMNIBATCH_VERIFY", "yes", OFF(verify), F_INT, 1, NULL },
    { "OMNIBATCH_REACT", "off", OFF(react), F_INT, 0, NULL },
    { "OMNIBATCH_CHUNKS", "on", OFF(chunks), F_INT, 1, NULL },
    { "OMNIBATCH_CHUNK_FLOOR", "16", OFF(chunk_floor), F_LONG, 16, NULL },
    { "OMNIBATCH_PROFILE", "split.profile", OFF(profile_file), F_STR, 0, "split.profile" },
    { "OMNIBATCH_DEBUG", "3", OFF(debug), F_INT, 3, NULL },
    { "OMNIBATCH_LIBRARY", "/opt/lib/libomnibatch.so", OFF(library), F_STR, 0, "/opt/lib/libomnibatch.so" },
};
#define N_ONE_EACH (sizeof one_each / sizeof one_each[0])

static void store_expected(ob_config *cfg, const setting_case *c)
{
    char *f = (char *) cfg + c->offset;

    switch (c->type) {
    case F_INT:
        *(int *) (void *) f = (int) c->expect;
        break;
    case F_LONG:
        *(long *) (void *) f = (long) c->expect;
        break;
    case F_DOUBLE:
        *(double *) (void *) f = c->expect;
        break;
    case F_SIZE:
        *(size_t *) (void *) f = (size_t) c->expect;
        break;
    case F_STR:
        snprintf(f, PATH_MAX, "%s", c->expect_str);
        break;
    }
}

START_TEST(test_each_variable_sets_its_own_field_only)
{
    ob_config def;
    ob_config got;
    ob_config want;
    int covered[N_DOCUMENTED] = { 0 };

    ob_config_defaults(&def);
    for (size_t i = 0; i < N_ONE_EACH; i++) {
        got = def;
        want = def;
        store_expected(&want, &one_each[i]);
        ck_assert_msg(!config_equal(&want, &def), "%s: the case must differ from the default",
                      one_each[i].name);
        ck_assert_int_eq(parse1(&got, one_each[i].name, one_each[i].value, NULL), OMNIBATCH_SUCCESS);
        ck_assert_msg(config_equal(&got, &want), "%s=%s", one_each[i].name, one_each[i].value);
        for (size_t j = 0; j < N_DOCUMENTED; j++) {
            if (0 == strcmp(documented_names[j], one_each[i].name)) {
                covered[j]++;
            }
        }
    }
    for (size_t j = 0; j < N_DOCUMENTED; j++) {
        ck_assert_msg(1 == covered[j], "%s has no case", documented_names[j]);
    }
}
END_TEST

/* The Default column parses to exactly ob_config_defaults(). */
START_TEST(test_documented_defaults_are_the_defaults)
{
    ob_config def;
    ob_config cfg;

    ob_config_defaults(&def);
    non_default_config(&cfg);
    for (size_t i = 0; NULL != ob_config_doc_at(i); i++) {
        const ob_config_doc *d = ob_config_doc_at(i);

        if (NULL != d->default_value) {
            ck_assert_msg(OMNIBATCH_SUCCESS == parse1(&cfg, d->name, d->default_value, NULL),
                          "%s=%s: %s", d->name, d->default_value, ob_last_error());
        }
    }
    /* Unset paths have no value to parse: they are "" by default. */
    ck_assert_str_eq(def.report_file, "");
    ck_assert_str_eq(def.trace_file, "");
    ck_assert_str_eq(def.library, "");
    ck_assert_str_eq(def.timeline_file, "");
    ck_assert_str_eq(def.profile_file, "");
    cfg.report_file[0] = '\0';
    cfg.trace_file[0] = '\0';
    cfg.library[0] = '\0';
    cfg.timeline_file[0] = '\0';
    cfg.profile_file[0] = '\0';
    ck_assert(config_equal(&cfg, &def));
    ck_assert_double_eq(def.gain, OB_DEFAULT_GAIN);
    ck_assert_double_eq(def.deadband, OB_DEFAULT_DEADBAND);
    ck_assert_double_eq(def.forget, OB_DEFAULT_FORGET);
    ck_assert_int_eq(def.period, OB_DEFAULT_PERIOD);
    ck_assert_int_eq(def.warmup, OB_DEFAULT_WARMUP);
    ck_assert_uint_eq(def.min_bytes, OB_DEFAULT_MIN_BYTES);
}
END_TEST

/* The Allowed column is what an error line says is allowed. */
START_TEST(test_error_lines_quote_the_allowed_column)
{
    for (size_t i = 0; NULL != ob_config_doc_at(i); i++) {
        const ob_config_doc *d = ob_config_doc_at(i);
        const char *bad = 0 == strcmp(d->name, "OMNIBATCH_REPORT_FILE")
                          || 0 == strcmp(d->name, "OMNIBATCH_TRACE")
                          || 0 == strcmp(d->name, "OMNIBATCH_PROFILE")
                          || 0 == strcmp(d->name, "OMNIBATCH_LIBRARY")
                          || 0 == strcmp(d->name, "OMNIBATCH_TIMELINE") ? "" : "#";
        char line[512];
        ob_config cfg;

        ob_config_defaults(&cfg);
        ck_assert_int_eq(parse1(&cfg, d->name, bad, NULL), OMNIBATCH_ERR_CONFIG);
        snprintf(line, sizeof line, "%s='%s': expected %s", d->name, bad, d->allowed);
        ck_assert_str_eq(ob_last_error(), line);
    }
}
END_TEST

/* The configuration page's table is this table, to the byte: a setting
 * added, renamed or re-documented here without the page fails. */
START_TEST(test_config_page_holds_the_table)
{
    size_t need = ob_config_markdown(NULL, 0);
    char *md = malloc(need + 1);
    FILE *f = fopen(OB_TEST_CONFIG_PAGE, "r");
    char *page;
    long size;

    ck_assert_ptr_nonnull(md);
    ck_assert_msg(NULL != f, "cannot open %s", OB_TEST_CONFIG_PAGE);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    ck_assert_int_gt(size, 0);
    rewind(f);
    page = malloc((size_t) size + 1);
    ck_assert_ptr_nonnull(page);
    ck_assert_uint_eq(fread(page, 1, (size_t) size, f), (size_t) size);
    page[size] = '\0';
    fclose(f);
    ob_config_markdown(md, need + 1);
    if (NULL == strstr(page, md)) {
        /* The table is longer than a Check message may be: it goes to the log. */
        fprintf(stderr, "the table ob_config_markdown() writes, to paste into %s:\n%s",
                OB_TEST_CONFIG_PAGE, md);
    }
    ck_assert_msg(NULL != strstr(page, md),
                  "%s: the configuration table differs from ob_config_markdown() (the log has the table)",
                  OB_TEST_CONFIG_PAGE);
    free(page);
    free(md);
}
END_TEST

START_TEST(test_markdown_table)
{
    size_t need = ob_config_markdown(NULL, 0);
    char *md = malloc(need + 1);
    char small[40];
    size_t lines = 0;

    ck_assert_ptr_nonnull(md);
    ck_assert_uint_eq(ob_config_markdown(md, need + 1), need);
    ck_assert_uint_eq(strlen(md), need);
    ck_assert(0 == strncmp(md, "| Variable | Allowed values | Default | Meaning |\n|---|---|---|---|\n", 67));
    for (const char *p = md; '\0' != *p; p++) {
        lines += '\n' == *p;
    }
    ck_assert_uint_eq(lines, N_DOCUMENTED + 2);
    for (size_t i = 0; i < N_DOCUMENTED; i++) {
        char cell[64];
        const char *hit;

        snprintf(cell, sizeof cell, "\n| `%s` |", documented_names[i]);
        hit = strstr(md, cell);
        ck_assert_msg(NULL != hit, "%s has no row", documented_names[i]);
        ck_assert_msg(NULL == strstr(hit + 1, cell), "%s has two rows", documented_names[i]);
    }
    /* Every row has four cells. */
    for (const char *row = strchr(md, '\n') + 1; '\0' != *row; row = strchr(row, '\n') + 1) {
        int bars = 0;

        for (const char *p = row; '\n' != *p; p++) {
            bars += '|' == *p;
        }
        ck_assert_int_eq(bars, 5);
    }
    /* A short buffer gets a terminated prefix and the full length. */
    ck_assert_uint_eq(ob_config_markdown(small, sizeof small), need);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
    ck_assert(0 == strncmp(small, md, sizeof small - 1));
    free(md);
}
END_TEST

/* ---- good values ---------------------------------------------------------------- */

typedef struct good_case {
    const char *name;
    const char *value;
    double expect;               /* of the variable's field */
} good_case;

static double field_of(const ob_config *cfg, const char *name)
{
    static const struct {
        const char *name;
        size_t offset;
        field_type type;
    } map[] = {
        { "OMNIBATCH_ENABLE", OFF(enable), F_INT }, { "OMNIBATCH_GAIN", OFF(gain), F_DOUBLE },
        { "OMNIBATCH_DEADBAND", OFF(deadband), F_DOUBLE }, { "OMNIBATCH_FORGET", OFF(forget), F_DOUBLE },
        { "OMNIBATCH_PERIOD", OFF(period), F_LONG }, { "OMNIBATCH_WARMUP", OFF(warmup), F_LONG },
        { "OMNIBATCH_MIN_BATCH", OFF(min_batch), F_LONG }, { "OMNIBATCH_MAX_BATCH", OFF(max_batch), F_LONG },
        { "OMNIBATCH_GRANULARITY", OFF(granularity), F_LONG },
        { "OMNIBATCH_GLOBAL_BATCH", OFF(global_batch), F_LONG },
        { "OMNIBATCH_MIN_BYTES", OFF(min_bytes), F_SIZE },
        { "OMNIBATCH_CALLS_PER_STEP", OFF(calls_per_step), F_LONG },
        { "OMNIBATCH_WEIGHT", OFF(weight), F_INT }, { "OMNIBATCH_CONVENTION", OFF(convention), F_INT },
        { "OMNIBATCH_REPORT", OFF(report), F_INT }, { "OMNIBATCH_PRIOR", OFF(prior), F_INT },
        { "OMNIBATCH_PLANNER", OFF(planner), F_INT }, { "OMNIBATCH_WAIT", OFF(wait), F_INT },
        { "OMNIBATCH_NODE_SUM", OFF(node_sum), F_INT },
        { "OMNIBATCH_CPU_QUOTA", OFF(cpu_quota), F_INT }, { "OMNIBATCH_POOL", OFF(pool), F_INT },
        { "OMNIBATCH_VERIFY", OFF(verify), F_INT }, { "OMNIBATCH_DEBUG", OFF(debug), F_INT },
        { "OMNIBATCH_REACT", OFF(react), F_INT }, { "OMNIBATCH_CHUNKS", OFF(chunks), F_INT },
        { "OMNIBATCH_CHUNK_FLOOR", OFF(chunk_floor), F_LONG },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (0 == strcmp(map[i].name, name)) {
            const char *f = (const char *) cfg + map[i].offset;

            switch (map[i].type) {
            case F_INT:
                return *(const int *) (const void *) f;
            case F_LONG:
                return (double) *(const long *) (const void *) f;
            case F_DOUBLE:
                return *(const double *) (const void *) f;
            case F_SIZE:
                return (double) *(const size_t *) (const void *) f;
            case F_STR:
                break;
            }
        }
    }
    ck_abort_msg("no field for %s", name);
    return 0;
}

static const good_case good_values[] = {
    { "OMNIBATCH_GAIN", "1", 1.0 },
    { "OMNIBATCH_GAIN", "0.5", 0.5 },
    { "OMNIBATCH_GAIN", ".25", 0.25 },
    { "OMNIBATCH_GAIN", "+0.5", 0.5 },
    { "OMNIBATCH_GAIN", "1e-3", 0.001 },
    { "OMNIBATCH_GAIN", "1.0E0", 1.0 },
    { "OMNIBATCH_DEADBAND", "0", 0.0 },
    { "OMNIBATCH_DEADBAND", "0.5", 0.5 },
    { "OMNIBATCH_DEADBAND", "0.05", 0.05 },
    { "OMNIBATCH_FORGET", "0.5", 0.5 },
    { "OMNIBATCH_FORGET", "1", 1.0 },
    { "OMNIBATCH_FORGET", "0.95", 0.95 },
    { "OMNIBATCH_FORGET", "1.", 1.0 },
    { "OMNIBATCH_PERIOD", "1", 1 },
    { "OMNIBATCH_PERIOD", "1000000", 1000000 },
    { "OMNIBATCH_PERIOD", "010", 10 },                 /* decimal, never octal */
    { "OMNIBATCH_PERIOD", "+3", 3 },
    { "OMNIBATCH_WARMUP", "0", 0 },
    { "OMNIBATCH_WARMUP", "1000000", 1000000 },
    { "OMNIBATCH_MIN_BATCH", "0", 0 },
    { "OMNIBATCH_MIN_BATCH", "1", 1 },
    { "OMNIBATCH_MIN_BATCH", "1000000000", 1000000000 },
    { "OMNIBATCH_MAX_BATCH", "0", 0 },
    { "OMNIBATCH_MAX_BATCH", "1", 1 },
    { "OMNIBATCH_MAX_BATCH", "1000000000", 1000000000 },
    { "OMNIBATCH_GRANULARITY", "1", 1 },
    { "OMNIBATCH_GRANULARITY", "1000000000", 1000000000 },
    { "OMNIBATCH_GLOBAL_BATCH", "0", 0 },
    { "OMNIBATCH_GLOBAL_BATCH", "1", 1 },
    { "OMNIBATCH_GLOBAL_BATCH", "1000000000", 1000000000 },
    { "OMNIBATCH_MIN_BYTES", "1", 1 },
    { "OMNIBATCH_MIN_BYTES", "65536", 65536 },
    { "OMNIBATCH_MIN_BYTES", "64K", 65536 },
    { "OMNIBATCH_MIN_BYTES", "64k", 65536 },
    { "OMNIBATCH_MIN_BYTES", "2M", 2097152 },
    { "OMNIBATCH_MIN_BYTES", "2m", 2097152 },
    { "OMNIBATCH_MIN_BYTES", "1G", 1073741824 },
    { "OMNIBATCH_MIN_BYTES", "1g", 1073741824 },
    { "OMNIBATCH_MIN_BYTES", "1024M", 1073741824 },
    { "OMNIBATCH_MIN_BYTES", "1073741824", 1073741824 },
    { "OMNIBATCH_CALLS_PER_STEP", "0", 0 },
    { "OMNIBATCH_CALLS_PER_STEP", "1", 1 },
    { "OMNIBATCH_CALLS_PER_STEP", "100000", 100000 },
    { "OMNIBATCH_CONVENTION", "auto", OB_CONVENTION_AUTO },
    { "OMNIBATCH_CONVENTION", "mean", OB_CONVENTION_MEAN },
    { "OMNIBATCH_CONVENTION", "MEAN", OB_CONVENTION_MEAN },
    { "OMNIBATCH_CONVENTION", "divide-by-p", OB_CONVENTION_DIVIDE_BY_P },
    { "OMNIBATCH_CONVENTION", "Divide-By-P", OB_CONVENTION_DIVIDE_BY_P },
    { "OMNIBATCH_REPORT", "off", OB_REPORT_OFF },
    { "OMNIBATCH_REPORT", "text", OB_REPORT_TEXT },
    { "OMNIBATCH_REPORT", "json", OB_REPORT_JSON },
    { "OMNIBATCH_REPORT", "JSON", OB_REPORT_JSON },
    { "OMNIBATCH_PRIOR", "equal", OB_PRIOR_EQUAL },
    { "OMNIBATCH_PRIOR", "cores", OB_PRIOR_CORES },
    { "OMNIBATCH_PRIOR", "gpus", OB_PRIOR_GPUS },
    { "OMNIBATCH_PRIOR", "GPUs", OB_PRIOR_GPUS },
    { "OMNIBATCH_PLANNER", "auto", OB_PLANNER_AUTO },
    { "OMNIBATCH_PLANNER", "central", OB_PLANNER_CENTRAL },
    { "OMNIBATCH_PLANNER", "Distributed", OB_PLANNER_DISTRIBUTED },
    { "OMNIBATCH_WAIT", "auto", OB_WAIT_AUTO },
    { "OMNIBATCH_WAIT", "poll", OB_WAIT_POLL },
    { "OMNIBATCH_WAIT", "Sleep", OB_WAIT_SLEEP },
    { "OMNIBATCH_DEBUG", "0", 0 },
    { "OMNIBATCH_DEBUG", "1", 1 },
    { "OMNIBATCH_DEBUG", "3", 3 },
};

START_TEST(test_good_values)
{
    for (size_t i = 0; i < sizeof good_values / sizeof good_values[0]; i++) {
        const good_case *c = &good_values[i];
        ob_config cfg;

        non_default_config(&cfg);
        cfg.max_batch = 0;   /* no rule between variables in the way of the value itself */
        cfg.global_batch = 0;
        cfg.min_batch = 1;
        cfg.granularity = 1;
        ck_assert_msg(OMNIBATCH_SUCCESS == parse1(&cfg, c->name, c->value, NULL), "%s=%s: %s",
                      c->name, c->value, ob_last_error());
        ck_assert_msg(field_of(&cfg, c->name) == c->expect, "%s=%s gave %g", c->name, c->value,
                      field_of(&cfg, c->name));
    }
}
END_TEST

static const char *const true_spellings[] = {
    "1", "on", "ON", "On", "oN", "true", "TRUE", "True", "tRuE", "yes", "YES", "Yes", "yEs",
};
static const char *const false_spellings[] = {
    "0", "off", "OFF", "Off", "oFf", "false", "FALSE", "False", "fAlSe", "no", "NO", "No", "nO",
};

START_TEST(test_booleans_in_every_spelling)
{
    static const char *const bools[] = { "OMNIBATCH_ENABLE", "OMNIBATCH_WEIGHT", "OMNIBATCH_VERIFY" };

    for (size_t b = 0; b < 3; b++) {
        for (size_t i = 0; i < sizeof true_spellings / sizeof true_spellings[0]; i++) {
            ob_config cfg;

            ob_config_defaults(&cfg);
            ck_assert_int_eq(parse1(&cfg, bools[b], false_spellings[i], NULL), OMNIBATCH_SUCCESS);
            ck_assert_msg(0 == field_of(&cfg, bools[b]), "%s=%s", bools[b], false_spellings[i]);
            ck_assert_int_eq(parse1(&cfg, bools[b], true_spellings[i], NULL), OMNIBATCH_SUCCESS);
            ck_assert_msg(1 == field_of(&cfg, bools[b]), "%s=%s", bools[b], true_spellings[i]);
        }
    }
}
END_TEST

START_TEST(test_paths)
{
    ob_config cfg;
    char *longest = malloc(PATH_MAX);

    ck_assert_ptr_nonnull(longest);
    memset(longest, 'p', PATH_MAX - 1);
    longest[PATH_MAX - 1] = '\0';
    ob_config_defaults(&cfg);
    ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_REPORT_FILE", "out dir/report (1).txt", NULL),
                     OMNIBATCH_SUCCESS);
    ck_assert_str_eq(cfg.report_file, "out dir/report (1).txt");
    ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_TRACE", longest, NULL), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(cfg.trace_file, longest);
    free(longest);
}
END_TEST

/* ---- bad values ----------------------------------------------------------------------- */

typedef struct bad_case {
    const char *name;
    const char *value;
    const char *line;            /* the whole detail line */
} bad_case;

#define GAIN_SAYS "expected a number in (0, 1]"
#define COUNT_SAYS(range) "expected an integer in " range
#define BYTES_SAYS "expected a byte count in [1, 1G], with an optional suffix K, M or G (KiB, MiB, GiB)"
#define BOOL_SAYS "expected a boolean: 1/0, on/off, true/false or yes/no"
#define PATH_SAYS "expected a non-empty path shorter than 4096 bytes"

static const bad_case bad_values[] = {
    { "OMNIBATCH_GAIN", "abc", "OMNIBATCH_GAIN='abc': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "", "OMNIBATCH_GAIN='': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", " 0.5", "OMNIBATCH_GAIN=' 0.5': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0.5 ", "OMNIBATCH_GAIN='0.5 ': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0.5x", "OMNIBATCH_GAIN='0.5x': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0", "OMNIBATCH_GAIN='0': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "-0.5", "OMNIBATCH_GAIN='-0.5': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "1.0001", "OMNIBATCH_GAIN='1.0001': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "5.", "OMNIBATCH_GAIN='5.': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0x1p-1", "OMNIBATCH_GAIN='0x1p-1': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "nan", "OMNIBATCH_GAIN='nan': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "inf", "OMNIBATCH_GAIN='inf': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0,5", "OMNIBATCH_GAIN='0,5': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "1e-400", "OMNIBATCH_GAIN='1e-400': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "1e", "OMNIBATCH_GAIN='1e': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", ".", "OMNIBATCH_GAIN='.': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "+", "OMNIBATCH_GAIN='+': " GAIN_SAYS },
    { "OMNIBATCH_GAIN", "0.5\n", "OMNIBATCH_GAIN='0.5\\x0a': " GAIN_SAYS },
    { "OMNIBATCH_DEADBAND", "0.50001", "OMNIBATCH_DEADBAND='0.50001': expected a number in [0, 0.5]" },
    { "OMNIBATCH_DEADBAND", "-0.01", "OMNIBATCH_DEADBAND='-0.01': expected a number in [0, 0.5]" },
    { "OMNIBATCH_FORGET", "0.49", "OMNIBATCH_FORGET='0.49': expected a number in [0.5, 1]" },
    { "OMNIBATCH_FORGET", "1.01", "OMNIBATCH_FORGET='1.01': expected a number in [0.5, 1]" },
    { "OMNIBATCH_FORGET", "1e999", "OMNIBATCH_FORGET='1e999': expected a number in [0.5, 1]" },
    { "OMNIBATCH_PERIOD", "0", "OMNIBATCH_PERIOD='0': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "1000001", "OMNIBATCH_PERIOD='1000001': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "-1", "OMNIBATCH_PERIOD='-1': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "1.5", "OMNIBATCH_PERIOD='1.5': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "1e3", "OMNIBATCH_PERIOD='1e3': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "0x10", "OMNIBATCH_PERIOD='0x10': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "", "OMNIBATCH_PERIOD='': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", " 4", "OMNIBATCH_PERIOD=' 4': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "4 ", "OMNIBATCH_PERIOD='4 ': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "4 steps", "OMNIBATCH_PERIOD='4 steps': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_PERIOD", "99999999999999999999",
      "OMNIBATCH_PERIOD='99999999999999999999': " COUNT_SAYS("[1, 1000000]") },
    { "OMNIBATCH_WARMUP", "-1", "OMNIBATCH_WARMUP='-1': " COUNT_SAYS("[0, 1000000]") },
    { "OMNIBATCH_WARMUP", "1000001", "OMNIBATCH_WARMUP='1000001': " COUNT_SAYS("[0, 1000000]") },
    { "OMNIBATCH_MIN_BATCH", "-1", "OMNIBATCH_MIN_BATCH='-1': " COUNT_SAYS("[0, 1000000000]") },
    { "OMNIBATCH_MIN_BATCH", "1000000001",
      "OMNIBATCH_MIN_BATCH='1000000001': " COUNT_SAYS("[0, 1000000000]") },
    { "OMNIBATCH_MAX_BATCH", "-1",
      "OMNIBATCH_MAX_BATCH='-1': expected 0 (no limit) or an integer in [1, 1000000000]" },
    { "OMNIBATCH_MAX_BATCH", "1000000001",
      "OMNIBATCH_MAX_BATCH='1000000001': expected 0 (no limit) or an integer in [1, 1000000000]" },
    { "OMNIBATCH_GRANULARITY", "0", "OMNIBATCH_GRANULARITY='0': " COUNT_SAYS("[1, 1000000000]") },
    { "OMNIBATCH_GRANULARITY", "8.0", "OMNIBATCH_GRANULARITY='8.0': " COUNT_SAYS("[1, 1000000000]") },
    { "OMNIBATCH_GLOBAL_BATCH", "-5",
      "OMNIBATCH_GLOBAL_BATCH='-5': expected 0 (unknown) or an integer in [1, 1000000000]" },
    { "OMNIBATCH_MIN_BYTES", "0", "OMNIBATCH_MIN_BYTES='0': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "0K", "OMNIBATCH_MIN_BYTES='0K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1T", "OMNIBATCH_MIN_BYTES='1T': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1KB", "OMNIBATCH_MIN_BYTES='1KB': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1KiB", "OMNIBATCH_MIN_BYTES='1KiB': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "K", "OMNIBATCH_MIN_BYTES='K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1.5K", "OMNIBATCH_MIN_BYTES='1.5K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "-1", "OMNIBATCH_MIN_BYTES='-1': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "+1", "OMNIBATCH_MIN_BYTES='+1': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", " 1K", "OMNIBATCH_MIN_BYTES=' 1K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1K ", "OMNIBATCH_MIN_BYTES='1K ': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "2G", "OMNIBATCH_MIN_BYTES='2G': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1048577K", "OMNIBATCH_MIN_BYTES='1048577K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "1073741825", "OMNIBATCH_MIN_BYTES='1073741825': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "99999999999999999999K",
      "OMNIBATCH_MIN_BYTES='99999999999999999999K': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "0x400", "OMNIBATCH_MIN_BYTES='0x400': " BYTES_SAYS },
    { "OMNIBATCH_MIN_BYTES", "", "OMNIBATCH_MIN_BYTES='': " BYTES_SAYS },
    { "OMNIBATCH_CALLS_PER_STEP", "100001",
      "OMNIBATCH_CALLS_PER_STEP='100001': expected 0 (detect) or an integer in [1, 100000]" },
    { "OMNIBATCH_CALLS_PER_STEP", "-1",
      "OMNIBATCH_CALLS_PER_STEP='-1': expected 0 (detect) or an integer in [1, 100000]" },
    { "OMNIBATCH_ENABLE", "2", "OMNIBATCH_ENABLE='2': " BOOL_SAYS },
    { "OMNIBATCH_ENABLE", "", "OMNIBATCH_ENABLE='': " BOOL_SAYS },
    { "OMNIBATCH_ENABLE", "enable", "OMNIBATCH_ENABLE='enable': " BOOL_SAYS },
    { "OMNIBATCH_WEIGHT", "y", "OMNIBATCH_WEIGHT='y': " BOOL_SAYS },
    { "OMNIBATCH_WEIGHT", " on", "OMNIBATCH_WEIGHT=' on': " BOOL_SAYS },
    { "OMNIBATCH_WEIGHT", "onn", "OMNIBATCH_WEIGHT='onn': " BOOL_SAYS },
    { "OMNIBATCH_VERIFY", "n", "OMNIBATCH_VERIFY='n': " BOOL_SAYS },
    { "OMNIBATCH_VERIFY", "01", "OMNIBATCH_VERIFY='01': " BOOL_SAYS },
    { "OMNIBATCH_CONVENTION", "sum", "OMNIBATCH_CONVENTION='sum': expected auto, mean or divide-by-p" },
    { "OMNIBATCH_CONVENTION", "divide_by_p",
      "OMNIBATCH_CONVENTION='divide_by_p': expected auto, mean or divide-by-p" },
    { "OMNIBATCH_CONVENTION", "mean ", "OMNIBATCH_CONVENTION='mean ': expected auto, mean or divide-by-p" },
    { "OMNIBATCH_CONVENTION", "", "OMNIBATCH_CONVENTION='': expected auto, mean or divide-by-p" },
    { "OMNIBATCH_REPORT", "csv", "OMNIBATCH_REPORT='csv': expected off, text or json" },
    { "OMNIBATCH_REPORT", "0", "OMNIBATCH_REPORT='0': expected off, text or json" },
    { "OMNIBATCH_REPORT", "", "OMNIBATCH_REPORT='': expected off, text or json" },
    { "OMNIBATCH_PRIOR", "gpu", "OMNIBATCH_PRIOR='gpu': expected equal, cores or gpus" },
    { "OMNIBATCH_PRIOR", "none", "OMNIBATCH_PRIOR='none': expected equal, cores or gpus" },
    { "OMNIBATCH_PLANNER", "root", "OMNIBATCH_PLANNER='root': expected auto, central or distributed" },
    { "OMNIBATCH_WAIT", "yield", "OMNIBATCH_WAIT='yield': expected auto, poll or sleep" },
    { "OMNIBATCH_REPORT_FILE", "", "OMNIBATCH_REPORT_FILE='': " PATH_SAYS },
    { "OMNIBATCH_TRACE", "", "OMNIBATCH_TRACE='': " PATH_SAYS },
    { "OMNIBATCH_TIMELINE", "", "OMNIBATCH_TIMELINE='': " PATH_SAYS },
    { "OMNIBATCH_DEBUG", "4", "OMNIBATCH_DEBUG='4': " COUNT_SAYS("[0, 3]") },
    { "OMNIBATCH_DEBUG", "-1", "OMNIBATCH_DEBUG='-1': " COUNT_SAYS("[0, 3]") },
    { "OMNIBATCH_DEBUG", "1.0", "OMNIBATCH_DEBUG='1.0': " COUNT_SAYS("[0, 3]") },
    { "OMNIBATCH_DEBUG", "yes", "OMNIBATCH_DEBUG='yes': " COUNT_SAYS("[0, 3]") },
};

START_TEST(test_bad_values_give_the_exact_line_and_change_nothing)
{
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        const bad_case *c = &bad_values[i];
        ob_config before;
        ob_config cfg;

        non_default_config(&before);
        cfg = before;
        ob_clear_error();
        ck_assert_msg(OMNIBATCH_ERR_CONFIG == parse1(&cfg, c->name, c->value, NULL), "%s='%s' accepted",
                      c->name, c->value);
        ck_assert_str_eq(ob_last_error(), c->line);
        ck_assert_ptr_null(strchr(ob_last_error(), '\n'));
        ck_assert_msg(config_equal(&cfg, &before), "%s='%s' changed the settings", c->name, c->value);
    }
}
END_TEST

START_TEST(test_too_long_path_is_refused_and_shown_short)
{
    char *path = malloc(PATH_MAX + 1);
    char line[256];
    ob_config cfg;
    ob_config before;

    ck_assert_ptr_nonnull(path);
    memset(path, 'x', PATH_MAX);
    path[PATH_MAX] = '\0';
    non_default_config(&before);
    cfg = before;
    ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_REPORT_FILE", path, NULL), OMNIBATCH_ERR_CONFIG);
    /* The value is cut at 64 characters so the line still says what is allowed. */
    snprintf(line, sizeof line, "OMNIBATCH_REPORT_FILE='%.64s...': " PATH_SAYS, path);
    ck_assert_str_eq(ob_last_error(), line);
    ck_assert(config_equal(&cfg, &before));
    free(path);
}
END_TEST

/* A bad value anywhere leaves every setting alone, good ones included. */
START_TEST(test_one_bad_value_discards_the_good_ones)
{
    char *envp[] = { E("OMNIBATCH_GAIN=0.9"), E("OMNIBATCH_REPORT=off"), E("OMNIBATCH_PERIOD=often"),
                     E("OMNIBATCH_DEBUG=1"), NULL };
    ob_config before;
    ob_config cfg;

    non_default_config(&before);
    cfg = before;
    ck_assert_int_eq(ob_config_from_env(&cfg, envp, NULL, NULL), OMNIBATCH_ERR_CONFIG);
    ck_assert_str_eq(ob_last_error(), "OMNIBATCH_PERIOD='often': " COUNT_SAYS("[1, 1000000]"));
    ck_assert(config_equal(&cfg, &before));
}
END_TEST

START_TEST(test_many_variables_at_once)
{
    char *envp[] = { E("PATH=/usr/bin"), E("OMNIBATCH_GAIN=0.9"), E("OMNIBATCH_MIN_BATCH=8"),
                     E("OMNIBATCH_MAX_BATCH=64"), E("OMNIBATCH_GRANULARITY=8"), E("HOME=/root"),
                     E("OMNIBATCH_REPORT=json"), E("OMNIBATCH_TRACE=t.csv"), E("OMNIBATCH_REPORT_FILE=r.json"),
                     E("OMNIBATCH_WEIGHT=TRUE"), NULL };
    ob_config cfg;
    warnings w = { 0 };

    ob_config_defaults(&cfg);
    ck_assert_int_eq(ob_config_from_env(&cfg, envp, record_warn, &w), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(w.n, 0);
    ck_assert_double_eq(cfg.gain, 0.9);
    ck_assert_int_eq(cfg.min_batch, 8);
    ck_assert_int_eq(cfg.max_batch, 64);
    ck_assert_int_eq(cfg.granularity, 8);
    ck_assert_int_eq(cfg.report, OB_REPORT_JSON);
    ck_assert_str_eq(cfg.trace_file, "t.csv");
    ck_assert_str_eq(cfg.report_file, "r.json");
    ck_assert_int_eq(cfg.weight, 1);
    ck_assert_double_eq(cfg.forget, OB_DEFAULT_FORGET);
}
END_TEST

/* As with getenv(): the first of two entries of one name wins. */
START_TEST(test_first_of_duplicate_names_wins)
{
    char *envp[] = { E("OMNIBATCH_GAIN=0.5"), E("OMNIBATCH_GAIN=abc"), E("OMNIBATCH_GAIN"), NULL };
    ob_config cfg;

    ob_config_defaults(&cfg);
    ck_assert_int_eq(ob_config_from_env(&cfg, envp, NULL, NULL), OMNIBATCH_SUCCESS);
    ck_assert_double_eq(cfg.gain, 0.5);
}
END_TEST

START_TEST(test_no_environment_and_bad_arguments)
{
    char *empty[] = { NULL };
    ob_config def;
    ob_config cfg;

    ob_config_defaults(&def);
    cfg = def;
    ck_assert_int_eq(ob_config_from_env(&cfg, empty, NULL, NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_config_from_env(&cfg, NULL, NULL, NULL), OMNIBATCH_SUCCESS);
    ck_assert(config_equal(&cfg, &def));
    ck_assert_int_eq(ob_config_from_env(NULL, empty, NULL, NULL), OMNIBATCH_ERR_ARG);
}
END_TEST

/* The man page's table (ob_config_roff): one entry per row, in roff. */
START_TEST(test_roff_table)
{
    size_t need = ob_config_roff(NULL, 0);
    char *roff = malloc(need + 1);
    char small[16];

    ck_assert_ptr_nonnull(roff);
    ck_assert_uint_eq(ob_config_roff(roff, need + 1), need);
    ck_assert_uint_eq(strlen(roff), need);
    for (size_t i = 0; i < N_DOCUMENTED; i++) {
        char entry[96];

        snprintf(entry, sizeof entry, ".TP\n.B %s\n", documented_names[i]);
        ck_assert_msg(NULL != strstr(roff, entry), "%s has no entry", documented_names[i]);
    }
    /* A minus sign is \-, a `code span` bold, a default bold too; no line
     * of text starts with a dot. */
    ck_assert_ptr_nonnull(strstr(roff, "auto, mean or divide\\-by\\-p"));
    ck_assert_ptr_nonnull(strstr(roff, "scales by \\fBb_i/B\\fR"));
    ck_assert_ptr_nonnull(strstr(roff, "Default: \\fB1.0\\fR."));
    ck_assert_ptr_null(strchr(roff, '`'));
    free(roff);
    ck_assert_uint_eq(ob_config_roff(small, sizeof small), need);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
}
END_TEST

/* ---- rules between variables ----------------------------------------------------------- */

START_TEST(test_rules_between_variables)
{
    static const struct {
        char *env[4];
        const char *line;        /* NULL: accepted */
    } cases[] = {
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_MAX_BATCH=4"), NULL },
          "OMNIBATCH_MAX_BATCH='4': expected 0 (no limit) or at least OMNIBATCH_MIN_BATCH=8" },
        { { E("OMNIBATCH_MAX_BATCH=4"), E("OMNIBATCH_MIN_BATCH=8"), NULL },
          "OMNIBATCH_MAX_BATCH='4': expected 0 (no limit) or at least OMNIBATCH_MIN_BATCH=8" },
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_MAX_BATCH=8"), NULL }, NULL },
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_MAX_BATCH=0"), NULL }, NULL },
        { { E("OMNIBATCH_GRANULARITY=8"), E("OMNIBATCH_MAX_BATCH=4"), NULL },
          "OMNIBATCH_MAX_BATCH='4': expected 0 (no limit) or at least OMNIBATCH_GRANULARITY=8" },
        { { E("OMNIBATCH_GRANULARITY=8"), E("OMNIBATCH_MAX_BATCH=8"), NULL }, NULL },
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_GLOBAL_BATCH=4"), NULL },
          "OMNIBATCH_GLOBAL_BATCH='4': expected 0 (unknown) or at least OMNIBATCH_MIN_BATCH=8" },
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_GLOBAL_BATCH=8"), NULL }, NULL },
        { { E("OMNIBATCH_MIN_BATCH=8"), E("OMNIBATCH_GLOBAL_BATCH=0"), NULL }, NULL },
        { { E("OMNIBATCH_TRACE=out.txt"), E("OMNIBATCH_REPORT_FILE=out.txt"), NULL },
          "OMNIBATCH_TRACE='out.txt': expected a file other than OMNIBATCH_REPORT_FILE" },
        { { E("OMNIBATCH_TRACE=out.csv"), E("OMNIBATCH_REPORT_FILE=out.txt"), NULL }, NULL },
        { { E("OMNIBATCH_TIMELINE=out.txt"), E("OMNIBATCH_REPORT_FILE=out.txt"), NULL },
          "OMNIBATCH_TIMELINE='out.txt': expected a file other than OMNIBATCH_REPORT_FILE" },
        { { E("OMNIBATCH_TIMELINE=t.csv"), E("OMNIBATCH_TRACE=t.csv"), NULL },
          "OMNIBATCH_TIMELINE='t.csv': expected a file other than OMNIBATCH_TRACE" },
        { { E("OMNIBATCH_TIMELINE=t.json"), E("OMNIBATCH_TRACE=t.csv"),
            E("OMNIBATCH_REPORT_FILE=r.txt"), NULL }, NULL },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ob_config def;
        ob_config cfg;
        int rc;

        ob_config_defaults(&def);
        cfg = def;
        rc = ob_config_from_env(&cfg, cases[i].env, NULL, NULL);
        if (NULL == cases[i].line) {
            ck_assert_msg(OMNIBATCH_SUCCESS == rc, "case %zu: %s", i, ob_last_error());
        } else {
            ck_assert_int_eq(rc, OMNIBATCH_ERR_CONFIG);
            ck_assert_str_eq(ob_last_error(), cases[i].line);
            ck_assert(config_equal(&cfg, &def));
        }
    }
}
END_TEST

/* The rules see the settings already held (an API option), not only the
 * environment. */
START_TEST(test_rules_include_the_settings_given)
{
    ob_config cfg;

    ob_config_defaults(&cfg);
    cfg.min_batch = 16;
    ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_MAX_BATCH", "12", NULL), OMNIBATCH_ERR_CONFIG);
    ck_assert_str_eq(ob_last_error(),
                     "OMNIBATCH_MAX_BATCH='12': expected 0 (no limit) or at least OMNIBATCH_MIN_BATCH=16");
    ck_assert_int_eq(cfg.max_batch, 0);
}
END_TEST

/* ---- unknown names ------------------------------------------------------------------------ */

START_TEST(test_unknown_names_warn_with_the_closest_known_name)
{
    static const struct {
        const char *entry;
        const char *suggestion;  /* "" for none */
    } cases[] = {
        { "OMNIBATCH_GIAN=0.5", "OMNIBATCH_GAIN" },
        { "OMNIBATCH_gain=0.5", "OMNIBATCH_GAIN" },
        { "OMNIBATCH_PERIODS=3", "OMNIBATCH_PERIOD" },
        { "OMNIBATCH_REPORTFILE=x", "OMNIBATCH_REPORT_FILE" },
        { "OMNIBATCH_MINBATCH=3", "OMNIBATCH_MIN_BATCH" },
        { "OMNIBATCH_MAX_BACTH=3", "OMNIBATCH_MAX_BATCH" },
        { "OMNIBATCH_GRANULARTY=8", "OMNIBATCH_GRANULARITY" },
        { "OMNIBATCH_DEBGU=1", "OMNIBATCH_DEBUG" },
        { "OMNIBATCH_TRACEFILE=x", "OMNIBATCH_TRACE" },
        { "OMNIBATCH_TRACE_FILE=x", "OMNIBATCH_TRACE" },
        { "OMNIBATCH_REPORT_FORMAT=json", "OMNIBATCH_REPORT" },
        { "OMNIBATCH_HOME=/opt", "" },
        { "OMNIBATCH_XYZZY_PLUGH=1", "" },
        { "OMNIBATCH_=1", "" },
        { "OMNIBATCH_NOVALUE", "" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char entry[128];
        char *envp[] = { entry, NULL };
        warnings w = { 0 };
        ob_config cfg;
        ob_config def;
        size_t len = strcspn(cases[i].entry, "=");

        snprintf(entry, sizeof entry, "%s", cases[i].entry);
        ob_config_defaults(&def);
        cfg = def;
        ck_assert_int_eq(ob_config_from_env(&cfg, envp, record_warn, &w), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(w.n, 1);
        ck_assert(0 == strncmp(w.name[0], cases[i].entry, len) && '\0' == w.name[0][len]);
        ck_assert_msg(0 == strcmp(w.suggestion[0], cases[i].suggestion), "%s: suggested '%s'",
                      cases[i].entry, w.suggestion[0]);
        ck_assert(config_equal(&cfg, &def));
    }
}
END_TEST

START_TEST(test_other_names_are_not_ours)
{
    char *envp[] = { E("OMNIBATCHGAIN=1"), E("omnibatch_gain=1"), E("PATH=/bin"), E("XOMNIBATCH_GAIN=1"),
                     E("OMPI_COMM_WORLD_RANK=0"), E("OMNIBATCH_GAIN=0.4"), NULL };
    warnings w = { 0 };
    ob_config cfg;

    ob_config_defaults(&cfg);
    ck_assert_int_eq(ob_config_from_env(&cfg, envp, record_warn, &w), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(w.n, 0);
    ck_assert_double_eq(cfg.gain, 0.4);
}
END_TEST

/* Unknown names are reported even when a known one is bad, so that a typo
 * next to a mistake is not hidden. */
START_TEST(test_unknown_names_reported_before_a_failure)
{
    char *envp[] = { E("OMNIBATCH_GAIN=2"), E("OMNIBATCH_PERIDO=2"), NULL };
    warnings w = { 0 };
    ob_config cfg;

    ob_config_defaults(&cfg);
    ck_assert_int_eq(ob_config_from_env(&cfg, envp, record_warn, &w), OMNIBATCH_ERR_CONFIG);
    ck_assert_int_eq(w.n, 1);
    ck_assert_str_eq(w.name[0], "OMNIBATCH_PERIDO");
    ck_assert_str_eq(w.suggestion[0], "OMNIBATCH_PERIOD");
}
END_TEST

/* Runs \p fn with stderr sent to a file; returns what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
    static char text[1024];
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t n;

    ck_assert_ptr_nonnull(tmp);
    ck_assert_int_ge(saved, 0);
    fflush(stderr);
    ck_assert_int_ge(dup2(fileno(tmp), 2), 0);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    return text;
}

static void parse_typos_with_default_warning(void)
{
    char *envp[] = { E("OMNIBATCH_GIAN=0.5"), E("OMNIBATCH_FROBNICATE=1"), NULL };
    ob_config cfg;

    ob_config_defaults(&cfg);
    ob_config_from_env(&cfg, envp, NULL, NULL);
}

START_TEST(test_default_warning_lines)
{
    ob_log_set_rank(-1);
    ck_assert_str_eq(capture_stderr(parse_typos_with_default_warning),
                     "omnibatch: warning: unknown setting OMNIBATCH_GIAN ignored (did you mean "
                     "OMNIBATCH_GAIN?)\n"
                     "omnibatch: warning: unknown setting OMNIBATCH_FROBNICATE ignored\n");
    /* Only rank 0 says it. */
    ob_log_set_rank(1);
    ck_assert_str_eq(capture_stderr(parse_typos_with_default_warning), "");
    ob_log_set_rank(-1);
}
END_TEST

/* ---- names of choices --------------------------------------------------------------------- */

START_TEST(test_choice_names_round_trip)
{
    static const ob_report_format reports[] = { OB_REPORT_OFF, OB_REPORT_TEXT, OB_REPORT_JSON };
    static const ob_convention conventions[] = { OB_CONVENTION_AUTO, OB_CONVENTION_MEAN,
                                                 OB_CONVENTION_DIVIDE_BY_P };
    static const ob_prior priors[] = { OB_PRIOR_EQUAL, OB_PRIOR_CORES, OB_PRIOR_GPUS };

    for (int i = 0; i < 3; i++) {
        ob_config cfg;

        ob_config_defaults(&cfg);
        ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_REPORT", ob_config_report_name(reports[i]), NULL), 0);
        ck_assert_int_eq(cfg.report, reports[i]);
        ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_CONVENTION", ob_config_convention_name(conventions[i]),
                                NULL), 0);
        ck_assert_int_eq(cfg.convention, conventions[i]);
        ck_assert_int_eq(parse1(&cfg, "OMNIBATCH_PRIOR", ob_config_prior_name(priors[i]), NULL), 0);
        ck_assert_int_eq(cfg.prior, priors[i]);
    }
    ck_assert_str_eq(ob_config_report_name((ob_report_format) 7), "unknown");
}
END_TEST

/* ---- the process-wide parse ---------------------------------------------------------------- */

/* Each check runs in a child of its own, so that the once-only parse
 * starts fresh whatever Check's fork mode; the child's exit status is the
 * number of the first check that failed. */
static void clear_our_environment(void)
{
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; NULL != *e; e++) {
            if (0 == strncmp(*e, "OMNIBATCH_", 10)) {
                char name[256];
                size_t len = strcspn(*e, "=");

                snprintf(name, sizeof name, "%.*s", (int) len, *e);
                unsetenv(name);
                again = 1;
                break;
            }
        }
    }
}

static int run_in_child(int (*body)(void))
{
    pid_t pid;
    int status;

    fflush(NULL);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        clear_our_environment();
        _exit(body());
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int global_good_then_ignored(void)
{
    const ob_config *a;
    const ob_config *b;

    setenv("OMNIBATCH_GAIN", "0.5", 1);
    setenv("OMNIBATCH_DEBUG", "2", 1);
    if (OMNIBATCH_SUCCESS != ob_config_global(&a)) {
        return 1;
    }
    if (0.5 != a->gain || 2 != a->debug) {
        return 2;
    }
    if (2 != ob_log_debug_level()) {
        return 3;
    }
    /* Parsed once: later changes to the environment are not seen. */
    setenv("OMNIBATCH_GAIN", "abc", 1);
    if (OMNIBATCH_SUCCESS != ob_config_global(&b) || a != b || 0.5 != b->gain) {
        return 4;
    }
    return 0;
}

typedef struct first_call {
    int rc;
    char line[256];
    const ob_config *cfg;
} first_call;

static void *call_global(void *arg)
{
    first_call *r = arg;

    r->rc = ob_config_global(&r->cfg);
    snprintf(r->line, sizeof r->line, "%s", ob_last_error());
    return NULL;
}

static int global_bad_every_time(void)
{
    static const char line[] = "OMNIBATCH_GAIN='abc': expected a number in (0, 1]";
    first_call calls[4];
    pthread_t t[4];
    ob_config def;
    const ob_config *cfg;

    setenv("OMNIBATCH_GAIN", "abc", 1);
    setenv("OMNIBATCH_DEBUG", "3", 1);
    /* Several threads race for the first call: one parse, one answer. */
    for (int i = 0; i < 4; i++) {
        if (0 != pthread_create(&t[i], NULL, call_global, &calls[i])) {
            return 10;
        }
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        if (OMNIBATCH_ERR_CONFIG != calls[i].rc || 0 != strcmp(calls[i].line, line)) {
            return 11;
        }
        if (calls[i].cfg != calls[0].cfg) {
            return 12;
        }
    }
    /* And again on this thread, after its detail was cleared. */
    ob_clear_error();
    if (OMNIBATCH_ERR_CONFIG != ob_config_global(&cfg) || 0 != strcmp(ob_last_error(), line)) {
        return 13;
    }
    if (OMNIBATCH_ERR_CONFIG != ob_config_global(NULL)) {
        return 14;
    }
    /* On failure the settings are the defaults, the debug level included. */
    ob_config_defaults(&def);
    if (def.gain != cfg->gain || def.debug != cfg->debug || 0 != ob_log_debug_level()) {
        return 15;
    }
    return 0;
}

START_TEST(test_global_parses_once)
{
    ck_assert_int_eq(run_in_child(global_good_then_ignored), 0);
}
END_TEST

START_TEST(test_global_failure_is_the_same_on_every_call)
{
    ck_assert_int_eq(run_in_child(global_bad_every_time), 0);
}
END_TEST

/* ---- agreement between ranks ------------------------------------------------------- */

/* Every setting but OMNIBATCH_DEBUG and OMNIBATCH_WAIT must agree; each one's hash follows its
 * value, whatever spelling set it, and changes when its value does. */
START_TEST(test_hash_follows_every_value_that_must_agree)
{
    ob_config base, other;

    ob_config_defaults(&base);
    non_default_config(&other);
    ck_assert_uint_eq(ob_config_count(), sizeof documented_names / sizeof documented_names[0]);
    for (size_t i = 0; i < ob_config_count(); i++) {
        const char *name = ob_config_name(i);
        int per_rank = 0 == strcmp(name, "OMNIBATCH_DEBUG") || 0 == strcmp(name, "OMNIBATCH_WAIT");

        ck_assert_int_eq(ob_config_must_agree(i), !per_rank);
        ck_assert_uint_lt(ob_config_hash(&base, i), OB_CONFIG_HASH_TOP);
        if (per_rank) {
            ck_assert_uint_eq(ob_config_hash(&base, i), 0);
            ck_assert_uint_eq(ob_config_hash(&other, i), 0);
        } else {
            ck_assert_msg(ob_config_hash(&base, i) != ob_config_hash(&other, i),
                          "%s: the hash does not change with the value", name);
        }
    }
    ck_assert_ptr_null(ob_config_name(ob_config_count()));
    ck_assert(!ob_config_must_agree(ob_config_count()));
}
END_TEST

static size_t index_of(const char *name)
{
    for (size_t i = 0; i < ob_config_count(); i++) {
        if (0 == strcmp(ob_config_name(i), name)) {
            return i;
        }
    }
    ck_abort_msg("%s is not in the table", name);
    return 0;
}

START_TEST(test_values_are_spelt_one_way)
{
    ob_config a, b;
    char va[256], vb[256];

    ob_config_defaults(&a);
    ob_config_defaults(&b);
    ck_assert_int_eq(parse1(&a, "OMNIBATCH_ENABLE", "1", NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(parse1(&b, "OMNIBATCH_ENABLE", "YES", NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(parse1(&a, "OMNIBATCH_MIN_BYTES", "2K", NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(parse1(&b, "OMNIBATCH_MIN_BYTES", "2048", NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(parse1(&a, "OMNIBATCH_GAIN", "0.50", NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(parse1(&b, "OMNIBATCH_GAIN", "5e-1", NULL), OMNIBATCH_SUCCESS);
    for (size_t i = 0; i < ob_config_count(); i++) {
        ck_assert_uint_eq(ob_config_hash(&a, i), ob_config_hash(&b, i));
    }
    ob_config_value(&a, index_of("OMNIBATCH_ENABLE"), va, sizeof va);
    ck_assert_str_eq(va, "on");
    ob_config_value(&a, index_of("OMNIBATCH_MIN_BYTES"), va, sizeof va);
    ck_assert_str_eq(va, "2048");
    ob_config_value(&a, index_of("OMNIBATCH_CONVENTION"), va, sizeof va);
    ck_assert_str_eq(va, "auto");
    ob_config_value(&a, index_of("OMNIBATCH_TRACE"), va, sizeof va);
    ck_assert_str_eq(va, "(unset)");
    ck_assert_int_eq(parse1(&b, "OMNIBATCH_TRACE", "a\tb.csv", NULL), OMNIBATCH_SUCCESS);
    ob_config_value(&b, index_of("OMNIBATCH_TRACE"), vb, sizeof vb);
    ck_assert_str_eq(vb, "a\\x09b.csv");
}
END_TEST

START_TEST(test_bounds_checked_against_the_ranks)
{
    ob_config cfg;

    ob_config_defaults(&cfg);
    /* No global batch: nothing to check. */
    cfg.min_batch = 1000;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 4), OMNIBATCH_SUCCESS);
    cfg.global_batch = 4000;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 4), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 5), OMNIBATCH_ERR_CONFIG);
    ck_assert_str_eq(ob_last_error(), "OMNIBATCH_MIN_BATCH='1000': 5 ranks need at least 5000 "
                     "samples, more than OMNIBATCH_GLOBAL_BATCH=4000; expected at most 800");
    cfg.min_batch = 1;
    cfg.max_batch = 1000;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 4), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 3), OMNIBATCH_ERR_CONFIG);
    ck_assert_str_eq(ob_last_error(), "OMNIBATCH_MAX_BATCH='1000': 3 ranks hold at most 3000 "
                     "samples, fewer than OMNIBATCH_GLOBAL_BATCH=4000; expected 0 (no limit) or at "
                     "least 1334");
    cfg.max_batch = 0;
    cfg.granularity = 4000;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 3), OMNIBATCH_SUCCESS);
    cfg.granularity = 4001;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 3), OMNIBATCH_ERR_CONFIG);
    ck_assert_str_eq(ob_last_error(), "OMNIBATCH_GRANULARITY='4001': expected at most "
                     "OMNIBATCH_GLOBAL_BATCH=4000");
    /* The largest values stay exact. */
    cfg.granularity = 1;
    cfg.min_batch = OB_CONFIG_BATCH_LIMIT;
    cfg.global_batch = OB_CONFIG_BATCH_LIMIT;
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 1), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_config_check_ranks(&cfg, 2147483647), OMNIBATCH_ERR_CONFIG);
}
END_TEST

static Suite *make_config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *table = tcase_create("table");
    TCase *values = tcase_create("values");
    TCase *names = tcase_create("names");
    TCase *global = tcase_create("global");

    tcase_add_test(table, test_table_holds_exactly_the_documented_variables);
    tcase_add_test(table, test_each_variable_sets_its_own_field_only);
    tcase_add_test(table, test_documented_defaults_are_the_defaults);
    tcase_add_test(table, test_error_lines_quote_the_allowed_column);
    tcase_add_test(table, test_markdown_table);
    tcase_add_test(table, test_roff_table);
    tcase_add_test(table, test_config_page_holds_the_table);
    suite_add_tcase(s, table);

    tcase_add_test(values, test_good_values);
    tcase_add_test(values, test_booleans_in_every_spelling);
    tcase_add_test(values, test_paths);
    tcase_add_test(values, test_bad_values_give_the_exact_line_and_change_nothing);
    tcase_add_test(values, test_too_long_path_is_refused_and_shown_short);
    tcase_add_test(values, test_one_bad_value_discards_the_good_ones);
    tcase_add_test(values, test_many_variables_at_once);
    tcase_add_test(values, test_first_of_duplicate_names_wins);
    tcase_add_test(values, test_no_environment_and_bad_arguments);
    tcase_add_test(values, test_rules_between_variables);
    tcase_add_test(values, test_rules_include_the_settings_given);
    tcase_add_test(values, test_choice_names_round_trip);
    tcase_add_test(values, test_hash_follows_every_value_that_must_agree);
    tcase_add_test(values, test_values_are_spelt_one_way);
    tcase_add_test(values, test_bounds_checked_against_the_ranks);
    suite_add_tcase(s, values);

    tcase_add_test(names, test_unknown_names_warn_with_the_closest_known_name);
    tcase_add_test(names, test_other_names_are_not_ours);
    tcase_add_test(names, test_unknown_names_reported_before_a_failure);
    tcase_add_test(names, test_default_warning_lines);
    suite_add_tcase(s, names);

    tcase_add_test(global, test_global_parses_once);
    tcase_add_test(global, test_global_failure_is_the_same_on_every_call);
    suite_add_tcase(s, global);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_config_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
