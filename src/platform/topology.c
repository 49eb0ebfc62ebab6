/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What hardware a rank runs on, through hwloc 2.x (ob_topology.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "ob_error.h"
#include "ob_topology.h"

/* PCI class codes (class << 8 | subclass). */
#define OB_PCI_CLASS_DISPLAY 0x03      /* base class: VGA, XGA, 3D, other display */
#define OB_PCI_CLASS_3D 0x0302         /* 3D controller: compute GPUs without a display */

/* A source is shown in an error line at most this long. */
#define OB_SHOWN_SOURCE_MAX 48

static void ob_show_source(const char *source, char *out, size_t size)
{
    size_t n = strcspn(source, "\n");

    if (n > OB_SHOWN_SOURCE_MAX) {
        n = OB_SHOWN_SOURCE_MAX;
    }
    snprintf(out, size, "%.*s%s", (int) n, source, '\0' != source[n] ? "..." : "");
}

/* Largest PU index a cpuset string may name: hwloc would allocate a bitmap
 * that large for "0-4000000000". */
#define OB_PU_INDEX_LIMIT 1048575UL

/* A PU index at *p: digits, at most OB_PU_INDEX_LIMIT. */
static int ob_pu_index(const char **p, unsigned long *index)
{
    unsigned long x = 0;

    if (!isdigit((unsigned char) **p)) {
        return 0;
    }
    while (isdigit((unsigned char) **p)) {
        x = 10 * x + (unsigned long) (**p - '0');
        if (x > OB_PU_INDEX_LIMIT) {
            return 0;
        }
        (*p)++;
    }
    *index = x;
    return 1;
}

/* "0-3,8": decimal indexes and increasing ranges, comma-separated, nothing
 * else.  hwloc's own parser is lenient (it also takes "0-" for "from 0 on"). */
static int ob_cpuset_syntax_ok(const char *s)
{
    const char *p = s;
    unsigned long lo;
    unsigned long hi;

    for (;;) {
        if (!ob_pu_index(&p, &lo)) {
            return 0;
        }
        if ('-' == *p) {
            p++;
            if (!ob_pu_index(&p, &hi) || hi < lo) {
                return 0;
            }
        }
        if ('\0' == *p) {
            return 1;
        }
        if (',' != *p) {
            return 0;
        }
        p++;
    }
}

static int ob_parse_cpuset(const char *text, hwloc_bitmap_t set)
{
    if (!ob_cpuset_syntax_ok(text) || 0 != hwloc_bitmap_list_sscanf(set, text)) {
        char shown[OB_SHOWN_SOURCE_MAX + 8];

        ob_show_source(text, shown, sizeof shown);
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "cpuset='%s': expected a list of PU indexes such as 0-3,8", shown);
    }
    return OMNIBATCH_SUCCESS;
}

/* \p with_io: also discover I/O devices (GPUs, coprocessors). */
static int ob_load(hwloc_topology_t *topo, const char *source, int with_io)
{
    char shown[OB_SHOWN_SOURCE_MAX + 8];
    int is_xml = NULL != source && '<' == source[0];
    int rc = 0;

    if (0 != hwloc_topology_init(topo)) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "hwloc_topology_init failed: %s", strerror(errno));
    }
    if (NULL != source) {
        ob_show_source(source, shown, sizeof shown);
        if (is_xml) {
            size_t len = strlen(source);

            if (len >= INT_MAX) {
                hwloc_topology_destroy(*topo);
                return ob_fail(OMNIBATCH_ERR_ARG, "topology XML of %zu bytes: expected less than 2 GiB",
                               len);
            }
            /* hwloc counts the terminating NUL in the size. */
            rc = hwloc_topology_set_xmlbuffer(*topo, source, (int) len + 1);
        } else {
            rc = hwloc_topology_set_synthetic(*topo, source);
        }
        if (0 != rc) {
            hwloc_topology_destroy(*topo);
            return ob_fail(OMNIBATCH_ERR_ARG, "topology '%s': expected %s", shown,
                           is_xml ? "a valid hwloc XML document"
                                  : "an hwloc synthetic description such as 'node:2 core:4 pu:2'");
        }
    }
    if (with_io) {
        /* GPUs and coprocessors are I/O objects, dropped unless asked for;
         * "important" keeps them without every PCI bridge. */
        hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        if (NULL == source) {
            /* Linux's sysfs gives the PCI devices and their classes; the
             * libpciaccess plugin would add only names, read from the PCI ID
             * database at a cost (and a leak) on every load. */
            (void) hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
        }
    }
    if (0 != hwloc_topology_load(*topo)) {
        hwloc_topology_destroy(*topo);
        if (NULL != source) {
            return ob_fail(OMNIBATCH_ERR_ARG, "topology '%s': expected %s", shown,
                           is_xml ? "a valid hwloc XML document" : "a topology hwloc can build");
        }
        return ob_fail(OMNIBATCH_ERR_STATE, "hwloc could not discover this machine: %s",
                       strerror(errno));
    }
    return OMNIBATCH_SUCCESS;
}

