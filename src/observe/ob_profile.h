/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Preload mode's profile (OMNIBATCH_PROFILE=file): the measured split of a
 * run, kept across runs.  At MPI_Finalize rank 0 writes each rank's host,
 * cores, model t = alpha + beta * b, mean batch and balanced share; the
 * next run reads the file at its finalize, before writing its own, and
 * its report compares the two splits rank by rank (a rank is matched by
 * host and cores, the k-th rank on them with the k-th saved for them, as
 * a restarted job's ranks are; a rank on a new host has no previous
 * share).  MPI-free.
 *
 * The file is text, one header line and one line per rank:
 *   omnibatch-profile 1 RANKS GLOBAL_BATCH
 *   RANK HOST CORES ALPHA BETA BATCH SHARE
 * (host names hold no white space; NaN where unknown).
 */
#ifndef OB_PROFILE_H
#define OB_PROFILE_H

#include <stdio.h>

#include "ob_report.h"

/** Ranks a profile holds at most (a larger file is refused). */
#define OB_PROFILE_MAX_RANKS 1048576

typedef struct ob_profile_rank {
    char host[64];
    int cores;
    double alpha;
    double beta;
    double batch;                /* mean measured batch, NaN when unknown */
    double share;                /* balanced share of the global batch, NaN when none */
} ob_profile_rank;

typedef struct ob_profile {
    int nranks;
    long global_batch;           /* 0 = unknown */
    ob_profile_rank *ranks;
} ob_profile;

/** \brief Write \p rep's split to \p path (aside, then renamed). */
int ob_profile_write(const char *path, const ob_report *rep);

/**
 * \brief Read a profile.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG with a detail line (no such file, or not a
 *         profile: the line and what was expected); OMNIBATCH_ERR_NOMEM.  Free with
 *         ob_profile_free().
 */
int ob_profile_read(const char *path, ob_profile *prof);

/** \brief The entry of \p prof for the \p occurrence-th rank on \p host and \p cores, or -1. */
int ob_profile_match(const ob_profile *prof, const char *host, int cores, int occurrence);

/**
 * \brief The text lines comparing \p rep's split with the previous run's \p prev (named
 *        \p path): each rank's balanced share then and now, and the largest change.
 */
void ob_profile_compare_text(FILE *f, const ob_report *rep, const ob_profile *prev, const char *path);

/** \brief Free what ob_profile_read() allocated. */
void ob_profile_free(ob_profile *prof);

#endif /* OB_PROFILE_H */
