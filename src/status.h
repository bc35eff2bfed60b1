/* status.h -- shared by the .Call entry points (R-aware side only). */
#ifndef GPUCOR_STATUS_H
#define GPUCOR_STATUS_H
int gpucor_interrupted(void);
/* Raises the R condition for a non-OK status; call after freeing. */
void gpucor_raise(int status, const char *what);
#endif
