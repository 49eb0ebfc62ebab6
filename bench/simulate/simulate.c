/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller alone, without MPI, at up to tens of thousands of
 * simulated ranks.  Rank i's true step time on b samples is
 * t_i(b) = (alpha + beta * b) / s_i for a speed s_i drawn from a scenario;
 * every measured time carries multiplicative noise.  Each rank feeds its own
 * estimator; every period steps the P records go to ob_controller_update()
 * exactly as the API exchanges them, and the run is compared with the
 * oracle (the planner's optimum on the true models), with the best integer
 * plan, with the static equal split, and with OmniLearn's rule run side by
 * side on the same ranks.
 *
 * The parts: sim_options (the command line), sim_run (one run, step by
 * step), sim_decide (one decision and its cost), sim_report (the table and
 * the summary), sim_false (the false-change count).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ob_config.h"
#include "ob_error.h"
#include "sim_clock.h"
#include "sim_false.h"
#include "sim_options.h"
#include "sim_report.h"
#include "sim_run.h"

/* Whether planner \p pl runs at \p P ranks: asked for, and under
 * --planner auto the library's choice for P. */
static int ob_sim_planner_runs(const ob_sim_opts *o, int pl, int P)
{
    if (!o->planner_on[pl]) {
        return 0;
    }
    return !o->planner_auto || (OB_SIM_DISTRIBUTED == pl) == (P >= OB_PLANNER_AUTO_RANKS);
}

/* Every planner asked for at each rank count of scenario \p k: its rows
 * printed, its results appended at results[*n]; 1 if one failed. */
static int ob_sim_scenario_runs(const ob_sim_opts *o, int k, ob_sim_result *results, int *n)
{
    int status = 0;

    for (int j = 0; j < o->nranks; j++) {
        for (int pl = OB_SIM_CENTRAL; pl <= OB_SIM_DISTRIBUTED; pl++) {
            if (!ob_sim_planner_runs(o, pl, o->ranks[j])) {
                continue;
            }
            const int rc = ob_sim_run(o, &ob_sim_scenarios[k], o->ranks[j], (ob_sim_planner) pl, &results[*n]);
            if (OMNIBATCH_SUCCESS != rc) {
                fprintf(stderr, "simulate: %s at P=%d failed: %s (%s)\n", ob_sim_scenarios[k].name, o->ranks[j],
                        omnibatch_strerror(rc), ob_last_error());
                status = 1;
                continue;
            }
            ob_sim_print_row(&results[*n]);
            (*n)++;
        }
    }
    return status;
}

int main(int argc, char **argv)
{
    ob_sim_opts o;
    ob_sim_parse_args(argc, argv, &o);
    if (o.false_steps > 0) {
        return ob_sim_false_main(&o);
    }

    const int most = 2 * OB_SIM_NSCENARIOS * o.nranks;
    ob_sim_result *results = calloc((size_t) most, sizeof *results);
    if (NULL == results) {
        fprintf(stderr, "simulate: out of memory\n");
        return 1;
    }
    ob_sim_print_header(&o);
    const double t0 = ob_sim_now();
    int n = 0;
    int status = 0;
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        if (o.scenario_on[k]) {
            status |= ob_sim_scenario_runs(&o, k, results, &n);
        }
    }
    const double total = ob_sim_now() - t0;
    printf("\nsimulate: %d runs in %.1f s\n", n, total);
    if (NULL != o.summary) {
        status |= ob_sim_write_summary(&o, results, n, total);
        if (0 == status) {
            printf("simulate: summary written to %s\n", o.summary);
        }
    }
    free(results);
    return status;
}
