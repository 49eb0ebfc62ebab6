/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller's statistics (ob_maths.h), with basic IEEE arithmetic only.
 */
#include "config.h"

#include <math.h>

#include "ob_maths.h"

/* Expected largest of 2^k independent standard normal deviates, k = 0..31
 * (numerical integration to 10 digits). */
static const double ob_max_normal[32] = {
    0.0,         0.5641895835, 1.029375373, 1.423600306, 1.765991393, 2.069668828, 2.343733465, 2.594597369,
    2.826863279, 3.043903161,  3.248239601, 3.441799099, 3.626082178, 3.802279219, 3.97135057,  4.134082869,
    4.291129316, 4.443038965,  4.590278377, 4.733247881, 4.872293973, 5.007718897, 5.139788159, 5.26873647,
    5.394772516, 5.51808282,   5.638834896, 5.757179853, 5.873254551, 5.987183411, 6.099079942, 6.20904803
};

/* Beyond this many standard deviations apart, one of two normals is the
 * larger for certain (its share of the other's tail is below 1e-16). */
#define OB_NORMAL_CERTAIN 8.5

double ob_median(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i;

        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    return 1 == n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Interpolated linearly in P between powers of two. */
double ob_max_normal_spread(int P)
{
    int k = 0;
    double lo, f;

    while (k < 30 && (2L << k) <= (long) P) {
        k++;
    }
    lo = ob_max_normal[k];
    f = ((double) P - (double) (1L << k)) / (double) (1L << k);
    return lo + f * (ob_max_normal[k + 1] - lo);
}

/* 2^k e^r with |r| <= ln2 / 2 and e^r by its Taylor series to r^10
 * (relative error below 3e-13, far below that of the normal distribution
 * below). */
double ob_exp_nonpositive(double x)
{
    /* ln 2 split so that k * hi is exact for |k| < 2^11. */
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    double k, r, p;

    if (!(x > -745.0)) {
        return 0.0;
    }
    k = floor(x * 1.4426950408889634 + 0.5);
    r = (x - k * ln2_hi) - k * ln2_lo;
    p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720
        + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800))))))))));
    return ldexp(p, (int) k);
}

/* The distribution from Abramowitz and Stegun 7.1.26: both need the same
 * e^(-x^2/2). */
void ob_normal_pdf_cdf(double x, double *pdf, double *cdf)
{
    double e = ob_exp_nonpositive(-0.5 * x * x);
    double t = 1.0 / (1.0 + 0.3275911 * fabs(x) * 0.70710678118654752);
    double tail = 0.5 * e * t
                  * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));

    *pdf = 0.39894228040143268 * e;
    *cdf = x >= 0.0 ? 1.0 - tail : tail;
}

void ob_normal_max_fold(ob_normal_max *max, double mu, double s2)
{
    double a2 = max->var + s2;
    double a, z, pdf, cdf, cdf_other, m1, m2;

    if (!(a2 > 0.0)) {
        max->mean = mu > max->mean ? mu : max->mean;
        return;
    }
    a = sqrt(a2);
    z = (max->mean - mu) / a;
    if (z > OB_NORMAL_CERTAIN || z < -OB_NORMAL_CERTAIN) {
        if (z < 0.0) {
            max->mean = mu;
            max->var = s2;
        }
        return;
    }
    ob_normal_pdf_cdf(z, &pdf, &cdf);
    cdf_other = 1.0 - cdf;
    m1 = max->mean * cdf + mu * cdf_other + a * pdf;
    m2 = (max->mean * max->mean + max->var) * cdf + (mu * mu + s2) * cdf_other + (max->mean + mu) * a * pdf;
    max->mean = m1;
    max->var = m2 - m1 * m1 > 0.0 ? m2 - m1 * m1 : 0.0;
}
