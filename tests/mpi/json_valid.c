/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * json_valid FILE: exit 0 when FILE holds one JSON value, 1 when not (the
 * MPI report tests check the layer's JSON report with it).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ob_json_check.h"

int main(int argc, char **argv)
{
    FILE *f;
    char *text;
    long n;
    int ok;

    if (argc != 2 || NULL == (f = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: json_valid FILE (a readable file)\n");
        return 2;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    text = malloc((size_t) n + 1);
    if (NULL == text || (size_t) n != fread(text, 1, (size_t) n, f)) {
        fprintf(stderr, "json_valid: cannot read %s\n", argv[1]);
        return 2;
    }
    text[n] = '\0';
    fclose(f);
    ok = json_parses(text);
    if (!ok) {
        fprintf(stderr, "json_valid: %s does not parse as JSON\n", argv[1]);
    }
    free(text);
    return ok ? 0 : 1;
}
