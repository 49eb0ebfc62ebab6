/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Topology: hwloc synthetic topologies and a hand-written XML node with
 * GPUs, so that nothing depends on the machine running the tests; the host
 * itself is only checked for sanity.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "ob_topology.h"

/* ---- synthetic shapes ------------------------------------------------------- */

typedef struct expected_counts {
    int pus, cores, numa_nodes, packages;
} expected_counts;

/* The counts a synthetic description implies: each level multiplies the
 * objects above it; a topology without a core level has one core per PU,
 * without a NUMA level one node, without a package level none. */
static expected_counts counts_of_description(const char *desc)
{
    expected_counts e = { 0, -1, -1, -1 };
    char copy[256];
    int product = 1;

    snprintf(copy, sizeof copy, "%s", desc);
    for (char *tok = strtok(copy, " "); NULL != tok; tok = strtok(NULL, " ")) {
        char *colon = strchr(tok, ':');

        ck_assert_ptr_nonnull(colon);
        *colon = '\0';
        product *= atoi(colon + 1);
        if (0 == strcmp(tok, "pack") || 0 == strcmp(tok, "package")) {
            e.packages = product;
        } else if (0 == strcmp(tok, "node") || 0 == strcmp(tok, "numa")) {
            e.numa_nodes = product;
        } else if (0 == strcmp(tok, "core")) {
            e.cores = product;
        }
    }
    e.pus = product;
    if (e.cores < 0) {
        e.cores = e.pus;
    }
    if (e.numa_nodes < 0) {
        e.numa_nodes = 1;
    }
    if (e.packages < 0) {
        e.packages = 0;
    }
    return e;
}

START_TEST(test_synthetic_shapes)
{
    static const char *const shapes[] = {
        "pu:1",
        "core:4 pu:1",
        "node:2 core:4 pu:2",
        "pack:2 node:2 core:4 pu:2",
        "pack:1 core:6 pu:1",
        "node:4 pu:3",
        "pack:3 l3:2 core:2 pu:4",
        "pack:2 node:4 l2:2 core:3 pu:1",
        "pack:4 core:16 pu:8",
    };

    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        expected_counts e = counts_of_description(shapes[i]);
        ob_topology_info info;

        ck_assert_msg(OMNIBATCH_SUCCESS == ob_topology_query(shapes[i], NULL, &info), "%s: %s", shapes[i],
                      ob_last_error());
        ck_assert_msg(e.pus == info.pus && e.cores == info.cores && e.numa_nodes == info.numa_nodes
                          && e.packages == info.packages,
                      "%s: %d PUs %d cores %d nodes %d packages, expected %d %d %d %d", shapes[i], info.pus,
                      info.cores, info.numa_nodes, info.packages, e.pus, e.cores, e.numa_nodes, e.packages);
        ck_assert_int_eq(info.gpus, 0);
        ck_assert_int_eq(info.local_gpus, 0);
        ck_assert_int_eq(info.coprocessors, 0);
        ck_assert_str_eq(info.hostname, "");
    }
}
END_TEST

START_TEST(test_description_arithmetic)
{
    /* The helper above, checked by hand on one shape. */
    expected_counts e = counts_of_description("pack:2 node:2 core:4 pu:2");

    ck_assert(32 == e.pus && 16 == e.cores && 4 == e.numa_nodes && 2 == e.packages);
}
END_TEST

/* ---- cpuset restrictions ------------------------------------------------------ */

START_TEST(test_cpuset_restrictions)
{
    /* 2 packages of 2 NUMA nodes of 4 cores of 2 PUs: PUs 0-15 are package 0,
     * PUs 0-7 node 0, PUs 0-1 core 0. */
    static const char shape[] = "pack:2 node:2 core:4 pu:2";
    static const struct {
        const char *cpuset;
        expected_counts e;
    } cases[] = {
        { "0", { 1, 1, 1, 1 } },
        { "0-1", { 2, 1, 1, 1 } },
        { "0,2,4", { 3, 3, 1, 1 } },
        { "0-3,8", { 5, 3, 2, 1 } },
        { "7-8", { 2, 2, 2, 1 } },
        { "15-16", { 2, 2, 2, 2 } },
        { "1,3,5,7,9,11,13,15", { 8, 8, 2, 1 } },
        { "0-31", { 32, 16, 4, 2 } },
        { "0-1000", { 32, 16, 4, 2 } },     /* beyond the machine: only its PUs count */
        { "30-40", { 2, 1, 1, 1 } },
        { "007", { 1, 1, 1, 1 } },          /* decimal */
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ob_topology_info info;

        ck_assert_msg(OMNIBATCH_SUCCESS == ob_topology_query(shape, cases[i].cpuset, &info), "%s: %s",
                      cases[i].cpuset, ob_last_error());
        ck_assert_msg(cases[i].e.pus == info.pus && cases[i].e.cores == info.cores
                          && cases[i].e.numa_nodes == info.numa_nodes
                          && cases[i].e.packages == info.packages,
                      "%s: %d %d %d %d", cases[i].cpuset, info.pus, info.cores, info.numa_nodes,
                      info.packages);
    }
}
END_TEST

