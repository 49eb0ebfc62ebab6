/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What a Check suite's main() reports as failed.  Check runs only the
 * suites, cases and tags that CK_RUN_SUITE, CK_RUN_CASE, CK_INCLUDE_TAGS
 * and CK_EXCLUDE_TAGS select, and a name that selects none (a misspelt
 * case) gives "100%: Checks: 0" and no failure: a run that checked nothing
 * must not pass.
 */
#ifndef OB_CHECK_RUN_H
#define OB_CHECK_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* An environment variable as the line shows it: unset, or its value. */
static inline const char *ob_check_env(const char *name)
{
    const char *value = getenv(name);

    return NULL == value ? "(unset)" : value;
}

/* The tests of \p sr that failed; 1, with a line naming the selection,
 * when none ran. */
static inline int ob_check_failed(SRunner *sr)
{
    if (0 == srunner_ntests_run(sr)) {
        fprintf(stderr,
                "no test ran: CK_RUN_SUITE=%s, CK_RUN_CASE=%s, CK_INCLUDE_TAGS=%s, CK_EXCLUDE_TAGS=%s select "
                "none; a run that checked nothing fails\n",
                ob_check_env("CK_RUN_SUITE"), ob_check_env("CK_RUN_CASE"), ob_check_env("CK_INCLUDE_TAGS"),
                ob_check_env("CK_EXCLUDE_TAGS"));
        return 1;
    }
    return srunner_ntests_failed(sr);
}

#endif /* OB_CHECK_RUN_H */
