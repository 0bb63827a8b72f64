/*
 * sc_ssdf_generic.c - the SSDF row kernel in portable C (one lane).
 */
#include "sc_vec_generic.h"
#define SC_SSDF_ROWS sc__ssdf_rows_generic
#define SC_SSDF_BEST sc__ssdf_best_generic
#define SC_SSDF_KEEP sc__ssdf_keep_generic
#define SC_SSDF_LEAFMAX sc__ssdf_leafmax_generic
#define SC_SSDF_LIST sc__ssdf_list_generic
#include "sc_ssdf_impl.h"