/* Objects of \p type whose cpuset meets \p set. */
static int ob_count_touching(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_bitmap_t set)
{
    int n = 0;

    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); NULL != o;
         o = hwloc_get_next_obj_by_type(topo, type, o)) {
        if (NULL != o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) {
            n++;
        }
    }
    return n;
}

static int ob_is_accelerator_osdev(hwloc_obj_t o)
{
    return HWLOC_OBJ_OS_DEVICE == o->type
           && (HWLOC_OBJ_OSDEV_GPU == o->attr->osdev.type
               || HWLOC_OBJ_OSDEV_COPROC == o->attr->osdev.type);
}

/* The accelerator OS devices below a PCI device: 0 none, else the flags
 * 1 (some is a GPU) and 2 (some is a coprocessor). */
static int ob_pci_accelerator_kinds(hwloc_obj_t pci)
{
    int kinds = 0;

    for (hwloc_obj_t c = pci->io_first_child; NULL != c; c = c->next_sibling) {
        if (ob_is_accelerator_osdev(c)) {
            kinds |= HWLOC_OBJ_OSDEV_GPU == c->attr->osdev.type ? 1 : 2;
        }
    }
    return kinds;
}

/* Is \p obj near \p set: does its first non-I/O ancestor's cpuset meet it? */
static int ob_near(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_const_bitmap_t set)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);

    return NULL != anc && NULL != anc->cpuset && hwloc_bitmap_intersects(anc->cpuset, set);
}

/*
 * One GPU is often seen through several OS devices (cuda0 and nvml0 and
 * opencl0d0 of the same board), so devices are counted per PCI device: a
 * display-class or GPU-typed one is a GPU, else a coprocessor.  A 3D
 * controller counts as a GPU even when no OS device shows it (hwloc built
 * without the vendor's plugin); plain VGA without one is a console (a BMC),
 * not a GPU.  An accelerator OS device without a PCI parent counts by its
 * own type.
 */
static void ob_count_accelerators(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                                  ob_topology_info *info)
{
    for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, NULL); NULL != pci;
         pci = hwloc_get_next_pcidev(topo, pci)) {
        int kinds = ob_pci_accelerator_kinds(pci);
        unsigned cls = pci->attr->pcidev.class_id;

        if (0 == kinds && OB_PCI_CLASS_3D != cls) {
            continue;
        }
        if (OB_PCI_CLASS_DISPLAY == cls >> 8 || 0 != (kinds & 1)) {
            info->gpus++;
            info->local_gpus += ob_near(topo, pci, set);
        } else {
            info->coprocessors++;
        }
    }
    for (hwloc_obj_t os = hwloc_get_next_osdev(topo, NULL); NULL != os;
         os = hwloc_get_next_osdev(topo, os)) {
        hwloc_obj_t p = os->parent;

        if (!ob_is_accelerator_osdev(os)) {
            continue;
        }
        while (NULL != p && HWLOC_OBJ_PCI_DEVICE != p->type) {
            p = p->parent;
        }
        if (NULL != p) {
            continue;
        }
        if (HWLOC_OBJ_OSDEV_GPU == os->attr->osdev.type) {
            info->gpus++;
            info->local_gpus += ob_near(topo, os, set);
        } else {
            info->coprocessors++;
        }
    }
}

/* The PUs the rank counts: the given cpuset, its binding on this host (the
 * whole machine when unbound or unreadable), or all of a loaded topology;
 * always within the topology. */
static int ob_rank_cpuset(hwloc_topology_t topo, const char *source, const char *cpuset,
                          hwloc_bitmap_t set)
{
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
    int rc = OMNIBATCH_SUCCESS;

    if (NULL != cpuset) {
        rc = ob_parse_cpuset(cpuset, set);
    } else if (NULL != source
               || 0 != hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) || hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_copy(set, all);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    hwloc_bitmap_and(set, set, all);
    if (hwloc_bitmap_iszero(set)) {
        char have[64];
        char shown[OB_SHOWN_SOURCE_MAX + 8];

        hwloc_bitmap_list_snprintf(have, sizeof have, all);
        ob_show_source(cpuset, shown, sizeof shown);
        return ob_fail(OMNIBATCH_ERR_ARG, "cpuset='%s': expected PUs of the topology (%s)", shown, have);
    }
    return OMNIBATCH_SUCCESS;
}

