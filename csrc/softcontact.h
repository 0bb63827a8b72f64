/*
 * softcontact.h - umbrella header of the softcontact C core.
 *
 * The core is a pure C11 library (plus POSIX threads): no Python, no NumPy,
 * no global mutable state, no allocation in kernels, int status codes.
 */
#ifndef SOFTCONTACT_H
#define SOFTCONTACT_H

#define SC_VERSION_MAJOR 0
#define SC_VERSION_MINOR 1
#define SC_VERSION_PATCH 0

#include "sc_common.h"
#include "sc_parallel.h"
#include "sc_ssdf.h"
#include "sc_contact.h"
#include "sc_model.h"

#endif /* SOFTCONTACT_H */
