/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The one error convention of omnibatch, used by every function in src/
 * and the API: return an int status, OMNIBATCH_SUCCESS (0) or one of the
 * positive codes of omnibatch_status (omnibatch.h).  A function that fails
 * also records one line of detail for the calling thread through ob_fail();
 * omnibatch_last_error() returns it.  Nothing in src/ uses errno-style -1.
 */
#ifndef OB_ERROR_H
#define OB_ERROR_H

#include "omnibatch_status.h"

/**
 * \brief Record a failure for this thread and return its code.
 *
 * The message is one line without the "omnibatch: " prefix and without a
 * trailing newline, e.g. "OMNIBATCH_GAIN='abc': expected a number in (0, 1]".
 * Typical use: `return ob_fail(OMNIBATCH_ERR_ARG, "B=%ld: ...", B);`
 *
 * \param[in] code  one of omnibatch_status, not OMNIBATCH_SUCCESS.
 * \param[in] fmt   printf format of the detail line.
 * \return code, unchanged.
 */
int ob_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** \brief The detail line of this thread's last failure ("" if none). */
const char *ob_last_error(void);

/** \brief Forget this thread's last failure. */
void ob_clear_error(void);

#endif /* OB_ERROR_H */