/* This host's name, or the one a loaded topology records. */
static void ob_topology_hostname(hwloc_topology_t topo, const char *source, ob_topology_info *info)
{
    const char *host;

    if (NULL == source) {
        if (0 != gethostname(info->hostname, sizeof info->hostname)) {
            info->hostname[0] = '\0';
        }
        info->hostname[sizeof info->hostname - 1] = '\0';
        return;
    }
    host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "HostName");
    if (NULL != host) {
        snprintf(info->hostname, sizeof info->hostname, "%s", host);
    }
}

int ob_topology_query(const char *source, const char *cpuset, ob_topology_info *info)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set;
    int rc;

    if (NULL == info) {
        return ob_fail(OMNIBATCH_ERR_ARG, "info=NULL: expected where to store the topology");
    }
    memset(info, 0, sizeof *info);
    if (NULL != source && '\0' == source[0]) {
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "topology '': expected NULL (this host), a synthetic description or XML");
    }
    rc = ob_load(&topo, source, 1);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    set = hwloc_bitmap_alloc();
    if (NULL == set) {
        hwloc_topology_destroy(topo);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for a cpuset");
    }
    rc = ob_rank_cpuset(topo, source, cpuset, set);
    if (OMNIBATCH_SUCCESS == rc) {
        info->pus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_PU);
        info->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0
                      ? ob_count_touching(topo, HWLOC_OBJ_CORE, set)
                      : info->pus;
        info->numa_nodes = ob_count_touching(topo, HWLOC_OBJ_NUMANODE, set);
        info->packages = ob_count_touching(topo, HWLOC_OBJ_PACKAGE, set);
        ob_count_accelerators(topo, set, info);
        ob_topology_hostname(topo, source, info);
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}

/* Entries of a CUDA_VISIBLE_DEVICES list: CUDA stops at the first entry
 * that is a negative index ("-1" hides every GPU). */
static int ob_visible_entries(const char *list)
{
    int n = 0;
    const char *p = list;

    while ('\0' != *p) {
        size_t len = strcspn(p, ",");

        while (len > 0 && isspace((unsigned char) *p)) {
            p++;
            len--;
        }
        if (0 == len || '-' == *p) {
            break;
        }
        n++;
        p += len;
        if (',' == *p) {
            p++;
        }
    }
    return n;
}

int ob_topology_own_gpus(const ob_topology_info *info, const char *visible_devices)
{
    int visible;

    if (NULL == info) {
        return 0;
    }
    if (NULL == visible_devices) {
        return info->local_gpus;
    }
    visible = ob_visible_entries(visible_devices);
    return visible < info->gpus ? visible : info->gpus;
}

int ob_topology_bind_cores(int first, int ncores)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set;
    hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
    int total;
    int rc;

    if (first < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "first=%d: expected a core index >= 0", first);
    }
    if (ncores < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "ncores=%d: expected at least 1 core", ncores);
    }
    rc = ob_load(&topo, NULL, 0);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (total < 1) {
        /* Some platforms show no cores: each PU is its own. */
        unit = HWLOC_OBJ_PU;
        total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    }
    if (ncores > total) {
        hwloc_topology_destroy(topo);
        return ob_fail(OMNIBATCH_ERR_ARG, "ncores=%d: expected at most the %d cores this process may use",
                       ncores, total);
    }
    set = hwloc_bitmap_alloc();
    if (NULL == set) {
        hwloc_topology_destroy(topo);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for a cpuset");
    }
    for (int k = 0; k < ncores; k++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, unit, (unsigned) ((first % total + k) % total));

        if (NULL != core && NULL != core->cpuset) {
            hwloc_bitmap_or(set, set, core->cpuset);
        }
    }
    if (0 != hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS)) {
        char list[64];
        int err = errno;

        hwloc_bitmap_list_snprintf(list, sizeof list, set);
        rc = ob_fail(OMNIBATCH_ERR_STATE, "binding to cores %d..%d (PUs %s) failed: %s", first % total,
                     (first % total + ncores - 1) % total, list, strerror(err));
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}
