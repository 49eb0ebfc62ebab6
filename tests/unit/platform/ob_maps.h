/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * For the memory-type tests: is a library mapped into this process?  Read
 * from /proc/self/maps, which lists every mapped file.
 */
#ifndef OB_TEST_MAPS_H
#define OB_TEST_MAPS_H

#include <stdio.h>
#include <string.h>

/* 1 when a mapped file's path contains \p name, 0 when none does, -1 when
 * the maps cannot be read. */
static inline int ob_test_mapped(const char *name)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");

    if (NULL == f) {
        return -1;
    }
    while (!found && NULL != fgets(line, sizeof line, f)) {
        found = NULL != strstr(line, name);
    }
    fclose(f);
    return found;
}

#endif /* OB_TEST_MAPS_H */
