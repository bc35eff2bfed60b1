/*
 * run.c -- the CPU engine's one entry (cpu.h): the measure's family picks
 * the producer.  A new family is a row here and its producer's file.
 */
#include "cpu.h"

typedef int (*cpu_producer)(const gc_problem *pb, const gc_sink *sink,
                            const gc_host *host, gc_pass *out);

static const cpu_producer producers[] = {
    [FAMILY_PRODUCT] = cpu_cor_run,    /* correlate.c */
    [FAMILY_PAIR] = cpu_cor_run,       /* correlate.c (Kendall's tiles) */
    [FAMILY_DISTANCE] = cpu_dist_run,  /* distance.c */
    [FAMILY_KNNMI] = cpu_knnmi_run,    /* knnmi.c */
};

int cpu_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host, gc_pass *out)
{
    return producers[pb->measure->family](pb, sink, host, out);
}
