/*
 * sc_contact_law_undef.h - ends an instance of sc_contact_law.h: undefines its parameters
 * and operations, so that the next instance defines its own.
 */
#undef LAW
#undef LAW_N
#undef LAW_VL
#undef LAW_DERIVS
#undef LAW_WNUM
#undef LAW_SAMPLE
#undef L_LIN
#undef L_SCALE
#undef L_LIN3
#undef L_LIN4
#undef L_AXPY
#undef L_MUL
#undef L_MADD
#undef L_FUNC
#undef L_INVNORM
#undef L_PROMOTE
#undef L_SETVAL
#undef L_COMPOSE_PHI
#undef L_COMPOSE_GRAD
