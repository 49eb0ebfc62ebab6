/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Messages to the user.  Every line goes to stderr prefixed with
 * "omnibatch: " (and "[rank N] " once the rank is known), so a user can
 * tell the library's voice from the application's.
 */
#ifndef OB_LOG_H
#define OB_LOG_H

/** \brief Tell the logger this process's rank (-1: unknown, the default). */
void ob_log_set_rank(int rank);

/** \brief Set the debug level (0 = quiet; OMNIBATCH_DEBUG). */
void ob_log_set_debug(int level);

/** \brief The debug level set by ob_log_set_debug(). */
int ob_log_debug_level(void);

/** \brief An error line: "omnibatch: <message>", always printed. */
void ob_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** \brief A warning line: "omnibatch: warning: <message>", always printed. */
void ob_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** \brief A warning printed by rank 0 only (or by any rank while the rank is unknown). */
void ob_log_warn_rank0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** \brief A debug line, printed when the debug level is at least \p level. */
void ob_log_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* OB_LOG_H */
