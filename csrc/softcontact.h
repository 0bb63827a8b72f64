/*
 * softcontact.h - umbrella header of the softcontact C core: the public API, by stage of
 * the pipeline (cloud -> SSDF -> separation field -> contact model -> model -> step ->
 * rollout / inverse dynamics).
 *
 * The core is a pure C11 library (plus POSIX threads): no Python, no NumPy, no global
 * mutable state, no allocation in kernels, int status codes.  Headers not included here
 * are internal: *_internal.h declare what files share (sc__ prefix), *_kernel.h are
 * templates compiled once per instruction set, and sc_jet.h, sc_rotation.h, sc_vec_*.h
 * and sc_exp.h are header-only helpers.
 */
#ifndef SOFTCONTACT_H
#define SOFTCONTACT_H

#define SC_VERSION_MAJOR 0
#define SC_VERSION_MINOR 1
#define SC_VERSION_PATCH 0

#include "sc_common.h"
#include "sc_cloud.h"
#include "sc_ssdf.h"
#include "sc_separation.h"
#include "sc_contact.h"
#include "sc_model.h"
#include "sc_step.h"
#include "sc_rollout.h"
#include "sc_batch.h"
#include "sc_inverse.h"
#include "sc_ilqr.h"

#endif /* SOFTCONTACT_H */
