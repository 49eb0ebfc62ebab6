/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 *   omnibatch-man TEMPLATE LIBDIR BINDIR LIBNAME VENDOR
 *
 * Writes the omnibatch(7) man page to standard output: TEMPLATE
 * (docs/omnibatch.7.in) with its placeholders filled and the line
 * @OB_CONFIG_TABLE@ replaced by the configuration table as roff
 * (ob_config_roff(), the table that parses the settings and writes the
 * configuration page's table, docs/configuration.md).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_config.h"

/* One placeholder and its value. */
typedef struct man_subst {
    const char *key;
    const char *value;
} man_subst;

/* A template line, its placeholders replaced. */
static void put_line(const char *line, const man_subst *subst, size_t nsubst)
{
    while ('\0' != *line) {
        size_t k = 0;

        while (k < nsubst && 0 != strncmp(line, subst[k].key, strlen(subst[k].key))) {
            k++;
        }
        if (k < nsubst) {
            fputs(subst[k].value, stdout);
            line += strlen(subst[k].key);
        } else {
            fputc(*line++, stdout);
        }
    }
}

static int put_table(void)
{
    size_t need = ob_config_roff(NULL, 0);
    char *roff = malloc(need + 1);

    if (NULL == roff) {
        fprintf(stderr, "omnibatch-man: no memory for the table\n");
        return 0;
    }
    ob_config_roff(roff, need + 1);
    fputs(roff, stdout);
    free(roff);
    return 1;
}

int main(int argc, char **argv)
{
    char line[1024];
    FILE *in;
    int ok = 1;

    if (6 != argc) {
        fprintf(stderr, "usage: omnibatch-man TEMPLATE LIBDIR BINDIR LIBNAME VENDOR\n");
        return 2;
    }
    const man_subst subst[] = {
        { "@PACKAGE_VERSION@", PACKAGE_VERSION }, { "@libdir@", argv[2] },
        { "@bindir@", argv[3] }, { "@OB_LIBNAME@", argv[4] }, { "@OB_MPI_VENDOR@", argv[5] },
    };
    in = fopen(argv[1], "r");
    if (NULL == in) {
        fprintf(stderr, "omnibatch-man: cannot read the template %s\n", argv[1]);
        return 1;
    }
    while (ok && NULL != fgets(line, sizeof line, in)) {
        if (0 == strcmp(line, "@OB_CONFIG_TABLE@\n")) {
            ok = put_table();
        } else {
            put_line(line, subst, sizeof subst / sizeof subst[0]);
        }
    }
    fclose(in);
    if (!ok || 0 != fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "omnibatch-man: write failed\n");
        return 1;
    }
    return 0;
}
