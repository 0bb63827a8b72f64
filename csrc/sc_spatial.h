/*
 * sc_spatial.h - small rotation helpers (static inline): quaternion to matrix, 3x3 and
 * 2x2 products.  Conventions (METHOD.md section 3): quaternions (w, x, y, z), scalar
 * first; R maps body to world coordinates; matrices row-major.
 */
#ifndef SC_SPATIAL_H
#define SC_SPATIAL_H

#include <math.h>

/* R (3x3) of the quaternion q, normalized first */
static inline void sc_quat_to_mat(const double q_in[4], double R[9])
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
static inline void sc_pose_frame(int D, const double *pose, double *R, double *t)
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
        sc_quat_to_mat(pose + 3, R);
        t[0] = pose[0];
        t[1] = pose[1];
        t[2] = pose[2];
    }
}

#endif /* SC_SPATIAL_H */
