/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * --false-changes: noisy steps of every rank's estimator at a held plan,
 * and the lasting changes of speed they confirm.  Every one is false.
 */
#ifndef OB_SIM_FALSE_H
#define OB_SIM_FALSE_H

#include "sim_options.h"

/**
 * \brief For each rank count of \p o, count and print the false changes.
 * \return 0 when none was found, 1 when some were (or memory ran out).
 */
int ob_sim_false_main(const ob_sim_opts *o);

#endif /* OB_SIM_FALSE_H */
