/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The little statistics the controller needs, computed the same on every
 * rank: IEEE addition, multiplication, division, sqrt, floor and ldexp only
 * (all exact or correctly rounded everywhere), never a libm function whose
 * last bit may differ between hosts, since every rank must reach the same
 * decision from the same records.
 */
#ifndef OB_MATHS_H
#define OB_MATHS_H

/** \brief e^x for x <= 0 (relative error below 3e-13); 0 below -745. */
double ob_exp_nonpositive(double x);

/** \brief Standard normal density and distribution at \p x (absolute error below 1.5e-7). */
void ob_normal_pdf_cdf(double x, double *pdf, double *cdf);

/** \brief Expected largest of \p P independent standard normal deviates (within 0.05). */
double ob_max_normal_spread(int P);

/** \brief The median of \p v[0..n-1], n >= 1 (the mean of the middle two for even n);
 *         sorts \p v in place (insertion sort: for the few values it is given). */
double ob_median(double *v, int n);

/** \brief A normal approximating the maximum of normals folded into it so far. */
typedef struct ob_normal_max {
    double mean;
    double var;
} ob_normal_max;

/**
 * \brief Fold a normal of mean \p mu and variance \p s2 into \p max (Clark's
 *        moment matching): max becomes the normal approximating the larger
 *        of the two.  Exact in mean for two normals; for P equal ones within
 *        0.5% of the true spread (4.27 sd for 65,536 of them, exactly 4.29).
 */
void ob_normal_max_fold(ob_normal_max *max, double mu, double s2);

#endif /* OB_MATHS_H */
