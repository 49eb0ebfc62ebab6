/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the simulator prints: the header that says what every column
 * means, one row per run, and the JSON summary of all runs.
 */
#ifndef OB_SIM_REPORT_H
#define OB_SIM_REPORT_H

#include "sim_options.h"
#include "sim_run.h"

/** \brief The settings, the scenarios asked for, the columns' meaning and the table header. */
void ob_sim_print_header(const ob_sim_opts *o);

/** \brief One run's row of the table. */
void ob_sim_print_row(const ob_sim_result *r);

/**
 * \brief The \p n runs of \p r as JSON into o->summary.
 * \return 0, or 1 after one line on stderr naming the file.
 */
int ob_sim_write_summary(const ob_sim_opts *o, const ob_sim_result *r, int n, double total_s);

#endif /* OB_SIM_REPORT_H */
