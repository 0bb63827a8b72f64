/*
 * sc_ssdf_generic.c - the SSDF kernel in portable C (one lane).
 */
#include "sc_vec_generic.h"
#define SC_SSDF_VARIANT sc__ssdf_generic
#include "sc_ssdf_kernel.h"
