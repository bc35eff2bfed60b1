/*
 * plan.c -- the one panel planner: how many result columns a GPU panel
 * takes, from the device memory left and the staging buffers' size.
 */
#include "engine.h"

int gc_plan_panels(size_t ncols, size_t col_bytes, size_t stage_bytes,
                   size_t stage_cap, size_t avail, size_t align, size_t max_w,
                   size_t forced, gc_plan *pl)
{
    pl->ncols = ncols;
    pl->narrow = 0;
    pl->split = 0;
    pl->first = 0;
    size_t w = avail / (col_bytes ? col_bytes : 1);
    size_t cap = stage_cap / (stage_bytes ? stage_bytes : 1);   /* 0: a column
                                                                   exceeds the staging */
    if (w > cap) w = cap;
    if (align > 1 && w >= align) w -= w % align;   /* whole launch tiles */
    if (forced) w = forced < cap ? forced : cap;
    if (w > max_w) w = max_w;
    if (w < 1) {
        pl->w = pl->npanels = 0;
        return 0;
    }
    if (w > ncols && ncols > 0) w = ncols;
    pl->w = w;
    pl->npanels = ncols ? (ncols + w - 1) / w : 0;
    return 1;
}

void gc_plan_range(const gc_plan *pl, size_t s, size_t *j0, size_t *j1)
{
    *j0 = (s + pl->first) * pl->w;
    *j1 = *j0 + pl->w < pl->ncols ? *j0 + pl->w : pl->ncols;
}

void gc_plan_share(gc_plan *pl, size_t col0, size_t col1, int cover)
{
    size_t b0, b1;
    gc_share_blocks(col0, col1, cover, pl->w, pl->npanels, &b0, &b1);
    pl->first = b0;
    pl->npanels = b1 - b0;
}
