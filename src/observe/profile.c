/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The measured split kept across runs (see ob_profile.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_profile.h"

/* Host names with white space would break the line format: '_' instead. */
static void ob_profile_host(const char *in, char *out, size_t size)
{
    size_t k = 0;

    for (; k + 1 < size && '\0' != in[k]; k++) {
        out[k] = (' ' == in[k] || '\t' == in[k] || '\n' == in[k]) ? '_' : in[k];
    }
    out[k] = '\0';
    if (0 == k && size > 1) {
        out[0] = '?';
        out[1] = '\0';
    }
}

int ob_profile_write(const char *path, const ob_report *rep)
{
    char tmp[4200];
    FILE *f;
    int why;

    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "OMNIBATCH_PROFILE='%s': cannot write %s: %s", path, tmp,
                       strerror(errno));
    }
    fprintf(f, "omnibatch-profile 1 %d %ld\n", rep->nranks, rep->global_batch);
    for (int i = 0; i < rep->nranks; i++) {
        char host[64];

        ob_profile_host(rep->stats[i].host, host, sizeof host);
        fprintf(f, "%d %s %d %.9g %.9g %.9g %.9g\n", i, host, rep->stats[i].cores, rep->ranks[i].alpha,
                rep->ranks[i].beta, rep->ranks[i].batch, rep->split_ok ? rep->ranks[i].share : (double) NAN);
    }
    /* The first failure's reason: the writes', the close's or the rename's. */
    why = 0 != fflush(f) || ferror(f) ? (0 != errno ? errno : EIO) : 0;
    if (0 != fclose(f) && 0 == why) {
        why = errno;
    }
    if (0 == why && 0 != rename(tmp, path)) {
        why = errno;
    }
    if (0 != why) {
        remove(tmp);
        return ob_fail(OMNIBATCH_ERR_ARG, "OMNIBATCH_PROFILE='%s': cannot write it: %s", path,
                       strerror(why));
    }
    return OMNIBATCH_SUCCESS;
}

void ob_profile_free(ob_profile *prof)
{
    free(prof->ranks);
    memset(prof, 0, sizeof *prof);
}

int ob_profile_read(const char *path, ob_profile *prof)
{
    FILE *f = fopen(path, "r");
    int version = 0;
    int rc = OMNIBATCH_SUCCESS;

    memset(prof, 0, sizeof *prof);
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "OMNIBATCH_PROFILE='%s': no previous profile there", path);
    }
    if (3 != fscanf(f, "omnibatch-profile %d %d %ld", &version, &prof->nranks, &prof->global_batch)
        || 1 != version || prof->nranks < 1 || prof->nranks > OB_PROFILE_MAX_RANKS) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "OMNIBATCH_PROFILE='%s': not a profile: expected a first line "
                     "'omnibatch-profile 1 RANKS GLOBAL_BATCH'", path);
    } else if (NULL == (prof->ranks = calloc((size_t) prof->nranks, sizeof *prof->ranks))) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "OMNIBATCH_PROFILE='%s': no memory for %d ranks", path, prof->nranks);
    }
    for (int i = 0; OMNIBATCH_SUCCESS == rc && i < prof->nranks; i++) {
        ob_profile_rank *r = &prof->ranks[i];
        int rank = -1;

        /* NaN is written as "nan" or "-nan", which strtod (and so %lf) reads. */
        if (7 != fscanf(f, "%d %63s %d %lf %lf %lf %lf", &rank, r->host, &r->cores, &r->alpha, &r->beta,
                        &r->batch, &r->share) || rank != i) {
            rc = ob_fail(OMNIBATCH_ERR_ARG, "OMNIBATCH_PROFILE='%s': line %d: expected 'RANK HOST CORES ALPHA "
                         "BETA BATCH SHARE' for rank %d", path, i + 2, i);
        }
    }
    fclose(f);
    if (OMNIBATCH_SUCCESS != rc) {
        ob_profile_free(prof);
    }
    return rc;
}

int ob_profile_match(const ob_profile *prof, const char *host, int cores, int occurrence)
{
    char h[64];
    int seen = 0;

    ob_profile_host(host, h, sizeof h);
    for (int i = 0; i < prof->nranks; i++) {
        if (0 == strcmp(prof->ranks[i].host, h) && prof->ranks[i].cores == cores && seen++ == occurrence) {
            return i;
        }
    }
    return -1;
}

/* The previous entry of rank i of this run: the occurrence-th on its host and cores. */
static int ob_profile_entry_of(const ob_report *rep, const ob_profile *prev, int i)
{
    int occurrence = 0;

    for (int j = 0; j < i; j++) {
        occurrence += 0 == strcmp(rep->stats[j].host, rep->stats[i].host) && rep->stats[j].cores == rep->stats[i].cores;
    }
    return ob_profile_match(prev, rep->stats[i].host, rep->stats[i].cores, occurrence);
}

void ob_profile_compare_text(FILE *f, const ob_report *rep, const ob_profile *prev, const char *path)
{
    double worst = 0.0;
    int worst_rank = -1, fresh = 0;

    if (!rep->split_ok) {
        fprintf(f, "  profile %s: the previous run's split is not compared (no balanced split now)\n", path);
        return;
    }
    fprintf(f, "  profile %s: balanced share then -> now (%d rank%s then):", path, prev->nranks,
            1 == prev->nranks ? "" : "s");
    for (int i = 0; i < rep->nranks; i++) {
        int e = ob_profile_entry_of(rep, prev, i);
        double now = rep->ranks[i].share;

        if (e < 0 || isnan(prev->ranks[e].share)) {
            fprintf(f, " new -> %.1f%%", 100.0 * now);
            fresh++;
            continue;
        }
        fprintf(f, " %.1f%% -> %.1f%%", 100.0 * prev->ranks[e].share, 100.0 * now);
        if (fabs(now - prev->ranks[e].share) > worst) {
            worst = fabs(now - prev->ranks[e].share);
            worst_rank = i;
        }
    }
    fprintf(f, "\n");
    if (worst_rank >= 0) {
        fprintf(f, "  profile: the largest change is rank %d's, %.1f points of the global batch%s\n", worst_rank,
                100.0 * worst, fresh > 0 ? "; ranks marked new run on a host and core count the profile lacks" : "");
    }
}
