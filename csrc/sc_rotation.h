/*
 * sc_rotation.h - rotations of poses (internal, static inline): quaternion to matrix, a
 * pose's frame, the pose check shared by every kernel that takes poses.  Conventions
 * (docs/method.md section 3): quaternions (w, x, y, z), scalar first; R maps body to
 * world coordinates; matrices row-major.
 */
#ifndef SC_ROTATION_H
#define SC_ROTATION_H

#include <math.h>

#include "sc_common.h"

/* SC_OK for a finite pose whose quaternion (3D) has unit norm within SC_UNIT_TOL and whose
 * translation is in the valid range (|t_a| <= SC_COORD_MAX); SC_ENONFINITE, SC_ENOTUNIT or
 * SC_ERANGE otherwise, in that order */
static inline int sc__pose_check(int D, const double *pose)
{
    int k;
    for (k = 0; k < SC_NQ(D); k++) {
        if (!isfinite(pose[k])) {
            return SC_ENONFINITE;
        }
    }
    if (D == 3) {
        const double *q = pose + 3;
        const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(fabs(n - 1.0) <= SC_UNIT_TOL)) {
            return SC_ENOTUNIT;
        }
    }
    for (k = 0; k < D; k++) {
        if (!(fabs(pose[k]) <= SC_COORD_MAX)) {
            return SC_ERANGE;
        }
    }
    return SC_OK;
}

/* R (3x3) of the quaternion q, normalized first */
static inline void sc__quat_to_mat(const double q_in[4], double R[9])
{
    double n = sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    double w = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = 1 - 2 * (x * x + y * y);
}

/* rotation matrix (D x D, row-major) and translation of a pose: 2D (x, y, theta), 3D
 * (p[3], q[4]) */
static inline void sc__pose_frame(int D, const double *pose, double *R, double *t)
{
    if (D == 2) {
        double c = cos(pose[2]), s = sin(pose[2]);
        R[0] = c;
        R[1] = -s;
        R[2] = s;
        R[3] = c;
        t[0] = pose[0];
        t[1] = pose[1];
    } else {
        sc__quat_to_mat(pose + 3, R);
        t[0] = pose[0];
        t[1] = pose[1];
        t[2] = pose[2];
    }
}

#endif /* SC_ROTATION_H */
