/*
 * interrupt.c -- Ctrl-C between tiles, without a longjmp through engine code.
 *
 * R_CheckUserInterrupt() longjmps when the user pressed Ctrl-C; run inside
 * R_ToplevelExec() it returns FALSE instead, so the engine can stop, free
 * every buffer and return GPUCOR_ERR_INTERRUPT.  The entry point then raises
 * the interrupt again with gpucor_raise().
 */
#include <R.h>
#include <Rinternals.h>
#include "gpucor.h"
#include "status.h"

/* Declared in R_ext/GraphicsDevice.h; raises the pending user interrupt. */
extern void Rf_onintr(void);

static void check(void *data)
{
    (void) data;
    R_CheckUserInterrupt();
}

int gpucor_interrupted(void)
{
    return R_ToplevelExec(check, NULL) == FALSE;
}

void gpucor_raise(int status, const char *what)
{
    if (status != GPUCOR_OK) gpucor_progress_abort();   /* the error on a line of its own */
    switch (status) {
    case GPUCOR_OK:
        return;
    case GPUCOR_ERR_INTERRUPT:
        Rf_onintr();
        error("%s: interrupted", what);   /* not reached */
    case GPUCOR_ERR_ALLOC:
        error("%s: cannot allocate the working memory", what);
    default:
        error("%s: internal error (status %d)", what, status);
    }
}

void gpucor_raise_msg(int status, const char *what, const char *msg)
{
    if (status != GPUCOR_OK) gpucor_progress_abort();
    if (status == GPUCOR_ERR_INTERRUPT || !msg || !msg[0])
        gpucor_raise(status, what);
    error("%s: %s", what, msg);
}
