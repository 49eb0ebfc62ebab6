/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The one JSON string writer of the core, for the report (report_write.c)
 * and the timeline (timeline.c): quotes, backslashes and control
 * characters escaped, every other byte as it is.  MPI-free.
 */
#ifndef OB_JSON_H
#define OB_JSON_H

#include <stdio.h>

/** \brief Write \p s as a JSON string body (no quotes around it). */
void ob_json_escaped(FILE *f, const char *s);

/** \brief Write \p s as a JSON string, in quotes. */
void ob_json_quoted(FILE *f, const char *s);

#endif /* OB_JSON_H */
