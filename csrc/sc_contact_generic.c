/*
 * sc_contact_generic.c - the contact model in portable C.
 */
#define SC_CONTACT_VARIANT sc__contact_generic
#include "sc_contact_kernel.h"
