/*
 * pack.cu -- the device half of the sinks: a canonical tile becomes
 * the contiguous range of the result it covers.  A dense panel of whole
 * columns already is that range; a 'dist' panel is packed (its pairs
 * i > j, column after column) with the sink's epilogue; the selecting
 * sink takes the panel as it is.
 */
#include "run.cuh"

template <typename T>
__global__ static void pack_dist(const T *val, size_t ld, size_t i0, size_t ni,
                                 size_t j0, size_t p, int epi, double scale, T *out)
{
    size_t b = blockIdx.y, j = j0 + b;
    size_t i = j + 1 + blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= p || i < i0 || i >= i0 + ni) return;
    T r = val[(i - i0) + b * ld];
    /* NA and NaN pass as they are (arithmetic would lose R's NA payload) */
    if (!isnan(r)) r = (T) (gc_epilogue(epi, r) * scale);
    out[dist_offset(p, j) - dist_offset(p, j0) + (i - j - 1)] = r;
}

int gc_cuda_stage(const gc_sink *sink, gc_tile *t, void *buf,
                  const void **dst, size_t *offset, size_t *count,
                  cudaStream_t st, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t p = sink->p, j1 = t->j0 + t->nj;
    if (sink->kind == SINK_SELECT) {
        *offset = 0;
        return gc_cuda_select(sink, t, buf, dst, count, st, msg, msgcap);
    }
    if (sink->kind != SINK_DIST && sink->kind != SINK_DIST_DEVICE) {
        if (t->i0 != 0 || t->ni != p || (t->ld != p && t->nj > 1) ||
            sink->epilogue != EPI_IDENTITY) {
            snprintf(msg, msgcap, "internal error: a dense panel must be whole "
                     "columns without an epilogue");
            return GPUCOR_ERR_INVALID;
        }
        *dst = t->val;
        *offset = t->j0 * p;
        *count = t->nj * p;
        return GPUCOR_OK;
    }
    *dst = buf;
    *offset = dist_offset(p, t->j0);
    *count = dist_offset(p, j1 < p ? j1 : p) - *offset;
    if (*count == 0) return GPUCOR_OK;
    {
        /* the resident 'dist' takes the panel in place, scaled; nothing
         * goes to the host */
        int dev = sink->kind == SINK_DIST_DEVICE;
        double scale = dev ? t->scale : 1.0;
        if (dev) {
            buf = (char *) sink->dev_out + *offset * (t->is_float ? sizeof(float) : sizeof(double));
            *count = 0;
        }
        size_t rows = p - t->j0;
        dim3 grid((unsigned) ((rows + 255) / 256), (unsigned) t->nj);
        if (t->is_float)
            pack_dist<float><<<grid, 256, 0, st>>>((const float *) t->val, t->ld, t->i0,
                                                   t->ni, t->j0, p, sink->epilogue,
                                                   scale, (float *) buf);
        else
            pack_dist<double><<<grid, 256, 0, st>>>((const double *) t->val, t->ld, t->i0,
                                                    t->ni, t->j0, p, sink->epilogue,
                                                    scale, (double *) buf);
        LAUNCHED("pack_dist");
    }
cleanup:
    return status;
}