/* ---- GPUs and coprocessors from XML ---------------------------------------------- */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text;
    long size;

    ck_assert_msg(NULL != f, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    ck_assert_int_gt(size, 0);
    rewind(f);
    text = malloc((size_t) size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t) size, f), (size_t) size);
    text[size] = '\0';
    fclose(f);
    return text;
}

START_TEST(test_xml_gpus_counted_once_per_device)
{
    char *xml = read_file(OB_TEST_GPU_XML);
    ob_topology_info info;

    /* Two GPUs, each seen through two OS devices; a console VGA without OS
     * device; a PCI coprocessor and one without PCI parent. */
    ck_assert_int_eq(ob_topology_query(xml, NULL, &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(info.gpus, 2);
    ck_assert_int_eq(info.local_gpus, 2);
    ck_assert_int_eq(info.coprocessors, 2);
    ck_assert_int_eq(info.pus, 8);
    ck_assert_int_eq(info.cores, 4);
    ck_assert_int_eq(info.numa_nodes, 2);
    ck_assert_int_eq(info.packages, 2);
    ck_assert_str_eq(info.hostname, "gpunode");

    /* One package: the machine's GPUs, one of them near. */
    ck_assert_int_eq(ob_topology_query(xml, "0-3", &info), OMNIBATCH_SUCCESS);
    ck_assert(4 == info.pus && 2 == info.cores && 1 == info.numa_nodes && 1 == info.packages);
    ck_assert(2 == info.gpus && 1 == info.local_gpus && 2 == info.coprocessors);
    ck_assert_int_eq(ob_topology_query(xml, "6", &info), OMNIBATCH_SUCCESS);
    ck_assert(1 == info.pus && 1 == info.cores && 1 == info.local_gpus);
    ck_assert_int_eq(ob_topology_query(xml, "1,5", &info), OMNIBATCH_SUCCESS);
    ck_assert(2 == info.pus && 2 == info.packages && 2 == info.local_gpus);
    free(xml);
}
END_TEST

/* The prior counts a rank's own GPUs: those its launcher made visible, else
 * those near its cpuset; never the machine's when the rank sees fewer. */
START_TEST(test_own_gpus_of_a_rank)
{
    char *xml = read_file(OB_TEST_GPU_XML);
    ob_topology_info info;

    ck_assert_int_eq(ob_topology_query(xml, "0-3", &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_own_gpus(&info, NULL), 1);         /* the GPU of package 0 */
    ck_assert_int_eq(ob_topology_own_gpus(&info, ""), 0);           /* a CPU rank: none visible */
    ck_assert_int_eq(ob_topology_own_gpus(&info, "1"), 1);
    ck_assert_int_eq(ob_topology_own_gpus(&info, "0,1"), 2);        /* both assigned to it */
    ck_assert_int_eq(ob_topology_own_gpus(&info, "0,1,2,3"), 2);    /* at most the machine's */
    ck_assert_int_eq(ob_topology_own_gpus(&info, "-1"), 0);
    ck_assert_int_eq(ob_topology_own_gpus(&info, "1,-1,0"), 1);     /* CUDA stops at -1 */
    ck_assert_int_eq(ob_topology_own_gpus(&info, "GPU-8f2a1c3e-0d5b-4e61-9f7a-2b3c4d5e6f70"), 1);
    ck_assert_int_eq(ob_topology_own_gpus(&info, " 0, 1"), 2);
    ck_assert_int_eq(ob_topology_query(xml, "4-7", &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_own_gpus(&info, NULL), 1);
    ck_assert_int_eq(ob_topology_query(xml, "3-4", &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_own_gpus(&info, NULL), 2);         /* a rank across both packages */
    ck_assert_int_eq(ob_topology_query(xml, NULL, &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_own_gpus(&info, NULL), 2);
    ck_assert_int_eq(ob_topology_own_gpus(NULL, "0"), 0);
    free(xml);

    /* A machine without GPUs: none, whatever the list says. */
    ck_assert_int_eq(ob_topology_query("pack:2 core:2 pu:1", "0-1", &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_own_gpus(&info, NULL), 0);
    ck_assert_int_eq(ob_topology_own_gpus(&info, "0,1"), 0);
}
END_TEST

/* A node built through hwloc's API: a synthetic machine exported to XML,
 * with two GPUs spliced in as the XML importer reads them: a display device
 * whose only OS device is a coprocessor one (CUDA), and a 3D controller
 * without any OS device (hwloc without the vendor's plugin). */
START_TEST(test_xml_exported_by_hwloc_with_a_gpu_added)
{
    static const char gpu[] =
        "<object type=\"Bridge\" gp_index=\"900\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-01]\">"
        "<object type=\"PCIDev\" gp_index=\"901\" pci_busid=\"0000:01:00.0\" pci_type=\"0300 [10de:1db4] "
        "[10de:1212] a1\" pci_link_speed=\"15.7\">"
        "<object type=\"OSDev\" gp_index=\"902\" name=\"cuda0\" subtype=\"CUDA\" osdev_type=\"5\"/>"
        "</object>"
        "<object type=\"PCIDev\" gp_index=\"903\" pci_busid=\"0000:01:00.1\" pci_type=\"0302 [10de:2330] "
        "[10de:16c1] a1\" pci_link_speed=\"31.5\"/>"
        "</object>";
    hwloc_topology_t topo;
    char *exported;
    int len;
    char *spliced;
    char *machine_end;
    ob_topology_info info;

    ck_assert_int_eq(hwloc_topology_init(&topo), 0);
    ck_assert_int_eq(hwloc_topology_set_synthetic(topo, "node:1 core:2 pu:1"), 0);
    ck_assert_int_eq(hwloc_topology_load(topo), 0);
    ck_assert_int_eq(hwloc_topology_export_xmlbuffer(topo, &exported, &len, 0), 0);
    /* The machine object closes with the last "</object>" of the document. */
    machine_end = strstr(exported, "</topology>");
    ck_assert_ptr_nonnull(machine_end);
    while (machine_end > exported && 0 != strncmp(machine_end, "</object>", 9)) {
        machine_end--;
    }
    spliced = malloc((size_t) len + sizeof gpu);
    ck_assert_ptr_nonnull(spliced);
    memcpy(spliced, exported, (size_t) (machine_end - exported));
    strcpy(spliced + (machine_end - exported), gpu);
    strcat(spliced, machine_end);
    hwloc_free_xmlbuffer(topo, exported);
    hwloc_topology_destroy(topo);

    ck_assert_msg(OMNIBATCH_SUCCESS == ob_topology_query(spliced, NULL, &info), "%s", ob_last_error());
    ck_assert_int_eq(info.pus, 2);
    ck_assert_int_eq(info.cores, 2);
    ck_assert_int_eq(info.gpus, 2);
    ck_assert_int_eq(info.local_gpus, 2);
    ck_assert_int_eq(info.coprocessors, 0);
    free(spliced);
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------- */

START_TEST(test_bad_sources_and_cpusets)
{
    static const struct {
        const char *source;
        const char *cpuset;
        const char *line;
    } cases[] = {
        { "bogus:3", NULL,
          "topology 'bogus:3': expected an hwloc synthetic description such as 'node:2 core:4 pu:2'" },
        { "node:2 core:0 pu:2", NULL,
          "topology 'node:2 core:0 pu:2': expected an hwloc synthetic description such as "
          "'node:2 core:4 pu:2'" },
        { "", NULL, "topology '': expected NULL (this host), a synthetic description or XML" },
        { "<topology>", NULL, "topology '<topology>': expected a valid hwloc XML document" },
        { "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">", NULL,
          "topology '<?xml version=\"1.0\"?>...': expected a valid hwloc XML document" },
        { "node:2 core:4 pu:2", "abc", "cpuset='abc': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "", "cpuset='': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "0-", "cpuset='0-': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "3-1", "cpuset='3-1': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "1,,2", "cpuset='1,,2': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", " 1", "cpuset=' 1': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "0x3", "cpuset='0x3': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "0-4000000000",
          "cpuset='0-4000000000': expected a list of PU indexes such as 0-3,8" },
        { "node:2 core:4 pu:2", "16-17", "cpuset='16-17': expected PUs of the topology (0-15)" },
        { "node:2 core:4 pu:2", "1000", "cpuset='1000': expected PUs of the topology (0-15)" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ob_topology_info info;

        ck_assert_int_eq(ob_topology_query(cases[i].source, cases[i].cpuset, &info), OMNIBATCH_ERR_ARG);
        ck_assert_str_eq(ob_last_error(), cases[i].line);
    }
    ck_assert_int_eq(ob_topology_query("pu:2", NULL, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "info=NULL: expected where to store the topology");
}
END_TEST

/* ---- this host: sanity only ---------------------------------------------------------- */

START_TEST(test_host_is_sane)
{
    ob_topology_info info;
    char name[256];

    ck_assert_msg(OMNIBATCH_SUCCESS == ob_topology_query(NULL, NULL, &info), "%s", ob_last_error());
    ck_assert_int_ge(info.pus, 1);
    ck_assert_int_ge(info.cores, 1);
    ck_assert_int_le(info.cores, info.pus);
    ck_assert_int_ge(info.numa_nodes, 1);
    ck_assert_int_ge(info.gpus, 0);
    ck_assert_int_le(info.local_gpus, info.gpus);
    ck_assert_int_ge(info.coprocessors, 0);
    ck_assert_int_eq(gethostname(name, sizeof name), 0);
    name[sizeof info.hostname - 1] = '\0';
    ck_assert_str_eq(info.hostname, name);
}
END_TEST

/* Cores this process may use, counted by hwloc directly. */
static int usable_cores(void)
{
    hwloc_topology_t topo;
    int n;

    ck_assert_int_eq(hwloc_topology_init(&topo), 0);
    ck_assert_int_eq(hwloc_topology_load(topo), 0);
    n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n < 1) {
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    }
    hwloc_topology_destroy(topo);
    return n;
}

static void current_binding(hwloc_bitmap_t set)
{
    hwloc_topology_t topo;

    ck_assert_int_eq(hwloc_topology_init(&topo), 0);
    ck_assert_int_eq(hwloc_topology_load(topo), 0);
    ck_assert_int_eq(hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS), 0);
    hwloc_topology_destroy(topo);
}

/* Binding changes this process: Check runs each test in a child of its own. */
START_TEST(test_bind_cores)
{
    int total = usable_cores();
    hwloc_bitmap_t first = hwloc_bitmap_alloc();
    hwloc_bitmap_t wrapped = hwloc_bitmap_alloc();
    ob_topology_info info;

    ck_assert(NULL != first && NULL != wrapped);
    ck_assert_msg(OMNIBATCH_SUCCESS == ob_topology_bind_cores(0, 1), "%s", ob_last_error());
    ck_assert_int_eq(ob_topology_query(NULL, NULL, &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(info.cores, 1);
    current_binding(first);

    /* Core index "total" wraps around to core 0. */
    ck_assert_int_eq(ob_topology_bind_cores(total, 1), OMNIBATCH_SUCCESS);
    current_binding(wrapped);
    ck_assert(hwloc_bitmap_isequal(first, wrapped));

    /* Every core, starting anywhere. */
    ck_assert_int_eq(ob_topology_bind_cores(total - 1, total), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_topology_query(NULL, NULL, &info), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(info.cores, total);
    hwloc_bitmap_free(first);
    hwloc_bitmap_free(wrapped);
}
END_TEST

START_TEST(test_bind_cores_bad_arguments)
{
    int total = usable_cores();
    char line[128];

    ck_assert_int_eq(ob_topology_bind_cores(-1, 1), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "first=-1: expected a core index >= 0");
    ck_assert_int_eq(ob_topology_bind_cores(0, 0), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "ncores=0: expected at least 1 core");
    ck_assert_int_eq(ob_topology_bind_cores(0, total + 1), OMNIBATCH_ERR_ARG);
    snprintf(line, sizeof line, "ncores=%d: expected at most the %d cores this process may use",
             total + 1, total);
    ck_assert_str_eq(ob_last_error(), line);
}
END_TEST

static Suite *make_topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *described = tcase_create("described");
    TCase *host = tcase_create("host");

    tcase_set_timeout(described, 30);
    tcase_add_test(described, test_description_arithmetic);
    tcase_add_test(described, test_synthetic_shapes);
    tcase_add_test(described, test_cpuset_restrictions);
    tcase_add_test(described, test_xml_gpus_counted_once_per_device);
    tcase_add_test(described, test_own_gpus_of_a_rank);
    tcase_add_test(described, test_xml_exported_by_hwloc_with_a_gpu_added);
    tcase_add_test(described, test_bad_sources_and_cpusets);
    suite_add_tcase(s, described);

    tcase_set_timeout(host, 30);
    tcase_add_test(host, test_host_is_sane);
    tcase_add_test(host, test_bind_cores);
    tcase_add_test(host, test_bind_cores_bad_arguments);
    suite_add_tcase(s, host);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_topology_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
